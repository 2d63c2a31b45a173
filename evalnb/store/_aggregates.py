"""A run's sums per case x check x run (comparison/_aggregates.py), kept beside its rows when it ends.

``store.compare`` of two versions reads these and not the runs' rows: at a million cases x 2 runs x 4 checks the
rows are 8 million per side, the sums a sixth of their columns (docs/comparison.md, comparing stored versions).
They are segments (store/_segments.py) of three frames of their own, named with the layout's version:

* ``agg1:entries``: the entries' columns (``ENTRY_COLUMNS``), in their order, in segments of about
  :data:`~evalnb.store._segments.SEGMENT_ROWS` that end where a case x check ends (a reader sums each cell
  within one segment, as the whole array would);
* ``agg1:cases``: per case its id, name, category, whether it has scores, and its cost, latency and whether
  it ran (docs/costs.md);
* ``agg1:checks``: per check its id, name, the direction its options say (JSON), its scores with a value and
  with a weighted score; and in one row the suite's name and the (check, judge) pairs (JSON).

A run saved before these existed has none: its sums are made from its compared columns when it is compared.

Example::

    write(conn, tables["segments"], pk, aggregates_of(result))
    read(store._reading, tables["segments"], pk, run)   # an Aggregates whose entries are read as iterated
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from evalnb.comparison._aggregates import ENTRY_COLUMNS, Aggregates
from evalnb.results._columns import Chunk, Piece
from evalnb.store._segments import SEGMENT_ROWS, Segment, damaged, encode, encode_chunk, insert, segments

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import numpy as np
    from sqlalchemy import Connection, Table

    Reading = Callable[[], AbstractContextManager[Connection]]

__all__ = ["FRAMES", "read", "write"]

ENTRIES, CASES, CHECKS = "agg1:entries", "agg1:cases", "agg1:checks"
FRAMES = (ENTRIES, CASES, CHECKS)
"""The segment frames of a run's sums (their layout's version in the name: another layout, other names)."""

_TEXT = {
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "check_id": "string",
    "check": "string",
}


def write(conn: Connection, table: Table, pk: int, agg: Aggregates) -> None:
    """Store a run's sums (within the caller's transaction), replacing any it had (a resumed run's)."""
    import numpy as np

    conn.execute(table.delete().where(table.c.run_pk == pk, table.c.frame.in_(FRAMES)))
    parts: list[tuple[str, int, bytes, int]] = []
    for entries in agg.entries:
        n = len(entries["check"])
        for a, b in _spans(entries, n):
            parts.append(
                (
                    ENTRIES,
                    a,
                    encode_chunk(_chunk(entries, a, b), list(ENTRY_COLUMNS), {}, numbers_once=True),
                    b - a,
                )
            )
    cases = {
        "case_id": agg.case_ids,
        "case_name": agg.case_names,
        "category": agg.categories,
        "scored": agg.scored_cases.tolist(),
    }
    dtypes = {**_TEXT, "scored": "boolean", "ran": "boolean", "cost": "float64", "latency": "float64"}
    if agg.spend is not None:
        cases.update({name: agg.spend[name].tolist() for name in ("cost", "latency", "ran")})
    n_case = len(agg.case_ids)
    parts += [
        (CASES, a, encode({k: v[a:b] for k, v in cases.items()}, b - a, dtypes), b - a)
        for a, b in _rows(n_case)
    ]
    checks = {
        "check_id": agg.check_ids,
        "check": agg.check_names,
        "said_higher": [None if v is None else json.dumps(v) for v in agg.said_higher],
        "numeric": np.asarray(agg.numeric, dtype=np.int64).tolist(),
        "with_weighted": np.asarray(agg.with_weighted, dtype=np.int64).tolist(),
    }
    head = {"suite": agg.suite, "judges": None if agg.judges is None else [list(j) for j in agg.judges]}
    counts = {"numeric": "Int64", "with_weighted": "Int64", "said_higher": "string", **_TEXT}
    parts.append((CHECKS, 0, encode(checks, len(agg.check_ids), counts), len(agg.check_ids)))
    parts.append((CHECKS, -1, encode({"head": [json.dumps(head)]}, 1, {}), 1))
    insert(conn, table, pk, parts)


def _rows(n: int) -> list[tuple[int, int]]:
    return [(a, min(a + SEGMENT_ROWS, n)) for a in range(0, n, SEGMENT_ROWS)] or [(0, 0)]


def _spans(entries: Mapping[str, np.ndarray], n: int) -> Iterator[tuple[int, int]]:
    """Segments of about :data:`SEGMENT_ROWS` entries, each ending where a case x check ends."""
    check, case = entries["check"], entries["case"]
    a = 0
    while a < n:
        b = min(a + SEGMENT_ROWS, n)
        # on past the entries of the cell the segment would split (its other runs)
        while b < n and check[b] == check[b - 1] and case[b] == case[b - 1]:
            b += 1
        yield a, b
        a = b
    if n == 0:
        yield 0, 0


def _chunk(entries: Mapping[str, np.ndarray], a: int, b: int) -> Chunk:
    """Entries ``a:b`` as a chunk of pieces: numbers and flags written as their buffers."""
    import numpy as np

    pieces = []
    for name, dtype in ENTRY_COLUMNS.items():
        values = np.asarray(entries[name][a:b])
        if dtype == "float64":
            pieces.append(Piece("floats", b - a, values.astype(np.float64, copy=False)))
        else:
            kind = np.bool_ if dtype == "bool" else np.int64
            pieces.append(
                Piece("masked", b - a, values.astype(kind, copy=False), np.zeros(b - a, dtype=bool))
            )
    return Chunk(b - a, list(ENTRY_COLUMNS), pieces)


def read(reading: Reading, table: Table, pk: int, run: Mapping[str, Any]) -> Aggregates | None:
    """A stored run's sums (None when it has none: a run saved before they were kept); its entries are read
    from the store as they are iterated, a segment at a time. ``reading`` opens a connection to read with (the
    store's, which names the store in its errors).

    Raises:
        StoreError: ``STORED_RUN_INVALID`` when their bytes do not read back.
    """
    with reading() as conn:
        checks = list(segments(conn, table, pk, CHECKS, run))
        if not checks:
            return None
        try:
            return _aggregates(reading, table, pk, run, checks, list(segments(conn, table, pk, CASES, run)))
        except (ValueError, KeyError, TypeError) as exc:
            raise damaged(run, exc) from None


def _aggregates(
    reading: Reading,
    table: Table,
    pk: int,
    run: Mapping[str, Any],
    checks: list[Segment],
    cases: list[Segment],
) -> Aggregates:
    import numpy as np

    head = json.loads(checks[0].column("head")[0])  # seq0 -1: first in order
    seg = checks[1]
    names = cases[0].names if cases else []
    spend = None
    if "cost" in names:
        spend = {
            name: _joined(cases, name, dtype)
            for name, dtype in (("cost", "float64"), ("latency", "float64"), ("ran", "bool"))
        }
    n_case = sum(part.n for part in cases)
    labels: dict[str, list[Any]] = {
        name: _values(cases, name) if name in names else [None] * n_case for name in ("case_name", "category")
    }
    return Aggregates(
        suite=head["suite"],
        case_ids=[str(c) for c in _values(cases, "case_id")],
        case_names=labels["case_name"],
        categories=labels["category"],
        check_ids=[str(c) for c in seg.column("check_id")],
        check_names=seg.column("check"),
        said_higher=[None if v is None else bool(json.loads(v)) for v in seg.column("said_higher")],
        judges=None if head["judges"] is None else [(int(k), str(j)) for k, j in head["judges"]],
        numeric=np.asarray(seg.column("numeric"), dtype=np.int64),
        with_weighted=np.asarray(seg.column("with_weighted"), dtype=np.int64),
        scored_cases=_joined(cases, "scored", "bool") if cases else np.zeros(0, dtype=bool),
        entries=_Entries(reading, table, pk, run),
        spend=spend,
    )


def _joined(parts: list[Segment], name: str, dtype: str) -> np.ndarray:
    """A column of numbers or flags of several segments as one numpy array."""
    import numpy as np

    return np.concatenate([_array(seg, name, dtype) for seg in parts])


def _values(parts: list[Segment], name: str) -> list[Any]:
    out: list[Any] = []
    for seg in parts:
        out += seg.column(name)
    return out


class _Entries:
    """A stored run's entries, read a segment at a time each time they are iterated."""

    def __init__(self, reading: Reading, table: Table, pk: int, run: Mapping[str, Any]) -> None:
        self.reading, self.table, self.pk, self.run = reading, table, pk, run

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        with self.reading() as conn:
            for seg in segments(conn, self.table, self.pk, ENTRIES, self.run):
                try:
                    yield {name: _array(seg, name, dtype) for name, dtype in ENTRY_COLUMNS.items()}
                except (ValueError, KeyError, TypeError) as exc:
                    raise damaged(self.run, exc) from None


def _array(seg: Segment, name: str, dtype: str) -> np.ndarray:
    """A column of entries as a numpy array: packed as written, or one value every entry holds."""
    import numpy as np

    if dtype == "bool":
        flags = seg.flags(name)
        if flags is None:  # kind "c": the value every entry holds
            return np.full(seg.n, bool(seg.column(name)[0]) if seg.n else False)
        return np.asarray(flags.to_numpy(dtype=bool, na_value=False))
    values = seg.array(name) if dtype == "float64" else seg.integers(name)
    if values is None:
        return np.full(seg.n, seg.column(name)[0] if seg.n else 0, dtype=dtype)
    return np.asarray(values if dtype == "float64" else values.to_numpy(dtype=np.int64, na_value=0))
