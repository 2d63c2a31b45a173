"""``plots.trend``: a check's value across saved versions, a panel per scale."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.plots.style import (
    DASHES,
    SYMBOLS,
    axis_words,
    esc,
    missing,
    palette_colour,
    plotly_go,
    rgba,
    scale_groups,
    scale_of_label,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go


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
    go = plotly_go()
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
        f"{v} ({o})" if not missing(v) else f"run {o}"
        for v, o in zip(frame["version"], frame["order"], strict=False)
    ]
    x_order = list(dict.fromkeys(labels))
    position = {label: i for i, label in enumerate(x_order)}
    frame = frame.assign(_x=labels)
    checks = list(dict.fromkeys(str(c) for c in frame["check_id"]))
    groups = scale_groups(checks) if value == "mean" else {"pass rate": checks}
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
            colour = palette_colour(i)
            dodge = (k - (len(members) - 1) / 2) * width
            x = [position[lab] + dodge for lab in part["_x"]]
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
                        fillcolor=rgba(colour, 0.12),
                        mode="lines",  # no markers at the polygon's corners
                        # a faint edge of the line's colour tells overlapping bands apart
                        line={"width": 1, "color": rgba(colour, 0.45)},
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
                col=1,
            )
        fig.update_yaxes(
            title_text=f"mean {axis_words(panel)}" if value == "mean" else "pass rate (0-1)", row=row, col=1
        )
        scale = scale_of_label(panel, members) if value == "mean" else scale_of_label("pass rate", ["regex"])
        if scale is not None and scale.bounded:
            pad = scale.span * 0.04
            fig.update_yaxes(range=[scale.low - pad, scale.high + pad], row=row, col=1)
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(x_order))),
        ticktext=[esc(t) for t in x_order],
        range=[-0.5, len(x_order) - 0.5],
    )
    fig.update_xaxes(title_text="version (run order)", row=len(panels) or 1, col=1)
    confidence = frame.attrs.get("confidence")
    band_words = f"bands: {confidence:.0%} interval" if isinstance(confidence, float) else "bands: interval"
    fig.update_layout(
        title=f"Trend of {'the mean value' if value == 'mean' else 'the pass rate'} by version"
        + (f": {esc(suite)}" if suite else "")
        + f"<br><sup>{band_words}; n and cases in the hover</sup>",
        legend_title="check",
        height=max(420, 260 * len(panels) + 160),
        plot_bgcolor="white",
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    fig.update_yaxes(showgrid=True, gridcolor="#eaeef2", zeroline=False)
    return fig
