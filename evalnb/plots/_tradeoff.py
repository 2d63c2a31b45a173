"""``plots.tradeoff``: quality against cost per case, one point per saved version, the Pareto front drawn.

docs/costs.md, the picture that decides: a version is on the Pareto front when no other version is at least as
good and at most as expensive, and better or cheaper in one of the two. The front is drawn as a line through its
versions, cheapest first, and named in the legend; latency per case (its median) is the marker size.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from evalnb.plots._style import esc, missing, plotly_go

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

__all__ = ["pareto_front", "tradeoff", "tradeoff_frame"]

_FRONT, _OTHER, _UNPRICED = "#0072B2", "#8c959f", "#D55E00"


def pareto_front(quality: list[float], cost: list[float]) -> list[bool]:
    """Which points no other point beats: at least as good and at most as expensive, strictly one of them.

    Example::

        pareto_front([0.9, 0.8, 0.7], [2.0, 1.0, 1.5])
        # [True, True, False]
    """
    out = []
    for i, (q, c) in enumerate(zip(quality, cost, strict=True)):
        beaten = any(
            (q2 >= q and c2 <= c and (q2 > q or c2 < c))
            for j, (q2, c2) in enumerate(zip(quality, cost, strict=True))
            if j != i
        )
        out.append(not beaten)
    return out


def tradeoff_frame(store: Any, suite: str, *, check: str | None = None) -> pd.DataFrame:
    """Per saved version: ``version, quality, cost_per_case, latency_p50_ms, latency_p90_ms, cases, front``.

    ``quality`` is the share of cases that passed (every check of every run), or with ``check`` that check's mean
    (``store.trend``); ``front`` marks the Pareto front (versions without a cost are never on it)."""
    costs = store.costs(suite)
    frame = costs[["version", "cases", "cost_per_case", "latency_p50_ms", "latency_p90_ms"]].copy()
    if check is None:
        quality = []
        for version in frame["version"]:
            cases = store.load(str(version), suite=suite).cases
            quality.append(float((cases["status"] == "passed").mean()) if len(cases) else math.nan)
        frame["quality"] = quality
    else:
        trend = store.trend(suite)
        part = trend[trend["check_id"] == check]
        if part.empty:
            known = ", ".join(sorted(set(map(str, trend["check_id"]))))
            raise ValueError(f"plots.tradeoff: no check {check!r} in suite {suite!r}; its checks: {known}")
        by_version = dict(zip(part["version"].fillna(part["run_id"]), part["mean"], strict=True))
        frame["quality"] = [float(by_version.get(v, math.nan)) for v in frame["version"]]
    priced = frame["cost_per_case"].notna() & frame["quality"].notna()
    front = [False] * len(frame)
    idx = [i for i, ok in enumerate(priced) if ok]
    flags = pareto_front(
        [frame["quality"].iloc[i] for i in idx], [frame["cost_per_case"].iloc[i] for i in idx]
    )
    for i, flag in zip(idx, flags, strict=True):
        front[i] = flag
    frame["front"] = front
    cols = ["version", "quality", "cost_per_case", "latency_p50_ms", "latency_p90_ms", "cases", "front"]
    return frame[cols].reset_index(drop=True)


def _sizes(latency: pd.Series) -> list[float]:
    """Marker diameters 12-40 px, the area growing with the median latency (one size when none is known)."""
    known = latency.dropna()
    if known.empty or float(known.max()) <= 0:
        return [16.0] * len(latency)
    top = float(known.max())
    return [16.0 if missing(v) else 12.0 + 28.0 * math.sqrt(max(float(v), 0.0) / top) for v in latency]


def tradeoff(store: Any, suite: str, *, check: str | None = None, title: str | None = None) -> go.Figure:
    """Quality against cost per case, one point per saved version of ``suite``, the Pareto front drawn and named.

    Args:
        store: an ``evalnb.Store`` holding versions of the suite (saved with ``prices=``, so they have costs).
        suite: the suite name.
        check: a check id whose mean is the quality (default: the share of cases that passed).
        title: the figure's title (default: says what is plotted).

    Versions are points at (cost per case, quality), the marker's area growing with the median latency per
    call; the hover gives the version, both numbers, the 50th and 90th latency percentiles and the cases. The
    Pareto front, the versions no other version beats on both quality and cost, is a line through its points,
    cheapest first, each named. A version with no cost (a model without a price) cannot be placed on the cost
    axis: the subtitle names it.

    Example::

        evalnb.plots.tradeoff(store, "knowledge-base").show()
    """
    go = plotly_go()
    frame = tradeoff_frame(store, suite, check=check)
    placed = frame[frame["cost_per_case"].notna() & frame["quality"].notna()]
    unplaced = frame.loc[~frame.index.isin(placed.index), "version"].astype(str).tolist()
    fig = go.Figure()
    sizes = _sizes(frame["latency_p50_ms"])
    quality_words = f"mean {esc(check)}" if check else "pass rate (share of cases passed)"
    front = placed[placed["front"]].sort_values("cost_per_case")
    if len(front) > 1:
        fig.add_trace(
            go.Scatter(
                x=front["cost_per_case"],
                y=front["quality"],
                mode="lines",
                name="Pareto front (no version is better and cheaper)",
                line={"color": _FRONT, "width": 2, "dash": "dash", "shape": "hv"},
                hoverinfo="skip",
            )
        )
    for on_front, name, colour in ((False, "other versions", _OTHER), (True, "on the Pareto front", _FRONT)):
        part = placed[placed["front"] == on_front]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["cost_per_case"],
                y=part["quality"],
                mode="markers+text",
                name=name,
                text=[esc(v) for v in part["version"]],
                textposition="middle right",
                marker={
                    "size": [sizes[i] for i in part.index],
                    "color": colour,
                    "opacity": 1.0,  # plotly draws text-and-marker points at 0.7 unless told
                    "line": {"width": 1, "color": "white"},
                },
                customdata=list(
                    zip(
                        part["version"].astype(str),
                        part["latency_p50_ms"].fillna(math.nan),
                        part["latency_p90_ms"].fillna(math.nan),
                        part["cases"].astype("float64"),
                        strict=True,
                    )
                ),
                hovertemplate=(
                    "<b>%{customdata[0]}</b><br>"
                    f"{quality_words}: %{{y:.3f}}<br>cost per case: $%{{x:.4g}}<br>"
                    "latency p50 %{customdata[1]:.0f} ms, p90 %{customdata[2]:.0f} ms<br>"
                    "%{customdata[3]:.0f} cases<extra></extra>"
                ),
            )
        )
    sub = "marker size: median latency per call"
    if unplaced:
        sub += f"; no cost (unpriced), not placed: {', '.join(esc(v) for v in unplaced)}"
    fig.update_layout(
        title=(title or f"Quality against cost per case: {esc(suite)}") + f"<br><sup>{sub}</sup>",
        xaxis_title="cost per case (USD)",
        yaxis_title=quality_words,
        plot_bgcolor="white",
        height=520,
        margin={"t": 100},
        legend={"orientation": "h", "y": -0.18},
    )
    if check is None:
        fig.update_yaxes(range=[-0.05, 1.12])
    # room on the right for the names beside the dearest points
    top = float(placed["cost_per_case"].max()) if len(placed) else 1.0
    fig.update_xaxes(
        showgrid=True, gridcolor="#eaeef2", zeroline=False, range=[0, top * 1.2 or 1.0], tickprefix="$"
    )
    fig.update_yaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    return fig
