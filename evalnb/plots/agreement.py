"""``plots.agreement``: how far judges agree with people, per check, each bar with its n."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.plots.style import esc, palette_colour, plotly_go

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go


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
    go = plotly_go()
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
                marker_color=palette_colour(i),
                text=[f"n={v:.0f}" for v in n],
                textposition="outside",
                customdata=list(zip(n, part["exact"], part["kappa"], part["spearman"], strict=False)),
                hovertemplate=(
                    "<b>%{x}</b>"
                    + (f" · {esc(group)}" if group else "")
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
