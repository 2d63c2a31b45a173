"""``Store.history``: the saved runs, with their cases and pass rates.

The counts of a run are those written with its summary when it ended (schema 8); a run stored in segments that
did not end (interrupted) has them counted from its segments' ``case_id`` and ``status`` columns, a run stored
before schema 8 in SQL from its rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.store._store import Store

__all__ = ["runs"]


def runs(store: Store, suite: str | None = None) -> pd.DataFrame:
    """The frame :meth:`evalnb.store.Store.history` returns (see there)."""
    import pandas as pd
    from sqlalchemy import case, func, select

    r, s, rr, sm = store._t["runs"], store._t["suites"], store._t["run_rows"], store._t["run_summaries"]
    listed = [sm.c.ran_cases, sm.c.passed_cases] if "ran_cases" in sm.c else []
    # A case passed when every one of its rows did (a row's status is its turn's, checks included).
    per_case = (
        select(
            rr.c.run_pk,
            func.min(case((rr.c.status == "passed", 1), else_=0)).label("ok"),
        )
        .group_by(rr.c.run_pk, rr.c.case_id)
        .subquery()
    )
    counts = (
        select(
            per_case.c.run_pk,
            func.count().label("cases"),
            func.sum(per_case.c.ok).label("passed_cases"),
        )
        .group_by(per_case.c.run_pk)
        .subquery()
    )
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
            r.c.saved_at,
            func.coalesce(counts.c.cases, 0),
            func.coalesce(counts.c.passed_cases, 0),
            r.c.id,
            *listed,
        )
        .join(s, s.c.id == r.c.suite_id)
        .outerjoin(counts, counts.c.run_pk == r.c.id)
        .order_by(r.c.id)
    )
    if "ran_cases" in sm.c:
        q = q.outerjoin(sm, sm.c.run_pk == r.c.id)
    if suite is not None:
        q = q.where(r.c.suite == suite)
    with store._reading() as conn:
        rows = [_counted(conn, store, x) for x in conn.execute(q).fetchall()]
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
        "saved_at": "string",
        "cases": "Int64",
        "passed_cases": "Int64",
    }
    frame = pd.DataFrame(rows, columns=list(dtypes)).astype(dtypes)
    frame["pass_rate"] = (frame["passed_cases"] / frame["cases"].where(frame["cases"] > 0)).astype("float64")
    return frame


def _counted(conn: Any, store: Store, row: Any) -> tuple[Any, ...]:
    """A listing row with its run's cases and passed cases (see the module docstring), its row id dropped."""
    from evalnb.store._summary import listed_cases

    values = tuple(row)
    head, (cases, passed, pk), ran = values[:16], values[16:19], values[19:]
    if ran and ran[0] is not None:
        cases, passed = ran
    elif not cases and "segments" in store._t:
        frame = _runs_part(conn, store, int(pk))
        if frame is not None:
            counted = listed_cases(frame)
            cases, passed = counted["ran_cases"], counted["passed_cases"]
    return (*head, cases, passed)


def _runs_part(conn: Any, store: Store, pk: int) -> Any:
    """The ``case_id`` and ``status`` of a run's rows, from its segments (``None``: it has none)."""
    import pandas as pd

    from evalnb.store._segments import column_of, segments

    run = {"id": pk, "run_id": str(pk), "suite": "", "version": None}
    ids: list[Any] = []
    status: list[Any] = []
    for seg in segments(conn, store._t["segments"], pk, "runs", run):
        ids += column_of(seg, "case_id", run)
        status += column_of(seg, "status", run)
    return pd.DataFrame({"case_id": ids, "status": status}, dtype=object) if ids else None
