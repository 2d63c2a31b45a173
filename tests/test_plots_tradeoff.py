"""`plots.tradeoff`: quality against cost per version, the Pareto front named; rendered to PNG."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest

import evalnb
from evalnb import plots
from evalnb.plots._tradeoff import pareto_front, tradeoff_frame
from evalnb.suite import Case, RegexCheck, Suite, Turn
from tests.support.browser import render_png

PRICES = {"small": {"input": 0.15, "output": 0.6}, "large": {"input": 2.5, "output": 10.0}}


def _suite() -> Suite:
    return Suite(
        name="tradeoff",
        format="tasks-toml",
        cases=[
            Case(
                id=f"c{i}",
                name=f"c{i}",
                turns=[Turn(prompt=f"q{i}", checks=[RegexCheck(on="result", pattern="^yes")])],
            )
            for i in range(20)
        ],
    )


def _agent(model: str, passing: int, tokens: int, ms: float):  # type: ignore[no-untyped-def]
    def agent(request: evalnb.Request) -> evalnb.Response:
        ok = int(request.case[1:]) < passing
        usage = {"prompt_tokens": tokens, "completion_tokens": tokens // 4}
        return evalnb.Response(text="yes" if ok else "no", model=model, usage=usage, latency_ms=ms)

    return agent


VERSIONS = {  # version: (model, passing cases of 20, prompt tokens, latency)
    "small-v1": ("small", 10, 1000, 200.0),
    "small-v2": ("small", 14, 1500, 250.0),  # better and dearer than v1: on the front
    "small-v3": ("small", 12, 3000, 300.0),  # worse and dearer than v2: beaten
    "large-v1": ("large", 19, 1200, 900.0),  # the best, and the dearest: on the front
    "free-v1": ("unpriced", 15, 1000, 100.0),  # no price: not placed
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> evalnb.Store:
    s = evalnb.Store(tmp_path_factory.mktemp("tradeoff") / "t.db")
    for version, spec in VERSIONS.items():
        with pytest.warns(evalnb.errors.CostWarning) if spec[0] == "unpriced" else nullcontext():
            evalnb.run(_suite(), _agent(*spec), prices=PRICES, store=s, version=version, progress=False)
    return s


def test_the_pareto_front() -> None:
    assert pareto_front([0.9, 0.8, 0.7], [2.0, 1.0, 1.5]) == [True, True, False]
    assert pareto_front([0.5, 0.5], [1.0, 1.0]) == [True, True]  # a tie beats neither
    assert pareto_front([0.5, 0.6], [1.0, 1.0]) == [False, True]


def test_tradeoff_frame_and_png(store: evalnb.Store, tmp_path: Path) -> None:
    frame = tradeoff_frame(store, "tradeoff").set_index("version")
    assert frame.loc["small-v1", "quality"] == 0.5 and frame.loc["large-v1", "quality"] == 0.95
    assert frame["front"].to_dict() == {
        "small-v1": True,
        "small-v2": True,
        "small-v3": False,
        "large-v1": True,
        "free-v1": False,
    }
    fig = plots.tradeoff(store, "tradeoff")
    names = [t.name for t in fig.data]
    assert names == [
        "Pareto front (no version is better and cheaper)",
        "other versions",
        "on the Pareto front",
    ]
    assert list(fig.data[2].text) == ["small-v1", "small-v2", "large-v1"]
    assert "not placed: free-v1" in fig.layout.title.text
    sizes = dict(zip(fig.data[2].text, fig.data[2].marker.size, strict=True))
    assert sizes["large-v1"] > sizes["small-v2"] > sizes["small-v1"]  # slower, bigger
    pixels = render_png(fig, tmp_path / "tradeoff.png")
    assert pixels.shape[0] >= 300 and (pixels < 245).any(axis=2).mean() > 0.02
    blue = np.abs(pixels.astype("int16") - np.array([0, 114, 178])).max(axis=2) <= 3
    assert blue.mean() > 0.002  # the front's points and line
    by_check = tradeoff_frame(store, "tradeoff", check="regex")
    assert by_check["quality"].tolist() == pytest.approx([0.5, 0.7, 0.6, 0.95, 0.75])
    with pytest.raises(ValueError, match="no check 'nope'"):
        plots.tradeoff(store, "tradeoff", check="nope")
