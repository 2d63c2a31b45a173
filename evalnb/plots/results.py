"""``plots.scorecard`` and ``plots.categories``: one Result's pass rates."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from evalnb.plots.style import MAX_CELL_TEXT, esc, legend_entry, palette_colour, plotly_go

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from evalnb.results import Result


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
    """Case x check heatmap of pass rates (over runs and turns), each cell bordered and labelled with its rate;
    the hover names the case and gives a reason. Cells with nothing checked are grey.

    Example::

        evalnb.plots.scorecard(result)
    """
    go = plotly_go()
    rate, reasons = _case_check_matrix(result)
    names = dict(zip(result.cases["case_id"], result.cases["case_name"], strict=False))
    z = rate.to_numpy(dtype="float64", na_value=float("nan"))
    x = [str(c) for c in rate.columns]
    y = [str(c) for c in rate.index]
    text, labels = [], []
    for i, cid in enumerate(rate.index):
        row_text, row_labels = [], []
        for j, check in enumerate(rate.columns):
            v = z[i][j]
            shown = "not checked" if math.isnan(v) else f"{v:.0%}"
            why = esc(reasons.loc[cid, check], 200)
            row_text.append(
                f"<b>{esc(names.get(cid, cid))}</b> ({esc(cid)})<br>{esc(check)}: {shown}"
                + (f"<br>{why}" if why else "")
            )
            row_labels.append("" if math.isnan(v) else f"{v:.0%}")
        text.append(row_text)
        labels.append(row_labels)
    unchecked = [[1.0 if math.isnan(v) else None for v in r] for r in z]
    cells = len(x) * len(y)
    fig = go.Figure()
    fig.add_trace(
        go.Heatmap(
            z=unchecked,
            x=x,
            y=y,
            colorscale=[[0, "#eaeef2"], [1, "#eaeef2"]],
            showscale=False,
            customdata=text,
            hovertemplate="%{customdata}<extra></extra>",
            xgap=3,
            ygap=3,
            name="not checked",
        )
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            zmin=0,
            zmax=1,
            colorscale=[[0, "#cf222e"], [0.5, "#d4a72c"], [1, "#1a7f37"]],
            colorbar={"title": "pass rate", "tickformat": ".0%", "tickvals": [0, 0.5, 1]},
            customdata=text,
            text=labels,
            texttemplate="%{text}" if cells <= MAX_CELL_TEXT else None,
            textfont={"size": 12, "color": "white"},
            hovertemplate="%{customdata}<extra></extra>",
            xgap=3,  # white gaps are the cells' borders
            ygap=3,
            name="pass rate",
        )
    )
    if any(v is not None for r in unchecked for v in r):
        legend_entry(fig, go, name="not checked", colour="#eaeef2", group="cells", title="")
    version = result.meta.get("version") or result.meta.get("run_id")
    label = f" · version {esc(version)}" if result.meta.get("version") else f" · run {esc(version)}"
    fig.update_layout(
        title=f"Scorecard: {esc(result.suite.name)}" + (label if version else ""),
        xaxis={"title": "check", "showgrid": False, "zeroline": False, "side": "bottom"},
        yaxis={"title": "case", "autorange": "reversed", "showgrid": False, "zeroline": False},
        plot_bgcolor="white",
        height=max(350, 26 * len(y) + 170),
        legend={"x": 1.0, "y": -0.08, "xanchor": "right", "orientation": "h"},
    )
    return fig


def categories(result: Result, *, value: str = "pass_rate") -> go.Figure:
    """Per-category bars, one bar group per check (``value``: ``"pass_rate"`` or ``"mean"``).

    Example::

        evalnb.plots.categories(result)
    """
    go = plotly_go()
    wide = result.by_category(value=value)
    fig = go.Figure()
    for i, check_id in enumerate(wide.columns):
        fig.add_trace(
            go.Bar(
                x=[str(c) for c in wide.index],
                y=wide[check_id].tolist(),
                name=str(check_id),
                marker_color=palette_colour(i),
                hovertemplate=f"<b>%{{x}}</b><br>{esc(check_id)}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=f"{'Pass rate' if value == 'pass_rate' else 'Mean value'} by category: {esc(result.suite.name)}",
        xaxis_title="category",
        yaxis_title="pass rate" if value == "pass_rate" else "mean value",
        legend_title="check",
        plot_bgcolor="white",
    )
    fig.update_yaxes(gridcolor="#eaeef2")
    return fig
