"""Frames and the row tables: a frame's columns as plain values (what segments store), and the typed frame of
a run stored in the row tables (schema 7 and before) read back.

Runs are written as segments from schema 8 on (store/_segments.py): the row tables took three rows per case
run, inserted with ``executemany`` or ``COPY``, about 70 s of a million-case run's save.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection, Table

__all__ = ["column_values", "plain_values", "read_frame"]


def plain_values(values: Iterable[Any]) -> list[Any]:
    """Plain python values for a DBAPI: NA/NaN -> None, numpy scalars -> python."""
    from pandas import NA

    out: list[Any] = []
    for v in values:
        if v is None or v is NA or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
        elif hasattr(v, "item") and not isinstance(v, (str, bytes)):
            out.append(v.item())
        else:
            out.append(v)
    return out


def column_values(col: pd.Series) -> list[Any]:
    """One frame column as plain python values (NA -> None), converted by numpy/pandas in one go."""
    if col.dtype == object:
        return plain_values(col.tolist())  # mixed objects: numpy scalars and NaN need a look each
    values: list[Any] = col.to_numpy(dtype=object, na_value=None).tolist()
    return values


def read_frame(
    conn: Connection,
    table: Table,
    cols: list[str],
    pk: int,
    dtypes: Mapping[str, str],
    suite_name: str,
    shared: tuple[str, ...] = (),
    known: Mapping[str, Mapping[str, str]] | None = None,
    *,
    conditions: Iterable[Any] = (),
    extra: bool = True,
) -> pd.DataFrame:
    """A stored frame of one run, in saved order (``seq``), with its saved dtypes and any extra columns.

    ``conditions`` narrow the rows (SQLAlchemy clauses: their values are bound parameters); ``extra=False``
    leaves out the columns stored as JSON beside the typed ones (a lazy load that names its columns)."""
    import pandas as pd
    from sqlalchemy import literal, select

    from evalnb.results._columns import CHUNK, Columns

    extra_col = table.c.extra if extra else literal(None).label("extra")
    q = (
        select(*[table.c[c] for c in cols], extra_col)
        .where(table.c.run_pk == pk, *conditions)
        .order_by(table.c.seq)
    )
    # Read in chunks into typed columns, the ``shared`` text kept once (the driver makes a string per cell):
    # a million stored case runs come back without a tuple per row and a copy of every status and reason.
    schema = {c: _READ_AS.get(dtypes.get(c, ""), "object") for c in cols}
    gathered = Columns({**schema, "extra": "object"}, shared=shared, known=known)
    # Read with the driver's own cursor, whose rows are tuples already: each row as a SQLAlchemy Row, then a
    # tuple again, was half the time of a load. The statement is SQLAlchemy's, compiled with its values as
    # the driver's parameters; the columns are plain text, numbers and flags (a flag comes back 0/1 from
    # SQLite: cast to boolean below).
    compiled = q.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    args: Any = tuple(params[k] for k in compiled.positiontup or ()) if compiled.positional else params
    cursor = conn.connection.cursor()
    try:
        cursor.execute(str(compiled), args)
        while part := cursor.fetchmany(CHUNK):
            gathered.extend(part)
    finally:
        cursor.close()
    frame = gathered.frame()
    extras = frame.pop("extra")
    if extras.notna().any():
        parsed = [json.loads(x) if isinstance(x, str) else {} for x in extras]
        keys = list(dict.fromkeys(k for d in parsed for k in d))
        for k in keys:
            frame[k] = [d.get(k) for d in parsed]
    frame.insert(0, "suite", suite_name)
    order = [c for c in dtypes if c in frame.columns] or list(frame.columns)
    frame = frame[order + [c for c in frame.columns if c not in order]]
    for c, dt in dtypes.items():
        if c not in frame.columns:
            continue
        if dt == "boolean":
            frame[c] = frame[c].astype(object).where(frame[c].notna(), None).astype("boolean")
        elif dt in ("Int64", "float64"):
            frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(dt)
        else:
            with contextlib.suppress(TypeError, ValueError):
                frame[c] = frame[c].astype(dt)
    return frame


# How a stored column is first read: text as text; numbers and flags as they come (cast below).
_READ_AS = {"string": "string"}
