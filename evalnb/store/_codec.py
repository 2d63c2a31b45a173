"""Rows between frames, records and tables: plain values for the driver, bulk inserts, typed frames back.

Rows are written with the driver's ``executemany`` (``COPY`` on PostgreSQL with psycopg) on plain tuples built
column by column: SQLAlchemy's per-row parameter processing was most of the save time.

The streamed writer uses the same ``executemany``: sending SQLite a batch as one JSON array (``json_each``) took
about 3 s more CPU per 100,000 case runs and saved no wall time (benchmarks/store.py --sizes).
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

__all__ = [
    "Rows",
    "column_values",
    "frame_rows",
    "insert_many",
    "plain_values",
    "read_frame",
    "tuple_rows",
]


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


Rows = tuple[list[str], list[tuple[Any, ...]]]


def frame_rows(frame: pd.DataFrame, columns: list[str], *, run_pk: int, seq0: int = 0) -> Rows:
    """Frame -> (column names, row tuples): typed columns, plus any other column as JSON in ``extra``.

    Built column by column (a frame column converts to python values in one call), then zipped into tuples;
    columns the frame lacks are left out so the database fills them with NULL.
    """
    n = len(frame)
    names = ["run_pk", "seq"]
    data: list[list[Any]] = [[run_pk] * n, list(range(seq0, seq0 + n))]
    for c in columns:
        if c in frame.columns:
            names.append(c)
            data.append(column_values(frame[c]))
    extra_cols = [c for c in frame.columns if c not in columns and c != "suite"]
    if extra_cols:
        ex = [column_values(frame[c]) for c in extra_cols]
        names.append("extra")
        data.append(
            [
                json.dumps(dict(zip(extra_cols, vals, strict=True)), default=str)
                for vals in zip(*ex, strict=True)
            ]
        )
    return names, list(zip(*data, strict=True))


def tuple_rows(rows: list[tuple[Any, ...]], *, run_pk: int, seq0: int) -> list[tuple[Any, ...]]:
    """Frame-order row tuples of a record (the suite name first, plain values) -> table tuples:
    ``(run_pk, seq, *columns, extra)``. A record's rows hold exactly the stored columns: no ``extra``."""
    return [(run_pk, seq0 + i, *row[1:], None) for i, row in enumerate(rows)]


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


def insert_many(conn: Connection, table: Table, rows: Rows) -> None:
    """``INSERT`` many row tuples with the driver's ``executemany`` (no per-row SQLAlchemy processing).

    The values are already plain python (bool, int, float, str, None), which both sqlite3 and psycopg adapt
    themselves; drivers with another parameter style go through Core's insert with dicts.
    """
    names, tuples = rows
    if not tuples:
        return
    mark = {"qmark": "?", "format": "%s", "pyformat": "%s"}.get(conn.dialect.paramstyle)
    if mark is None:
        conn.execute(table.insert(), [dict(zip(names, r, strict=True)) for r in tuples])
        return
    quote = conn.dialect.identifier_preparer.quote_identifier  # quoted always: "check" is a keyword
    if conn.dialect.name == "postgresql":
        # PostgreSQL text cannot hold NUL characters, which an agent's raw output may contain: they are
        # stored as U+FFFD (the replacement character) rather than losing the whole run.
        tuples = [_no_nul(row) for row in tuples]
    if conn.dialect.name == "postgresql" and conn.dialect.driver == "psycopg":
        # COPY streams the rows in one command (executemany sends one INSERT per row); same transaction.
        copy_sql = f"COPY {quote(table.name)} ({', '.join(quote(c) for c in names)}) FROM STDIN"
        with conn.connection.driver_connection.cursor() as cur, cur.copy(copy_sql) as copy:  # type: ignore[union-attr]
            for row in tuples:
                copy.write_row(row)
        return
    sql = (
        f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in names)}) "
        f"VALUES ({', '.join([mark] * len(names))})"
    )
    conn.exec_driver_sql(sql, tuples)


def _no_nul(row: tuple[Any, ...]) -> tuple[Any, ...]:
    if not any(isinstance(v, str) and "\x00" in v for v in row):
        return row
    return tuple(v.replace("\x00", "\ufffd") if isinstance(v, str) else v for v in row)
