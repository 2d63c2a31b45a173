"""``plots.ranking``: versions ranked by a judge's pairwise verdicts, each strength with its interval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.plots._style import esc, fmt, missing, palette_colour, plotly_go

if TYPE_CHECKING:
    import plotly.graph_objects as go

_COLUMNS = ("version", "strength", "low", "high")


def ranking(ranking: Any, *, title: str | None = None) -> go.Figure:
    """Each version's Bradley-Terry strength with its bootstrap interval, strongest at the top.

    The x axis is the log-strength, centred on 0 (the average version): two versions whose strengths differ by
    ``d`` have odds ``exp(d)`` to 1 of one beating the other, ties aside. Each point is labelled with its rank
    and its share of comparisons won (ties as half); a version whose interval overlaps the best one's is drawn
    in the same colour as the best ("not shown to differ").

    Args:
        ranking: what ``evalnb.rank`` returns (or its table: ``version, strength, low, high`` and optionally
            ``rank, win_rate, wins, ties, losses``).
        title: the figure's title (default: what was ranked, by which judge, at which confidence).

    Example::

        evalnb.plots.ranking(evalnb.rank([r1, r2, r3], judge="openai:gpt-4o-mini"))
    """
    go = plotly_go()
    table = getattr(ranking, "table", ranking)
    lacking = [c for c in _COLUMNS if c not in table]
    if lacking:
        raise ValueError(f"plots.ranking needs the columns {', '.join(_COLUMNS)}; this table lacks {lacking}")
    t = table.sort_values(
        "strength", ascending=True, kind="stable"
    )  # plotly draws the first row at the bottom
    best = t.iloc[-1]
    tied_with_best = [
        not missing(best["low"]) and not missing(r.high) and r.high >= best["low"] for r in t.itertuples()
    ]
    colours = [palette_colour(0) if same else palette_colour(6) for same in tied_with_best]
    names = []
    for r in t.itertuples():
        rank = f"{r.rank}. " if hasattr(r, "rank") and not missing(r.rank) else ""
        names.append(f"{rank}{esc(r.version, 60)}")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=t["strength"].tolist(),
            y=names,
            mode="markers",
            marker={"size": 12, "color": colours, "line": {"width": 1, "color": "#24292f"}},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": (t["high"] - t["strength"]).tolist(),
                "arrayminus": (t["strength"] - t["low"]).tolist(),
                "color": "#57606a",
                "thickness": 1.5,
                "width": 6,
            },
            customdata=[[fmt(r.low, True), fmt(r.high, True)] for r in t.itertuples()],
            hovertemplate="<b>%{y}</b><br>strength %{x:+.2f}<br>interval %{customdata[0]} to %{customdata[1]}"
            "<extra></extra>",
            showlegend=False,
        )
    )
    if "win_rate" in t:
        # the share won, just past each interval's right end (or the point, without an interval)
        ends = [r.strength if missing(r.high) else r.high for r in t.itertuples()]
        fig.add_trace(
            go.Scatter(
                x=ends,
                y=names,
                mode="text",
                text=[f"  won {v:.0%}" if not missing(v) else "" for v in t["win_rate"]],
                textposition="middle right",
                hoverinfo="skip",
                showlegend=False,
            )
        )
    for name, colour in (
        ("the best, or not shown to differ from it", palette_colour(0)),
        ("below the best (intervals apart)", palette_colour(6)),
    ):
        fig.add_trace(
            go.Scatter(x=[None], y=[None], mode="markers", marker={"size": 12, "color": colour}, name=name)
        )
    fig.add_vline(x=0, line={"dash": "dot", "color": "#8c959f"})
    lo = (
        min(float(t["low"].min()), float(t["strength"].min()))
        if t["low"].notna().any()
        else float(t["strength"].min())
    )
    hi = (
        max(float(t["high"].max()), float(t["strength"].max()))
        if t["high"].notna().any()
        else float(t["strength"].max())
    )
    pad = max(0.25, (hi - lo) * 0.08)
    conf = getattr(ranking, "confidence", None)
    judge = getattr(ranking, "judge", "")
    interval = f"{conf:.0%} bootstrap intervals over cases" if conf is not None else "intervals"
    fig.update_layout(
        title=title
        or f"Versions ranked from pairwise verdicts (judge: {esc(judge) or 'not named'})<br>"
        f"<sup>Bradley-Terry strengths with ties (Davidson), {interval}; at the right, the share of "
        "comparisons won, ties as half</sup>",
        xaxis={
            "title": "strength (log scale, 0 = the average version; a difference of 1: odds of 2.7 to 1)",
            "range": [lo - pad, hi + 3 * pad],  # room for the "won" labels at the right
            "zeroline": False,
        },
        yaxis_title="rank. version",
        template="plotly_white",
        height=max(360, 200 + 60 * len(t)),
        width=900,
        legend={"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"},
        margin={"l": 140, "r": 40, "t": 90, "b": 130},
    )
    return fig
