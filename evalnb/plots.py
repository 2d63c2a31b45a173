"""Plotly figures of results, comparisons, trends and judge agreement (plotly is imported only when a figure is
made).

Each figure says what its axes hold: checks on different scales (pass rates, 0-1 values, 1-5 scores, counts;
``evalnb.checks.scales``) get panels of their own instead of sharing an unlabelled axis, and every colour used
has a legend entry.

Example::

    evalnb.plots.scorecard(result).show()
    evalnb.plots.trend(store, "foodmart-sales-evals")
    evalnb.plots.compare(evalnb.compare(v1, v2))
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import Scale, scale_of

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from evalnb.comparison import Comparison
    from evalnb.results import Result

__all__ = ["agreement", "categories", "compare", "scorecard", "trend"]

# What changed per case (triage) and what the gate says per check: one colour each, named in the legend.
_CHANGE_COLOURS = {
    "regressed": "#cf222e",
    "improved": "#1a7f37",
    "changed": "#8250df",
    "same": "#d0d7de",
    "new": "#0969da",
    "gone": "#9a6700",
}
_CHANGE_WORDS = {
    "regressed": "regressed (value went down)",
    "improved": "improved (value went up)",
    "changed": "changed (value and pass rate moved apart)",
    "same": "same",
    "new": "new (only in the candidate)",
    "gone": "gone (only in the baseline)",
}
# the per-case grid also has cells for checks a case does not have
_CELL_COLOURS = {**_CHANGE_COLOURS, "absent": "#f6f8fa"}
_VERDICT_STYLE = {  # verdict -> (colour, marker symbol, legend words)
    "worse": ("#cf222e", "circle", "worse beyond the margin (gates)"),
    "within margin": ("#bf8700", "circle", "worse, within the margin"),
    "no detectable difference": ("#57606a", "circle", "no detectable difference"),
    "too few cases to tell": ("#8c959f", "circle-open", "too few cases to tell"),
    "better": ("#1a7f37", "circle", "better"),
    "new": ("#0969da", "x", "new check (candidate only)"),
    "gone": ("#9a6700", "x", "check gone (baseline only)"),
}
# One colour per check (Okabe and Ito's colour-blind safe set), with a dash and a marker symbol, so lines
# that lie on top of each other are still told apart.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#000000")
_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")
_MAX_CASE_ROWS = 60
"""Rows of the per-case panel of :func:`compare`; beyond it only cases that changed are drawn."""
_MAX_CELL_TEXT = 600
"""Cells of a heatmap up to which each cell also shows its value as text."""


def _go() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is a dependency
        raise ImportError('evalnb.plots needs plotly: pip install "plotly>=5.18"') from exc
    return go


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN
    except (TypeError, ValueError):  # pd.NA
        return True


def _esc(value: Any, limit: int = 300) -> str:
    """Hover text is rendered as (limited) HTML by plotly: agent strings are escaped and shortened; a missing
    value is empty (never ``<NA>``)."""
    text = "" if _missing(value) else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text).replace("\n", "<br>")


def _fmt(v: Any, signed: bool = False) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    if math.isnan(f):
        return "n/a"
    return f"{f:+.3g}" if signed else f"{f:.3g}"


def _colour(i: int) -> str:
    return _PALETTE[i % len(_PALETTE)]


def _rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _scale_label(check_id: Any, given: Any = None) -> str:
    """How a check's scale is named on an axis: the comparison's own words, else the scale registry's."""
    if isinstance(given, str) and given:
        return given
    scale = scale_of(str(check_id))
    return scale.label if scale is not None else "unknown scale"


def _scale_groups(check_ids: Iterable[Any], labels: Iterable[Any] | None = None) -> dict[str, list[str]]:
    """Checks by scale label, in first-appearance order: each group gets a panel of its own."""
    ids = [str(c) for c in check_ids]
    given = list(labels) if labels is not None else [None] * len(ids)
    groups: dict[str, list[str]] = {}
    for cid, label in zip(ids, given, strict=True):
        groups.setdefault(_scale_label(cid, label), []).append(cid)
    return groups


def _scale_of_label(label: str, checks: list[str]) -> Scale | None:
    return next((s for c in checks if (s := scale_of(c)) is not None and s.label == label), None)


def _axis_words(label: str) -> str:
    return {
        "pass rate": "pass rate (0-1)",
        "0-1": "value (0-1)",
        "1-5 score": "score (1-5)",
        "count": "count",
    }.get(label, label)


def _legend_entry(
    fig: Any, go: Any, *, name: str, colour: str, group: str, title: str, **marker: Any
) -> None:
    """A legend entry with no data: it names a colour used by a heatmap or a line."""
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=name,
            marker={"color": colour, "size": 12, "symbol": marker.get("symbol", "square")},
            legendgroup=group,
            legendgrouptitle_text=title,
            hoverinfo="skip",
            showlegend=True,
        )
    )


# --------------------------------------------------------------------------------------------------
# trend
# --------------------------------------------------------------------------------------------------


def trend(source: Any, suite: str | None = None, *, value: str = "mean") -> go.Figure:
    """One line per check across saved versions (in run order), its interval as a band of the line's colour.

    Checks on different scales (``value="mean"``) are drawn in panels of their own, one per scale. Each check
    has its own colour, dash and marker, and lines of one panel are set slightly apart, so checks with equal
    values stay visible. The hover gives the value, its interval, the number of scores and cases, and the
    run id.

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
    from plotly.subplots import make_subplots

    if hasattr(source, "trend"):
        if suite is None:
            raise ValueError("plots.trend(store, suite): name the suite")
        frame = source.trend(suite)
    else:
        frame = source
        suite = suite or frame.attrs.get("suite")
    lo_col, hi_col = ("ci_low", "ci_high") if value == "mean" else ("pass_ci_low", "pass_ci_high")
    labels = [
        f"{v} ({o})" if not _missing(v) else f"run {o}"
        for v, o in zip(frame["version"], frame["order"], strict=False)
    ]
    x_order = list(dict.fromkeys(labels))
    position = {label: i for i, label in enumerate(x_order)}
    frame = frame.assign(_x=labels)
    checks = list(dict.fromkeys(str(c) for c in frame["check_id"]))
    groups = _scale_groups(checks) if value == "mean" else {"pass rate": checks}
    rank = {"pass rate": 0, "0-1": 1, "1-5 score": 2, "count": 3}
    panels = sorted(groups, key=lambda p: rank.get(p, len(rank)))
    fig = make_subplots(
        rows=len(panels) or 1,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=min(0.3, 80 / (260 * len(panels) + 160)) if len(panels) > 1 else 0.08,
        subplot_titles=[f"checks on the {p} scale" for p in panels] if len(panels) > 1 else None,
    )
    colour_of = {c: i for i, c in enumerate(checks)}
    for row, panel in enumerate(panels, start=1):
        members = groups[panel]
        width = min(0.08, 0.3 / max(1, len(members)))
        for k, check_id in enumerate(members):
            part = frame[frame["check_id"] == check_id]
            i = colour_of[check_id]
            colour = _colour(i)
            dodge = (k - (len(members) - 1) / 2) * width
            x = [position[lab] + dodge for lab in part["_x"]]
            y = part[value].tolist()
            lo, hi = part[lo_col].tolist(), part[hi_col].tolist()
            band = [
                (xi, a, b) for xi, a, b in zip(x, lo, hi, strict=True) if not (_missing(a) or _missing(b))
            ]
            if len(band) > 1:
                bx = [p[0] for p in band]
                fig.add_trace(
                    go.Scatter(
                        x=bx + bx[::-1],
                        y=[p[2] for p in band] + [p[1] for p in band][::-1],
                        fill="toself",
                        fillcolor=_rgba(colour, 0.12),
                        mode="lines",  # no markers at the polygon's corners
                        # a faint edge of the line's colour tells overlapping bands apart
                        line={"width": 1, "color": _rgba(colour, 0.45)},
                        hoverinfo="skip",
                        showlegend=False,
                        name=f"{check_id} interval",
                        legendgroup=check_id,
                    ),
                    row=row,
                    col=1,
                )
            single = len(band) == 1  # one version: no band to draw, the interval is an error bar
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=y,
                    mode="lines+markers",
                    name=check_id,
                    legendgroup=check_id,
                    line={"color": colour, "width": 2.5, "dash": _DASHES[i % len(_DASHES)]},
                    marker={"color": colour, "size": 9, "symbol": _SYMBOLS[i % len(_SYMBOLS)]},
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [b - v for v, b in zip(y, hi, strict=True)],
                        "arrayminus": [v - a for v, a in zip(y, lo, strict=True)],
                        "color": colour,
                        "visible": single,
                    },
                    customdata=list(
                        zip(
                            part["_x"],
                            part["n"].astype("float64"),
                            part["cases"].astype("float64"),
                            part[lo_col],
                            part[hi_col],
                            part["run_id"].astype("object").where(part["run_id"].notna(), ""),
                            strict=False,
                        )
                    ),
                    hovertemplate=(
                        f"<b>{_esc(check_id)}</b> ({_esc(panel)})<br>%{{customdata[0]}}<br>"
                        f"{'mean' if value == 'mean' else 'pass rate'}: %{{y:.3f}}"
                        f" [%{{customdata[3]:.3f}}, %{{customdata[4]:.3f}}]"
                        "<br>n: %{customdata[1]:.0f} scores over %{customdata[2]:.0f} cases"
                        "<br>run %{customdata[5]}<extra></extra>"
                    ),
                ),
                row=row,
                col=1,
            )
        fig.update_yaxes(
            title_text=f"mean {_axis_words(panel)}" if value == "mean" else "pass rate (0-1)", row=row, col=1
        )
        scale = (
            _scale_of_label(panel, members) if value == "mean" else _scale_of_label("pass rate", ["regex"])
        )
        if scale is not None and scale.bounded:
            pad = scale.span * 0.04
            fig.update_yaxes(range=[scale.low - pad, scale.high + pad], row=row, col=1)
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(x_order))),
        ticktext=[_esc(t) for t in x_order],
        range=[-0.5, len(x_order) - 0.5],
    )
    fig.update_xaxes(title_text="version (run order)", row=len(panels) or 1, col=1)
    confidence = frame.attrs.get("confidence")
    band_words = f"bands: {confidence:.0%} interval" if isinstance(confidence, float) else "bands: interval"
    fig.update_layout(
        title=f"Trend of {'the mean value' if value == 'mean' else 'the pass rate'} by version"
        + (f": {_esc(suite)}" if suite else "")
        + f"<br><sup>{band_words}; n and cases in the hover</sup>",
        legend_title="check",
        height=max(420, 260 * len(panels) + 160),
        plot_bgcolor="white",
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    fig.update_yaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    return fig


# --------------------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------------------


def compare(comparison: Comparison) -> go.Figure:
    """The gate per check, one panel per scale (top), and what changed per case x check (bottom).

    Each scale panel plots the paired difference of every check on that scale (candidate - baseline, in the
    scale's own units, on an axis spanning the scale's range) with its two-sided interval, coloured by the
    gate's verdict. The bottom panel is a case x check grid coloured by what changed, the difference written in
    each cell that moved. The legend names every colour.

    Example::

        evalnb.plots.compare(store.compare("v1", "v2"))
    """
    go = _go()
    from plotly.subplots import make_subplots

    c = comparison.checks
    cases = comparison.cases
    a_label, b_label = _esc(comparison.a_label), _esc(comparison.b_label)
    groups = _scale_groups(c["check_id"], c.get("scale"))
    panels = list(groups)
    shown, note = _shown_cases(cases)
    check_order = [str(x) for x in c["check_id"]]
    heights = [70 + 34 * len(groups[p]) for p in panels] + [90 + 24 * shown["case_id"].nunique()]
    gap = 95
    total = sum(heights) + gap * len(panels)
    conf = f"{comparison.confidence:.0%}"
    titles = [f"The gate, checks on the {p} scale: {b_label} − {a_label} ({conf} interval)" for p in panels]
    titles.append("Triage, per case x check (does not gate)" + note)
    fig = make_subplots(
        rows=len(heights),
        cols=1,
        row_heights=[h / sum(heights) for h in heights],
        vertical_spacing=gap / total,
        subplot_titles=titles,
    )
    by_id = c.set_index(c["check_id"].astype(str))
    used_verdicts: list[str] = []
    for row, panel in enumerate(panels, start=1):
        part = by_id.loc[groups[panel]]
        for verdict in _VERDICT_STYLE:
            sel = part[part["verdict"] == verdict]
            if sel.empty:
                continue
            if verdict not in used_verdicts:
                used_verdicts.append(verdict)
            _verdict_points(fig, go, sel, verdict, panel=panel, row=row, labels=(a_label, b_label))
        _margin_marks(fig, go, part, row)
        fig.add_vline(x=0, line_dash="dot", line_color="#6e7781", row=row, col=1)
        scale = _scale_of_label(panel, groups[panel])
        # An axis as wide as the scale's range each way: +1 on a 1-5 score looks a quarter of the way out,
        # not like a pass rate's 0 -> 1 flip; a count (no range) spans its largest difference each way.
        reach = scale.span if scale is not None and scale.bounded else _reach(part)
        pad = 1.05 if scale is not None and scale.bounded else 1.15
        fig.update_xaxes(range=[-reach * pad, reach * pad], row=row, col=1)
        fig.update_xaxes(
            title_text=f"difference in mean {_axis_words(panel)}, {b_label} − {a_label}", row=row, col=1
        )
        fig.update_yaxes(autorange="reversed", row=row, col=1)
    _case_grid(fig, go, shown, check_order, row=len(heights), a_label=a_label, b_label=b_label)
    for verdict in used_verdicts:
        colour, symbol, words = _VERDICT_STYLE[verdict]
        _legend_entry(
            fig, go, name=words, colour=colour, symbol=symbol, group="gate", title="the gate, per check"
        )
    if _has_margin(c):
        _legend_entry(
            fig, go, name="− margin (allowed drop)", colour="#cf222e", symbol="line-ns-open", group="gate",
            title="the gate, per check",
        )  # fmt: skip
    for change in _CHANGE_COLOURS:
        if (shown["change"] == change).any():
            _legend_entry(
                fig, go, name=_CHANGE_WORDS[change], colour=_CHANGE_COLOURS[change], group="triage",
                title="triage, per case",
            )  # fmt: skip
    if len(shown) < shown["case_id"].nunique() * len(check_order):
        _legend_entry(
            fig, go, name="not a check of the case", colour=_CELL_COLOURS["absent"], group="triage",
            title="triage, per case",
        )  # fmt: skip
    fig.update_layout(
        title=f"Comparison: {a_label} → {b_label}"
        + (f" ({_esc(comparison.suite)})" if comparison.suite else "")
        + "<br><sup>dotted line: no difference; bars: two-sided interval of the paired difference</sup>",
        height=int(total + 160),
        plot_bgcolor="white",
        legend={"groupclick": "toggleitem", "tracegroupgap": 18},
        margin={"t": 110},
    )
    return fig


def _verdict_points(
    fig: Any, go: Any, sel: pd.DataFrame, verdict: str, *, panel: str, row: int, labels: tuple[str, str]
) -> None:
    """The checks of one verdict in one scale panel: the difference, and its interval where there is one."""
    colour, symbol, words = _VERDICT_STYLE[verdict]
    a_label, b_label = labels
    diff = sel["diff"].astype("float64")
    finite = (sel["ci_low"].astype("float64").notna() & sel["ci_high"].astype("float64").notna()).to_numpy()
    for with_interval in (True, False):
        part, d = sel[finite == with_interval], diff[finite == with_interval]
        if part.empty:
            continue
        fig.add_trace(
            go.Scatter(
                x=d.fillna(0.0).tolist(),
                y=list(part.index),
                mode="markers",
                marker={"size": 12, "color": colour, "symbol": symbol, "line": {"width": 2, "color": colour}},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": (part["ci_high"] - d).tolist(),
                    "arrayminus": (d - part["ci_low"]).tolist(),
                    "color": colour,
                    "thickness": 2,
                    "visible": with_interval,
                },
                customdata=list(
                    zip(
                        [_fmt(v) for v in part["mean_a"]],
                        [_fmt(v) for v in part["mean_b"]],
                        [_fmt(v, signed=True) for v in part["diff"]],
                        [_esc(w) for w in part["words"]],
                        strict=False,
                    )
                ),
                hovertemplate=f"<b>%{{y}}</b> ({_esc(panel)})<br>{a_label} %{{customdata[0]}} → {b_label} "
                "%{customdata[1]} (diff %{customdata[2]})<br>%{customdata[3]}<extra></extra>",
                name=words,
                legendgroup=f"verdict-{verdict}",
                showlegend=False,
            ),
            row=row,
            col=1,
        )


def _reach(part: pd.DataFrame) -> float:
    """How far from 0 an unbounded panel must reach: its largest difference, interval end or margin."""
    values = [
        abs(float(v)) for col in ("diff", "ci_low", "ci_high", "margin") if col in part for v in part[col]
    ]
    finite = [v for v in values if math.isfinite(v)]
    return max([*finite, 0.0]) or 1.0


def _has_margin(checks: pd.DataFrame) -> bool:
    margins = checks["margin"].astype("float64") if "margin" in checks else None
    return margins is not None and bool((margins.fillna(0) > 0).any())


def _margin_marks(fig: Any, go: Any, part: pd.DataFrame, row: int) -> None:
    """A red tick at ``-margin`` on each check's line (a margin is in the check's own units)."""
    if "margin" not in part:
        return
    m = part["margin"].astype("float64")
    sel = part[m.fillna(0) > 0]
    if sel.empty:
        return
    fig.add_trace(
        go.Scatter(
            x=(-sel["margin"].astype("float64")).tolist(),
            y=list(sel.index),
            mode="markers",
            marker={"symbol": "line-ns-open", "size": 22, "color": "#cf222e", "line": {"width": 2}},
            name="− margin",
            showlegend=False,
            hovertemplate="<b>%{y}</b><br>− margin: %{x:.3g}<extra></extra>",
        ),
        row=row,
        col=1,
    )


def _shown_cases(cases: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The case rows the grid draws: all of them, or (for many cases) the ones with a change, and a note."""
    ids = list(dict.fromkeys(cases["case_id"].tolist()))
    if len(ids) <= _MAX_CASE_ROWS:
        return cases, ""
    moved = set(cases.loc[cases["change"] != "same", "case_id"])
    keep = [i for i in ids if i in moved][:_MAX_CASE_ROWS]
    return cases[cases["case_id"].isin(keep)], f": {len(keep)} of {len(ids)} cases, those that changed"


def _case_grid(
    fig: Any, go: Any, cases: pd.DataFrame, check_order: list[str], *, row: int, a_label: str, b_label: str
) -> None:
    """Case x check cells coloured by ``change``, the signed difference written in the cells that moved."""
    codes = {change: i for i, change in enumerate(_CELL_COLOURS)}
    case_ids = list(dict.fromkeys(str(x) for x in cases["case_id"]))
    names = dict(zip(cases["case_id"].astype(str), cases["case_name"], strict=False))
    cell = {(str(r.case_id), str(r.check_id)): r for r in cases.itertuples(index=False)}
    z: list[list[int | None]] = []
    text: list[list[str]] = []
    hover: list[list[str]] = []
    for cid in case_ids:
        zr: list[int | None] = []
        tr: list[str] = []
        hr: list[str] = []
        for check in check_order:
            r = cell.get((cid, check))
            if r is None:
                zr.append(codes["absent"])
                tr.append("")
                hr.append(
                    f"{_esc(names.get(cid, cid))} ({_esc(cid)})<br>{_esc(check)}: not a check of this case"
                )
                continue
            zr.append(codes.get(str(r.change)))
            moved = str(r.change) != "same"
            tr.append(_fmt(r.delta, signed=True) if moved and not _missing(r.delta) else "")
            sig = (
                "untested"
                if _missing(r.significant)
                else ("significant" if r.significant else "within noise")
            )
            hr.append(
                f"<b>{_esc(names.get(cid, cid))}</b> ({_esc(cid)})<br>{_esc(check)}: {a_label} {_fmt(r.a)} → "
                f"{b_label} {_fmt(r.b)} (delta {_fmt(r.delta, signed=True)})<br>{_esc(r.change)}; {sig}"
            )
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    n = len(_CELL_COLOURS)
    # a stepped colour scale: code i takes exactly its colour
    scale = []
    for i, colour in enumerate(_CELL_COLOURS.values()):
        scale += [[i / n, colour], [(i + 1) / n, colour]]
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=check_order,
            y=case_ids,
            zmin=-0.5,
            zmax=n - 0.5,
            colorscale=scale,
            showscale=False,
            text=text,
            texttemplate="%{text}" if len(case_ids) * len(check_order) <= _MAX_CELL_TEXT else None,
            textfont={"size": 11},
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            xgap=2,
            ygap=2,
            name="change per case",
            showlegend=False,
        ),
        row=row,
        col=1,
    )
    fig.update_xaxes(title_text="check", showgrid=False, row=row, col=1)
    fig.update_yaxes(title_text="case", autorange="reversed", showgrid=False, row=row, col=1)


# --------------------------------------------------------------------------------------------------
# scorecard and categories
# --------------------------------------------------------------------------------------------------


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
    go = _go()
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
            why = _esc(reasons.loc[cid, check], 200)
            row_text.append(
                f"<b>{_esc(names.get(cid, cid))}</b> ({_esc(cid)})<br>{_esc(check)}: {shown}"
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
            texttemplate="%{text}" if cells <= _MAX_CELL_TEXT else None,
            textfont={"size": 12, "color": "white"},
            hovertemplate="%{customdata}<extra></extra>",
            xgap=3,  # white gaps are the cells' borders
            ygap=3,
            name="pass rate",
        )
    )
    if any(v is not None for r in unchecked for v in r):
        _legend_entry(fig, go, name="not checked", colour="#eaeef2", group="cells", title="")
    version = result.meta.get("version") or result.meta.get("run_id")
    label = f" · version {_esc(version)}" if result.meta.get("version") else f" · run {_esc(version)}"
    fig.update_layout(
        title=f"Scorecard: {_esc(result.suite.name)}" + (label if version else ""),
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
    go = _go()
    wide = result.by_category(value=value)
    fig = go.Figure()
    for i, check_id in enumerate(wide.columns):
        fig.add_trace(
            go.Bar(
                x=[str(c) for c in wide.index],
                y=wide[check_id].tolist(),
                name=str(check_id),
                marker_color=_colour(i),
                hovertemplate=f"<b>%{{x}}</b><br>{_esc(check_id)}: %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=f"{'Pass rate' if value == 'pass_rate' else 'Mean value'} by category: {_esc(result.suite.name)}",
        xaxis_title="category",
        yaxis_title="pass rate" if value == "pass_rate" else "mean value",
        legend_title="check",
        plot_bgcolor="white",
    )
    fig.update_yaxes(gridcolor="#eaeef2")
    return fig


# --------------------------------------------------------------------------------------------------
# judge agreement
# --------------------------------------------------------------------------------------------------

_AGREEMENT = {
    "exact": ("share of identical scores", (0.0, 1.05)),
    "kappa": ("Cohen's quadratic-weighted kappa (1 perfect, 0 chance)", (-1.0, 1.05)),
    "spearman": ("Spearman rank correlation", (-1.0, 1.05)),
}


def agreement(table: pd.DataFrame, *, value: str = "exact", by: str = "judge") -> go.Figure:
    """Bars of a judge agreement table (``evalnb.judges.agreement``), per check; each bar says its ``n``.

    Args:
        table: what ``agreement`` returns, or several of them concatenated with a ``by`` column (one judge per
            value) to compare judges.
        value: ``"exact"``, ``"kappa"`` or ``"spearman"``.
        by: the column that tells the bars of one check apart (one colour each).

    Example::

        evalnb.plots.agreement(evalnb.judges.agreement(result.scores, labels))
    """
    if value not in _AGREEMENT:
        raise ValueError(f"plots.agreement: value must be one of {', '.join(_AGREEMENT)}, not {value!r}")
    go = _go()
    words, y_range = _AGREEMENT[value]
    groups = list(dict.fromkeys(table[by].astype(str))) if by in table else [None]
    fig = go.Figure()
    for i, group in enumerate(groups):
        part = table if group is None else table[table[by].astype(str) == group]
        n = part["n"].astype("float64")
        fig.add_trace(
            go.Bar(
                x=part["check"].astype(str).tolist(),
                y=part[value].astype("float64").tolist(),
                name=group or value,
                marker_color=_colour(i),
                text=[f"n={v:.0f}" for v in n],
                textposition="outside",
                customdata=list(zip(n, part["exact"], part["kappa"], part["spearman"], strict=False)),
                hovertemplate=(
                    "<b>%{x}</b>"
                    + (f" · {_esc(group)}" if group else "")
                    + "<br>n: %{customdata[0]:.0f} pairs"
                    "<br>identical: %{customdata[1]:.2f}<br>kappa: %{customdata[2]:.2f}"
                    "<br>Spearman: %{customdata[3]:.2f}<extra></extra>"
                ),
                showlegend=group is not None,
            )
        )
    fig.update_layout(
        barmode="group",
        title=f"Judge agreement per check: {words}<br><sup>n: scored pairs behind each bar</sup>",
        xaxis_title="check",
        yaxis_title=words,
        yaxis_range=list(y_range),
        legend_title=by if groups != [None] else None,
        plot_bgcolor="white",
    )
    fig.update_yaxes(gridcolor="#eaeef2", zeroline=True, zerolinecolor="#8c959f")
    return fig
