"""Plotly figures of results, comparisons and trends (plotly is imported only when a figure is made).

Example::

    evalnb.plots.scorecard(result).show()
    evalnb.plots.trend(store, "foodmart-sales-evals")
    evalnb.plots.compare(evalnb.compare(v1, v2))
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from evalnb.comparison import Comparison
    from evalnb.results import Result

__all__ = ["categories", "compare", "scorecard", "trend"]

_CHANGE_COLOURS = {
    "regressed": "#cf222e",
    "improved": "#1a7f37",
    "changed": "#8250df",
    "same": "#8c959f",
    "new": "#0969da",
    "gone": "#9a6700",
}


def _go() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is a dependency
        raise ImportError('evalnb.plots needs plotly: pip install "plotly>=5.18"') from exc
    return go


def _esc(value: Any, limit: int = 300) -> str:
    """Hover text is rendered as (limited) HTML by plotly: agent strings are escaped and shortened."""
    text = "" if value is None else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text)


def trend(source: Any, suite: str | None = None, *, value: str = "mean") -> go.Figure:
    """One line per check across saved versions (in run order), with the confidence interval as a band.

    Args:
        source: a ``store.trend(...)`` frame, or a ``Store`` (then ``suite`` is required).
        suite: the suite name, when ``source`` is a Store.
        value: ``"mean"`` (mean value) or ``"pass_rate"``.

    Example::

        evalnb.plots.trend(store, "foodmart-sales-evals", value="pass_rate")
    """
    if value not in ("mean", "pass_rate"):
        raise ValueError(f'plots.trend: value must be "mean" or "pass_rate", not {value!r}')
    go = _go()
    if hasattr(source, "trend"):
        if suite is None:
            raise ValueError("plots.trend(store, suite): name the suite")
        frame = source.trend(suite)
    else:
        frame = source
        suite = suite or frame.attrs.get("suite")
    lo_col, hi_col = ("ci_low", "ci_high") if value == "mean" else ("pass_ci_low", "pass_ci_high")
    fig = go.Figure()
    labels = [
        f"{v} ({o})" if v is not None else f"run {o}"
        for v, o in zip(frame["version"], frame["order"], strict=False)
    ]
    frame = frame.assign(_x=labels)
    x_order = list(dict.fromkeys(labels))
    for check_id, part in frame.groupby("check_id", sort=True):
        x = part["_x"].tolist()
        fig.add_trace(
            go.Scatter(
                x=x + x[::-1],
                y=part[hi_col].tolist() + part[lo_col].tolist()[::-1],
                fill="toself",
                opacity=0.2,
                line={"width": 0},
                hoverinfo="skip",
                showlegend=False,
                name=f"{check_id} interval",
                legendgroup=str(check_id),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=part[value].tolist(),
                mode="lines+markers",
                name=str(check_id),
                legendgroup=str(check_id),
                customdata=list(
                    zip(part["n"].astype("float64"), part[lo_col], part[hi_col], part["run_id"], strict=False)
                ),
                hovertemplate=(
                    f"<b>{_esc(check_id)}</b><br>%{{x}}<br>{value}: %{{y:.3f}}"
                    "<br>interval: [%{customdata[1]:.3f}, %{customdata[2]:.3f}]<br>n: %{customdata[0]:.0f}"
                    "<br>run: %{customdata[3]}<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        title=f"Trend of {'mean value' if value == 'mean' else 'pass rate'} by version"
        + (f": {_esc(suite)}" if suite else ""),
        xaxis_title="version (run order)",
        yaxis_title="pass rate" if value == "pass_rate" else "mean value",
        xaxis={"categoryorder": "array", "categoryarray": x_order},
        legend_title="check",
    )
    return fig


def compare(comparison: Comparison) -> go.Figure:
    """Per-check differences with their intervals (top) and what changed per case (bottom).

    Example::

        evalnb.plots.compare(store.compare("v1", "v2"))
    """
    go = _go()
    from plotly.subplots import make_subplots

    c = comparison.checks
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.45, 0.55],
        vertical_spacing=0.18,
        subplot_titles=(
            f"The gate: difference in mean per check ({comparison.confidence:.0%} two-sided interval)",
            "Triage: change per case (does not gate)",
        ),
    )
    fig.add_trace(
        go.Scatter(
            x=c["diff"].tolist(),
            y=c["check_id"].tolist(),
            mode="markers",
            marker={
                "size": 11,
                "color": [
                    "#cf222e" if v == "worse" else "#1a7f37" if v == "better" else "#57606a"
                    for v in c["verdict"]
                ],
            },
            error_x={
                "type": "data",
                "symmetric": False,
                "array": (c["ci_high"] - c["diff"]).tolist(),
                "arrayminus": (c["diff"] - c["ci_low"]).tolist(),
            },
            customdata=list(zip(c["mean_a"], c["mean_b"], [_esc(w) for w in c["words"]], strict=False)),
            hovertemplate="<b>%{y}</b><br>diff %{x:+.3f}<br>a %{customdata[0]:.3f} → b %{customdata[1]:.3f}"
            "<br>%{customdata[2]}<extra></extra>",
            name="difference",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    fig.add_vline(x=0, line_dash="dot", line_color="#8c959f", row=1, col=1)
    margin = comparison.margin
    if isinstance(margin, (int, float)) and margin > 0:
        fig.add_vline(x=-margin, line_dash="dash", line_color="#cf222e", row=1, col=1)
    cases = comparison.cases
    for change, colour in _CHANGE_COLOURS.items():
        part = cases[cases["change"] == change]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=part["case_id"].tolist(),
                y=part["delta"].fillna(0).tolist(),
                mode="markers",
                name=change,
                marker={"color": colour, "size": 8},
                text=[
                    f"{_esc(n)} [{_esc(k)}]: {_fmt(a)} → {_fmt(b)}"
                    for n, k, a, b in zip(
                        part["case_name"], part["check_id"], part["a"], part["b"], strict=False
                    )
                ],
                hovertemplate="%{text}<br>delta %{y:+.3f}<extra>%{fullData.name}</extra>",
            ),
            row=2,
            col=1,
        )
    fig.update_xaxes(title_text=f"{_esc(comparison.b_label)} − {_esc(comparison.a_label)}", row=1, col=1)
    fig.update_yaxes(title_text="check", row=1, col=1)
    # cases in the comparison's (suite) order, not in the order the change traces first mention them
    order = list(dict.fromkeys(cases["case_id"].tolist()))
    fig.update_xaxes(title_text="case", categoryorder="array", categoryarray=order, row=2, col=1)
    fig.update_yaxes(title_text="delta", row=2, col=1)
    fig.update_layout(
        title=f"Comparison: {_esc(comparison.a_label)} → {_esc(comparison.b_label)}",
        legend_title="change",
        height=650,
    )
    return fig


def _fmt(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if f != f else f"{f:.3f}"


def _case_check_matrix(result: Result) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Case x check pass rate, and the reason of the first failing (else first) score per cell."""
    sc = result.scores
    checked = sc[~sc["status"].isin(["not_checked", "skipped"])].copy()
    checked["_p"] = checked["passed"].astype("boolean").fillna(False).astype("float64")
    case_order = list(dict.fromkeys(result.cases["case_id"].tolist()))
    check_order = list(dict.fromkeys(sc["check_id"].tolist()))
    rate = checked.pivot_table(index="case_id", columns="check_id", values="_p", aggfunc="mean")
    rate = rate.reindex(index=case_order, columns=check_order)
    ordered = sc.assign(_fail=~sc["passed"].astype("boolean").fillna(False)).sort_values(
        "_fail", ascending=False, kind="stable"
    )
    reasons = ordered.drop_duplicates(["case_id", "check_id"]).pivot(
        index="case_id", columns="check_id", values="reason"
    )
    reasons = reasons.reindex(index=case_order, columns=check_order)
    return rate, reasons


def scorecard(result: Result) -> go.Figure:
    """Case x check heatmap of pass rates (over runs and turns); hover shows the case and a reason.

    Example::

        evalnb.plots.scorecard(result)
    """
    go = _go()
    rate, reasons = _case_check_matrix(result)
    names = dict(zip(result.cases["case_id"], result.cases["case_name"], strict=False))
    text = [
        [
            f"{_esc(names.get(cid, cid))} ({_esc(cid)})<br>{_esc(check)}: "
            + (
                "not checked"
                if rate.loc[cid, check] != rate.loc[cid, check]
                else f"{rate.loc[cid, check]:.0%}"
            )
            + f"<br>{_esc(reasons.loc[cid, check], 200)}"
            for check in rate.columns
        ]
        for cid in rate.index
    ]
    fig = go.Figure(
        go.Heatmap(
            z=rate.to_numpy(dtype="float64", na_value=float("nan")),
            x=[str(c) for c in rate.columns],
            y=[str(c) for c in rate.index],
            zmin=0,
            zmax=1,
            colorscale=[[0, "#cf222e"], [0.5, "#d4a72c"], [1, "#1a7f37"]],
            colorbar={"title": "pass rate"},
            text=text,
            hovertemplate="%{text}<extra></extra>",
            xgap=1,
            ygap=1,
        )
    )
    fig.update_layout(
        title=f"Scorecard: {_esc(result.suite.name)}",
        xaxis_title="check",
        yaxis_title="case",
        yaxis={"autorange": "reversed"},
        height=max(350, 22 * len(rate.index) + 150),
    )
    return fig


def categories(result: Result, *, value: str = "pass_rate") -> go.Figure:
    """Per-category bars, one bar group per check (``value``: ``"pass_rate"`` or ``"mean"``).

    Example::

        evalnb.plots.categories(result)
    """
    go = _go()
    wide = result.by_category(value=value)
    fig = go.Figure()
    for check_id in wide.columns:
        fig.add_trace(
            go.Bar(
                x=[str(c) for c in wide.index],
                y=wide[check_id].tolist(),
                name=str(check_id),
                hovertemplate=f"<b>%{{x}}</b><br>{_esc(check_id)}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=f"{'Pass rate' if value == 'pass_rate' else 'Mean value'} by category: {_esc(result.suite.name)}",
        xaxis_title="category",
        yaxis_title="pass rate" if value == "pass_rate" else "mean value",
        legend_title="check",
    )
    return fig
