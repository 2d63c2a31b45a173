"""``Store.history``: the saved runs, with their cases and pass rates counted in SQL from the run rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.store._store import Store

__all__ = ["runs"]


def runs(store: Store, suite: str | None = None) -> pd.DataFrame:
    """The frame :meth:`evalnb.store.Store.history` returns (see there)."""
    import pandas as pd
    from sqlalchemy import case, func, select

    r, s, rr = store._t["runs"], store._t["suites"], store._t["run_rows"]
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
        )
        .join(s, s.c.id == r.c.suite_id)
        .outerjoin(counts, counts.c.run_pk == r.c.id)
        .order_by(r.c.id)
    )
    if suite is not None:
        q = q.where(r.c.suite == suite)
    with store._reading() as conn:
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
        "saved_at": "string",
        "cases": "Int64",
        "passed_cases": "Int64",
    }
    frame = pd.DataFrame([tuple(x) for x in rows], columns=list(dtypes)).astype(dtypes)
    frame["pass_rate"] = (frame["passed_cases"] / frame["cases"].where(frame["cases"] > 0)).astype("float64")
    return frame
