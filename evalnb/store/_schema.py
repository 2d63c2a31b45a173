"""The store's schema: tables, their versions and migrations, and the per-run statistics trends read.

Tables::

    meta              key/value; ``schema_version`` says which migrations ran
    suites            name, format, content hash and the suite's full definition: its canonical JSON in
                      ``definition``, or from schema 10 compressed with zlib in ``packed`` (``definition`` NULL)
    runs              run_id, suite, version label, agent, model, judge, checks config with thresholds,
                      started/finished, git commit, status (complete / interrupted), options, meta
    run_rows          result.runs, one row per case x run x turn
    scores            result.scores, one row per case x run x turn x check (schema 4: weighted, spread)
    mismatches        result.mismatches
    tool_calls        result.tool_calls, one row per tool call an agent reported (schema 5)
                      (schema 6: cached and reasoning tokens and the agent's cost in run_rows, the judge's
                      model and cached and reasoning tokens in scores; runs.cost counts agent and judge)
    run_check_stats   per run x check: sufficient statistics (sums per case) so trends aggregate in SQL fast
    run_summaries     per run, written when it ends: its case counts by status and ``Result.summary()``, so a
                      run's summary is read without its rows (schema 7); the cases with rows and the cases
                      every row of which passed, what the history lists (schema 8)
    segments          a run's frames by columns (schema 8): per frame and writer batch one row
                      (run_pk, frame, seq0, n, data), ``data`` the batch's columns (store/_segments.py). Runs
                      saved from schema 8 on have their rows here and none in run_rows, scores, mismatches or
                      tool_calls; runs saved before keep theirs there (the migration does not convert them);
                      from schema 9 also a run's sums per case x check x run (frames ``agg1:*``,
                      store/_aggregates.py), and text and integers with missing values packed (kinds t, m)

The schema is versioned (``SCHEMA_VERSION``); opening an older database runs the missing migrations in one
transaction (STYLE habit 8: reading an older one goes through a migration, never a guess).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalnb.errors import StoreError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine, MetaData, Table

__all__ = [
    "MISMATCH_COLS",
    "RUN_COLS",
    "SCHEMA_VERSION",
    "SCORE_COLS",
    "TOOL_CALL_COLS",
    "frame_stats",
    "migrate",
    "refresh_stats",
    "schema_version",
    "tables",
]

SCHEMA_VERSION = 10

# result frame column -> stored in a typed column. Columns a frame has beyond these go to ``extra`` (JSON).
RUN_COLS_V1 = [
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
SCORE_COLS_V1 = [
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
MISMATCH_COLS = ["case_id", "run", "turn", "row", "key", "expected", "actual", "tolerance", "reason"]
RUN_COLS_V2 = [*RUN_COLS_V1, "prompt_tokens", "completion_tokens"]  # schema 2
RUN_COLS = [*RUN_COLS_V2, "cached_tokens", "reasoning_tokens", "cost"]  # schema 6
SCORE_COLS_V2 = [*SCORE_COLS_V1, "prompt_tokens", "completion_tokens", "cost"]  # schema 2
SCORE_COLS_V4 = [*SCORE_COLS_V2, "weighted", "spread"]  # schema 4
SCORE_COLS = [*SCORE_COLS_V4, "judge_model", "cached_tokens", "reasoning_tokens"]  # schema 6
TOOL_CALL_COLS = [  # schema 5
    "case_id",
    "case_name",
    "category",
    "run",
    "turn",
    "order",
    "tool",
    "plugin",
    "function",
    "arguments",
    "status",
    "http_status",
    "allowed",
    "call_id",
    "output",
]

_INTS = {
    "run",
    "turn",
    "exit_code",
    "row",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "reasoning_tokens",
    "order",
    "http_status",
}
_FLOATS = {"latency_ms", "value", "cost", "weighted", "spread"}
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
    "arguments",
    "output",
}


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
    if name in ("passed", "allowed"):
        return Column(name, Boolean)
    if name in _TEXTS:
        return Column(name, Text)
    return Column(name, _label(version))


def tables(version: int) -> tuple[MetaData, dict[str, Table]]:
    """The table definitions as they are at schema ``version`` (1 to 4)."""
    from sqlalchemy import (
        Column,
        Float,
        ForeignKey,
        Index,
        Integer,
        LargeBinary,
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
        *([Column("packed", LargeBinary)] if version >= 10 else []),
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
    run_cols = RUN_COLS if version >= 6 else RUN_COLS_V2 if version >= 2 else RUN_COLS_V1
    score_cols = (
        SCORE_COLS
        if version >= 6
        else SCORE_COLS_V4
        if version >= 4
        else SCORE_COLS_V2
        if version >= 2
        else SCORE_COLS_V1
    )
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
        *[_column(c, version) for c in MISMATCH_COLS],
        Column("extra", Text),
    )
    if version >= 5:
        t["tool_calls"] = Table(
            "tool_calls",
            md,
            Column("run_pk", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
            Column("seq", Integer),
            *[_column(c, version) for c in TOOL_CALL_COLS],
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
    if version >= 7:
        t["run_summaries"] = Table(
            "run_summaries",
            md,
            Column("run_pk", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
            Column("cases", Integer),
            Column("counts", Text),  # JSON: status -> cases (Result.counts())
            Column("checks", Text),  # JSON: Result.summary() as columns, dtypes and rows
            *([Column("ran_cases", Integer), Column("passed_cases", Integer)] if version >= 8 else []),
        )
    if version >= 8:
        t["segments"] = Table(
            "segments",
            md,
            Column("run_pk", Integer, ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
            Column("frame", String(20), primary_key=True),
            Column("seq0", Integer, primary_key=True, autoincrement=False),
            Column("n", Integer, nullable=False),
            Column("data", LargeBinary, nullable=False),
        )
    return md, t


def _migration_1(conn: Connection) -> None:
    """Schema 1: meta, suites, runs, run_rows, scores, mismatches."""
    md, _ = tables(1)
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
    _md, t = tables(2)
    t["run_check_stats"].create(conn)
    for index in t["scores"].indexes:
        if index.name == "ix_scores_run_check":
            index.create(conn)
    for (pk,) in conn.execute(text("SELECT id FROM runs")).fetchall():
        refresh_stats(conn, int(pk), agent_cost=False)


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


def _migration_4(conn: Connection) -> None:
    """Schema 4: the probability-weighted score of a judged check and its spread (``weighted``, ``spread``)."""
    from sqlalchemy import text

    for name in ("weighted", "spread"):
        conn.execute(text(f"ALTER TABLE scores ADD COLUMN {name} FLOAT"))


def _migration_5(conn: Connection) -> None:
    """Schema 5: the ``tool_calls`` table (``result.tool_calls``); runs saved before it have no tool calls."""
    _md, t = tables(5)
    t["tool_calls"].create(conn)


def _migration_6(conn: Connection) -> None:
    """Schema 6: cached and reasoning tokens and the agent's cost per row, the judge's model per score
    (docs/costs.md); runs saved before it have none of them (NA, never 0)."""
    from sqlalchemy import text

    for table, cols in (
        ("run_rows", [("cached_tokens", "INTEGER"), ("reasoning_tokens", "INTEGER"), ("cost", "FLOAT")]),
        ("scores", [("judge_model", "TEXT"), ("cached_tokens", "INTEGER"), ("reasoning_tokens", "INTEGER")]),
    ):
        for name, sqltype in cols:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {sqltype}"))


def _migration_7(conn: Connection) -> None:
    """Schema 7: ``run_summaries``, a run's counts and per-check summary written when it ends; a run saved
    before it has none (``Store.summary`` reads its rows instead)."""
    _md, t = tables(7)
    t["run_summaries"].create(conn)


def _migration_8(conn: Connection) -> None:
    """Schema 8: ``segments``, a run's frames by columns (store/_segments.py), and the history's case counts in
    ``run_summaries``. Runs saved before keep their rows in the row tables, where loads still read them."""
    from sqlalchemy import text

    for name in ("ran_cases", "passed_cases"):
        conn.execute(text(f"ALTER TABLE run_summaries ADD COLUMN {name} INTEGER"))
    _md, t = tables(8)
    t["segments"].create(conn)


def _migration_9(conn: Connection) -> None:
    """Schema 9: segments of the kinds ``"t"`` (text in Arrow's layout) and ``"m"`` (integers with missing
    values), which a streamed run writes from its collector's columns (store/_segments.py), and a run's sums
    per case x check x run kept as segments of their own (store/_aggregates.py). No table changes: the version
    keeps an evalnb that cannot read them from opening the store."""


def _migration_10(conn: Connection) -> None:
    """Schema 10: a suite's definition stored compressed (``suites.packed``, zlib of the canonical JSON; a
    million cases' 322 MB take 12 MB). Suites saved before keep their plain ``definition``, which loads read as
    before."""
    from sqlalchemy import LargeBinary

    kind = LargeBinary().compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE suites ADD COLUMN packed {kind}")


_MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _migration_1,
    2: _migration_2,
    3: _migration_3,
    4: _migration_4,
    5: _migration_5,
    6: _migration_6,
    7: _migration_7,
    8: _migration_8,
    9: _migration_9,
    10: _migration_10,
}


def schema_version(conn: Connection) -> int:
    from sqlalchemy import inspect, text

    if not inspect(conn).has_table("meta"):
        return 0
    row = conn.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).fetchone()
    return int(row[0]) if row else 0


def migrate(engine: Engine, *, target: int = SCHEMA_VERSION) -> int:
    """Run the migrations from the database's schema version up to ``target``; returns the version."""
    from sqlalchemy import text

    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            # Two processes opening a new database at once: one creates the tables, the other waits and then
            # sees them (SQLite gets the same from BEGIN IMMEDIATE). Released when the transaction ends.
            conn.exec_driver_sql("SELECT pg_advisory_xact_lock(72310512)")
        current = schema_version(conn)
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


def _check_sums(s: Any) -> list[dict[str, Any]]:
    """Per check, in the order checks first appear: :func:`refresh_stats`'s sums of the scores ``s``.

    Summed per case x check first (a case's runs and turns are one cluster), then per check, with numpy's
    counts over integer codes, not pandas' groupby of text (a million rows: 0.65 -> 0.3 s at a run's end)."""
    import numpy as np
    import pandas as pd

    checks, check_ids = pd.factorize(s["check_id"], sort=False)
    cases, _ = pd.factorize(s["case_id"], sort=False, use_na_sentinel=False)
    value = s["value"].astype("float64").to_numpy(na_value=np.nan)
    passed = s["passed"].astype("boolean").fillna(False).to_numpy(dtype="float64")
    width = int(cases.max(initial=0)) + 1
    cells, of_row = np.unique(checks.astype(np.int64) * width + cases, return_inverse=True)
    n = np.bincount(of_row, weights=~np.isnan(value), minlength=len(cells))
    total = np.bincount(of_row, weights=np.nan_to_num(value, nan=0.0), minlength=len(cells))
    pn = np.bincount(of_row, minlength=len(cells)).astype("float64")
    ps = np.bincount(of_row, weights=passed, minlength=len(cells))
    of_cell = cells // width

    def per_check(x: np.ndarray) -> np.ndarray:
        return np.bincount(of_cell, weights=x, minlength=len(check_ids))

    sums = {
        "cases": per_check((n > 0).astype("float64")),
        "n": per_check(n),
        "total": per_check(total),
        "sq": per_check(total * total),
        "xprod": per_check(total * n),
        "nsq": per_check(n * n),
        "pcases": per_check(np.ones(len(cells))),
        "pn": per_check(pn),
        "ptotal": per_check(ps),
        "psq": per_check(ps * ps),
        "pcross": per_check(ps * pn),
        "pnsq": per_check(pn * pn),
    }
    counts = ("cases", "n", "pcases", "pn")
    return [
        {
            "check_id": str(check_id),
            **{k: int(v[code]) if k in counts else float(v[code]) for k, v in sums.items()},
        }
        for code, check_id in enumerate(check_ids)
    ]


def refresh_stats(conn: Connection, run_pk: int, *, agent_cost: bool = True) -> None:
    """Recompute a run's per-check sufficient statistics and its latency, cost and token totals (in SQL).

    ``agent_cost=False`` for a store older than schema 6 (its rows have no cost of the agent's calls)."""
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
    # The agent's and the judge's costs together (docs/costs.md); SUM skips the calls without a price, which
    # the frames show as NA.
    cost = (
        "(SELECT SUM(c) FROM (SELECT cost AS c FROM run_rows WHERE run_pk = :pk"
        " UNION ALL SELECT cost FROM scores WHERE run_pk = :pk) costs)"
        if agent_cost
        else "(SELECT SUM(cost) FROM scores WHERE run_pk = :pk)"
    )
    conn.execute(
        text(
            f"""
            UPDATE runs SET
              latency_ms = (SELECT AVG(latency_ms) FROM run_rows WHERE run_pk = :pk),
              prompt_tokens = (SELECT SUM(prompt_tokens) FROM run_rows WHERE run_pk = :pk),
              completion_tokens = (SELECT SUM(completion_tokens) FROM run_rows WHERE run_pk = :pk),
              cost = {cost}
            WHERE id = :pk
            """
        ),
        {"pk": run_pk},
    )


def frame_stats(conn: Connection, t: dict[str, Table], run_pk: int, runs: Any, scores: Any) -> None:
    """:func:`refresh_stats` computed from the run's frames rather than its rows, the same sums (a run stored in
    segments has no rows for SQL to sum; store/_segments.py)."""
    import pandas as pd

    stats = t["run_check_stats"]
    conn.execute(stats.delete().where(stats.c.run_pk == run_pk))
    status = scores["status"]
    kept = ((status.isna() | ~status.isin(["not_checked", "skipped"])) & scores["check_id"].notna()).to_numpy(
        dtype=bool
    )
    s = scores.loc[kept, ["check_id", "case_id", "value", "passed"]]  # the columns summed, not every one
    if len(s):
        rows = [{"run_pk": run_pk, **row} for row in _check_sums(s)]
        conn.execute(stats.insert(), rows)
    latency = (
        runs["latency_ms"].astype("float64").dropna() if "latency_ms" in runs else pd.Series([], dtype=float)
    )
    costs = [f[c].astype("float64").dropna() for f in (runs, scores) for c in ["cost"] if c in f]
    conn.execute(
        t["runs"]
        .update()
        .where(t["runs"].c.id == run_pk)
        .values(
            latency_ms=float(sum(latency) / len(latency)) if len(latency) else None,
            prompt_tokens=_total(runs, "prompt_tokens"),
            completion_tokens=_total(runs, "completion_tokens"),
            cost=float(sum(x.sum() for x in costs)) if any(len(x) for x in costs) else None,
        )
    )


def _total(frame: Any, column: str) -> int | None:
    """The sum of a column of counts, ``None`` when no row has one (SQL's ``SUM``)."""
    if column not in frame:
        return None
    values = frame[column].dropna()
    return int(values.sum()) if len(values) else None


# --------------------------------------------------------------------------------------------------
# Rows <-> frames
# --------------------------------------------------------------------------------------------------
