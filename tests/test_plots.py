"""Plots return plotly figures whose traces, panels, legends, titles and hover text say what they show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import plotly.graph_objects as go
import pytest

import evalnb
from evalnb import plots
from evalnb.plots import _style as style
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
    assert list(cat.data[0].text) == ["67%", "100%"]  # each bar says its value
    assert "n: 6 scores over 3 cases" in cat.data[0].customdata[0]
    assert cat.layout.yaxis.title.text == "pass rate (0-1)"


def categories_result() -> evalnb.Result:
    """ExactMatch 1 in alpha and 0 in beta; a 1-5 Similarity of 5 and 1; PartialMatch only in alpha."""
    cases = [
        Case(
            id=f"k{i}",
            name=f"k{i}",
            category="alpha" if i < 3 else "beta",
            turns=[
                Turn(
                    prompt=f"q{i}",
                    expected="nine",
                    checks=[ExactMatchCheck(), JudgedMetricCheck(type="Similarity")]
                    + ([PartialMatchCheck()] if i < 3 else []),
                )
            ],
        )
        for i in range(6)
    ]
    suite = Suite(name="gaps", format="dataset-json", cases=cases)
    return evalnb.run(suite, lambda p: "nine" if p in ("q0", "q1", "q2") else "no", judge="heuristic",
                      progress=False)  # fmt: skip


def test_categories_give_each_scale_a_panel_and_mark_zero_and_unchecked_bars() -> None:
    result = categories_result()
    fig = plots.categories(result, value="mean")
    bars = {t.name: t for t in fig.data}
    # a panel per scale, in the order pass rate, 0-1, 1-5: a 1/5 Similarity is not as tall as a perfect match
    assert {n: t.yaxis for n, t in bars.items()} == {
        "ExactMatch": "y",
        "PartialMatch": "y2",
        "Similarity": "y3",
    }
    assert [a.text for a in fig.layout.annotations] == [
        "checks on the pass rate scale", "checks on the 0-1 scale", "checks on the 1-5 score scale"
    ]  # fmt: skip
    assert fig.layout.yaxis3.title.text == "mean score (1-5)" and fig.layout.yaxis3.range[0] == 1.0
    sim = bars["Similarity"]
    assert sim.base == 1.0 and list(sim.y) == [4.0, 0.0]  # bars rise from the scale's bottom
    # a bar at the bottom of its scale is an outlined stub with its label, not an empty slot
    assert list(sim.text) == ["5", "1"] and list(sim.marker.line.width) == [0, 4]
    exact = bars["ExactMatch"]
    assert list(exact.text) == ["1", "0"] and list(exact.marker.line.width) == [0, 4]
    # a check a category does not have says so
    assert list(bars["PartialMatch"].text) == ["1", "not checked"]
    assert "not checked in this category" in bars["PartialMatch"].customdata[1]
    assert exact.cliponaxis is False  # labels above a bar of 1 are not cut off
    passing = plots.categories(result)
    assert {t.yaxis for t in passing.data} == {"y"} and list(passing.data[0].text) == ["100%", "0%"]
    with pytest.raises(ValueError, match='"pass_rate" or "mean"'):
        plots.categories(result, value="median")


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
    # the two checks have equal pass rates: each has a panel of its own (bands cannot overlap into one
    # blur), with its own colour, dash and marker, and every marker sits on its version's tick
    other = fig.data[3]
    assert (line.xaxis, line.yaxis) != (other.xaxis, other.yaxis) and fig.data[2].yaxis == other.yaxis
    assert line.line.dash != other.line.dash and line.marker.symbol != other.marker.symbol
    assert list(line.x) == list(other.x) == [0, 1, 2]
    assert [a.text for a in fig.layout.annotations] == [
        "ExactMatch · pass rate (0-1)",
        "regex · pass rate (0-1)",
    ]
    assert list(fig.layout.xaxis.ticktext) == ["v0 (1)", "v1 (2)", "v2 (3)"]
    assert line.y[1] == 1.0
    assert "n: %{customdata[1]:.0f} scores over %{customdata[2]:.0f} cases" in line.hovertemplate
    assert line.customdata[0][1] == 12 and line.customdata[0][2] == 6  # n and cases per point
    assert "plots-suite" in fig.layout.title.text and fig.layout.xaxis2.title.text == "version (run order)"


def test_trend_puts_each_scale_in_its_own_panel(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    mixed_results(store)
    fig = plots.trend(store, "mixed-scales")
    lines = {t.name: t for t in fig.data if not t.name.endswith(" interval")}
    assert set(lines) == {"ExactMatch", "PartialMatch", "Coherence", "Citations"}
    # one panel per check, titled with its scale, in the order pass rate, 0-1, 1-5, count
    axes = [lines[n].yaxis for n in ("ExactMatch", "PartialMatch", "Coherence", "Citations")]
    assert axes == ["y", "y2", "y3", "y4"]
    assert [a.text for a in fig.layout.annotations] == [
        "ExactMatch · mean pass rate (0-1)", "PartialMatch · mean value (0-1)", "Coherence · mean score (1-5)",
        "Citations · mean count",
    ]  # fmt: skip
    assert list(fig.layout.yaxis3.range) == pytest.approx([0.76, 5.24])  # the 1-5 scale, a little padded
    # the pass rate view: every panel on 0-1
    passing = plots.trend(store, "mixed-scales", value="pass_rate")
    assert all(list(passing.layout[f"yaxis{i if i > 1 else ''}"].range) == pytest.approx([-0.06, 1.06])
               for i in range(1, 5))  # fmt: skip


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


def test_compare_of_several_suites_draws_a_panel_group_per_suite(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    mixed_results(store)
    for i, fn in enumerate([lambda p: "yes", agent]):
        evalnb.run(make_suite(), fn, store=store, version=f"v{i}", progress=False)
    both = store.compare_all("v0", "v1")  # what `evalnb compare v0 v1` compares
    fig = plots.compare(both)
    titles = [a.text for a in fig.layout.annotations]
    mixed = [t for t in titles if t.startswith("<b>mixed-scales</b> · ")]
    small = [t for t in titles if t.startswith("<b>plots-suite</b> · ")]
    # each suite: a panel per scale of its checks, then its per-case grid
    assert len(mixed) == 5 and len(small) == 2 and len(titles) == 7
    assert mixed[-1].startswith("<b>mixed-scales</b> · Triage") and small[-1].startswith(
        "<b>plots-suite</b> · Triage"
    )
    grids = [t for t in fig.data if t.type == "heatmap"]
    assert [list(g.x) for g in grids] == [
        ["ExactMatch", "PartialMatch", "Coherence", "Citations"],
        ["regex", "ExactMatch"],
    ]
    assert list(grids[1].y) == [f"c{i}" for i in range(6)]
    # the points of each suite's checks sit in that suite's panels
    points = [
        t for t in fig.data if t.type == "scatter" and t.x and t.x[0] is not None and t.name != "− margin"
    ]
    axes_of = {}
    for t in points:
        for y in t.y:
            axes_of.setdefault(y, set()).add(t.xaxis)
    assert axes_of["ExactMatch"] == {"x", "x6"} and axes_of["regex"] == {"x6"}  # row 5 is the first grid
    assert (
        fig.layout.title.text.startswith(
            "Comparison: v0 → v1, 2 suites gated as one: pass"  # one case of six regressed: too few to gate
        )
        and not both.regressed
    )
    # a gate of one suite draws as that suite's comparison
    one = plots.compare(store.compare_all("v0", "v1", suite="plots-suite"))
    assert one.layout.title.text.startswith("Comparison: v0 → v1 (plots-suite)")
    assert len([t for t in one.data if t.type == "heatmap"]) == 1


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
    assert [t.name for t in fig.data if t.type == "bar"] == ["a", "b"]
    # each judge's colour is named in the legend by a swatch of its own (a first bar may be hatched)
    assert {t.name: t.marker.color for t in fig.data if t.showlegend} == {
        "a": style.PALETTE[0],
        "b": style.PALETTE[1],
    }
    assert list(fig.data[0].text) == ["0.50<br>n=6", "1.00<br>n=4"] and fig.data[0].textposition == "outside"
    assert "n: %{customdata[1]} pairs" in fig.data[0].hovertemplate
    # the label above a bar of 1 has room, and is not clipped at the plot's edge
    assert fig.data[0].cliponaxis is False and fig.layout.yaxis.range[1] >= 1.15
    assert list(plots.agreement(table, value="kappa").layout.yaxis.range) == pytest.approx([-1.04, 1.32])
    with pytest.raises(ValueError, match="exact, kappa, spearman"):
        plots.agreement(table, value="median")


def test_agreement_draws_an_undefined_statistic_as_undefined_not_as_zero() -> None:
    import pandas as pd

    nan = float("nan")
    table = pd.DataFrame(
        {
            "check": ["Relevance", "Coherence", "Similarity"],
            "n": [12, 12, 0],
            "exact": [0.5, 0.0, nan],
            "kappa": [0.0, nan, nan],
            "spearman": [0.1, nan, nan],
            "note": [None, None, "not compared: none of its 3 rows has a value in both frames"],
        }
    )
    fig = plots.agreement(table, value="kappa")
    bars = fig.data[0]
    # kappa 0 (chance agreement) is an outlined stub with its label; undefined is a hatched bar over the whole
    # axis labelled so, with the reason in the hover and a legend entry
    assert list(bars.text) == ["0.00<br>n=12", "undefined<br>n=12", "undefined<br>n=0"]
    assert list(bars.marker.line.width) == [4, 1, 1] and list(bars.marker.pattern.shape) == ["", "/", "/"]
    assert list(bars.base) == [0.0, -1.0, -1.0] and list(bars.y) == [0.0, 2.0, 2.0]
    assert (
        bars.customdata[2][0]
        == "kappa: undefined (not compared: none of its 3 rows has a value in both frames)"
    )
    assert bars.customdata[1][0] == "kappa: undefined (no pairs, or judge and labels both constant)"
    assert "undefined (no pairs, or judge and labels both constant)" in {
        t.name for t in fig.data if t.showlegend
    }
    exact = plots.agreement(table).data[0]
    assert list(exact.text)[1] == "0.00<br>n=12" and list(exact.marker.line.width)[1] == 4


def test_trend_names_the_values_it_can_plot() -> None:
    import pandas as pd

    with pytest.raises(ValueError, match='"mean" or "pass_rate"'):
        evalnb.plots.trend(pd.DataFrame(), "s", value="median")


def test_the_results_page_shows_every_public_figure() -> None:
    root = Path(__file__).resolve().parents[1]
    docs = (root / "docs" / "results.md").read_text(encoding="utf-8")
    for name in plots.__all__:
        # each figure documented with its picture (made by docs/figures.py), kept small
        image = root / "docs" / "images" / f"plots-{name}.png"
        assert f"`evalnb.plots.{name}(" in docs and f"(images/plots-{name}.png)" in docs, name
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and image.stat().st_size < 100_000, name
