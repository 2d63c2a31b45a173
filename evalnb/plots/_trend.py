"""``plots.trend``: each check's value across saved versions, a panel per check, ordered by scale."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import scale_of
from evalnb.plots._style import (
    DASHES,
    SYMBOLS,
    axis_words,
    esc,
    missing,
    ordered_panels,
    palette_colour,
    plotly_go,
    rgba,
    scale_groups,
    scale_of_label,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go


def trend(source: Any, suite: str | None = None, *, value: str = "mean") -> go.Figure:
    """A check's value across saved versions (in run order), one panel per check, its interval as a band.

    Each check gets a panel of its own (checks on one scale side by side, scales in the order pass rate, 0-1,
    1-5 score, count), so intervals never overlap into one blur and every marker sits on its version's tick.
    A panel's axis spans its check's scale (``value="mean"``; a pass rate is 0-1). The hover gives the value,
    its interval, the number of scores and cases, and the run id.

    Args:
        source: a ``store.trend(...)`` frame, or a ``Store`` (then ``suite`` is required).
        suite: the suite name, when ``source`` is a Store.
        value: ``"mean"`` (mean value) or ``"pass_rate"``.

    Example::

        evalnb.plots.trend(store, "foodmart-sales-evals", value="pass_rate")
    """
    if value not in ("mean", "pass_rate"):
        raise ValueError(f'plots.trend: value must be "mean" or "pass_rate", not {value!r}')
    go = plotly_go()
    from plotly.subplots import make_subplots

    if hasattr(source, "trend"):
        if suite is None:
            raise ValueError("plots.trend(store, suite): name the suite")
        frame = source.trend(suite)
    else:
        frame = source
        suite = suite or frame.attrs.get("suite")
    labels = [
        f"{v} ({o})" if not missing(v) else f"run {o}"
        for v, o in zip(frame["version"], frame["order"], strict=False)
    ]
    x_order = list(dict.fromkeys(labels))
    position = {label: i for i, label in enumerate(x_order)}
    frame = frame.assign(_x=labels)
    checks = list(dict.fromkeys(str(c) for c in frame["check_id"]))
    groups = scale_groups(checks) if value == "mean" else {"pass rate": checks}
    panels = [(scale, c) for scale in ordered_panels(groups) for c in groups[scale]]
    # side by side when the versions leave room for it; one column for long histories
    cols = 2 if len(panels) >= 4 and len(x_order) <= 12 else 1
    rows = max(1, -(-len(panels) // cols))
    fig = make_subplots(
        rows=rows,
        cols=cols,
        shared_xaxes="all",
        horizontal_spacing=0.1,
        vertical_spacing=95 / (260 * rows) if rows > 1 else 0.0,  # 95px for ticks and the next title
        subplot_titles=[f"{esc(c)} · {_panel_words(scale, value)}" for scale, c in panels] or None,
    )
    colour_of = {c: i for i, c in enumerate(checks)}
    for k, (scale_label, check_id) in enumerate(panels):
        row, col = k // cols + 1, k % cols + 1
        part = frame[frame["check_id"] == check_id]
        _check_traces(fig, go, part, check_id, colour_of[check_id], scale_label, value, position, row, col)
        scale = scale_of_label(scale_label, [check_id]) if value == "mean" else scale_of("regex")
        if scale is not None and scale.bounded:
            pad = scale.span * 0.06
            fig.update_yaxes(range=[scale.low - pad, scale.high + pad], row=row, col=col)
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(x_order))),
        ticktext=[esc(t) for t in x_order],
        range=[-0.5, len(x_order) - 0.5],
        showticklabels=True,
    )
    for col in range(1, cols + 1):
        fig.update_xaxes(title_text="version (run order)", row=rows, col=col)
    confidence = frame.attrs.get("confidence")
    band_words = f"bands: {confidence:.0%} interval" if isinstance(confidence, float) else "bands: interval"
    fig.update_layout(
        title=f"Trend of {'the mean value' if value == 'mean' else 'the pass rate'} by version"
        + (f": {esc(suite)}" if suite else "")
        + f"<br><sup>a panel per check; {band_words}; n and cases in the hover</sup>",
        height=max(420, 260 * rows + 200),
        plot_bgcolor="white",
        showlegend=False,  # each panel is titled with its check
        margin={"t": 120},
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    fig.update_yaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    return fig


def _panel_words(scale: str, value: str) -> str:
    return f"mean {axis_words(scale)}" if value == "mean" else "pass rate (0-1)"


def _check_traces(
    fig: Any,
    go: Any,
    part: Any,
    check_id: str,
    i: int,
    panel: str,
    value: str,
    position: dict[str, int],
    row: int,
    col: int,
) -> None:
    """One check's band (its interval, two versions or more) and its line, in its own panel."""
    lo_col, hi_col = ("ci_low", "ci_high") if value == "mean" else ("pass_ci_low", "pass_ci_high")
    colour = palette_colour(i)
    x = [position[lab] for lab in part["_x"]]
    y = part[value].tolist()
    lo, hi = part[lo_col].tolist(), part[hi_col].tolist()
    band = [(xi, a, b) for xi, a, b in zip(x, lo, hi, strict=True) if not (missing(a) or missing(b))]
    if len(band) > 1:
        bx = [p[0] for p in band]
        fig.add_trace(
            go.Scatter(
                x=bx + bx[::-1],
                y=[p[2] for p in band] + [p[1] for p in band][::-1],
                fill="toself",
                fillcolor=rgba(colour, 0.15),
                mode="lines",  # no markers at the polygon's corners
                line={"width": 1, "color": rgba(colour, 0.45)},
                hoverinfo="skip",
                showlegend=False,
                name=f"{check_id} interval",
                legendgroup=check_id,
            ),
            row=row,
            col=col,
        )
    single = len(band) == 1  # one version: no band to draw, the interval is an error bar
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines+markers",
            name=check_id,
            legendgroup=check_id,
            line={"color": colour, "width": 2.5, "dash": DASHES[i % len(DASHES)]},
            marker={"color": colour, "size": 9, "symbol": SYMBOLS[i % len(SYMBOLS)]},
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
                f"<b>{esc(check_id)}</b> ({esc(panel)})<br>%{{customdata[0]}}<br>"
                f"{'mean' if value == 'mean' else 'pass rate'}: %{{y:.3f}}"
                f" [%{{customdata[3]:.3f}}, %{{customdata[4]:.3f}}]"
                "<br>n: %{customdata[1]:.0f} scores over %{customdata[2]:.0f} cases"
                "<br>run %{customdata[5]}<extra></extra>"
            ),
        ),
        row=row,
        col=col,
    )
