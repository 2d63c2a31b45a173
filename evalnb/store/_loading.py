"""A stored run read back as a Result (``Store.load``), and what a run that does not read back is.

A run's suite definition and meta are JSON written by evalnb; one edited by hand, damaged, or written by
another version of evalnb may no longer validate. That is a :class:`~evalnb.errors.StoreError`
(``STORED_RUN_INVALID``) naming the run and the first things that did not validate, never the validation
library's own error.

Example::

    load(store, store._resolve("v1"))          # the Result of the run version v1 names
"""

from __future__ import annotations

import functools
import json
import zlib
from typing import TYPE_CHECKING, Any

from evalnb import _gc
from evalnb.results._columns import REPEATED, arrow_text
from evalnb.results._deferred import DeferredSuite, case_ids
from evalnb.results._frames import in_suite_order
from evalnb.store import _case_index as case_index
from evalnb.store._codec import read_frame
from evalnb.store._columnar import kept_keys
from evalnb.store._columnar import read_frame as read_columns
from evalnb.store._invalid import invalid
from evalnb.store._segments import FRAMES, TABLES
from evalnb.store._suites import suite_from, suite_texts
from evalnb.store._trusted import written_by_evalnb

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result
    from evalnb.store._store import Store
    from evalnb.store._where import Narrowing
    from evalnb.suite import Suite

__all__ = ["invalid", "load", "stored_meta", "stored_suite"]

SHOWN = 3
"""How many of a definition's validation errors the message names (the rest are counted)."""


def stored_suite(definition: Any, run: dict[str, Any], content_hash: str | None = None) -> Suite:
    """The run's suite from its stored definition.

    Raises:
        StoreError: ``STORED_RUN_INVALID``, naming the first fields that did not validate.
    """
    from pydantic import ValidationError

    from evalnb._validation import describe

    if not isinstance(definition, str):
        raise invalid(run, "its suite definition", "is missing")
    try:
        return suite_from(definition, content_hash)
    except ValidationError as exc:
        said = describe(exc, limit=SHOWN, whole="(the whole definition)", values=False)
        raise invalid(run, "its suite definition does not validate:", said) from None
    except (ValueError, TypeError) as exc:  # a model validator's own error, text that is not JSON
        raise invalid(run, "its suite definition does not validate:", str(exc)) from None


def stored_meta(text: Any, run: dict[str, Any]) -> dict[str, Any]:
    """The run's meta (a JSON object).

    Raises:
        StoreError: ``STORED_RUN_INVALID`` when it is not a JSON object.
    """
    try:
        meta = json.loads(text or "{}")
    except ValueError as exc:
        raise invalid(run, "its meta", f"is not JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise invalid(run, "its meta", f"is not a JSON object (it is {type(meta).__name__})")
    dtypes = meta.get("frame_dtypes")
    if dtypes is not None and not (
        isinstance(dtypes, dict) and all(isinstance(v, dict) for v in dtypes.values())
    ):
        raise invalid(run, "its meta", "has frame_dtypes that are not a mapping of frames to column dtypes")
    return meta


def _in_suite_order(frames: list[Any], suite: Suite | DeferredSuite) -> list[Any]:
    """``in_suite_order`` of each frame, the case positions looked up in one index of the suite's case ids
    (a mapping through a dict per row was most of it at a million rows)."""
    import numpy as np
    import pandas as pd

    suite_ids = case_ids(suite)
    ids = pd.Index(suite_ids, dtype="string")
    if not ids.is_unique:  # one position per id is what in_suite_order gives: its own way
        return [in_suite_order(f, list(suite_ids)) for f in frames]
    out = []
    for frame in frames:
        if not len(frame):
            out.append(frame)
            continue
        position = ids.get_indexer(frame["case_id"].astype("string"))
        position[position < 0] = len(ids)  # a case the suite does not hold: last, as in_suite_order has it
        run = frame["run"].to_numpy(dtype="float64", na_value=0)
        turn = frame["turn"].to_numpy(dtype="float64", na_value=0)
        order = np.lexsort((turn, run, position))
        if np.array_equal(order, np.arange(len(order))):
            out.append(frame)  # in order already: no copy
        else:
            out.append(frame.iloc[order].reset_index(drop=True))
    return out


def _suite_of(store: Store, conn: Any, run: dict[str, Any]) -> Suite | DeferredSuite:
    """The run's suite: deferred (results/_deferred.py) when the run has its case index and a definition
    evalnb wrote (it builds without a doubt), else built now, so a definition that does not validate is
    named at load."""
    definition, digest = _definition(store, conn, run)
    seg = store._t.get("segments")
    # the index first (one small segment): a run without one is built at once, its definition hashed once
    index = None if seg is None else case_index.read(conn, seg, int(run["id"]), run)
    if index is None or not (isinstance(definition, str) and written_by_evalnb(definition, digest)):
        return stored_suite(definition, run, digest)
    del definition  # read again when the suite is asked for: a million cases' text is not held meanwhile
    return DeferredSuite(str(run["suite"]), *index, build=functools.partial(_built, store, dict(run)))


def _suite_entry(store: Store, conn: Any, run: dict[str, Any]) -> Suite | DeferredSuite:
    """The run's suite, read once for the runs of one suite read one after another.

    A suite row never changes (its name and content hash are its key): the runs of one suite that a comparison
    or a notebook loads one after another parse its definition once (a million cases: most of a load's time).
    The last two are kept."""
    entry = store._suites_read.pop(run["suite_id"], None)
    if entry is None:
        entry = _suite_of(store, conn, run)
    store._suites_read[run["suite_id"]] = entry
    while len(store._suites_read) > 2:
        store._suites_read.pop(next(iter(store._suites_read)))
    return entry


def check_readable(store: Store, run: dict[str, Any]) -> None:
    """What a load checks of a stored run before its rows, without reading them: its meta and its suite's
    definition read back (``store.compare`` reads a run's sums alone, and says what a load would say).

    Raises:
        StoreError: ``STORED_RUN_INVALID`` naming the run and what does not read back.
    """
    stored_meta(run["meta"], run)
    with _gc.paused(), store._reading() as conn:
        _suite_entry(store, conn, run)


def _definition(store: Store, conn: Any, run: dict[str, Any]) -> tuple[Any, Any]:
    """The run's suite definition and content hash (``None`` each when its suite row is gone).

    The plain ``definition`` when the row has one (written before schema 10, or by hand), else the ``packed``
    one decompressed (docs/results.md, the store).

    Raises:
        StoreError: ``STORED_RUN_INVALID`` when the packed definition does not decompress.
    """
    from sqlalchemy import select

    s = store._t["suites"]
    packed = s.c.packed if "packed" in s.c else None
    row = conn.execute(
        select(s.c.definition, s.c.content_hash, *([] if packed is None else [packed])).where(
            s.c.id == run["suite_id"]
        )
    ).first()
    if row is None:
        return None, None
    if row[0] is not None or packed is None or row[2] is None:
        return row[0], row[1]
    try:
        return zlib.decompress(row[2]).decode("utf-8", "surrogatepass"), row[1]
    except (zlib.error, UnicodeDecodeError) as exc:
        raise invalid(run, "its suite definition does not decompress:", str(exc)) from None


def _built(store: Store, run: dict[str, Any]) -> Suite:
    """A deferred suite built: its definition read again (a suite row never changes: its content is its key).

    Raises:
        StoreError: ``STORED_RUN_INVALID`` when the definition is gone (its runs were deleted meanwhile).
    """
    with store._reading() as conn:
        definition, digest = _definition(store, conn, run)
    with _gc.paused():
        return stored_suite(definition, run, digest)


def load(store: Store, run: dict[str, Any], *, columns: Any = None, where: Any = None) -> Result:
    """The Result of the stored run ``run`` (its ``runs`` row): frames equal to the saved ones, or, with
    ``columns`` / ``where``, the part of them :mod:`evalnb.store._where` describes.

    The cycle collector is paused meanwhile (evalnb/_gc.py): a load makes millions of objects that hold no
    cycles (the suite's cases and turns, the cells of every row), and the full collections they set off
    walked them all again, half the time of a large load (100,000 cases: the suite 3.0 s with them, 1.4 s
    without).

    Raises:
        StoreError: ``STORED_RUN_INVALID`` when its suite definition, meta or rows do not read back;
            ``INVALID_WHERE`` / ``INVALID_COLUMNS`` for a narrowing that names no stored column.
    """
    with _gc.paused():
        return _load(store, run, columns=columns, where=where)


def _frames(
    store: Store,
    conn: Any,
    run: dict[str, Any],
    narrow: Narrowing | None,
    dtypes: dict[str, Any],
    known: dict[str, dict[str, str]],
) -> list[pd.DataFrame]:
    """The run's four frames: from its segments (schema 8), and from the row tables, where runs saved before
    schema 8 have their rows (a run resumed across the upgrade has both: the older rows first)."""
    import pandas as pd

    seg = store._t.get("segments")  # a read-only store of schema 7 has none
    keys = None if seg is None or narrow is None else kept_keys(conn, seg, run, narrow)
    out = []
    for name, stored in FRAMES.items():
        table = TABLES[name]
        cols = stored if narrow is None else narrow.cols(table)
        new = None
        if seg is not None:
            new = read_columns(
                conn,
                seg,
                run,
                name,
                cols,
                dtypes[name],
                shared=REPEATED[name],
                known=known,
                narrow=narrow,
                keys=keys,
            )
        old = read_frame(
            conn,
            store._t[table],
            cols,
            run["id"],
            dtypes[name],
            run["suite"],
            REPEATED[name],
            known,
            conditions=() if narrow is None else narrow.condition(table, store._t[table]),
            extra=narrow is None or narrow.extra(),
        )
        if new is None:
            out.append(old)
        elif len(old):
            out.append(pd.concat([old, new], ignore_index=True))
        else:
            out.append(new)
    return out


def _load(store: Store, run: dict[str, Any], *, columns: Any, where: Any) -> Result:
    from evalnb.store._where import narrowing

    narrow = narrowing(store._t, int(run["id"]), columns=columns, where=where)

    from evalnb.results import Result
    from evalnb.results._frames import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, TOOL_CALLS_COLUMNS

    meta = stored_meta(run["meta"], run)
    default = {
        "runs": RUNS_COLUMNS,
        "scores": SCORES_COLUMNS,
        "mismatches": MISMATCH_COLUMNS,
        "tool_calls": TOOL_CALLS_COLUMNS,  # a run saved before tool calls were stored has no dtypes for them
    }
    saved = meta.pop("frame_dtypes", None) or {}
    dtypes = {name: saved.get(name) or columns for name, columns in default.items()}
    with store._reading() as conn:
        the_suite = _suite_entry(store, conn, run)
        # fresh: reading a frame adds the texts it meets to it. Text read into Arrow buffers makes no Python
        # strings to share (results/_columns.py, arrow_text).
        known = {} if arrow_text() else suite_texts(the_suite)
        try:
            frames = _frames(store, conn, run, narrow, dtypes, known)
        except (ValueError, TypeError) as exc:  # a dtype the meta names that pandas does not know
            raise invalid(
                run, "its rows", f"do not read back with the column types its meta names ({exc})"
            ) from None
    if meta.pop("row_order", None) == "suite":
        # written case run by case run as they finished (evalnb.run(store=...)): rows come back in suite
        # order, then run, then turn, as the run's own Result has them
        frames = _in_suite_order(frames, the_suite)
    runs, scores, mism, calls = frames
    meta.update(
        run_id=run["run_id"], version=run["version"], status=run["status"], git_commit=run["git_commit"]
    )
    if run["status"] != "complete":
        meta["interrupted"] = True
    if narrow is not None:
        # a part of the run: its counts and summary are of the rows read (store.summary gives the run's)
        meta["narrowed"] = {"columns": None if columns is None else list(columns), "where": repr(where)}
    # The frames were read for this Result alone: conformed in place, not copied (a million rows each).
    return Result.from_frames(
        suite=the_suite,
        runs=runs,
        scores=scores,
        mismatches=mism,
        meta=meta,
        tool_calls=calls,
        copy=False,
    )
