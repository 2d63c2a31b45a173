"""Plots return plotly figures with the expected traces, titles and hover text."""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go

import evalnb
from evalnb import plots
from evalnb.store import Store
from evalnb.suite import Case, ExactMatchCheck, RegexCheck, Suite, Turn


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


def test_scorecard_and_categories() -> None:
    result = evalnb.run(make_suite(), agent, progress=False)
    fig = plots.scorecard(result)
    assert isinstance(fig, go.Figure)
    (heat,) = fig.data
    assert heat.type == "heatmap"
    assert list(heat.x) == ["regex", "ExactMatch"] and list(heat.y) == [f"c{i}" for i in range(6)]
    assert heat.z[1][0] == 0.0 and heat.z[0][0] == 1.0
    assert heat.text[1][0].startswith("case 1 (c1)<br>regex: 0%<br>")
    assert "<b>" not in heat.text[1][0]  # agent text is escaped in hover
    assert fig.layout.title.text == "Scorecard: plots-suite"
    assert fig.layout.xaxis.title.text == "check" and fig.layout.yaxis.title.text == "case"

    cat = plots.categories(result)
    assert [t.name for t in cat.data] == ["regex", "ExactMatch"]
    assert list(cat.data[0].x) == ["alpha", "beta"]
    assert cat.data[0].y[0] == 2 / 3
    assert cat.layout.yaxis.title.text == "pass rate"


def test_trend_from_store_and_compare(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.db")
    for i, fn in enumerate([agent, lambda p: "yes", agent]):
        evalnb.run(make_suite(), fn, store=store, version=f"v{i}", progress=False)
    fig = plots.trend(store, "plots-suite")
    names = [t.name for t in fig.data]
    assert names == ["ExactMatch interval", "ExactMatch", "regex interval", "regex"]
    line = fig.data[1]
    assert list(line.x) == ["v0 (1)", "v1 (2)", "v2 (3)"]
    assert line.y[1] == 1.0
    assert fig.data[0].fill == "toself"
    assert "plots-suite" in fig.layout.title.text and fig.layout.xaxis.title.text == "version (run order)"
    frame_fig = plots.trend(store.trend("plots-suite"), value="pass_rate")
    assert frame_fig.layout.yaxis.title.text == "pass rate"

    cmp = store.compare("v1", "v2")
    cfig = plots.compare(cmp)
    # checks in suite order
    assert cfig.data[0].name == "difference" and list(cfig.data[0].y) == ["regex", "ExactMatch"]
    changes = {t.name for t in cfig.data[1:]}
    assert changes == {"regressed", "same"}
    reg = next(t for t in cfig.data if t.name == "regressed")
    assert list(reg.x) == ["c1", "c1"]
    assert "case 1" in reg.text[0]
    assert cfig.layout.title.text == "Comparison: v1 → v2"


def test_trend_names_the_values_it_can_plot() -> None:
    import pandas as pd
    import pytest

    with pytest.raises(ValueError, match='"mean" or "pass_rate"'):
        evalnb.plots.trend(pd.DataFrame(), "s", value="median")
