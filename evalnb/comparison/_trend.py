"""``Store.trend``: per saved run x check, the mean and pass rate with intervals inside each check's scale.

Aggregated in SQL from the per-case sums that :func:`evalnb.store._schema.refresh_stats` writes at save time,
so it stays fast over many versions.

What the numbers average (:data:`MEAN_WORDS`): ``mean`` is over every scored row of the run (each case x
run x turn with a value, so a case of more runs or turns weighs more; rows without a value, such as a turn
without an answer, are left out) and ``pass_rate`` over every checked row. A comparison averages differently:
per case (a case's runs and turns first), over the cases both versions have, and with a turn without an answer
at the worst value of the scale (``docs/comparison.md``). The two means of one run can therefore differ.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.store._store import Store

__all__ = ["MEAN_WORDS", "trend"]

MEAN_WORDS = (
    "mean: over every scored row (each case x run x turn with a value); pass_rate: over every checked row. "
    "`evalnb compare` averages per case instead (each case's runs and turns first, over the cases both "
    "versions have), so its means can differ."
)
"""What ``Store.trend``'s ``mean`` and ``pass_rate`` average, as ``evalnb trend`` prints it under the table."""


def trend(
    store: Store, suite: str, *, confidence: float = 0.95, include_incomplete: bool = False
) -> pd.DataFrame:
    """The frame :meth:`evalnb.store.Store.trend` returns (see there)."""
    import numpy as np
    import pandas as pd
    from sqlalchemy import select

    from evalnb.checks.scales import scale_of
    from evalnb.comparison._stats import bounded_interval, cluster_mean

    r, st = store._t["runs"], store._t["run_check_stats"]
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
    with store._reading() as conn:
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
    out.attrs["mean"] = MEAN_WORDS
    return out
