"""The comparison page (``evalnb compare A B --html PAGE``, ``Comparisons.to_html``) in headless Chromium: the
scorecard's page style, the gate as a table with its verdict and words per check, each suite's changes and plot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb.cli import app
from evalnb.store import Store
from evalnb.suite import Case, ExactMatchCheck, RegexCheck, Suite, Turn
from tests.support.browser import chromium_page

EVIL = "<script>window.pwned = true</script>"


def suite(name: str) -> Suite:
    return Suite(
        name=name,
        format="tasks-toml",
        cases=[
            Case(id=f"c{i}", name=EVIL if i == 0 else f"case {i}",
                 turns=[Turn(prompt=f"q{i}", expected="yes", checks=[ExactMatchCheck(), RegexCheck(on="result", pattern="y")])])
            for i in range(8)
        ],
    )  # fmt: skip


def good(prompt: str) -> str:
    return "yes"


def bad(prompt: str) -> str:
    # six of eight cases break: enough for the gate
    return "yes" if prompt in ("q0", "q1") else "no"


def stored(tmp_path: Path) -> Store:
    store = Store(tmp_path / "s.db")
    for version, agents in (("v1", (good, good)), ("v2", (bad, good))):
        for name, agent in zip(("alpha-suite", "beta-suite"), agents, strict=True):
            evalnb.run(suite(name), agent, store=store, version=version, progress=False)
    return store


def test_the_comparison_page_has_the_scorecards_style_and_the_gate_as_a_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = stored(tmp_path)
    both = store.compare_all("v1", "v2")
    assert both.regressed
    res = CliRunner().invoke(
        app, ["compare", "v1", "v2", "--store", str(tmp_path / "s.db"), "-o", "cmp.html"]
    )
    assert res.exit_code == 1 and "Wrote cmp.html" in res.output, res.output
    path = both.to_html(tmp_path / "pages" / "compare.html")

    def same(text: str) -> str:  # the page but for the random ids plotly gives its figures
        return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID", text)

    assert same(Path("cmp.html").read_text()) == same(path.read_text())
    card = store.load("v1", suite="alpha-suite").to_html(tmp_path / "card.html")
    text = path.read_text()
    assert EVIL not in text and "<pre>" not in text  # escaped; the gate is no longer monospace text
    style = "h => { const s = getComputedStyle(h); return [s.fontFamily, s.fontSize, s.fontWeight]; }"
    with chromium_page(offline=True) as page:
        page.goto(card.as_uri())
        card_h1 = page.locator("h1").evaluate(style)
        card_td = page.locator("td").first.evaluate("t => getComputedStyle(t).borderTopColor")
        page.goto(path.as_uri())
        page.wait_for_selector(".plotly .main-svg", timeout=15000)
        assert page.title() == "Comparison: v1 → v2"
        # one page style: the heading and the tables look as the scorecard's do
        assert page.locator("h1").evaluate(style) == card_h1 and "serif" not in card_h1[0].replace(
            "sans-serif", ""
        )
        assert page.locator("td").first.evaluate("t => getComputedStyle(t).borderTopColor") == card_td
        assert page.locator("#gate .verdict").inner_text() == "FAIL"
        assert (
            page.locator("#gate .verdict").evaluate("e => getComputedStyle(e).backgroundColor")
            == "rgb(207, 34, 46)"
        )
        # the gate: a row per suite x check, with its verdict and the words that explain it
        header = page.locator("#gate-table thead th").all_inner_texts()
        assert header[:2] == ["suite", "check"] and header[-2:] == ["verdict", "words"]
        rows = [
            dict(zip(header, r.locator("td").all_inner_texts(), strict=True))
            for r in page.locator("#gate-table tbody tr").all()
        ]
        assert [(r["suite"], r["check"]) for r in rows] == [
            ("alpha-suite", "ExactMatch"), ("alpha-suite", "regex"), ("beta-suite", "ExactMatch"), ("beta-suite", "regex"),
        ]  # fmt: skip
        worse = rows[0]
        assert worse["verdict"] == "worse" and worse["words"].startswith("worse by 0.75")
        assert (
            worse["difference"] == "-0.75"
            and worse["baseline mean"] == "1"
            and worse["candidate mean"] == "0.25"
        )
        cell = page.locator("#gate-table tbody tr").first.locator("td.worse")
        assert cell.evaluate("e => getComputedStyle(e).color") == "rgb(207, 34, 46)"
        assert rows[2]["verdict"] == "no detectable difference"  # beta did not change
        # per suite: its gate, the cases that changed (escaped), its plot
        assert page.locator("h2").all_inner_texts() == ["The gate, per check", "alpha-suite", "beta-suite"]
        assert page.locator("#triage-0 tbody tr").count() == 12  # six cases x two checks regressed
        assert page.locator("#triage-0 tbody tr td.regressed").count() == 12
        assert page.locator(".js-plotly-plot").count() == 2
        assert "No case changed." in page.locator("body").inner_text()
        assert page.evaluate("window.pwned === undefined") and not page.errors, page.errors
