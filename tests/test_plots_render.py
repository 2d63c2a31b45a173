"""Every kind of figure rendered to PNG (kaleido on the system Chromium) from the tests' data: a real image,
not blank, with the colours the figure promises where a person would look for them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb import plots
from evalnb.plots import _style as style
from evalnb.store import Store
from tests.support.browser import chromium, render_png
from tests.test_plots import agent, make_suite, mixed_results


def rgb(colour: str) -> tuple[int, int, int]:
    return (int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16))


def share_of(pixels: Any, colour: tuple[float, float, float], tolerance: float = 3.0) -> float:
    """The share of pixels within ``tolerance`` (per channel) of ``colour``."""
    close = np.abs(pixels.astype("int16") - np.array(colour, dtype="float64")).max(axis=2) <= tolerance
    return float(close.mean())


def assert_not_blank(pixels: Any) -> None:
    h, w, _ = pixels.shape
    assert h >= 300 and w >= 600
    not_white = (pixels < 245).any(axis=2).mean()
    assert not_white > 0.02, f"the image is nearly blank ({not_white:.1%} drawn)"
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 20


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    s = Store(tmp_path_factory.mktemp("render") / "p.db")
    mixed_results(s)
    return s


def test_scorecard_and_categories_png(tmp_path: Path) -> None:
    result = evalnb.run(make_suite(), agent, progress=False)
    pixels = render_png(plots.scorecard(result), tmp_path / "scorecard.png")
    assert_not_blank(pixels)
    # a failing cell (red) and passing cells (green), separated by white borders
    assert share_of(pixels, rgb("#cf222e")) > 0.005 and share_of(pixels, rgb("#1a7f37")) > 0.05
    pixels = render_png(plots.categories(result), tmp_path / "categories.png")
    assert_not_blank(pixels)
    for colour in style.PALETTE[:2]:
        assert share_of(pixels, rgb(colour)) > 0.01


def test_compare_png(store: Store, tmp_path: Path) -> None:
    cmp = store.compare("v0", "v1")
    pixels = render_png(plots.compare(cmp), tmp_path / "compare.png")
    assert_not_blank(pixels)
    for change in set(cmp.cases["change"]):  # every change's cells are drawn in its colour
        assert share_of(pixels, rgb(style.CHANGE_COLOURS[change])) > 0.002, change


def test_compare_of_several_suites_png(tmp_path: Path) -> None:
    store = Store(tmp_path / "two.db")
    mixed_results(store)
    for i, fn in enumerate([lambda p: "yes", agent]):
        evalnb.run(make_suite(), fn, store=store, version=f"v{i}", progress=False)
    both = store.compare_all("v0", "v1")
    fig = plots.compare(both)
    pixels = render_png(fig, tmp_path / "compare-all.png")
    assert_not_blank(pixels)
    assert pixels.shape[0] == fig.layout.height  # both suites' panels drawn, one group under the other
    for change in set(both.cases["change"]):
        assert share_of(pixels, rgb(style.CHANGE_COLOURS[change])) > 0.002, change


def test_zero_bars_and_undefined_kappa_are_drawn(tmp_path: Path) -> None:
    result = evalnb.run(make_suite(), lambda p: "no", progress=False)  # every check at 0%
    pixels = render_png(plots.categories(result), tmp_path / "zero.png")
    assert_not_blank(pixels)
    for colour in style.PALETTE[:2]:  # the 0% stubs are drawn in their check's colour
        assert share_of(pixels, rgb(colour)) > 0.0005, colour
    nan = float("nan")
    table = pd.DataFrame({"check": ["Relevance", "Coherence"], "n": [8, 8], "exact": [0.5, 0.25],
                          "kappa": [0.3, nan], "spearman": [0.2, nan]})  # fmt: skip
    pixels = render_png(plots.agreement(table, value="kappa"), tmp_path / "kappa.png")
    assert share_of(pixels, rgb("#afb8c1"), tolerance=12) > 0.002  # the hatching of the undefined bar


def test_trend_png_bands_have_their_lines_colour(store: Store, tmp_path: Path) -> None:
    fig = plots.trend(store, "mixed-scales")
    pixels = render_png(fig, tmp_path / "trend.png")
    assert_not_blank(pixels)
    for band in (t for t in fig.data if t.name.endswith(" interval")):
        line = next(t for t in fig.data if t.name == band.name.removesuffix(" interval"))
        # the band is the line's colour at 15% over white
        tint = tuple(0.15 * c + 0.85 * 255 for c in rgb(line.line.color))
        assert share_of(pixels, tint, tolerance=4) > 0.002, band.name
    assert_not_blank(render_png(plots.trend(store, "mixed-scales", value="pass_rate"), tmp_path / "pass.png"))


def test_agreement_png(store: Store, tmp_path: Path) -> None:
    result = store.load("v1")
    labels = result.scores[result.scores["check"] == "Coherence"].assign(value=4.0)
    table = pd.concat(
        {"heuristic": evalnb.judges.agreement(result.scores, labels)}, names=["judge"]
    ).reset_index()
    pixels = render_png(plots.agreement(table), tmp_path / "agreement.png")
    assert_not_blank(pixels)
    assert share_of(pixels, rgb(style.PALETTE[0])) > 0.01


def test_the_offline_judge_leaves_the_root_logger_alone_and_exports_print_nothing(tmp_path: Path) -> None:
    # wordllama calls logging.basicConfig(level=INFO) when imported: left in place, every later INFO line of
    # any library (kaleido's, when a figure is exported) would print. A fresh process, as a user's has.
    script = f"""
import logging, os, sys
root = logging.getLogger()
before = (list(root.handlers), root.level)
import evalnb
from evalnb.suite import Case, JudgedMetricCheck, Suite, Turn
suite = Suite(name="offline", format="dataset-json", cases=[
    Case(id=f"c{{i}}", name=f"c{{i}}", turns=[Turn(prompt="meal allowance?", expected="The daily meal allowance is $40.",
         checks=[JudgedMetricCheck(type="Similarity")])]) for i in range(2)])
result = evalnb.run(suite, lambda p: "You can spend up to forty dollars a day on food.", judge="embedding", progress=False)
assert "wordllama" in sys.modules and result.scores["judge"].str.startswith("embedding").all(), result.scores
assert (list(root.handlers), root.level) == before, (root.handlers, root.level)
os.environ["BROWSER_PATH"] = {chromium()!r}
evalnb.plots.scorecard(result).write_image({str(tmp_path / "card.png")!r}, width=800, height=400)
print("root", logging.getLevelName(root.level), len(root.handlers))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "root WARNING 0"
    assert "INFO" not in out.stderr and "INFO" not in out.stdout, out.stderr
    assert (tmp_path / "card.png").stat().st_size > 1000


def test_ranking_png(tmp_path: Path) -> None:
    from tests.preference.test_rank import by_level, three

    ranking = evalnb.rank(three(30), judge=by_level, labels=["gpt-4o-mini", "gpt-4o", "o3"], bootstrap=200)
    pixels = render_png(plots.ranking(ranking), tmp_path / "ranking.png")
    assert_not_blank(pixels)
    # the best (blue) and a version below it (grey), each with its legend entry
    assert share_of(pixels, rgb(style.PALETTE[0]), tolerance=6) > 0.0002
    assert share_of(pixels, rgb(style.PALETTE[6]), tolerance=6) > 0.0002
