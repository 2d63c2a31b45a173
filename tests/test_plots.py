"""Plots return plotly figures whose traces, panels, legends, titles and hover text say what they show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import plotly.graph_objects as go
import pytest

import evalnb
from evalnb import plots
from evalnb.plots import style
from evalnb.store import Store
from evalnb.suite import (
    Case,
    CitationsCheck,
    ExactMatchCheck,
    JudgedMetricCheck,
    PartialMatchCheck,
    RegexCheck,
    Suite,
    Turn,
)


def make_suite() -> Suite:
    return Suite(
        name="plots-suite",
        format="tasks-toml",
        cases=[
            Case(
                id=f"c{i}",
                name=f"case {i}",
                category="alpha" if i < 3 else "beta",
                runs=2,
                turns=[
                    Turn(
                        prompt=f"q{i}",
                        expected="yes",
                        checks=[RegexCheck(on="result", pattern="y"), ExactMatchCheck()],
                    )
                ],
            )
            for i in range(6)
        ],
    )


def agent(prompt: str) -> str:
    return "yes" if prompt != "q1" else "<b>no</b>"


def mixed_suite() -> Suite:
    """Checks on four scales: pass rate (ExactMatch), 0-1 (PartialMatch), 1-5 (Coherence), count (Citations)."""
    checks = [
        ExactMatchCheck(),
        PartialMatchCheck(),
        JudgedMetricCheck(type="Coherence"),
        CitationsCheck(citation_format="bracket"),
    ]
    cases = [
        Case(
            id=f"m{i}",
            name=f"mixed {i}",
            category="even" if i % 2 == 0 else "odd",
            turns=[Turn(prompt=f"question {i}", expected="the office opens at nine", checks=checks)],
        )
        for i in range(8)
    ]
    return Suite(name="mixed-scales", format="dataset-json", cases=cases)


def mixed_agent(version: int) -> Callable[[str], str]:
    def answer(prompt: str) -> str:
        i = int(prompt.split()[-1])
        if version == 0 or i >= 6:
            return "opens at nine"
        return "The office opens at nine. It is open on weekdays, and closes at six. [1]"

    return answer


def mixed_results(store: Store) -> list[evalnb.Result]:
    return [
        evalnb.run(
            mixed_suite(), mixed_agent(v), judge="heuristic", store=store, version=f"v{i}", progress=False
        )
        for i, v in enumerate((0, 1, 1))
    ]


def hover_texts(fig: go.Figure) -> list[str]:
    out: list[str] = []
    for trace in fig.data:
        for key in ("text", "customdata", "hovertemplate"):
            value = getattr(trace, key, None)
            if value is None:
                continue
            stack = [value]
            while stack:
                item = stack.pop()
                if isinstance(item, str):
                    out.append(item)
                elif isinstance(item, (list, tuple)) or hasattr(item, "tolist"):
                    stack.extend(item.tolist() if hasattr(item, "tolist") else item)
    return out


def test_scorecard_and_categories() -> None:
    result = evalnb.run(make_suite(), agent, progress=False)
    fig = plots.scorecard(result)
    assert isinstance(fig, go.Figure)
    unchecked, heat = fig.data[:2]
    assert heat.type == "heatmap" and unchecked.type == "heatmap"
    assert list(heat.x) == ["regex", "ExactMatch"] and list(heat.y) == [f"c{i}" for i in range(6)]
    assert heat.z[1][0] == 0.0 and heat.z[0][0] == 1.0
    assert heat.customdata[1][0].startswith("<b>case 1</b> (c1)<br>regex: 0%<br>")
    assert "<b>no" not in heat.customdata[1][0]  # agent text is escaped in hover
    assert heat.text[1][0] == "0%" and heat.texttemplate == "%{text}"  # each cell says its rate
    # borders on the cells, not gridlines through them
    assert heat.xgap >= 2 and heat.ygap >= 2
    assert fig.layout.xaxis.showgrid is False and fig.layout.yaxis.showgrid is False
    assert fig.layout.title.text == "Scorecard: plots-suite"
    assert fig.layout.xaxis.title.text == "check" and fig.layout.yaxis.title.text == "case"
    assert not any("<NA>" in t or "&lt;NA&gt;" in t for t in hover_texts(fig))

    cat = plots.categories(result)
    assert [t.name for t in cat.data] == ["regex", "ExactMatch"]
    assert list(cat.data[0].x) == ["alpha", "beta"]
    assert cat.data[0].y[0] == 2 / 3
    assert cat.layout.yaxis.title.text == "pass rate"


def test_the_scorecard_title_names_the_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    result = evalnb.run(make_suite(), agent, store=store, version="v7", progress=False)
    assert plots.scorecard(result).layout.title.text == "Scorecard: plots-suite · version v7"
    assert plots.scorecard(store.load("v7")).layout.title.text == "Scorecard: plots-suite · version v7"


def test_trend_bands_take_their_lines_colour(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    for i, fn in enumerate([agent, lambda p: "yes", agent]):
        evalnb.run(make_suite(), fn, store=store, version=f"v{i}", progress=False)
    fig = plots.trend(store, "plots-suite", value="pass_rate")
    names = [t.name for t in fig.data]
    assert names == ["ExactMatch interval", "ExactMatch", "regex interval", "regex"]
    band, line = fig.data[0], fig.data[1]
    assert band.fill == "toself" and band.mode == "lines"  # no markers at the band's corners
    colour = line.line.color
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    assert band.fillcolor.startswith(f"rgba({r},{g},{b},")
    # the two checks have equal pass rates: set apart, each with its own dash and marker
    other = fig.data[3]
    assert line.line.dash != other.line.dash and line.marker.symbol != other.marker.symbol
    assert all(a != b for a, b in zip(line.x, other.x, strict=True))
    assert list(fig.layout.xaxis.ticktext) == ["v0 (1)", "v1 (2)", "v2 (3)"]
    assert line.y[1] == 1.0
    assert "n: %{customdata[1]:.0f} scores over %{customdata[2]:.0f} cases" in line.hovertemplate
    assert line.customdata[0][1] == 12 and line.customdata[0][2] == 6  # n and cases per point
    assert "plots-suite" in fig.layout.title.text and fig.layout.xaxis.title.text == "version (run order)"
    assert fig.layout.yaxis.title.text == "pass rate (0-1)"


def test_trend_puts_each_scale_in_its_own_panel(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    mixed_results(store)
    fig = plots.trend(store, "mixed-scales")
    lines = {t.name: t for t in fig.data if not t.name.endswith(" interval")}
    assert set(lines) == {"ExactMatch", "PartialMatch", "Coherence", "Citations"}
    # one y axis per scale, titled with it, in the order pass rate, 0-1, 1-5, count
    axes = [lines[n].yaxis for n in ("ExactMatch", "PartialMatch", "Coherence", "Citations")]
    assert axes == ["y", "y2", "y3", "y4"]
    titles = [fig.layout[f"yaxis{i}" if i > 1 else "yaxis"].title.text for i in range(1, 5)]
    assert titles == ["mean pass rate (0-1)", "mean value (0-1)", "mean score (1-5)", "mean count"]
    assert list(fig.layout.yaxis3.range) == pytest.approx([0.84, 5.16])
    # the pass rate view is one panel
    assert {t.yaxis for t in plots.trend(store, "mixed-scales", value="pass_rate").data} == {"y"}


def test_compare_gives_each_scale_a_panel_and_names_every_colour(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    mixed_results(store)
    cmp = store.compare("v0", "v1")
    fig = plots.compare(cmp)
    points = [
        t for t in fig.data if t.type == "scatter" and t.x and t.x[0] is not None and t.name != "− margin"
    ]
    panel_of = {y: t.xaxis for t in points for y in t.y}
    assert panel_of == {"ExactMatch": "x", "PartialMatch": "x2", "Coherence": "x3", "Citations": "x4"}
    # each axis says its scale and spans its range both ways (a 1-5 score: -4 to 4)
    assert fig.layout.xaxis3.title.text == "difference in mean score (1-5), v1 − v0"
    assert list(fig.layout.xaxis3.range) == pytest.approx([-4.2, 4.2])
    assert list(fig.layout.xaxis.range) == pytest.approx([-1.05, 1.05])
    # the per-case panel is a case x check grid naming the check of every cell
    (grid,) = [t for t in fig.data if t.type == "heatmap"]
    assert list(grid.x) == ["ExactMatch", "PartialMatch", "Coherence", "Citations"]
    assert list(grid.y) == [f"m{i}" for i in range(8)]
    assert "Citations: v0 0 → v1 1 (delta +1)" in grid.customdata[0][3]
    assert grid.text[0][3] == "+1" and grid.text[7][3] == ""  # the change is written where it happened
    # every colour has a legend entry: the verdicts drawn, the changes in the grid
    legend = {t.name: t.marker.color for t in fig.data if t.showlegend}
    drawn = {t.marker.color for t in points}
    assert drawn <= set(legend.values())
    changes = set(cmp.cases["change"])
    assert {style.CHANGE_WORDS[c] for c in changes} <= set(legend)
    assert not any("<NA>" in t or "&lt;NA&gt;" in t for t in hover_texts(fig))


def test_compare_marks_the_margin_in_each_checks_units(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    for i, fn in enumerate([agent, lambda p: "yes", agent]):
        evalnb.run(make_suite(), fn, store=store, version=f"v{i}", progress=False)
    cmp = store.compare("v1", "v2", margin={"regex": 0.1, "ExactMatch": 0.2})
    fig = plots.compare(cmp)
    (marks,) = [t for t in fig.data if t.name == "− margin"]
    assert dict(zip(marks.y, marks.x, strict=True)) == {"regex": -0.1, "ExactMatch": -0.2}
    assert "− margin (allowed drop)" in {t.name for t in fig.data if t.showlegend}
    assert fig.layout.title.text.startswith("Comparison: v1 → v2 (plots-suite)")


def test_agreement_bars_say_their_n() -> None:
    import pandas as pd

    table = pd.DataFrame(
        {
            "judge": ["a", "a", "b", "b"],
            "check": ["Relevance", "Coherence"] * 2,
            "n": [6, 4, 6, 4],
            "exact": [0.5, 1.0, 0.25, 0.75],
            "kappa": [0.2, 1.0, -0.1, 0.5],
            "spearman": [0.3, 1.0, 0.0, 0.6],
        }
    )
    fig = plots.agreement(table)
    assert [t.name for t in fig.data] == ["a", "b"]
    assert list(fig.data[0].text) == ["n=6", "n=4"] and fig.data[0].textposition == "outside"
    assert "n: %{customdata[0]:.0f} pairs" in fig.data[0].hovertemplate
    assert list(plots.agreement(table, value="kappa").layout.yaxis.range) == [-1.0, 1.05]
    with pytest.raises(ValueError, match="exact, kappa, spearman"):
        plots.agreement(table, value="median")


def test_trend_names_the_values_it_can_plot() -> None:
    import pandas as pd

    with pytest.raises(ValueError, match='"mean" or "pass_rate"'):
        evalnb.plots.trend(pd.DataFrame(), "s", value="median")
