"""``Store.costs``: what each saved version of a suite cost, with its latency percentiles (docs/costs.md).

Token counts and costs are summed over the agent's rows and the judge's (scores): from the decoded token, cost,
status and latency columns of a run stored in segments (schema 8), in SQL over ``run_rows`` and ``scores`` for
a run stored before; a version with a call that used tokens and has no cost (a model without a price) costs
``NA``, never the sum of the others. Latency percentiles are over the agent calls of the version (the rows that were not skipped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.store._store import Store

__all__ = ["STORE_COSTS_COLUMNS", "costs"]

STORE_COSTS_COLUMNS: dict[str, str] = {
    "version": "string",
    "cases": "Int64",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "cost": "float64",
    "cost_per_case": "float64",
    "latency_p50_ms": "float64",
    "latency_p90_ms": "float64",
}


def _sums(conn: Any, table: Any, pks: list[int]) -> dict[int, tuple[Any, ...]]:
    """Per run: prompt and completion tokens, cost, and how many rows used tokens without a cost."""
    from sqlalchemy import and_, case, func, select

    unpriced = func.sum(case((and_(table.c.prompt_tokens.isnot(None), table.c.cost.is_(None)), 1), else_=0))
    q = (
        select(
            table.c.run_pk,
            func.sum(table.c.prompt_tokens),
            func.sum(table.c.completion_tokens),
            func.sum(table.c.cost),
            unpriced,
        )
        .where(table.c.run_pk.in_(pks))
        .group_by(table.c.run_pk)
    )
    return {int(row[0]): tuple(row[1:]) for row in conn.execute(q)}


def _column_sums(conn: Any, table: Any, pk: int, frame: str, names: list[str]) -> dict[str, list[Any]]:
    from evalnb.store._segments import column_of, segments

    run = {"id": pk, "run_id": str(pk), "suite": "", "version": None}
    out: dict[str, list[Any]] = {name: [] for name in names}
    for seg in segments(conn, table, pk, frame, run):
        for name in names:
            out[name] += column_of(seg, name, run)
    return out


def _sum(values: list[Any]) -> Any:
    present = [v for v in values if not _missing(v)]
    return sum(present) if present else None


def _missing(value: Any) -> bool:
    """None, or NaN (a float column holds its missing values as NaN: store/_segments.py)."""
    return value is None or value != value


def _segment_sums(
    conn: Any, table: Any, pk: int
) -> tuple[tuple[Any, ...], tuple[Any, ...], int, list[float]]:
    """:func:`_sums` of the agent's and the judge's rows, the cases that ran and the latencies of a run stored
    in segments, from the columns they need alone."""
    money = ["prompt_tokens", "completion_tokens", "cost"]
    runs = _column_sums(conn, table, pk, "runs", [*money, "case_id", "status", "latency_ms"])
    scores = _column_sums(conn, table, pk, "scores", money)
    sums = []
    for cols in (runs, scores):
        unpriced = sum(
            1
            for t, c in zip(cols["prompt_tokens"], cols["cost"], strict=True)
            if t is not None and _missing(c)
        )
        sums.append((*(_sum(cols[m]) for m in money), unpriced))
    ran = [s is not None and s != "skipped" for s in runs["status"]]
    cases = len({c for c, r in zip(runs["case_id"], ran, strict=True) if r})
    ms = [x for x, r in zip(runs["latency_ms"], ran, strict=True) if r and not _missing(x)]
    return sums[0], sums[1], cases, ms


def costs(store: Store, suite: str, *, include_incomplete: bool = False) -> pd.DataFrame:
    """The frame :meth:`evalnb.store.Store.costs` returns (see there)."""
    import numpy as np
    import pandas as pd
    from sqlalchemy import func, select

    from evalnb.results._frames import make_frame
    from evalnb.store._segments import has_segments

    r, rows, scores = store._t["runs"], store._t["run_rows"], store._t["scores"]
    q = select(r.c.id, r.c.run_id, r.c.version).where(r.c.suite == suite).order_by(r.c.id)
    if not include_incomplete:
        q = q.where(r.c.status == "complete")
    with store._reading() as conn:
        runs = conn.execute(q).fetchall()
        pks = [int(x[0]) for x in runs]
        agent = _sums(conn, rows, pks)
        judge = _sums(conn, scores, pks)
        ran = select(rows.c.run_pk, func.count(func.distinct(rows.c.case_id))).where(
            rows.c.run_pk.in_(pks), rows.c.status != "skipped"
        )
        cases: dict[Any, Any] = dict(conn.execute(ran.group_by(rows.c.run_pk)).fetchall())
        lat: list[Any] = list(
            conn.execute(
                select(rows.c.run_pk, rows.c.latency_ms).where(
                    rows.c.run_pk.in_(pks), rows.c.status != "skipped", rows.c.latency_ms.isnot(None)
                )
            ).fetchall()
        )
        for pk in has_segments(conn, store._t, pks):
            a, j, n, stored_ms = _segment_sums(conn, store._t["segments"], pk)
            agent[pk], judge[pk], cases[pk] = a, j, n
            lat += [(pk, x) for x in stored_ms]
    latencies = pd.DataFrame(lat, columns=["pk", "ms"]).groupby("pk")["ms"] if lat else None
    out = []
    for pk, run_id, version in runs:
        pk = int(pk)
        a = agent.get(pk, (None, None, None, 0))
        j = judge.get(pk, (None, None, None, 0))
        n = int(cases.get(pk, 0) or 0)
        priced = a[2] is not None or j[2] is not None
        cost = None if (a[3] or j[3] or not priced) else float((a[2] or 0.0) + (j[2] or 0.0))
        ms = latencies.get_group(pk).to_numpy() if latencies is not None and pk in latencies.groups else None
        out.append(
            {
                "version": version or run_id,
                "cases": n,
                "prompt_tokens": _add(a[0], j[0]),
                "completion_tokens": _add(a[1], j[1]),
                "cost": cost,
                "cost_per_case": cost / n if cost is not None and n else None,
                "latency_p50_ms": float(np.percentile(ms, 50)) if ms is not None else None,
                "latency_p90_ms": float(np.percentile(ms, 90)) if ms is not None else None,
            }
        )
    return make_frame(out, STORE_COSTS_COLUMNS)


def _add(a: Any, b: Any) -> int | None:
    return None if a is None and b is None else int(a or 0) + int(b or 0)
