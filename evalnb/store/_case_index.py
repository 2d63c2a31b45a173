"""A stored run's cases in suite order: their ids, names and categories as one segment (frame ``"cases"``).

Written when a run is saved or ends (``Store.save``, a streamed run's end), from the suite that ran. A load
orders the rows by it and gives the Result a suite built only when asked for (results/_deferred.py): the case
ids, names and categories are what the frames' views need, and the suite's definition of a million cases took
as long to build as the frames took to read (docs/results.md, the store). A run without it (saved by an
earlier evalnb, or one whose process stopped before its end) builds its suite at load, as before.

Example::

    write(conn, segments, run_pk, result)
    read(conn, segments, run_pk, run)       # (ids, names, categories), or None
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalnb.results._columns import arrow_text
from evalnb.results._deferred import case_columns
from evalnb.store._segments import damaged, encode, insert, segments

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

    from evalnb.results import Result

__all__ = ["FRAME", "read", "write"]

FRAME = "cases"
"""The segments' frame name of a run's case index (no frame of a Result has it)."""

_COLUMNS = ("case_id", "case_name", "category")


def write(conn: Connection, table: Table, pk: int, result: Result) -> None:
    """Store the case index of ``result``'s suite as run ``pk``'s (replacing one written before: a resumed
    run's end)."""
    conn.execute(table.delete().where(table.c.run_pk == pk, table.c.frame == FRAME))
    ids, names, categories = (list(c) for c in case_columns(result._suite))
    columns = {"case_id": ids, "case_name": names, "category": categories}
    data = encode(columns, len(ids), dict.fromkeys(_COLUMNS, "string"))
    insert(conn, table, pk, [(FRAME, 0, data, len(ids))])


def read(conn: Connection, table: Table, pk: int, run: Mapping[str, Any]) -> tuple[Any, Any, Any] | None:
    """Run ``pk``'s case ids, names and categories (Arrow arrays of text, or lists), or None if it has none.

    Raises:
        StoreError: ``STORED_RUN_INVALID`` when its bytes do not read back.
    """
    for seg in segments(conn, table, pk, FRAME, run):
        try:
            got = tuple(_column(seg, name) for name in _COLUMNS)
        except (ValueError, zlib.error) as exc:
            raise damaged(run, exc) from None
        return got[0], got[1], got[2]
    return None


def _column(seg: Any, name: str) -> Any:
    text = seg.text(name) if arrow_text() else None  # without pyarrow: python strings
    if text is not None:
        import pandas as pd

        return pd.arrays.ArrowStringArray(text)
    return seg.column(name)
