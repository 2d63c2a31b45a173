"""How a page gets plotly's JavaScript: inlined once (works offline and alone), written once beside the page
and linked (small pages that work offline), or linked from the CDN. Pages opened offline in headless Chromium."""

from __future__ import annotations

from pathlib import Path

import plotly.offline
import pytest

import evalnb
from evalnb.demo._main import DemoOutcome, run_demo, write_scorecard
from evalnb.export._html import plotly_script
from tests.support.browser import chromium_page
from tests.test_plots import agent, make_suite

PLOTLY_JS = len(plotly.offline.get_plotlyjs())
NAME = f"plotly-{plotly.offline.get_plotlyjs_version()}.min.js"


def plots_drawn(path: Path) -> int:
    """Open the page offline (only file: URLs load) and count the figures plotly drew."""
    with chromium_page(offline=True) as page:
        page.goto(path.as_uri())
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=20000)
        assert not page.errors, page.errors
        return int(page.evaluate("document.querySelectorAll('.js-plotly-plot .main-svg:first-child').length"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoOutcome:
    return run_demo(out=tmp_path_factory.mktemp("demo"), echo=lambda s: None)


def test_the_demo_scorecard_inlines_plotly_once_or_links_it(demo: DemoOutcome, tmp_path: Path) -> None:
    inline = write_scorecard(demo, tmp_path / "inline" / "scorecard.html")
    text = inline.read_text(encoding="utf-8")
    assert text.count("plotly.js v") == 1 and PLOTLY_JS < len(text) < PLOTLY_JS + 1_000_000
    assert plots_drawn(inline) == 6  # a comparison and a scorecard per suite, offline
    linked = write_scorecard(demo, tmp_path / "linked" / "scorecard.html", plotlyjs="file")
    text = linked.read_text(encoding="utf-8")
    assert "plotly.js v" not in text and f'<script src="{NAME}" charset="utf-8"></script>' in text
    assert len(text) < 1_000_000
    assert (linked.parent / NAME).read_text(encoding="utf-8") == plotly.offline.get_plotlyjs()
    assert plots_drawn(linked) == 6
    cdn = write_scorecard(demo, tmp_path / "cdn.html", plotlyjs="cdn").read_text(encoding="utf-8")
    assert f'<script src="https://cdn.plot.ly/{NAME}" charset="utf-8"></script>' in cdn
    assert not (tmp_path / NAME).exists()


def test_result_scorecards_share_one_script_file(tmp_path: Path) -> None:
    result = evalnb.run(make_suite(), agent, progress=False)
    first = result.to_html(tmp_path / "cards" / "a.html", plotlyjs="file")
    script = tmp_path / "cards" / NAME
    stamp = script.stat().st_mtime_ns
    second = evalnb.export.to_html(result, tmp_path / "cards" / "b.html", plotlyjs="file")
    assert script.stat().st_mtime_ns == stamp  # written once, then shared
    assert sorted(p.name for p in (tmp_path / "cards").iterdir()) == ["a.html", "b.html", NAME]
    assert plots_drawn(first) == 2 and plots_drawn(second) == 2
    assert plotly_script("js/plotly.js") == '<script src="js/plotly.js" charset="utf-8"></script>'
    with pytest.raises(ValueError, match="needs the page's path"):
        plotly_script("file")
    with pytest.raises(ValueError, match="inline, file, cdn"):
        plotly_script(" ")
