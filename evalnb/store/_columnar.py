"""A stored run's frames read from its segments (store/_segments.py): whole, or the part a lazy load asks for.

Each column of a segment is decoded on its own, so a load that names its columns decodes only those, and a
``where`` decodes the columns it filters on first: the other columns of a segment are decoded only for the rows
that matched (the failures of a large run are read without building its passes). The filter is the one
:mod:`evalnb.store._where` describes, evaluated per value as SQL does for the row tables.

Example::

    frame = read_frame(conn, tables["segments"], run, "scores", SCORE_COLS, dtypes, shared=REPEATED["scores"])
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalnb.results._columns import Shared, arrow_text
from evalnb.results._frames import missing_array
from evalnb.store._segments import FRAMES, Segment, column_of, damaged, segments
from evalnb.store._where import matches

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from sqlalchemy import Connection, Table

    from evalnb.store._where import Narrowing

__all__ = ["kept_keys", "read_frame"]


def _mask(
    seg: Segment, terms: Mapping[str, Any], run: Mapping[str, Any], got: dict[str, list[Any]]
) -> np.ndarray:
    """Which rows of ``seg`` every term matches (the decoded columns kept in ``got``)."""
    import numpy as np

    mask = np.ones(seg.n, dtype=bool)
    for name, value in terms.items():
        got[name] = values = got.get(name) or column_of(seg, name, run)
        mask &= np.fromiter(matches(value, values), dtype=bool, count=seg.n)
    return mask


def kept_keys(conn: Connection, table: Table, run: Mapping[str, Any], narrow: Narrowing) -> Any:
    """The case runs ``(case id, run)`` with a matching row in each frame ``where`` names, as
    :func:`_case_runs` gives them (``None``: every one)."""
    kept: Any = None
    for frame, terms in narrow.terms.items():
        if not terms:
            continue
        found: list[Any] = []
        for seg in segments(conn, table, int(run["id"]), frame, run):
            got: dict[str, list[Any]] = {}
            mask = _mask(seg, terms, run, got)
            if mask.any():
                found.append(_kept(_case_runs(seg, run, got), mask))
        kept = _both(kept, _union(found))
    return kept


def _case_runs(seg: Segment, run: Mapping[str, Any], got: Mapping[str, list[Any]]) -> Any:
    """Each row's case run as one string: the case id, a separator, the run's digits (the run is what follows
    the last separator, so two case runs never share one). Made and looked up by Arrow's kernels where text is
    read as Arrow (no python object per row), else a list of the same strings."""
    ids: Any = got.get("case_id") or _part(seg, "case_id", "string", run)
    runs: Any = got.get("run") or _part(seg, "run", "Int64", run)
    if arrow_text():
        import pyarrow as pa
        import pyarrow.compute as pc

        text = ids
        if not _is_arrow(ids):  # text Arrow cannot hold (a lone surrogate) is joined in python
            with contextlib.suppress(pa.ArrowException, UnicodeEncodeError):
                text = pa.array(ids, type=pa.large_string(), from_pandas=True)
        if _is_arrow(text):
            numbers = pa.array(_listed(runs) if isinstance(runs, list) else runs, type=pa.int64())
            return pc.binary_join_element_wise(
                text.cast(pa.large_string()),
                numbers.cast(pa.large_string()),
                pa.scalar(_SEPARATOR, pa.large_string()),
                null_handling="replace",
                null_replacement="",
            )
    listed = ids.to_pylist() if _is_arrow(ids) else list(ids)
    return [
        f"{'' if i is None else i}{_SEPARATOR}{'' if r is None else r}"
        for i, r in zip(listed, _listed(runs), strict=True)
    ]


_SEPARATOR = "\x1f"


def _listed(values: Any) -> list[Any]:
    """Run numbers as python integers (``None`` where missing)."""
    if hasattr(values, "isna"):  # an IntegerArray: its missing values as None, not pd.NA
        values = values.to_numpy(dtype=object, na_value=None)
    if not isinstance(values, list):
        values = values.tolist()
    return [None if v is None or v != v else int(v) for v in values]


def _plain(keys: Any) -> Any:
    """Case runs as a pandas index looks them up: an Arrow array's values as python strings."""
    return keys.to_numpy(zero_copy_only=False) if _is_arrow(keys) else keys


def _kept(keys: Any, mask: np.ndarray) -> Any:
    if isinstance(keys, list):
        return [k for k, m in zip(keys, mask.tolist(), strict=True) if m]
    return keys.filter(mask)


class _Kept:
    """The distinct case runs kept, as a hash index made once: each segment is looked up in it (Arrow's
    ``is_in`` hashes its value set on every call)."""

    def __init__(self, index: pd.Index) -> None:
        self.index = index

    def among(self, keys: Any) -> np.ndarray:
        """Which of the case runs ``keys`` are kept."""
        import numpy as np

        return np.asarray(self.index.get_indexer(_plain(keys)) >= 0)


def _union(found: list[Any]) -> _Kept:
    import numpy as np
    import pandas as pd

    values = [np.asarray(_plain(f), dtype=object) for f in found]
    joined = np.concatenate(values) if values else np.empty(0, dtype=object)
    return _Kept(pd.Index(pd.unique(joined), dtype=object))


def _both(kept: _Kept | None, found: _Kept) -> _Kept:
    return found if kept is None else _Kept(found.index[kept.among(found.index)])


def read_frame(
    conn: Connection,
    table: Table,
    run: Mapping[str, Any],
    frame: str,
    cols: Sequence[str],
    dtypes: Mapping[str, str],
    *,
    shared: Sequence[str] = (),
    known: Mapping[str, dict[str, str]] | None = None,
    narrow: Narrowing | None = None,
    keys: Any = None,
) -> pd.DataFrame | None:
    """A run's frame from its segments, in the order it was written, with its saved dtypes; ``None`` when it
    has none (a run stored in the row tables). ``cols``: the stored columns to read; with ``narrow``, only the
    rows of its terms and of the case runs in ``keys`` (see :func:`kept_keys`), and no columns beyond the
    stored ones."""
    terms = {} if narrow is None else narrow.terms.get(frame, {})
    extra = narrow is None or narrow.extra()
    keys = _other_frames(keys, frame, terms, narrow)
    stored = set(FRAMES[frame])
    # per column, its parts: lists of values, or numpy arrays of numbers (never made into python values)
    acc: dict[str, list[Any]] = {c: [] for c in cols}
    rows = 0
    seen = False
    for seg in segments(conn, table, int(run["id"]), frame, run):
        seen = True
        got: dict[str, list[Any]] = {}
        take = _taken(seg, terms, keys, run, got)
        if take is not None and not len(take):
            continue
        names = list(cols) + ([c for c in seg.names if c not in stored and c != "suite"] if extra else [])
        for name in names:
            values = got.get(name) or _part(seg, name, dtypes.get(name), run)
            if take is not None:
                values = _rows(values, take)
            into = acc.get(name)
            if into is None:  # a column beyond the stored ones that earlier segments did not have
                into = acc[name] = [[None] * rows] if rows else []
            into.append(values)
        rows += seg.n if take is None else len(take)
        _pad(acc, set(names), rows)
    if not seen:
        return None
    return _frame(acc, rows, dtypes, run, shared=shared, known=known or {})


def _other_frames(keys: Any, frame: str, terms: Mapping[str, Any], narrow: Narrowing | None) -> Any:
    """The case runs a frame's rows are looked up in: none when this frame is the only one with terms (the case
    runs kept are its own matches, so a row its terms match is one of them)."""
    if terms and narrow is not None and [f for f, t in narrow.terms.items() if t] == [frame]:
        return None
    return keys


def _rows(values: Any, take: np.ndarray) -> Any:
    """The rows ``take`` of one segment's column, in the form it was read in."""
    if isinstance(values, list):
        return [values[i] for i in take.tolist()]
    return values.take(take) if _is_arrow(values) else values[take]


def _taken(
    seg: Segment, terms: Mapping[str, Any], keys: Any, run: Mapping[str, Any], got: dict[str, Any]
) -> np.ndarray | None:
    """The rows of ``seg`` a narrowed load keeps (``None``: all of them), the columns it decoded in ``got``."""
    import numpy as np

    if not terms and keys is None:
        return None
    mask = _mask(seg, terms, run, got)
    if keys is not None and mask.any():
        rows = np.flatnonzero(mask)  # only the rows the terms kept are looked up
        joined = _case_runs(seg, run, got)
        if len(rows) < seg.n:
            joined = [joined[i] for i in rows.tolist()] if isinstance(joined, list) else joined.take(rows)
        mask[rows[~keys.among(joined)]] = False
    take = np.flatnonzero(mask)
    return None if len(take) == seg.n else take


def _pad(acc: dict[str, list[Any]], filled: set[str], rows: int) -> None:
    """Missing values for the columns a segment did not have (a column beyond the stored ones)."""
    for name, into in acc.items():
        if name in filled:
            continue
        have = sum(len(p) for p in into)
        if have < rows:
            into.append([None] * (rows - have))


def _part(seg: Segment, name: str, dtype: str | None, run: Mapping[str, Any]) -> Any:
    """A column of one segment: a numpy array for a frame column of numbers stored packed, an Arrow array
    for text stored as text where pandas keeps text in Arrow buffers, else its values."""
    packed = (
        seg.text
        if dtype == "string" and arrow_text()
        else seg.array
        if dtype == "float64"
        else seg.integers
        if dtype == "Int64"
        else seg.flags
        if dtype == "boolean"
        else None
    )
    if packed is not None:
        try:
            values = packed(name)
        except (ValueError, zlib.error) as exc:
            raise damaged(run, exc) from None
        if values is not None:
            return values
    return column_of(seg, name, run)


def _is_arrow(values: Any) -> bool:
    return type(values).__module__.startswith("pyarrow")


def _joined(parts: list[Any]) -> Any:
    """A column's parts as one: a numpy array when every part is one; an Arrow array of text when some part
    is one and the rest is text; else a list of python values."""
    import numpy as np
    import pandas as pd

    if parts and all(isinstance(p, np.ndarray) for p in parts):
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
    for masked in (pd.arrays.BooleanArray, pd.arrays.IntegerArray):  # flags and integers read as such
        if parts and all(isinstance(p, masked) for p in parts):
            return parts[0] if len(parts) == 1 else masked._concat_same_type(parts)
    if any(_is_arrow(p) for p in parts):
        import pyarrow as pa

        with contextlib.suppress(TypeError, ValueError, pa.ArrowException):
            text = pa.large_string()
            arrays = [p if _is_arrow(p) else pa.array(list(p), type=text, from_pandas=True) for p in parts]
            return pa.chunked_array(arrays, type=text)  # the segments' buffers as they are, not a copy
    out: list[Any] = []
    for p in parts:
        out += p if isinstance(p, list) else p.to_pylist() if _is_arrow(p) else p.tolist()
    return out


def _frame(
    acc: dict[str, list[Any]],
    rows: int,
    dtypes: Mapping[str, str],
    run: Mapping[str, Any],
    *,
    shared: Iterable[str],
    known: Mapping[str, dict[str, str]],
) -> pd.DataFrame:
    """The typed frame of the decoded columns: the suite's name first, then the saved column order."""
    import pandas as pd

    repeated = set(shared)
    arrays: dict[str, Any] = {"suite": _repeated(str(run["suite"]), rows)}
    for name in list(acc):
        values, acc[name] = _joined(acc[name]), []
        if isinstance(values, list) and (name in repeated or name in known):
            # one object per repeated text, and the suite's own strings (ids, prompts) rather than copies
            with contextlib.suppress(TypeError):
                values = list(Shared(known=known.get(name)).many(values))
        arrays[name] = _typed(values, dtypes.get(name, "object"))
        del values
    order = [c for c in dtypes if c in arrays]
    return pd.DataFrame(arrays, columns=order + [c for c in arrays if c not in order], copy=False)


def _repeated(text: str, rows: int) -> Any:
    """A ``string`` column that holds ``text`` in every row (Arrow's repeat where pandas keeps text in
    Arrow: a list of the same string made into an array took seconds at a million case runs' scores)."""
    import pandas as pd

    if arrow_text():
        import pyarrow as pa

        return pd.arrays.ArrowStringArray(pa.repeat(pa.scalar(text, pa.large_string()), rows))
    return pd.array([text] * rows, dtype="string")


def _text(values: list[Any]) -> Any:
    """A ``string`` column of text and missing values: converted by Arrow where pandas keeps text in Arrow (a
    python loop over each value took seconds at a million case runs' scores); text Arrow cannot hold (a lone
    surrogate) or values that are not text take pandas' own conversion, which cleans or refuses them."""
    import numpy as np
    import pandas as pd

    if arrow_text():
        import pyarrow as pa

        with contextlib.suppress(pa.ArrowException, UnicodeEncodeError):
            return pd.arrays.ArrowStringArray(pa.array(values, type=pa.large_string(), from_pandas=True))
    return pd.array(np.array(values, dtype=object), dtype="string")


def _typed(values: list[Any], dtype: str) -> Any:
    """One column in its saved dtype (as ``read_frame`` of the row tables casts it)."""
    import numpy as np
    import pandas as pd

    if _is_arrow(values):  # text stored as text: the frame's column is made of its buffers
        return pd.arrays.ArrowStringArray(values)
    if isinstance(
        values, (pd.arrays.BooleanArray, pd.arrays.IntegerArray)
    ):  # flags and integers read as such
        return values
    if not isinstance(values, list):  # numbers stored packed: float64 or int64 already (none missing)
        if dtype == "float64":
            return values.astype("float64", copy=False)
        return pd.arrays.IntegerArray(values.astype("int64", copy=False), np.zeros(len(values), dtype=bool))
    if dtype in ("Int64", "boolean") and values.count(None) == len(values):  # a column nobody reported
        return missing_array(dtype, len(values))
    try:
        if dtype == "float64":
            return np.array(values, dtype="float64")  # None -> NaN
        if dtype == "string":
            return _text(values)
        if dtype in ("Int64", "boolean"):
            return pd.array(values, dtype=dtype)
    except (TypeError, ValueError):
        pass
    series = pd.Series(values, dtype=object)
    if dtype == "boolean":
        return series.where(series.notna(), None).astype("boolean").array
    if dtype in ("Int64", "float64"):
        return pd.to_numeric(series, errors="coerce").astype(dtype).array
    with contextlib.suppress(TypeError, ValueError):
        return series.astype(dtype).array
    return series.array
