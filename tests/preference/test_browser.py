"""The failure browser's pairwise views: ``pw.explore()`` and ``cmp.explore(pairwise=pw)`` show the verdicts
beside the answers; the view opened in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb.store import Store
from tests.support.browser import chromium_page


def judge(prompt: str, first: str, second: str) -> Any:
    if prompt == "q2":
        return ("first", "the first <b>reads</b> better")  # flips with the order
    return ("second", "names the office") if "office" in second else ("first", "names the office")


@pytest.fixture
def two(tmp_path: Path) -> tuple[Any, Any]:
    suite = evalnb.from_frame(
        pd.DataFrame(
            {
                "prompt": ["q1", "q2", "q3"],
                "expected": ["answer to q1", "answer to q2", "answer to q3"],
                "category": ["x", "x", "y"],
            }
        ),
        checks=("ExactMatch",),
    )
    store = Store(tmp_path / "s.db")
    store.save(evalnb.run(suite, lambda p: f"answer to {p}", progress=False), version="v1")
    store.save(evalnb.run(suite, lambda p: f"the office answers {p}", progress=False), version="v2")
    return store.load("v1"), store.load("v2")


def test_the_pairwise_browser_filters_by_winner_and_shows_the_verdict(two: tuple[Any, Any]) -> None:
    a, b = two
    pw = evalnb.pairwise(a, b, judge=judge, labels=("v1", "v2"))
    browser = pw.explore()
    assert [label for label, _v in browser.winner.options][:3] == ["all", "v1 won", "v2 won"]
    labels = [label for label, _v in browser.cases.options]
    assert len(labels) == 3 and any(label.endswith("· v2") for label in labels)
    assert any(label.endswith("· tie") for label in labels)
    browser.winner.value = "flipped"
    assert len(browser.cases.options) == 1
    page = browser.html
    assert "Pairwise verdict by callable:judge: tie" in page
    assert "v1 shown first" in page and "v2 shown first" in page and "no: a tie" in page
    assert "the first &lt;b&gt;reads&lt;/b&gt; better" in page  # the judge's words are escaped
    assert "Answer of v1" in page and "Answer of v2" in page and "<pre>q2</pre>" in page
    browser.winner.value = "b"
    assert len(browser.cases.options) == 2 and "orders agree</th>" in browser.html and ">yes<" in browser.html


def test_the_comparison_browser_shows_the_pairwise_verdicts_beside_the_answers(two: tuple[Any, Any]) -> None:
    a, b = two
    pw = evalnb.pairwise(a, b, judge=judge, labels=("v1", "v2"))
    cmp = evalnb.compare(a, b)
    browser = cmp.explore(pairwise=pw)
    browser.select(str(a.runs["case_id"].iloc[0]))
    page = browser.html
    assert "Pairwise verdict by callable:judge" in page and "Checks (case means over runs" in page
    assert page.index("Answer of v2") < page.index("Pairwise verdict") < page.index("Checks (case means")
    assert "Pairwise verdict" not in cmp.explore().html  # without it, the view is as before


def test_the_pairwise_view_in_headless_chromium(two: tuple[Any, Any], tmp_path: Path) -> None:
    a, b = two
    pw = evalnb.pairwise(a, b, judge=judge, labels=("v1", "v2"))
    browser = pw.explore()
    browser.winner.value = "flipped"
    path = tmp_path / "view.html"
    path.write_text(f"<html><body>{browser.html}</body></html>", encoding="utf-8")
    with chromium_page(offline=True) as page:
        page.set_viewport_size({"width": 1000, "height": 700})
        page.goto(path.as_uri())
        verdict = page.locator(".eb-verdict")
        assert verdict.count() == 1 and verdict.is_visible()
        assert "Pairwise verdict by callable:judge: tie" in verdict.inner_text()
        assert page.errors == []
        page.screenshot(path=str(tmp_path / "view.png"), full_page=True)
    assert (tmp_path / "view.png").stat().st_size > 5000
