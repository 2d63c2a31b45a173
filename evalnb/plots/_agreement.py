"""``plots.agreement``: how far judges agree with people, per check, each bar with its value and its n."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.plots._style import esc, legend_entry, missing, palette_colour, plotly_go

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go


_AGREEMENT = {
    "exact": ("share of identical scores", (0.0, 1.0)),
    "kappa": ("Cohen's quadratic-weighted kappa (1 perfect, 0 chance)", (-1.0, 1.0)),
    "spearman": ("Spearman rank correlation", (-1.0, 1.0)),
}
_UNDEFINED = "#afb8c1"
_UNDEFINED_WHY = {
    "exact": "no pairs to compare",
    "kappa": "no pairs, or judge and labels both constant",
    "spearman": "no pairs, or a side that never varies",
}


def agreement(table: pd.DataFrame, *, value: str = "exact", by: str = "judge") -> go.Figure:
    """Bars of a judge agreement table (``evalnb.judges.agreement``), per check; each bar says its value and
    its ``n``.

    A statistic that is undefined (no pairs, or a side that never varies: ``NaN`` in the table) is drawn as a
    hatched grey bar over the whole axis labelled "undefined", never as a bar of 0 (a kappa of 0 is chance
    agreement, which is something else); a value of exactly 0 is an outlined stub with its label.

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
    go = plotly_go()
    words, (low, high) = _AGREEMENT[value]
    groups = list(dict.fromkeys(table[by].astype(str))) if by in table else [None]
    fig = go.Figure()
    undefined = False
    for i, group in enumerate(groups):
        part = table if group is None else table[table[by].astype(str) == group]
        bars = _bars(part, value, low=low, high=high, colour=palette_colour(i))
        undefined = bool(bars.pop("_undefined")) or undefined
        fig.add_trace(
            go.Bar(
                **bars,
                x=part["check"].astype(str).tolist(),
                name=group or value,
                textposition="outside",
                cliponaxis=False,  # a label above a bar of 1 stays on the page
                hovertemplate=(
                    "<b>%{x}</b>"
                    + (f" · {esc(group)}" if group else "")
                    + "<br>%{customdata[0]}<br>n: %{customdata[1]} pairs"
                    "<br>identical: %{customdata[2]}<br>kappa: %{customdata[3]}"
                    "<br>Spearman: %{customdata[4]}<extra></extra>"
                ),
                # the legend's swatch is an entry of its own: a bar's first point may be hatched (undefined)
                showlegend=False,
                legendgroup=f"by-{group}",
            )
        )
        if group is not None:
            legend_entry(fig, go, name=group, colour=palette_colour(i), group=f"by-{group}", title="")
    if undefined:
        legend_entry(
            fig,
            go,
            name=f"undefined ({_UNDEFINED_WHY[value]})",
            colour=_UNDEFINED,
            group="undefined",
            title="",
        )
    span = high - low
    fig.update_layout(
        barmode="group",
        title=f"Judge agreement per check: {words}<br><sup>each bar: its value and n, the scored pairs behind it</sup>",
        xaxis_title="check",
        yaxis_title=words,
        # room above a bar of 1 for its label
        yaxis_range=[low - 0.02 * span, high + 0.16 * span],
        legend_title=by if groups != [None] else None,
        plot_bgcolor="white",
        margin={"t": 110},
        # below the bars, so a long legend entry does not narrow them
        legend={"orientation": "h", "x": 0, "y": -0.22, "xanchor": "left", "yanchor": "top"},
        height=520,
    )
    fig.update_yaxes(gridcolor="#eaeef2", zeroline=True, zerolinecolor="#8c959f")
    return fig


def _number(v: Any) -> str:
    return "undefined" if missing(v) else f"{float(v):.2f}"


def _bars(part: pd.DataFrame, value: str, *, low: float, high: float, colour: str) -> dict[str, Any]:
    """The bar trace's per-bar fields: heights from 0 (undefined: the whole axis, hatched), labels, outlines."""
    base, height, text, colours, shapes, widths, data = [], [], [], [], [], [], []
    undefined = False
    for r in part.to_dict(orient="records"):
        v, n = r[value], 0 if missing(r.get("n")) else int(r["n"])
        why = r.get("note") if isinstance(r.get("note"), str) else None
        if missing(v):
            undefined = True
            base.append(low)
            height.append(high - low)
            text.append(f"undefined<br>n={n}")
            colours.append("rgba(255,255,255,0)")
            shapes.append("/")
            widths.append(1)
            head = f"{value}: undefined ({why or _UNDEFINED_WHY[value]})"
        else:
            base.append(0.0)
            height.append(float(v))
            text.append(f"{float(v):.2f}<br>n={n}")
            colours.append(colour)
            shapes.append("")
            # a bar of no height has no area to fill: its outline keeps it on the page
            widths.append(4 if abs(float(v)) < 1e-9 else 0)
            head = f"{value}: {float(v):.2f}" + (f"<br>{esc(why)}" if why else "")
        data.append([head, n, *(_number(r.get(k)) for k in ("exact", "kappa", "spearman"))])
    line_colours = [_UNDEFINED if s else colour for s in shapes]
    return {
        "base": base,
        "y": height,
        "text": text,
        "customdata": data,
        "marker": {
            "color": colours,
            "line": {"color": line_colours, "width": widths},
            "pattern": {"shape": shapes, "fgcolor": _UNDEFINED, "solidity": 0.15},
        },
        "textfont": {"color": ["#6e7781" if s else "#1f2328" for s in shapes], "size": 11},
        "_undefined": undefined,
    }
