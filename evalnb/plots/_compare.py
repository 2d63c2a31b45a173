"""``plots.compare``: the gate per check, a panel per scale, and the per-case change grid; for the comparisons of
several suites (``store.compare_all``, ``evalnb compare``) that group of panels once per suite."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb.plots._style import (
    CELL_COLOURS,
    CHANGE_COLOURS,
    CHANGE_WORDS,
    MAX_CASE_ROWS,
    MAX_CELL_TEXT,
    VERDICT_STYLE,
    axis_words,
    esc,
    fmt,
    legend_entry,
    missing,
    plotly_go,
    scale_groups,
    scale_of_label,
)

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from evalnb.comparison import Comparison, Comparisons

_GAP = 95
"""Pixels between two panels (their titles sit in it)."""


@dataclass
class _Section:
    """One suite's comparison as it is drawn: its scale panels, then its per-case grid."""

    name: str | None
    comparison: Comparison
    groups: dict[str, list[str]]
    shown: pd.DataFrame
    note: str

    @property
    def heights(self) -> list[int]:
        panels = [70 + 34 * len(self.groups[p]) for p in self.groups]
        return [*panels, 90 + 24 * max(1, self.shown["case_id"].nunique())]


def _sections(comparison: Comparison | Comparisons) -> list[_Section]:
    """A Comparison is one section; Comparisons (several suites, gated as one) a section per suite."""
    from evalnb.comparison import Comparisons

    items: list[tuple[str | None, Comparison]] = (
        list(comparison.comparisons.items()) if isinstance(comparison, Comparisons) else [(None, comparison)]
    )
    out = []
    for name, c in items:
        shown, note = _shown_cases(c.cases)
        out.append(_Section(name, c, scale_groups(c.checks["check_id"], c.checks.get("scale")), shown, note))
    return out


def compare(comparison: Comparison | Comparisons) -> go.Figure:
    """The gate per check, one panel per scale (top), and what changed per case x check (bottom); for several
    suites (what ``store.compare_all`` and ``evalnb compare`` give) that group of panels once per suite, each
    titled with its suite.

    Each scale panel plots the paired difference of every check on that scale (candidate - baseline, in the
    scale's own units, on an axis spanning the scale's range) with its two-sided interval, coloured by the
    gate's verdict. The bottom panel is a case x check grid coloured by what changed, the difference written in
    each cell that moved. The legend names every colour.

    Example::

        evalnb.plots.compare(store.compare("v1", "v2"))
        evalnb.plots.compare(store.compare_all("v1", "v2"))   # every suite both versions have
    """
    go = plotly_go()
    from plotly.subplots import make_subplots

    sections = _sections(comparison)
    if not sections:
        raise ValueError("plots.compare: the comparisons hold no suite compared on both sides")
    first = sections[0].comparison
    a_label, b_label = esc(first.a_label), esc(first.b_label)
    heights = [h for s in sections for h in s.heights]
    total = sum(heights) + _GAP * (len(heights) - 1)
    conf = f"{first.confidence:.0%}"
    titles = []
    for s in sections:
        where = f"<b>{esc(s.name)}</b> · " if len(sections) > 1 else ""
        titles += [
            f"{where}The gate, checks on the {p} scale: {b_label} − {a_label} ({conf} interval)"
            for p in s.groups
        ]
        titles.append(f"{where}Triage, per case x check (does not gate){s.note}")
    fig = make_subplots(
        rows=len(heights),
        cols=1,
        row_heights=[h / sum(heights) for h in heights],
        vertical_spacing=_GAP / total if len(heights) > 1 else 0.0,
        subplot_titles=titles,
    )
    used_verdicts: list[str] = []
    row = 1
    for s in sections:
        used_verdicts += [v for v in _gate_panels(fig, go, s, first_row=row) if v not in used_verdicts]
        row += len(s.groups)
        check_order = [str(x) for x in s.comparison.checks["check_id"]]
        _case_grid(fig, go, s.shown, check_order, row=row, a_label=a_label, b_label=b_label)
        row += 1
    _legend(fig, go, sections, used_verdicts)
    fig.update_layout(
        title=_title(comparison, sections, a_label, b_label),
        height=int(total + 160),
        plot_bgcolor="white",
        legend={"groupclick": "toggleitem", "tracegroupgap": 18},
        margin={"t": 110},
    )
    return fig


def _title(comparison: Any, sections: list[_Section], a_label: str, b_label: str) -> str:
    sub = "dotted line: no difference; bars: two-sided interval of the paired difference"
    if len(sections) == 1 and not getattr(comparison, "missing_suites", None):
        suite = sections[0].name or sections[0].comparison.suite
        return (
            f"Comparison: {a_label} → {b_label}"
            + (f" ({esc(suite)})" if suite else "")
            + f"<br><sup>{sub}</sup>"
        )
    gate = "FAIL" if comparison.regressed else "pass"
    n = len(sections)
    head = f"Comparison: {a_label} → {b_label}, {n} suite{'s' * (n != 1)} gated as one: {gate}"
    one_side = getattr(comparison, "missing_suites", {}) or {}
    if one_side:
        sub += "; compared on one side only: " + ", ".join(
            f"{esc(k)} ({esc(v)})" for k, v in one_side.items()
        )
    return f"{head}<br><sup>{sub}</sup>"


def _gate_panels(fig: Any, go: Any, section: _Section, *, first_row: int) -> list[str]:
    """One section's scale panels; returns the verdicts drawn (for the legend)."""
    c = section.comparison.checks
    a_label, b_label = esc(section.comparison.a_label), esc(section.comparison.b_label)
    by_id = c.set_index(c["check_id"].astype(str))
    used: list[str] = []
    for row, panel in enumerate(section.groups, start=first_row):
        part = by_id.loc[section.groups[panel]]
        for verdict in VERDICT_STYLE:
            sel = part[part["verdict"] == verdict]
            if sel.empty:
                continue
            if verdict not in used:
                used.append(verdict)
            _verdict_points(fig, go, sel, verdict, panel=panel, row=row, labels=(a_label, b_label))
        _margin_marks(fig, go, part, row)
        fig.add_vline(x=0, line_dash="dot", line_color="#6e7781", row=row, col=1)
        scale = scale_of_label(panel, section.groups[panel])
        # An axis as wide as the scale's range each way: +1 on a 1-5 score looks a quarter of the way out,
        # not like a pass rate's 0 -> 1 flip; a count (no range) spans its largest difference each way.
        reach = scale.span if scale is not None and scale.bounded else _reach(part)
        pad = 1.05 if scale is not None and scale.bounded else 1.15
        fig.update_xaxes(range=[-reach * pad, reach * pad], row=row, col=1)
        fig.update_xaxes(
            title_text=f"difference in mean {axis_words(panel)}, {b_label} − {a_label}", row=row, col=1
        )
        fig.update_yaxes(autorange="reversed", row=row, col=1)
    return used


def _legend(fig: Any, go: Any, sections: list[_Section], used_verdicts: list[str]) -> None:
    """A legend entry for every colour drawn: the verdicts, the margin mark, the changes of the grids."""
    for verdict in used_verdicts:
        colour, symbol, words = VERDICT_STYLE[verdict]
        legend_entry(
            fig, go, name=words, colour=colour, symbol=symbol, group="gate", title="the gate, per check"
        )
    if any(_has_margin(s.comparison.checks) for s in sections):
        legend_entry(
            fig, go, name="− margin (allowed drop)", colour="#cf222e", symbol="line-ns-open", group="gate",
            title="the gate, per check",
        )  # fmt: skip
    for change in CHANGE_COLOURS:
        if any((s.shown["change"] == change).any() for s in sections):
            legend_entry(
                fig, go, name=CHANGE_WORDS[change], colour=CHANGE_COLOURS[change], group="triage",
                title="triage, per case",
            )  # fmt: skip
    if any(len(s.shown) < s.shown["case_id"].nunique() * len(s.comparison.checks) for s in sections):
        legend_entry(
            fig, go, name="not a check of the case", colour=CELL_COLOURS["absent"], group="triage",
            title="triage, per case",
        )  # fmt: skip


def _verdict_points(
    fig: Any, go: Any, sel: pd.DataFrame, verdict: str, *, panel: str, row: int, labels: tuple[str, str]
) -> None:
    """The checks of one verdict in one scale panel: the difference, and its interval where there is one."""
    colour, symbol, words = VERDICT_STYLE[verdict]
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
                        [fmt(v) for v in part["mean_a"]],
                        [fmt(v) for v in part["mean_b"]],
                        [fmt(v, signed=True) for v in part["diff"]],
                        [esc(w) for w in part["words"]],
                        strict=False,
                    )
                ),
                hovertemplate=f"<b>%{{y}}</b> ({esc(panel)})<br>{a_label} %{{customdata[0]}} → {b_label} "
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
    if len(ids) <= MAX_CASE_ROWS:
        return cases, ""
    moved = set(cases.loc[cases["change"] != "same", "case_id"])
    keep = [i for i in ids if i in moved][:MAX_CASE_ROWS]
    return cases[cases["case_id"].isin(keep)], f": {len(keep)} of {len(ids)} cases, those that changed"


def _case_grid(
    fig: Any, go: Any, cases: pd.DataFrame, check_order: list[str], *, row: int, a_label: str, b_label: str
) -> None:
    """Case x check cells coloured by ``change``, the signed difference written in the cells that moved."""
    codes = {change: i for i, change in enumerate(CELL_COLOURS)}
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
                    f"{esc(names.get(cid, cid))} ({esc(cid)})<br>{esc(check)}: not a check of this case"
                )
                continue
            zr.append(codes.get(str(r.change)))
            moved = str(r.change) != "same"
            tr.append(fmt(r.delta, signed=True) if moved and not missing(r.delta) else "")
            sig = (
                "untested" if missing(r.significant) else ("significant" if r.significant else "within noise")
            )
            hr.append(
                f"<b>{esc(names.get(cid, cid))}</b> ({esc(cid)})<br>{esc(check)}: {a_label} {fmt(r.a)} → "
                f"{b_label} {fmt(r.b)} (delta {fmt(r.delta, signed=True)})<br>{esc(r.change)}; {sig}"
            )
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    n = len(CELL_COLOURS)
    # a stepped colour scale: code i takes exactly its colour
    scale = []
    for i, colour in enumerate(CELL_COLOURS.values()):
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
            texttemplate="%{text}" if len(case_ids) * len(check_order) <= MAX_CELL_TEXT else None,
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
