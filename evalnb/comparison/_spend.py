"""The ``cost`` and ``latency`` rows of ``cmp.checks``: what a case costs and how long it takes, a to b.

docs/costs.md, cost and latency in the comparison: per case, the cost of its case runs (agent and judge calls)
averaged over its runs, and the mean latency of its agent calls; both lower-is-better. With a margin (relative:
``0.10`` is +10%), the row gates when b's mean per case is above ``(1 + margin)`` times a's with the stated
confidence: a one-sided paired sign-flip test over the cases both sides have, of ``b_i - (1 + margin) * a_i``
(the relative scale, without dividing by a case's own cost, which may be 0). Without a margin the row is
reported (its verdict ``reported``) and never gates. The ``cost`` row is there when both sides priced their calls, the
``latency`` row with a latency margin or beside a cost row; otherwise the report says the latency in a line. The rows gate apart from the quality checks' family (they
answer another question: what the version costs), each at the comparison's confidence.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalnb.comparison._aggregates import Aggregates

__all__ = ["SPEND", "check_spend_margin", "per_case", "spend_rows"]

SPEND = ("cost", "latency")
"""The check ids of the rows, as ``cmp.checks`` names them."""


def check_spend_margin(name: str, value: float | str | None) -> float | None:
    """A cost or latency margin as a share (``0.10``, or ``"10%"``); None for none."""
    from evalnb.errors import ConfigError

    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            share = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise ConfigError(f"{name}: give a share (0.10) or a percentage ('10%'), not {value!r}") from None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        share = float(value)
    else:
        raise ConfigError(f"{name}: give a share (0.10) or a percentage ('10%'), not {value!r}")
    if not math.isfinite(share) or share < 0:
        raise ConfigError(f"{name}: a margin is 0 or more, not {value!r}", code="INVALID_VALUE")
    return share


def per_case(ga: Aggregates, gb: Aggregates) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]] | None:
    """Cost and latency per case of both sides, aligned on the comparison's case order (comparison/_aggregates.py;
    None when a side is a scores frame, which holds neither)."""
    import numpy as np

    from evalnb.comparison._frames import merged

    if ga.spend is None or gb.spend is None:
        return None
    cases, (ma, mb) = merged(ga.case_ids, gb.case_ids)
    out = []
    for spend, at in ((ga.spend, ma), (gb.spend, mb)):
        side = {}
        for name in ("cost", "latency"):
            values = np.full(len(cases), np.nan)
            values[at] = spend[name]
            side[name] = values
        ran = np.zeros(len(cases), dtype=bool)
        ran[at] = spend["ran"]
        side["ran"] = ran
        out.append(side)
    return out[0], out[1]


def _row(
    name: str,
    a: np.ndarray,
    b: np.ndarray,
    ran: np.ndarray,
    *,
    margin: float | None,
    confidence: float,
    draws: int,
    seed: int,
) -> dict[str, Any] | None:
    """The row of ``cost`` or ``latency``: ``a`` and ``b`` per case in the comparison's order (NaN where a case
    has none), ``ran`` where either side ran the case."""
    import numpy as np

    from evalnb.comparison._stats import SignFlip

    has_a, has_b = ~np.isnan(a), ~np.isnan(b)
    both = has_a & has_b
    if not both.any():
        return None
    ya, yb = a[both], b[both]
    mean_a, mean_b = float(ya.mean()), float(yb.mean())
    alpha = 1.0 - confidence
    m = margin or 0.0
    rise = SignFlip(yb - (1.0 + m) * ya, draws=draws, seed=seed)
    # without a margin the two tests are of the same differences (1.0 * a is a): one test, not two
    diff = rise if m == 0.0 else SignFlip(yb - ya, draws=draws, seed=seed)
    reach = rise.can_reject(alpha) and rise.min_p(0.0) <= alpha
    p = rise.p_above(0.0) if reach else math.nan
    verdict, words = _words(
        name, mean_a, mean_b, margin, p, alpha, reach, confidence, _lower_ratio(ya, yb, alpha)
    )
    return {
        "check_id": name,
        "check": name,
        "scale": "USD per case" if name == "cost" else "ms per case",
        "cases": int(np.count_nonzero(has_a | has_b)),
        "paired": int(np.count_nonzero(both)),
        "mean_a": mean_a,
        "mean_b": mean_b,
        "diff": mean_b - mean_a,
        "lower_bound": _finite(diff.lower(alpha)),
        "upper_bound": _finite(diff.upper(alpha)),
        "ci_low": _finite(diff.lower(alpha / 2)),
        "ci_high": _finite(diff.upper(alpha / 2)),
        "margin": m * mean_a,  # in the row's own units (USD or ms per case), as every check's margin
        "p_value": p,
        "p_adjusted": p,
        "verdict": verdict,
        "gates": verdict == "worse",
        "words": words,
        "weighted": False,
        "higher_is_better": False,
        "mean_a_all": float(a[has_a].mean()),
        "mean_b_all": float(b[has_b].mean()),
        "degraded_a": 0,
        "degraded_b": 0,
        "not_compared": int(np.count_nonzero(ran) - np.count_nonzero(both)),
    }


def _finite(v: float) -> float:
    return v if math.isfinite(v) else math.nan


def _lower_ratio(ya: np.ndarray, yb: np.ndarray, alpha: float) -> float:
    """The one-sided lower confidence bound of mean b / mean a (Fieller's, by the normal approximation)."""
    from evalnb.comparison._stats import norm_isf

    n = len(ya)
    if n < 2 or ya.mean() <= 0:
        return math.nan
    z = norm_isf(alpha)
    ma, mb = ya.mean(), yb.mean()
    va, vb = ya.var(ddof=1) / n, yb.var(ddof=1) / n
    cov = float(((ya - ma) * (yb - mb)).sum() / (n - 1) / n)
    # (mb - r ma)^2 = z^2 (vb - 2 r cov + r^2 va): the smaller root is the lower bound
    qa, qb, qc = ma * ma - z * z * va, -2 * (ma * mb - z * z * cov), mb * mb - z * z * vb
    if qa <= 0:
        return math.nan
    disc = qb * qb - 4 * qa * qc
    return float((-qb - math.sqrt(disc)) / (2 * qa)) if disc >= 0 else math.nan


def _words(
    name: str,
    mean_a: float,
    mean_b: float,
    margin: float | None,
    p: float,
    alpha: float,
    reach: bool,
    confidence: float,
    lower: float,
) -> tuple[str, str]:
    what = "cost per case" if name == "cost" else "latency per case"
    shown = (lambda v: f"${v:.4g}") if name == "cost" else (lambda v: f"{v:.0f} ms")
    ratio = mean_b / mean_a if mean_a > 0 else math.nan
    change = f"{what} {shown(mean_a)} -> {shown(mean_b)}" + (
        f" (x{ratio:.2f})" if math.isfinite(ratio) else ""
    )
    conf = f"{confidence:.0%}"
    bound = f"; {conf} one-sided lower bound x{lower:.2f}" if math.isfinite(lower) else ""
    if margin is None:
        return "reported", f"{change}{bound}; reported, not gated (give a {name} margin to gate)"
    limit = f"+{margin:.0%}" if round(margin * 100, 6).is_integer() else f"+{margin:.1%}"
    if not reach:
        return "too few cases to tell", f"{change}; too few cases to tell whether it rose beyond {limit}"
    if p <= alpha:
        return "worse", f"{change}: rose beyond the margin {limit} ({conf} one-sided, p {p:.2g}){bound}"
    if math.isfinite(ratio) and ratio > 1:
        return "within margin", f"{change}: not shown to rise beyond the margin {limit}{bound}"
    return "no detectable difference", f"{change}: not shown to rise beyond the margin {limit}"


def spend_rows(
    ga: Aggregates,
    gb: Aggregates,
    *,
    confidence: float,
    cost_margin: float | None,
    latency_margin: float | None,
    draws: int,
    seed: int,
) -> tuple[pd.DataFrame | None, str | None]:
    """The ``cost`` and ``latency`` rows for ``cmp.checks`` (conformed to its columns; None when a side is a
    scores frame or neither side measured them), and the line the report says latency in when it is no row.

    The ``cost`` row is there whenever both sides priced their calls; the ``latency`` row with a latency margin
    or beside a cost row (a comparison of what versions cost); otherwise latency is one line of the report."""
    from evalnb.comparison._verdicts import CHECK_COLUMNS
    from evalnb.results._frames import make_frame

    sides = per_case(ga, gb)
    if sides is None:
        return None, None
    pa, pb = sides
    ran = pa["ran"] | pb["ran"]
    rows: list[dict[str, Any]] = []
    for name, margin in (("cost", cost_margin), ("latency", latency_margin)):
        row = _row(
            name, pa[name], pb[name], ran, margin=margin, confidence=confidence, draws=draws, seed=seed
        )
        if row is None:
            continue
        if name == "latency" and margin is None and not rows:
            # no prices and no latency margin: the latency is said in the report, not made a row of the gate
            return None, f"Latency: {row['words']}"
        rows.append({**row, "regressed": 0, "improved": 0, "significant": 0})
    return (make_frame(rows, CHECK_COLUMNS) if rows else None), None
