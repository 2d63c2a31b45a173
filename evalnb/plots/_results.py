"""``plots.scorecard`` and ``plots.categories``: one Result's pass rates."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import Scale, scale_of
from evalnb.plots._style import (
    MAX_CELL_TEXT,
    axis_words,
    esc,
    fmt,
    legend_entry,
    missing,
    ordered_panels,
    palette_colour,
    plotly_go,
    scale_groups,
    scale_of_label,
)

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
    version = result.meta.version or result.meta.run_id
    label = f" · version {esc(version)}" if result.meta.version else f" · run {esc(version)}"
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
    """Per-category bars, one bar per check, each labelled with its value (``value``: ``"pass_rate"`` or
    ``"mean"``).

    With ``value="mean"`` checks on different scales (``evalnb.checks.scales``: 0-1 values, 1-5 scores,
    counts) get a panel each, on an axis spanning the scale, as :func:`compare` does: a 1/5 score is not as
    tall as a perfect 0-1 match. A bar at the bottom of its scale (a 0% pass rate, a mean of 1 on a 1-5
    score) is drawn as an outlined stub with its label; a check a category does not have says "not
    checked". The hover gives the number of scores and cases behind each bar.

    Example::

        evalnb.plots.categories(result)
        evalnb.plots.categories(result, value="mean")   # a panel per scale
    """
    if value not in ("pass_rate", "mean"):
        raise ValueError(f'plots.categories: value must be "pass_rate" or "mean", not {value!r}')
    go = plotly_go()
    from plotly.subplots import make_subplots

    wide = result.by_category(value=value)
    counts = _category_counts(result)
    check_ids = [str(c) for c in wide.columns]
    groups = scale_groups(check_ids) if value == "mean" else {"pass rate": check_ids}
    panels = ordered_panels(groups)
    many = len(panels) > 1
    fig = make_subplots(
        rows=len(panels) or 1,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.1 if many else 0.08,
        subplot_titles=[f"checks on the {p} scale" for p in panels] if many else None,
    )
    colour_of = {c: i for i, c in enumerate(check_ids)}
    x = [str(c) for c in wide.index]
    for row, panel in enumerate(panels, start=1):
        scale = scale_of_label(panel, groups[panel]) if value == "mean" else _PASS_RATE
        low, high = _bar_range(wide[groups[panel]], scale)
        for check_id in groups[panel]:
            values = [None if missing(v) else float(v) for v in wide[check_id]]
            fig.add_trace(
                _category_bars(
                    go, check_id, x, values, counts, colour=palette_colour(colour_of[check_id]),
                    low=low, percent=value == "pass_rate", panel=panel,
                ),
                row=row,
                col=1,
            )  # fmt: skip
        # room above the tallest bar for its label, which is drawn outside the bar
        fig.update_yaxes(range=[low, high + (high - low) * 0.14], row=row, col=1)
        words = "pass rate (0-1)" if value == "pass_rate" else f"mean {axis_words(panel)}"
        fig.update_yaxes(title_text=words, row=row, col=1)
    fig.update_xaxes(showticklabels=True)  # each panel names its categories
    fig.update_xaxes(title_text="category", row=len(panels) or 1, col=1)
    what = "Pass rate" if value == "pass_rate" else "Mean value"
    fig.update_layout(
        barmode="group",
        title=f"{what} by category: {esc(result.suite.name)}"
        + ("<br><sup>a panel per scale; n scores and cases in the hover</sup>" if many else ""),
        legend_title="check",
        plot_bgcolor="white",
        height=max(450, 300 * len(panels) + 150),
    )
    fig.update_yaxes(gridcolor="#eaeef2", zeroline=False)
    return fig


_PASS_RATE = scale_of("ExactMatch")


def _bar_range(wide: pd.DataFrame, scale: Scale | None) -> tuple[float, float]:
    """Where a panel's bars start and the top of its axis: the scale's range, else 0 to the largest value."""
    if scale is not None and scale.bounded:
        return scale.low, scale.high
    top = wide.max().max() if len(wide) else float("nan")
    return 0.0, float(top) if not missing(top) and top > 0 else 1.0


def _category_counts(result: Result) -> dict[tuple[str, str], tuple[int, int]]:
    """(category, check_id) -> (scores, cases) behind each bar, as ``by_category`` counts them."""
    sc = result.scores
    sc = sc[~sc["status"].isin(["not_checked", "skipped"])]
    grouped = sc.assign(category=sc["category"].fillna("(none)")).groupby(
        ["category", "check_id"], sort=False
    )
    n, cases = grouped.size(), grouped["case_id"].nunique()
    return {(str(k[0]), str(k[1])): (int(n[k]), int(cases[k])) for k in n.index}


def _category_bars(
    go: Any,
    check_id: str,
    x: list[str],
    values: list[float | None],
    counts: dict[tuple[str, str], tuple[int, int]],
    *,
    colour: str,
    low: float,
    percent: bool,
    panel: str,
) -> Any:
    """One check's bars across categories: each labelled; a bar at the scale's bottom drawn as an outlined
    stub (else it is invisible and reads as "not checked"); a missing one labelled "not checked"."""
    heights, labels, widths, text_colours, hover = [], [], [], [], []
    for cat, v in zip(x, values, strict=True):
        n, cases = counts.get((cat, check_id), (0, 0))
        if v is None:
            heights.append(0.0)
            labels.append("not checked")
            widths.append(0)
            text_colours.append("#6e7781")
            hover.append(f"<b>{esc(cat)}</b><br>{esc(check_id)}: not checked in this category")
            continue
        shown = f"{v:.0%}" if percent else fmt(v)
        heights.append(v - low)
        labels.append(shown)
        # a bar of no height has no area to fill: its outline keeps it on the page
        widths.append(4 if abs(v - low) < 1e-9 else 0)
        text_colours.append("#1f2328")
        hover.append(
            f"<b>{esc(cat)}</b><br>{esc(check_id)} ({esc(panel)}): {shown}<br>n: {n} scores over {cases} cases"
        )
    return go.Bar(
        x=x,
        y=heights,
        base=low,
        name=check_id,
        marker={"color": colour, "line": {"color": colour, "width": widths}},
        text=labels,
        textposition="outside",
        textfont={"color": text_colours, "size": 11},
        cliponaxis=False,
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
    )
