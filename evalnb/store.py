"""Saved runs per version: a history to compare and trend (SQLAlchemy Core; a SQLite file by default).

``Store()`` opens ``.evals/evalnb.db`` (created with its folder); a plain path is a SQLite file; any SQLAlchemy
URL works (``postgresql+psycopg://...`` for a team). Tables::

    meta              key/value; ``schema_version`` says which migrations ran
    suites            name, format, content hash and the suite's full definition (JSON of the Suite model)
    runs              run_id, suite, version label, agent, model, judge, checks config with thresholds,
                      started/finished, git commit, status (complete / interrupted), options, meta
    run_rows          result.runs, one row per case x run x turn
    scores            result.scores, one row per case x run x turn x check
    mismatches        result.mismatches
    run_check_stats   per run x check: sufficient statistics (sums per case) so trends aggregate in SQL fast

The schema is versioned (``SCHEMA_VERSION``); opening an older database runs the missing migrations in one
transaction. SQLite runs in WAL mode with a busy timeout, transactions take the write lock up front
(``BEGIN IMMEDIATE``) and a write retries while the database is locked, so two processes saving at once both
succeed. On PostgreSQL migrations hold an advisory lock, a suite definition is inserted with
``ON CONFLICT DO NOTHING`` and a write retries on deadlocks and serialisation failures; the SQL is otherwise
the same for both (no PRAGMAs outside the SQLite connect hook, text columns without a length limit).

Rows are written with the driver's ``executemany`` on plain tuples built column by column from the frames
(one transaction per save): SQLAlchemy's per-row parameter processing was most of the save time.

``evalnb.run(..., store=store, version=...)`` writes each case as soon as all its runs have finished, so a
crash loses nothing that finished; ``evalnb.run(..., store=store, resume=run_id)`` (``evalnb run --resume``)
runs only the cases that are not stored yet.

Example:
    >>> store = evalnb.Store()
    >>> run_id = store.save(result, version="gpt-4o-2026-11")
    >>> store.runs()[["run_id", "suite", "version", "status"]]
    >>> store.trend("foodmart-sales-evals")
    >>> store.compare("gpt-4o-2026-10", "gpt-4o-2026-11").report()
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evalnb.errors import ConfigError, StoreError

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection, Engine, MetaData, Table

    from evalnb.comparison import Comparison, Comparisons
    from evalnb.results import Result
    from evalnb.suite import Suite

__all__ = ["DEFAULT_PATH", "SCHEMA_VERSION", "RunWriter", "Store"]

DEFAULT_PATH = Path(".evals") / "evalnb.db"
SCHEMA_VERSION = 3
_T = TypeVar("_T")

# result frame column -> stored in a typed column. Columns a frame has beyond these go to ``extra`` (JSON).
_RUN_COLS_V1 = [
    "case_id",
    "case_name",
    "category",
    "run",
    "turn",
    "prompt",
    "expected",
    "response",
    "stdout",
    "exit_code",
    "intent",
    "refusal",
    "insight",
    "context",
    "status",
    "error",
    "latency_ms",
    "model",
    "agent",
    "workdir",
]
_SCORE_COLS_V1 = [
    "case_id",
    "case_name",
    "category",
    "run",
    "turn",
    "check",
    "check_id",
    "value",
    "passed",
    "status",
    "reason",
    "judge",
    "options",
]
_MISMATCH_COLS = ["case_id", "run", "turn", "row", "key", "expected", "actual", "tolerance", "reason"]
_RUN_COLS = [*_RUN_COLS_V1, "prompt_tokens", "completion_tokens"]  # schema 2
_SCORE_COLS = [*_SCORE_COLS_V1, "prompt_tokens", "completion_tokens", "cost"]  # schema 2

_INTS = {"run", "turn", "exit_code", "row", "prompt_tokens", "completion_tokens"}
_FLOATS = {"latency_ms", "value", "cost"}
_TEXTS = {
    "prompt",
    "expected",
    "response",
    "stdout",
    "insight",
    "context",
    "error",
    "reason",
    "options",
    "actual",
    "tolerance",
    "refusal",
}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


# --------------------------------------------------------------------------------------------------
# Schema and migrations
# --------------------------------------------------------------------------------------------------


def _label(version: int) -> Any:
    """The type of names and labels: ``VARCHAR(500)`` before schema 3, unbounded ``TEXT`` from schema 3 on
    (SQLite ignores the length; PostgreSQL enforced it and refused long case names, agents or answers)."""
    from sqlalchemy import String, Text

    return String(500) if version < 3 else Text()


def _column(name: str, version: int = SCHEMA_VERSION) -> Any:
    from sqlalchemy import Boolean, Column, Float, Integer, Text

    if name in _INTS:
        return Column(name, Integer)
    if name in _FLOATS:
        return Column(name, Float)
    if name == "passed":
        return Column(name, Boolean)
    if name in _TEXTS:
        return Column(name, Text)
    return Column(name, _label(version))


def _tables(version: int) -> tuple[MetaData, dict[str, Table]]:
    """The table definitions as they are at schema ``version`` (1, 2 or 3)."""
    from sqlalchemy import (
        Column,
        Float,
        ForeignKey,
        Index,
        Integer,
        MetaData,
        String,
        Table,
        Text,
        UniqueConstraint,
    )

    md = MetaData()
    t: dict[str, Table] = {}
    t["meta"] = Table("meta", md, Column("key", String(100), primary_key=True), Column("value", Text))
    t["suites"] = Table(
        "suites",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("name", _label(version), nullable=False),
        Column("format", String(50)),
        Column("content_hash", String(64), nullable=False),
        Column("definition", Text),
        Column("created_at", String(40)),
        UniqueConstraint("name", "content_hash", name="uq_suites_name_hash"),
    )
    run_extra = (
        [
            Column("latency_ms", Float),
            Column("cost", Float),
            Column("prompt_tokens", Integer),
            Column("completion_tokens", Integer),
        ]
        if version >= 2
        else []
    )
    t["runs"] = Table(
        "runs",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(40), nullable=False, unique=True),
        Column("suite_id", Integer, ForeignKey("suites.id"), nullable=False),
        Column("suite", _label(version), nullable=False, index=True),
        Column("version", _label(version), index=True),
        Column("agent", _label(version)),
        Column("model", _label(version)),
        Column("judge", _label(version)),
        Column("checks", Text),
        Column("options", Text),
        Column("meta", Text),
        Column("started_at", String(40)),
        Column("finished_at", String(40)),
        Column("git_commit", String(64)),
        Column("status", String(20)),
        Column("saved_at", String(40)),
        *run_extra,
    )
    fk = ForeignKey("runs.id", ondelete="CASCADE")
    run_cols = _RUN_COLS if version >= 2 else _RUN_COLS_V1
    score_cols = _SCORE_COLS if version >= 2 else _SCORE_COLS_V1
    t["run_rows"] = Table(
        "run_rows",
        md,
        Column("run_pk", Integer, fk, nullable=False, index=True),
        Column("seq", Integer),
        *[_column(c, version) for c in run_cols],
        Column("extra", Text),
    )
    t["scores"] = Table(
        "scores",
        md,
        Column("run_pk", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("seq", Integer),
        *[_column(c, version) for c in score_cols],
        Column("extra", Text),
    )
    if version < 3:
        Index("ix_scores_run", t["scores"].c.run_pk)
    t["mismatches"] = Table(
        "mismatches",
        md,
        Column("run_pk", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
        Column("seq", Integer),
        *[_column(c, version) for c in _MISMATCH_COLS],
        Column("extra", Text),
    )
    if version >= 2:
        Index("ix_scores_run_check", t["scores"].c.run_pk, t["scores"].c.check_id)
        t["run_check_stats"] = Table(
            "run_check_stats",
            md,
            Column("run_pk", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
            Column("check_id", _label(version), primary_key=True),
            # value: per case i, n_i scored rows with sum s_i -> cluster-robust variance of the mean
            Column("cases", Integer),
            Column("n", Integer),
            Column("total", Float),
            Column("sq", Float),
            Column("xprod", Float),
            Column("nsq", Float),
            # passed, over checked rows (NA counts as not passed, as in Result.summary)
            Column("pcases", Integer),
            Column("pn", Integer),
            Column("ptotal", Float),
            Column("psq", Float),
            Column("pcross", Float),
            Column("pnsq", Float),
        )
    return md, t


def _migration_1(conn: Connection) -> None:
    """Schema 1: meta, suites, runs, run_rows, scores, mismatches."""
    md, _ = _tables(1)
    md.create_all(conn)


def _migration_2(conn: Connection) -> None:
    """Schema 2: token and cost columns, per run x check statistics (backfilled) and a scores index."""
    from sqlalchemy import text

    for table, cols in (
        ("run_rows", [("prompt_tokens", "INTEGER"), ("completion_tokens", "INTEGER")]),
        ("scores", [("prompt_tokens", "INTEGER"), ("completion_tokens", "INTEGER"), ("cost", "FLOAT")]),
        (
            "runs",
            [
                ("latency_ms", "FLOAT"),
                ("cost", "FLOAT"),
                ("prompt_tokens", "INTEGER"),
                ("completion_tokens", "INTEGER"),
            ],
        ),
    ):
        for name, sqltype in cols:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {sqltype}"))
    _md, t = _tables(2)
    t["run_check_stats"].create(conn)
    for index in t["scores"].indexes:
        if index.name == "ix_scores_run_check":
            index.create(conn)
    for (pk,) in conn.execute(text("SELECT id FROM runs")).fetchall():
        _refresh_stats(conn, int(pk))


def _migration_3(conn: Connection) -> None:
    """Schema 3: names and labels become unbounded text (``VARCHAR(500)`` -> ``TEXT``); the scores index on
    ``run_pk`` alone goes (``ix_scores_run_check`` starts with ``run_pk``, and every index slows a save).

    SQLite never enforced the length, so there is nothing to change there; PostgreSQL rewrites the columns.
    """
    from sqlalchemy import String, Text, inspect

    conn.exec_driver_sql("DROP INDEX IF EXISTS ix_scores_run")
    if conn.dialect.name == "sqlite":
        return
    quote = conn.dialect.identifier_preparer.quote_identifier
    insp = inspect(conn)
    for table in ("suites", "runs", "run_rows", "scores", "mismatches", "run_check_stats"):
        for col in insp.get_columns(table):
            kind = col["type"]
            if isinstance(kind, String) and not isinstance(kind, Text) and kind.length == 500:
                conn.exec_driver_sql(
                    f"ALTER TABLE {quote(table)} ALTER COLUMN {quote(col['name'])} TYPE TEXT"
                )


_MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _migration_1, 2: _migration_2, 3: _migration_3}


def _schema_version(conn: Connection) -> int:
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("meta"):
        return 0
    row = conn.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).fetchone()
    return int(row[0]) if row else 0


def _migrate(engine: Engine, *, target: int = SCHEMA_VERSION) -> int:
    """Run the migrations from the database's schema version up to ``target``; returns the version."""
    from sqlalchemy import text

    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Two processes opening a new database at once: one creates the tables, the other waits and then
            # sees them (SQLite gets the same from BEGIN IMMEDIATE). Released when the transaction ends.
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(72310512)")
        current = _schema_version(conn)
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the store has schema version {current}; this evalnb knows up to {SCHEMA_VERSION}: upgrade evalnb",
                code="STORE_SCHEMA_TOO_NEW",
            )
        for v in range(current + 1, target + 1):
            _MIGRATIONS[v](conn)
            conn.execute(text("DELETE FROM meta WHERE key = 'schema_version'"))
            conn.execute(text("INSERT INTO meta (key, value) VALUES ('schema_version', :v)"), {"v": str(v)})
        return max(current, target)


def _refresh_stats(conn: Connection, run_pk: int) -> None:
    """Recompute a run's per-check sufficient statistics and its latency, cost and token totals (in SQL)."""
    from sqlalchemy import text

    conn.execute(text("DELETE FROM run_check_stats WHERE run_pk = :pk"), {"pk": run_pk})
    # Sums per case first (a case's runs and turns are one cluster), then per check.
    conn.execute(
        text(
            """
            INSERT INTO run_check_stats (run_pk, check_id, cases, n, total, sq, xprod, nsq,
                                         pcases, pn, ptotal, psq, pcross, pnsq)
            SELECT run_pk, check_id,
                   SUM(CASE WHEN n > 0 THEN 1 ELSE 0 END), SUM(n), SUM(s), SUM(s * s), SUM(s * n), SUM(n * n),
                   COUNT(*), SUM(pn), SUM(ps), SUM(ps * ps), SUM(ps * pn), SUM(pn * pn)
            FROM (
                SELECT run_pk, check_id, case_id,
                       COUNT(value) AS n, COALESCE(SUM(value), 0.0) AS s,
                       COUNT(*) AS pn, SUM(CASE WHEN passed THEN 1.0 ELSE 0.0 END) AS ps
                FROM scores
                WHERE run_pk = :pk AND (status IS NULL OR status NOT IN ('not_checked', 'skipped'))
                GROUP BY run_pk, check_id, case_id
            ) per_case
            GROUP BY run_pk, check_id
            """
        ),
        {"pk": run_pk},
    )
    conn.execute(
        text(
            """
            UPDATE runs SET
              latency_ms = (SELECT AVG(latency_ms) FROM run_rows WHERE run_pk = :pk),
              prompt_tokens = (SELECT SUM(prompt_tokens) FROM run_rows WHERE run_pk = :pk),
              completion_tokens = (SELECT SUM(completion_tokens) FROM run_rows WHERE run_pk = :pk),
              cost = (SELECT SUM(cost) FROM scores WHERE run_pk = :pk)
            WHERE id = :pk
            """
        ),
        {"pk": run_pk},
    )


# --------------------------------------------------------------------------------------------------
# Rows <-> frames
# --------------------------------------------------------------------------------------------------


def _py(values: Iterable[Any]) -> list[Any]:
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


def _values(col: pd.Series) -> list[Any]:
    """One frame column as plain python values (NA -> None), converted by numpy/pandas in one go."""
    if col.dtype == object:
        return _py(col.tolist())  # mixed objects: numpy scalars and NaN need a look each
    values: list[Any] = col.to_numpy(dtype=object, na_value=None).tolist()
    return values


_Rows = tuple[list[str], list[tuple[Any, ...]]]


def _frame_rows(frame: pd.DataFrame, columns: list[str], *, run_pk: int, seq0: int = 0) -> _Rows:
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
            data.append(_values(frame[c]))
    extra_cols = [c for c in frame.columns if c not in columns and c != "suite"]
    if extra_cols:
        ex = [_values(frame[c]) for c in extra_cols]
        names.append("extra")
        data.append(
            [
                json.dumps(dict(zip(extra_cols, vals, strict=True)), default=str)
                for vals in zip(*ex, strict=True)
            ]
        )
    return names, list(zip(*data, strict=True))


def _dict_rows(rows: list[dict[str, Any]], columns: list[str], *, run_pk: int, seq0: int) -> _Rows:
    """Runner row dicts -> (column names, row tuples) (the incremental path; other keys go to ``extra``)."""
    out: list[tuple[Any, ...]] = []
    for i, r in enumerate(rows):
        extra = {k: v for k, v in r.items() if k not in columns and k != "suite" and not k.startswith("_")}
        out.append(
            (
                run_pk,
                seq0 + i,
                *_py([r.get(c) for c in columns]),
                json.dumps(extra, default=str) if extra else None,
            )
        )
    return ["run_pk", "seq", *columns, "extra"], out


def _insert_many(conn: Connection, table: Table, rows: _Rows) -> None:
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


def _git_commit(where: Path) -> str | None:
    """The commit of the repository ``where`` is in, or None (not a repository, no git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) >= 7 else None


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


# --------------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------------


class Store:
    """Saved runs per version.

    Args:
        url_or_path: ``None`` for ``.evals/evalnb.db``; a path for a SQLite file (parents created); or any
            SQLAlchemy URL (``sqlite:///x.db``, ``postgresql+psycopg://user@host/db``).
        retry_seconds: how long a write keeps retrying while another process holds the database.

    Example:
        >>> store = evalnb.Store("team.db")
        >>> run_id = store.save(result, version="v2")
        >>> store.load("v2").summary()
    """

    def __init__(
        self, url_or_path: str | os.PathLike[str] | None = None, *, retry_seconds: float = 60.0
    ) -> None:
        from sqlalchemy import create_engine, event
        from sqlalchemy.engine import make_url

        self.retry_seconds = retry_seconds
        target = DEFAULT_PATH if url_or_path is None else url_or_path
        text_target = os.fspath(target)
        if "://" in text_target:
            url = make_url(text_target)
        else:
            path = Path(text_target).expanduser()
            path.parent.mkdir(parents=True, exist_ok=True)
            url = make_url(f"sqlite:///{path.resolve()}")
        self.url = url
        self.is_sqlite = url.get_backend_name() == "sqlite"
        if self.is_sqlite:
            db = url.database
            if db and db != ":memory:":
                Path(db).parent.mkdir(parents=True, exist_ok=True)
            self.engine = create_engine(url, connect_args={"timeout": 30})

            @event.listens_for(self.engine, "connect")
            def _on_connect(dbapi_conn: Any, _record: Any) -> None:
                # Let SQLAlchemy, not pysqlite, decide when transactions begin (SQLAlchemy's SQLite recipe).
                dbapi_conn.isolation_level = None
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA busy_timeout = 30000")
                cur.execute("PRAGMA journal_mode = WAL")
                cur.execute("PRAGMA synchronous = NORMAL")
                cur.execute("PRAGMA foreign_keys = ON")
                cur.close()

            @event.listens_for(self.engine, "begin")
            def _on_begin(conn: Any) -> None:
                # Take the write lock up front: two writers that both start by reading would otherwise
                # deadlock on the upgrade from a shared to a write lock (SQLITE_BUSY without waiting).
                conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            self.engine = create_engine(url)
        self._retry(lambda: _migrate(self.engine))
        self._t = _tables(SCHEMA_VERSION)[1]

    def __repr__(self) -> str:
        return f"Store({self.url.render_as_string(hide_password=True)!r})"

    @property
    def schema_version(self) -> int:
        """The schema version of the database (after migrations: ``SCHEMA_VERSION``)."""
        with self.engine.connect() as conn:
            return _schema_version(conn)

    # -- retries -------------------------------------------------------------------------------------

    def _retry(self, fn: Callable[[], _T]) -> _T:
        """Run ``fn`` (a whole transaction), retrying while the database is locked or busy."""
        from sqlalchemy.exc import OperationalError

        deadline = time.monotonic() + self.retry_seconds
        delay = 0.02
        while True:
            try:
                return fn()
            except OperationalError as exc:
                msg = str(exc).lower()
                # SQLite: "database is locked" / "busy"; PostgreSQL: deadlocks and serialisation failures.
                transient = any(w in msg for w in ("locked", "busy", "deadlock", "could not serialize"))
                if transient and time.monotonic() > deadline:
                    raise StoreError(
                        f"the store stayed busy for {self.retry_seconds:g}s: {exc.orig}", code="STORE_BUSY"
                    ) from exc
                if not transient:
                    # e.g. a server that refuses the connection, or a file that cannot be opened
                    raise StoreError(
                        f"the store {self.url.render_as_string(hide_password=True)} could not be used: {exc.orig}",
                        code="STORE_UNAVAILABLE",
                    ) from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    # -- writing -------------------------------------------------------------------------------------

    def _suite_id(self, conn: Connection, suite: Suite) -> int:
        from sqlalchemy import select

        t = self._t["suites"]
        h = suite.content_hash()
        where = select(t.c.id).where(t.c.name == suite.name, t.c.content_hash == h)
        row = conn.execute(where).fetchone()
        if row:
            return int(row[0])
        values = {
            "name": suite.name,
            "format": suite.format,
            "content_hash": h,
            "definition": suite.model_dump_json(),
            "created_at": _now(),
        }
        if conn.dialect.name in ("sqlite", "postgresql"):
            # Another process may insert the same suite meanwhile (PostgreSQL does not serialise writers as
            # SQLite's BEGIN IMMEDIATE does): insert unless present, then read the id whoever inserted it.
            from sqlalchemy.dialects import postgresql, sqlite

            dml = sqlite if conn.dialect.name == "sqlite" else postgresql
            conn.execute(dml.insert(t).values(**values).on_conflict_do_nothing())
            return int(conn.execute(where).scalar_one())
        res = conn.execute(t.insert().values(**values))
        return int(res.inserted_primary_key[0])  # type: ignore[index]

    def _insert_run(
        self, conn: Connection, suite: Suite, *, version: str | None, meta: Mapping[str, Any], status: str
    ) -> tuple[int, str]:
        run_id = uuid.uuid4().hex[:12]
        suite_id = self._suite_id(conn, suite)
        where = Path(suite.path).resolve().parent if suite.path else Path.cwd()
        res = conn.execute(
            self._t["runs"]
            .insert()
            .values(
                run_id=run_id,
                suite_id=suite_id,
                suite=suite.name,
                version=version,
                git_commit=_git_commit(where),
                status=status,
                saved_at=_now(),
                **self._run_fields(meta),
            )
        )
        return int(res.inserted_primary_key[0]), run_id  # type: ignore[index]

    @staticmethod
    def _run_fields(meta: Mapping[str, Any]) -> dict[str, Any]:
        agent = meta.get("agent")
        return {
            "agent": agent if agent is None or isinstance(agent, str) else _dumps(agent),
            "model": meta.get("model"),
            "judge": meta.get("judge"),
            "checks": _dumps(meta.get("checks") or {}),
            "options": _dumps(meta.get("options") or {}),
            "meta": _dumps({k: v for k, v in meta.items() if k not in ("run_id", "version")}),
            "started_at": meta.get("started_at"),
            "finished_at": meta.get("finished_at"),
        }

    def _write_frames(self, conn: Connection, run_pk: int, result: Result) -> None:
        t = self._t
        for name, frame, cols in (
            ("run_rows", result.runs, _RUN_COLS),
            ("scores", result.scores, _SCORE_COLS),
            ("mismatches", result.mismatches, _MISMATCH_COLS),
        ):
            if len(frame):
                _insert_many(conn, t[name], _frame_rows(frame, cols, run_pk=run_pk))

    @staticmethod
    def _dtypes(result: Result) -> dict[str, dict[str, str]]:
        return {
            "runs": {c: str(d) for c, d in result.runs.dtypes.items()},
            "scores": {c: str(d) for c, d in result.scores.dtypes.items()},
            "mismatches": {c: str(d) for c, d in result.mismatches.dtypes.items()},
        }

    def save(self, result: Result, *, version: str | None = None) -> str:
        """Save a finished result under a version label; returns its new ``run_id``.

        Example:
            >>> run_id = store.save(result, version="gpt-4o-2026-11")
        """
        meta = dict(result.meta)
        meta["frame_dtypes"] = self._dtypes(result)
        status = "interrupted" if meta.get("interrupted") else "complete"

        def tx() -> str:
            with self.engine.begin() as conn:
                pk, run_id = self._insert_run(conn, result.suite, version=version, meta=meta, status=status)
                self._write_frames(conn, pk, result)
                _refresh_stats(conn, pk)
                return run_id

        run_id = self._retry(tx)
        result.meta["run_id"] = run_id
        result.meta["version"] = version
        return run_id

    def begin(
        self, suite: Suite, *, version: str | None = None, meta: Mapping[str, Any] | None = None
    ) -> RunWriter:
        """Start a run that is written case by case (what ``evalnb.run(store=...)`` uses).

        The run is ``interrupted`` until :meth:`RunWriter.finish` marks it ``complete``.
        """
        m = {"started_at": _now(), **dict(meta or {})}

        def tx() -> tuple[int, str]:
            with self.engine.begin() as conn:
                return self._insert_run(conn, suite, version=version, meta=m, status="interrupted")

        pk, run_id = self._retry(tx)
        return RunWriter(self, pk, run_id, suite, version)

    def delete(self, run_id: str) -> None:
        """Delete a saved run and its rows.

        Raises:
            StoreError: when there is no such run (code ``RUN_NOT_FOUND``).

        Example:
            >>> store.delete("3f2a9c1b7d4e")
        """
        pk = self._resolve(run_id, by_version=False)["id"]

        def tx() -> None:
            with self.engine.begin() as conn:
                for name in ("run_check_stats", "mismatches", "scores", "run_rows"):
                    conn.execute(self._t[name].delete().where(self._t[name].c.run_pk == pk))
                conn.execute(self._t["runs"].delete().where(self._t["runs"].c.id == pk))

        self._retry(tx)

    # -- reading -------------------------------------------------------------------------------------

    def runs(self, suite: str | None = None) -> pd.DataFrame:
        """Saved runs, oldest first: run_id, suite, version, agent, model, judge, status, times, git commit.

        Example:
            >>> store.runs(suite="foodmart-sales-evals")[["run_id", "version", "status"]]
        """
        import pandas as pd
        from sqlalchemy import select

        r, s = self._t["runs"], self._t["suites"]
        q = (
            select(
                r.c.run_id,
                r.c.suite,
                r.c.version,
                r.c.agent,
                r.c.model,
                r.c.judge,
                r.c.status,
                r.c.started_at,
                r.c.finished_at,
                r.c.git_commit,
                s.c.format,
                s.c.content_hash.label("suite_hash"),
                r.c.latency_ms,
                r.c.cost,
                r.c.checks,
            )
            .join(s, s.c.id == r.c.suite_id)
            .order_by(r.c.id)
        )
        if suite is not None:
            q = q.where(r.c.suite == suite)
        with self.engine.connect() as conn:
            rows = conn.execute(q).fetchall()
        dtypes = {
            "run_id": "string",
            "suite": "string",
            "version": "string",
            "agent": "string",
            "model": "string",
            "judge": "string",
            "status": "string",
            "started_at": "string",
            "finished_at": "string",
            "git_commit": "string",
            "format": "string",
            "suite_hash": "string",
            "latency_ms": "float64",
            "cost": "float64",
            "checks": "string",
        }
        frame = pd.DataFrame([tuple(x) for x in rows], columns=list(dtypes))
        return frame.astype(dtypes)

    def _resolve(self, key: str, *, by_version: bool = True, suite: str | None = None) -> dict[str, Any]:
        """The runs row for a run id, else the latest complete run with that version label."""
        from sqlalchemy import select

        r = self._t["runs"]
        with self.engine.connect() as conn:
            row = conn.execute(select(r).where(r.c.run_id == key)).mappings().fetchone()
            if row is None and by_version:
                q = select(r).where(r.c.version == key)
                if suite is not None:
                    q = q.where(r.c.suite == suite)
                rows = conn.execute(q.order_by(r.c.id)).mappings().fetchall()
                latest = {str(x["suite"]): str(x["run_id"]) for x in rows}
                if len(latest) > 1:
                    # a label shared by suites names no single run: picking the latest would silently load
                    # (or compare against) another suite's run
                    named = ", ".join(f"{name!r} (latest run {rid})" for name, rid in latest.items())
                    raise StoreError(
                        f"version {key!r} is saved for several suites: {named}; "
                        "name the suite (suite=... in Python, --suite on the command line) or use a run id",
                        code="AMBIGUOUS_VERSION",
                    )
                complete = [x for x in rows if x["status"] == "complete"]
                row = (complete or rows)[-1] if rows else None
            elif row is None:
                # delete() takes run ids only: a version label may name several runs
                labelled = conn.execute(
                    select(r.c.run_id).where(r.c.version == key).order_by(r.c.id)
                ).fetchall()
                if labelled:
                    ids = ", ".join(str(x[0]) for x in labelled)
                    raise StoreError(
                        f"{key!r} is a version label, not a run id; its runs: {ids}", code="RUN_NOT_FOUND"
                    )
        if row is None:
            what = "run id or version" if by_version else "run id"
            raise StoreError(f"no saved run with {what} {key!r} in {self!r}", code="RUN_NOT_FOUND")
        return dict(row)

    def _frame(
        self,
        conn: Connection,
        name: str,
        cols: list[str],
        pk: int,
        dtypes: Mapping[str, str],
        suite_name: str,
    ) -> pd.DataFrame:
        import pandas as pd
        from sqlalchemy import select

        t = self._t[name]
        q = select(*[t.c[c] for c in cols], t.c.extra).where(t.c.run_pk == pk).order_by(t.c.seq)
        rows = conn.execute(q).fetchall()
        frame = pd.DataFrame([tuple(x) for x in rows], columns=[*cols, "extra"])
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

    def load(self, run_id_or_version: str, *, suite: str | None = None) -> Result:
        """A saved run as a Result whose frames equal the saved ones (columns, order and dtypes).

        ``run_id_or_version`` is a run id, or a version label (its latest complete run; ``suite`` narrows
        the search when several suites share labels).

        Raises:
            StoreError: when nothing matches (code ``RUN_NOT_FOUND``).

        Example:
            >>> store.load("gpt-4o-2026-11").summary()
        """
        from sqlalchemy import select

        from evalnb.results import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, Result
        from evalnb.suite import Suite

        run = self._resolve(run_id_or_version, suite=suite)
        s = self._t["suites"]
        meta = json.loads(run["meta"] or "{}")
        dtypes = meta.pop("frame_dtypes", None) or {
            "runs": RUNS_COLUMNS,
            "scores": SCORES_COLUMNS,
            "mismatches": MISMATCH_COLUMNS,
        }
        with self.engine.connect() as conn:
            definition = conn.execute(select(s.c.definition).where(s.c.id == run["suite_id"])).scalar_one()
            the_suite = Suite.model_validate_json(definition)
            runs = self._frame(conn, "run_rows", _RUN_COLS, run["id"], dtypes["runs"], run["suite"])
            scores = self._frame(conn, "scores", _SCORE_COLS, run["id"], dtypes["scores"], run["suite"])
            mism = self._frame(
                conn, "mismatches", _MISMATCH_COLS, run["id"], dtypes["mismatches"], run["suite"]
            )
        meta.update(
            run_id=run["run_id"], version=run["version"], status=run["status"], git_commit=run["git_commit"]
        )
        if run["status"] != "complete":
            meta["interrupted"] = True
        return Result.from_frames(suite=the_suite, runs=runs, scores=scores, mismatches=mism, meta=meta)

    def trend(
        self, suite: str, *, confidence: float = 0.95, include_incomplete: bool = False
    ) -> pd.DataFrame:
        """Per saved run (in run order) x check: n, cases, mean and pass rate with intervals, latency, cost.

        Aggregated in SQL from per-case sums written at save time, so it stays fast over many versions.
        The standard error is cluster-robust (cases are the clusters: a case's runs and turns are not
        independent), and the intervals stay inside each check's scale (``evalnb.checks.scales``): a pass rate
        or a 0-1 value gets a Wilson interval with the design-effect sample size, a 1-5 score the same on its
        range, a count an interval on the log scale (see ``evalnb.comparison.stats.bounded_interval``).

        Columns: ``order, run_id, version, started_at, check_id, n, cases, mean, ci_low, ci_high, pass_rate,
        pass_ci_low, pass_ci_high, latency_ms, cost, prompt_tokens, completion_tokens``.

        Example:
            >>> store.trend("foodmart-sales-evals").pivot(index="version", columns="check_id", values="mean")
        """
        import numpy as np
        import pandas as pd
        from sqlalchemy import select

        from evalnb.checks.scales import scale_of
        from evalnb.comparison.stats import bounded_interval, cluster_mean

        r, st = self._t["runs"], self._t["run_check_stats"]
        q = (
            select(
                r.c.id,
                r.c.run_id,
                r.c.version,
                r.c.started_at,
                r.c.latency_ms,
                r.c.cost,
                r.c.prompt_tokens,
                r.c.completion_tokens,
                st.c.check_id,
                st.c.cases,
                st.c.n,
                st.c.total,
                st.c.sq,
                st.c.xprod,
                st.c.nsq,
                st.c.pcases,
                st.c.pn,
                st.c.ptotal,
                st.c.psq,
                st.c.pcross,
                st.c.pnsq,
            )
            .join(st, st.c.run_pk == r.c.id)
            .where(r.c.suite == suite)
            .order_by(r.c.id, st.c.check_id)
        )
        if not include_incomplete:
            q = q.where(r.c.status == "complete")
        with self.engine.connect() as conn:
            rows = conn.execute(q).fetchall()
        cols = [
            "id",
            "run_id",
            "version",
            "started_at",
            "latency_ms",
            "cost",
            "prompt_tokens",
            "completion_tokens",
            "check_id",
            "cases",
            "n",
            "total",
            "sq",
            "xprod",
            "nsq",
            "pcases",
            "pn",
            "ptotal",
            "psq",
            "pcross",
            "pnsq",
        ]
        f = pd.DataFrame([tuple(x) for x in rows], columns=cols)

        g, pg = f["cases"].to_numpy(dtype=float), f["pcases"].to_numpy(dtype=float)
        mean, var = cluster_mean(f["n"], g, f["total"], f["sq"], f["xprod"], f["nsq"])
        pmean, pvar = cluster_mean(f["pn"], pg, f["ptotal"], f["psq"], f["pcross"], f["pnsq"])
        lo, hi = np.full(len(f), np.nan), np.full(len(f), np.nan)
        for check_id in f["check_id"].unique():
            at = (f["check_id"] == check_id).to_numpy()
            scale = scale_of(str(check_id))
            low, high = (scale.low, scale.high) if scale is not None else (-math.inf, math.inf)
            proportion = scale is not None and scale.kind == "pass/fail"
            lo[at], hi[at] = bounded_interval(
                mean[at], var[at], g[at], low=low, high=high, confidence=confidence, proportion=proportion
            )
        plo, phi = bounded_interval(pmean, pvar, pg, low=0.0, high=1.0, confidence=confidence)
        order = pd.Series(pd.factorize(f["id"])[0] + 1 if len(f) else [], dtype="Int64")
        out = pd.DataFrame(
            {
                "order": order,
                "run_id": f["run_id"].astype("string"),
                "version": f["version"].astype("string"),
                "started_at": f["started_at"].astype("string"),
                "check_id": f["check_id"].astype("string"),
                "n": f["n"].astype("Int64"),
                "cases": f["cases"].astype("Int64"),
                "mean": pd.Series(mean, dtype="float64"),
                "ci_low": pd.Series(lo, dtype="float64"),
                "ci_high": pd.Series(hi, dtype="float64"),
                "pass_rate": pd.Series(pmean, dtype="float64"),
                "pass_ci_low": pd.Series(plo, dtype="float64"),
                "pass_ci_high": pd.Series(phi, dtype="float64"),
                "latency_ms": f["latency_ms"].astype("float64"),
                "cost": f["cost"].astype("float64"),
                "prompt_tokens": f["prompt_tokens"].astype("Int64"),
                "completion_tokens": f["completion_tokens"].astype("Int64"),
            }
        )
        out.attrs["suite"] = suite
        out.attrs["confidence"] = confidence
        return out

    def compare(self, a: str, b: str, *, suite: str | None = None, **options: Any) -> Comparison:
        """Compare two saved runs of one suite (run ids or version labels): ``b`` against the baseline ``a``.

        A version label shared by suites needs ``suite``; :meth:`compare_all` compares every suite the two
        versions share. ``options`` go to ``evalnb.compare`` (``margin``, ``confidence``, ``fail_on_missing``).

        Example:
            >>> store.compare("v1", "v2").checks[["check_id", "diff", "verdict", "words"]]
        """
        from evalnb.comparison import compare

        ra, rb = self.load(a, suite=suite), self.load(b, suite=suite)
        return compare(
            ra, rb, labels=(str(ra.meta.get("version") or a), str(rb.meta.get("version") or b)), **options
        )

    def compare_all(self, a: str, b: str, *, suite: str | None = None, **options: Any) -> Comparisons:
        """Compare every suite that both ``a`` and ``b`` have, gated as one (``evalnb compare A B``).

        One family of tests over all their checks keeps the gate's false-alarm rate at ``1 - confidence``
        however many suites there are. Suites that only one side has are named in the report (a suite the
        candidate lost gates with ``fail_on_missing=True``).

        Raises:
            StoreError: when either is unknown (``RUN_NOT_FOUND``) or they share no suite (``NO_SHARED_SUITE``).

        Example:
            >>> g = store.compare_all("main", "candidate", margin=0.02)
            >>> g.exit_code, print(g.report())
        """
        from evalnb.comparison import gate

        if suite is not None:
            return gate({suite: self.compare(a, b, suite=suite, **options)})
        in_a, in_b = self._suites_of(a), self._suites_of(b)
        shared = [name for name in in_a if name in in_b]
        if not shared:
            raise StoreError(
                f"{a!r} and {b!r} share no suite: {a!r} has {', '.join(in_a)}; {b!r} has {', '.join(in_b)}",
                code="NO_SHARED_SUITE",
            )
        missing = {name: "baseline only" for name in in_a if name not in in_b}
        missing.update({name: "candidate only" for name in in_b if name not in in_a})
        return gate(
            {name: self.compare(a, b, suite=name, **options) for name in shared}, missing_suites=missing
        )

    def _suites_of(self, key: str) -> list[str]:
        """The suites a run id or version label names, in the order they were first saved."""
        from sqlalchemy import select

        r = self._t["runs"]
        with self.engine.connect() as conn:
            row = conn.execute(select(r.c.suite).where(r.c.run_id == key)).fetchone()
            if row is not None:
                return [str(row[0])]
            rows = conn.execute(select(r.c.suite).where(r.c.version == key).order_by(r.c.id)).fetchall()
        if not rows:
            raise StoreError(f"no saved run with run id or version {key!r} in {self!r}", code="RUN_NOT_FOUND")
        return list(dict.fromkeys(str(x[0]) for x in rows))

    # -- resume support ------------------------------------------------------------------------------

    def _stored_cases(self, run_pk: int) -> set[str]:
        from sqlalchemy import select

        t = self._t["run_rows"]
        with self.engine.connect() as conn:
            return {
                str(x[0]) for x in conn.execute(select(t.c.case_id).where(t.c.run_pk == run_pk).distinct())
            }


class RunWriter:
    """Writes one run case by case (made by :meth:`Store.begin`)."""

    def __init__(self, store: Store, run_pk: int, run_id: str, suite: Suite, version: str | None) -> None:
        self.store = store
        self.run_pk = run_pk
        self.run_id = run_id
        self.suite = suite
        self.version = version
        self._seq = 0

    def on_case(
        self,
        case_id: str,
        run_rows: list[dict[str, Any]],
        score_rows: list[dict[str, Any]],
        mismatch_rows: list[dict[str, Any]] | None = None,
    ) -> None:
        """Persist every run of one finished case, with its row mismatches, in one transaction (the runner's
        per-case hook): a crash after this keeps the case whole."""
        t = self.store._t
        mismatch_rows = mismatch_rows or []
        seq0 = self._seq
        self._seq += len(run_rows) + len(score_rows) + len(mismatch_rows)

        def tx() -> None:
            with self.store.engine.begin() as conn:
                for name, rows, cols in (
                    ("run_rows", run_rows, _RUN_COLS),
                    ("scores", score_rows, _SCORE_COLS),
                    ("mismatches", mismatch_rows, _MISMATCH_COLS),
                ):
                    if rows:
                        _insert_many(conn, t[name], _dict_rows(rows, cols, run_pk=self.run_pk, seq0=seq0))

        self.store._retry(tx)

    def finish(self, result: Result) -> str:
        """Close the run: a complete result replaces the incremental rows (in frame order, with mismatches);
        an interrupted one keeps the cases that finished and stays ``interrupted`` so it can be resumed."""
        from sqlalchemy import update

        meta = dict(result.meta)
        meta["frame_dtypes"] = Store._dtypes(result)
        interrupted = bool(meta.get("interrupted"))
        t = self.store._t

        def tx() -> None:
            with self.store.engine.begin() as conn:
                if not interrupted:
                    for name in ("run_rows", "scores", "mismatches"):
                        conn.execute(t[name].delete().where(t[name].c.run_pk == self.run_pk))
                    self.store._write_frames(conn, self.run_pk, result)
                conn.execute(
                    update(t["runs"])
                    .where(t["runs"].c.id == self.run_pk)
                    .values(status="interrupted" if interrupted else "complete", **Store._run_fields(meta))
                )
                _refresh_stats(conn, self.run_pk)

        self.store._retry(tx)
        result.meta["run_id"] = self.run_id
        result.meta["version"] = self.version
        return self.run_id


def as_store(store: Any) -> Store:
    """A Store from a Store, a path or a URL (``None``: the default store)."""
    if isinstance(store, Store):
        return store
    if store is None or isinstance(store, (str, os.PathLike)):
        return Store(store)
    raise ConfigError(f"store must be an evalnb.Store, a path or a URL, not {type(store).__name__}")


async def run_stored(
    run_async: Callable[..., Any],
    suite: Any,
    agent: Any,
    *,
    store: Any,
    version: str | None,
    resume: str | None,
    **options: Any,
) -> Result:
    """Run with every finished case written to ``store`` as it completes; ``resume`` continues a stored run.

    A resumed run uses the stored suite definition and runs only the cases with nothing stored; the returned
    Result holds the stored cases and the new ones, in suite order.
    """
    import pandas as pd

    from evalnb.results import Result
    from evalnb.suite import Suite

    st = as_store(store)
    if resume is None:
        the_suite = suite if isinstance(suite, Suite) else _load_suite(suite)
        writer = st.begin(the_suite, version=version)
        todo, done = the_suite, set()
    else:
        info = st._resolve(resume, by_version=False)
        if info["status"] == "complete":
            raise ConfigError(f"run {resume!r} is complete; there is nothing to resume")
        prior = st.load(resume)
        the_suite = prior.suite
        if suite is not None:
            given = suite if isinstance(suite, Suite) else _load_suite(suite)
            if given.content_hash() != the_suite.content_hash():
                raise ConfigError(
                    f"run {resume!r} was made with a different version of suite {the_suite.name!r}; "
                    "resume it with the suite it started with"
                )
        if options.get("runs") is None:
            options["runs"] = (json.loads(info["options"] or "{}") or {}).get("runs")
        done = st._stored_cases(int(info["id"]))
        todo = the_suite.model_copy(update={"cases": [c for c in the_suite.cases if c.id not in done]})
        version = info["version"] if version is None else version
        writer = RunWriter(st, int(info["id"]), info["run_id"], the_suite, version)
    fresh: Result = await run_async(todo, agent, store=None, _on_case=writer.on_case, **options)
    if resume is None:
        final = fresh
    else:
        order = {c.id: i for i, c in enumerate(the_suite.cases)}

        def merged(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
            old = old[old["case_id"].isin(done)]
            both = pd.concat([old, new], ignore_index=True) if len(old) else new
            key = both["case_id"].map(order).fillna(len(order)).astype(int) * 1_000_000
            key = key + both["run"].fillna(0).astype(int) * 1000 + both["turn"].fillna(0).astype(int)
            return both.iloc[key.argsort(kind="stable")].reset_index(drop=True)

        meta = dict(fresh.meta)
        meta["started_at"] = prior.meta.get("started_at", meta.get("started_at"))
        meta["resumed"] = True
        final = Result.from_frames(
            suite=the_suite,
            runs=merged(prior.runs, fresh.runs),
            scores=merged(prior.scores, fresh.scores),
            mismatches=merged(prior.mismatches, fresh.mismatches),
            meta=meta,
        )
        final.responses.update(fresh.responses)
    writer.finish(final)
    return final


def _load_suite(suite: Any) -> Suite:
    from evalnb.runner import _as_suite

    return _as_suite(suite)
