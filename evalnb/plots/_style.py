"""What every figure of :mod:`evalnb.plots` shares: its colours (each named in a legend), escaping of hover
text, number formats, and the scales that decide which checks share an axis."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any

from evalnb.checks.scales import Scale, scale_of

__all__ = [
    "CELL_COLOURS",
    "CHANGE_COLOURS",
    "CHANGE_WORDS",
    "DASHES",
    "MAX_CASE_ROWS",
    "MAX_CELL_TEXT",
    "PALETTE",
    "SYMBOLS",
    "VERDICT_STYLE",
    "axis_words",
    "esc",
    "fmt",
    "legend_entry",
    "missing",
    "ordered_panels",
    "palette_colour",
    "plotly_go",
    "rgba",
    "scale_groups",
    "scale_label",
    "scale_of_label",
]

CHANGE_COLOURS = {
    "regressed": "#cf222e",
    "improved": "#1a7f37",
    "changed": "#8250df",
    "same": "#d0d7de",
    "new": "#0969da",
    "gone": "#9a6700",
    "degraded": "#6e7781",
}
CHANGE_WORDS = {
    "regressed": "regressed (got worse)",
    "improved": "improved (got better)",
    "changed": "changed (value and pass rate moved apart)",
    "same": "same",
    "new": "new (only in the candidate)",
    "gone": "gone (only in the baseline)",
    "degraded": "degraded (the check could not run: not compared)",
}
# the per-case grid also has cells for checks a case does not have
CELL_COLOURS = {**CHANGE_COLOURS, "absent": "#f6f8fa"}
VERDICT_STYLE = {  # verdict -> (colour, marker symbol, legend words)
    "worse": ("#cf222e", "circle", "worse beyond the margin (gates)"),
    "within margin": ("#bf8700", "circle", "worse, within the margin"),
    "no detectable difference": ("#57606a", "circle", "no detectable difference"),
    "too few cases to tell": ("#8c959f", "circle-open", "too few cases to tell"),
    "better": ("#1a7f37", "circle", "better"),
    "new": ("#0969da", "x", "new check (candidate only)"),
    "gone": ("#9a6700", "x", "check gone (baseline only)"),
    # the sequential gate's (docs/comparison.md, deciding with fewer cases)
    "not worse": ("#1a7f37", "circle-open", "not worse beyond the margin (sequential)"),
    "not decided": ("#8c959f", "diamond-open", "not decided (sequential)"),
}
# One colour per check (Okabe and Ito's colour-blind safe set), with a dash and a marker symbol, so lines
# that lie on top of each other are still told apart.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#000000")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon")
MAX_CASE_ROWS = 60
"""Rows of the per-case panel of :func:`compare`; beyond it only cases that changed are drawn."""
MAX_CELL_TEXT = 600
"""Cells of a heatmap up to which each cell also shows its value as text."""


def plotly_go() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - plotly is a dependency
        raise ImportError('evalnb.plots needs plotly: pip install "plotly>=5.18"') from exc
    return go


def missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN
    except (TypeError, ValueError):  # pd.NA
        return True


def esc(value: Any, limit: int = 300) -> str:
    """Hover text is rendered as (limited) HTML by plotly: agent strings are escaped and shortened; a missing
    value is empty (never ``<NA>``)."""
    text = "" if missing(value) else str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return html.escape(text).replace("\n", "<br>")


def fmt(v: Any, signed: bool = False) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    if math.isnan(f):
        return "n/a"
    return f"{f:+.3g}" if signed else f"{f:.3g}"


def palette_colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def scale_label(check_id: Any, given: Any = None) -> str:
    """How a check's scale is named on an axis: the comparison's own words, else the scale registry's."""
    if isinstance(given, str) and given:
        return given
    scale = scale_of(str(check_id))
    return scale.label if scale is not None else "unknown scale"


def scale_groups(check_ids: Iterable[Any], labels: Iterable[Any] | None = None) -> dict[str, list[str]]:
    """Checks by scale label, in first-appearance order: each group gets a panel of its own."""
    ids = [str(c) for c in check_ids]
    given = list(labels) if labels is not None else [None] * len(ids)
    groups: dict[str, list[str]] = {}
    for cid, label in zip(ids, given, strict=True):
        groups.setdefault(scale_label(cid, label), []).append(cid)
    return groups


_PANEL_RANK = {"pass rate": 0, "0-1": 1, "1-5 score": 2, "count": 3}


def ordered_panels(groups: dict[str, list[str]]) -> list[str]:
    """Scale panels from the top: pass rate, 0-1, 1-5 score, count, then other scales as they came."""
    return sorted(groups, key=lambda p: _PANEL_RANK.get(p, len(_PANEL_RANK)))


def scale_of_label(label: str, checks: list[str]) -> Scale | None:
    return next((s for c in checks if (s := scale_of(c)) is not None and s.label == label), None)


def axis_words(label: str) -> str:
    return {
        "pass rate": "pass rate (0-1)",
        "0-1": "value (0-1)",
        "1-5 score": "score (1-5)",
        "count": "count",
    }.get(label, label)


def legend_entry(fig: Any, go: Any, *, name: str, colour: str, group: str, title: str, **marker: Any) -> None:
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
