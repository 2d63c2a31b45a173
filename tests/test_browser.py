"""The failure browser without a browser: result.failures(), the filters, one case's view, its HTML, and the
widgets driven from Python (the JupyterLab test drives them in Chromium)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb.browser._data import ALL, case_ids, case_view
from evalnb.browser._views import case_html, word_diff
from evalnb.store import Store
from evalnb.suite import Case, ExactMatchCheck, RegexCheck, RowsCheck, Suite, Turn

EVIL = "<script>window.pwned = 1</script>"


def suite() -> Suite:
    rows = [{"state": "CA", "sales": 10.0}, {"state": "WA", "sales": 5.0}]
    return Suite(
        name="browse",
        format="cube-yaml",
        cases=[
            Case(id="ok", name="fine", category="text", turns=[Turn(prompt="say yes", expected="yes", checks=[ExactMatchCheck()])]),
            Case(id="words", name="wrong words", category="text", runs=2,
                 turns=[Turn(prompt="opening hours?", expected="Open 9 to 5 on weekdays",
                             checks=[ExactMatchCheck(), RegexCheck(on="result", pattern="weekdays")])]),
            Case(id="rows", name="wrong rows", category="data",
                 turns=[Turn(prompt="sales by state", checks=[RowsCheck(expected=rows)])]),
            Case(id="unordered", name="rows any order", category="data",
                 turns=[Turn(prompt="sales by state, any order", checks=[RowsCheck(expected=rows, order_matters=False)])]),
            Case(id="boom", name="agent error", category="text", turns=[Turn(prompt="explode", checks=[ExactMatchCheck()])]),
            Case(id="talk", name="two turns", category="text",
                 turns=[Turn(prompt="first", expected="one", checks=[ExactMatchCheck()]),
                        Turn(prompt="second", expected="two", checks=[ExactMatchCheck()])]),
        ],
    )  # fmt: skip


def agent(prompt: str) -> object:
    if prompt == "explode":
        raise RuntimeError("agent exploded")
    if prompt.startswith("sales by state"):
        return {"text": EVIL, "rows": [{"state": "WA", "sales": 5.0}, {"state": "CA", "sales": 12.0}]}
    if prompt == "opening hours?":
        return "open 9 to 6 on weekends"
    return {"say yes": "yes", "first": "one", "second": "three"}[prompt]


@pytest.fixture()
def result() -> evalnb.Result:
    return evalnb.run(suite(), agent, progress=False)


def test_failures_are_the_failed_and_degraded_rows_with_what_was_said(result: evalnb.Result) -> None:
    f = result.failures()
    assert list(f.columns) == list(evalnb.results._frames.FAILURE_COLUMNS)
    assert list(zip(f["case_id"], f["run"], f["turn"], f["check_id"], strict=True)) == [
        ("words", 0, 0, "ExactMatch"), ("words", 0, 0, "regex"), ("words", 1, 0, "ExactMatch"),
        ("words", 1, 0, "regex"), ("rows", 0, 0, "rows"), ("unordered", 0, 0, "rows"),
        ("boom", 0, 0, "ExactMatch"), ("talk", 0, 1, "ExactMatch"),
    ]  # fmt: skip
    words = f.iloc[0]
    assert words["response"] == "open 9 to 6 on weekends" and words["expected"] == "Open 9 to 5 on weekdays"
    assert words["prompt"] == "opening hours?" and words["status"] == "failed"
    assert f.loc[f["case_id"] == "rows", "mismatches"].tolist() == [4]  # the order flips every cell
    assert f.loc[f["case_id"] == "unordered", "mismatches"].tolist() == [1]
    boom = f[f["case_id"] == "boom"].iloc[0]
    assert boom["status"] == "degraded" and boom["error"].startswith("RuntimeError: agent exploded")
    assert pd.isna(f.loc[f["check_id"] == "regex", "mismatches"]).all()
    assert str(f["run"].dtype) == "Int64" and str(f["value"].dtype) == "float64"
    # derived from the frames: a failed turn without its failing scores is still a row, check NA
    result.scores = result.scores[result.scores["case_id"] != "words"]
    lone = result.failures().query("case_id == 'words'")
    assert len(lone) == 2 and lone["check"].isna().all() and lone["response"].notna().all()


def test_the_filters_keep_cases_by_status_check_and_category(result: evalnb.Result) -> None:
    assert case_ids(result) == ["words", "rows", "unordered", "boom", "talk"]
    assert case_ids(result, status="degraded") == ["boom"]
    assert case_ids(result, status="passed") == ["ok"]
    assert case_ids(result, status=ALL, category="data") == ["rows", "unordered"]
    assert case_ids(result, status="failed", check="regex") == ["words"]
    assert case_ids(result, status="passed", check="ExactMatch") == ["ok"]
    assert case_ids(result, status=ALL, check="rows") == ["rows", "unordered"]


def test_a_case_view_marks_the_difference_and_the_mismatched_rows(result: evalnb.Result) -> None:
    view = case_view(result, "words")
    assert (view.run, view.turn, view.runs) == (0, 0, [0, 1])
    assert [c["check_id"] for c in view.checks] == ["ExactMatch", "regex"]
    page = case_html(view)
    assert '<del class="eb-del">5</del>' in page and '<ins class="eb-ins">6</ins>' in page
    assert '<del class="eb-del">weekdays</del>' in page and '<ins class="eb-ins">weekends</ins>' in page
    assert "run 1 of 2" in page and "pattern &#x27;weekdays&#x27; not found" in page
    # rows in order: row 0 and row 1 each mismatched, in both tables
    rows = case_view(result, "rows")
    assert rows.expected_rows == [{"state": "CA", "sales": 10.0}, {"state": "WA", "sales": 5.0}]
    assert rows.actual_rows == [{"state": "WA", "sales": 5.0}, {"state": "CA", "sales": 12.0}]
    page = case_html(rows)
    assert page.count('<tr class="eb-bad">') == 4 and page.count('class="eb-cell-bad"') == 8
    assert EVIL not in page and "&lt;script&gt;" in page  # agent text is shown, never run
    # unordered: the mismatch names the row by its key, and the expected row carries the mark
    page = case_html(case_view(result, "unordered"))
    assert "rows[state=&quot;CA&quot;].sales" in page and page.count('<tr class="eb-bad">') == 1
    assert "compared unordered" in page
    # an agent error; the second turn of a conversation
    assert "RuntimeError: agent exploded" in case_html(case_view(result, "boom"))
    talk = case_view(result, "talk")
    assert (talk.turn, talk.turns, talk.prompt) == (1, [0, 1], "second")


def test_a_rows_only_answer_says_rows_only_and_counts_read_as_integers(tmp_path: Path) -> None:
    counts = [{"family": "Food", "stores": 8}, {"family": "Drink", "stores": 3}]
    cube = Suite(name="cube", format="cube-yaml", cases=[
        Case(id="count", name="store count", turns=[Turn(prompt="stores per family", checks=[RowsCheck(expected=counts)])]),
    ])  # fmt: skip
    # the rows of a SQL sum or a DataFrame come back as floats
    answer = {"rows": [{"family": "Food", "stores": 9.0}, {"family": "Drink", "stores": 3.0}]}
    result = evalnb.run(cube, lambda p: answer, progress=False)
    page = case_html(case_view(result, "count"))
    assert "(no answer)" not in page and "(rows only: no text; the 2 rows answered are under Rows)" in page
    line = "rows[0].stores: expected 8 ± (abs 0, rel 0), got 9"
    assert f"<li>{line}</li>" in page and line in result.report()
    assert '<td class="eb-cell-bad" title="' + line + '">9</td>' in page and "9.0" not in page
    # loaded from the store, the answer's rows are gone but its mismatches say where they differed
    store = Store(tmp_path / "s.db")
    store.save(result, version="v1")
    saved = case_html(case_view(store.load("v1"), "count"))
    assert "(rows only: no text; a saved run keeps where the rows differed, listed under Rows)" in saved
    assert line in saved


def test_under_a_check_filter_a_case_is_listed_by_that_checks_status(result: evalnb.Result) -> None:
    # "words" fails ExactMatch and regex; "talk" fails ExactMatch on turn 2 only
    browser = result.explore()
    browser.status.value = ALL
    browser.check.value = "ExactMatch"
    labels = dict((v, label) for label, v in browser.cases.options)
    assert labels["ok"] == "PASS [ExactMatch] · ok · fine"
    assert labels["talk"] == "FAIL [ExactMatch] · talk · two turns"
    assert "DEGRADED [ExactMatch] · boom" in labels["boom"]
    # a case that failed overall is listed as passing the check it passed
    passing = evalnb.run(suite(), lambda p: "open 9 to 6 on weekdays" if p == "opening hours?" else agent(p),
                         progress=False)  # fmt: skip
    b = passing.explore()
    b.status.value, b.check.value = "passed", "regex"
    assert b.cases.options == (("PASS [regex] · words · wrong words", "words"),)
    assert passing.cases.set_index("case_id").loc["words", "status"] == "failed"
    # the view opens on the run and turn where the filtered check did not pass
    b.status.value, b.check.value = "failed", "ExactMatch"
    b.select("talk")
    assert b.turn.value == 1 and "second" in b.html


def test_word_diff_is_case_insensitive_and_escapes() -> None:
    a, b = word_diff("The <b>Office</b> opens", "the <b>office</b> closes")
    assert a == 'The &lt;b&gt;Office&lt;/b&gt; <del class="eb-del">opens</del>'
    assert b == 'the &lt;b&gt;office&lt;/b&gt; <ins class="eb-ins">closes</ins>'
    assert word_diff(None, "x") == ("", '<ins class="eb-ins">x</ins>')


def test_the_result_browser_follows_its_filters_and_picks(result: evalnb.Result) -> None:
    browser = result.explore()
    assert [v for _label, v in browser.cases.options] == ["words", "rows", "unordered", "boom", "talk"]
    assert browser.cases.value == "words" and "opening hours?" in browser.html
    assert browser.count.value.startswith("<b>5</b> cases")
    browser.category.value = "data"
    assert browser.cases.value == "rows" and "sales by state" in browser.html
    browser.status.value = "passed"
    assert browser.cases.options == () and "No case matches" in browser.html
    browser.select("talk")  # a case the filters hide: they widen
    assert browser.status.value == ALL and browser.turn.value == 1 and "second" in browser.html
    browser.turn.value = 0
    assert "<pre>first</pre>" in browser.html
    browser.select("words", run=1)
    assert "run 2 of 2" in browser.html
    with pytest.raises(KeyError):
        browser.select("nope")
    # nothing failed: the browser starts on every case
    passing = evalnb.run(suite(), lambda p: "yes", progress=False)
    passing.scores = passing.scores[passing.scores["status"] == "passed"]
    passing.runs = passing.runs.assign(status="passed")
    assert passing.explore().status.value == ALL


def test_the_comparison_browser_shows_both_answers(result: evalnb.Result, tmp_path: Path) -> None:
    def better(prompt: str) -> object:
        return "Open 9 to 5 on weekdays" if prompt == "opening hours?" else agent(prompt)

    store = Store(tmp_path / "s.db")
    store.save(result, version="v1")
    store.save(evalnb.run(suite(), better, progress=False), version="v2")
    browser = store.compare("v1", "v2").explore()
    assert [v for _label, v in browser.cases.options] == ["words"]
    assert browser.cases.options[0][0] == "words · ExactMatch improved, regex improved"
    page = browser.html
    assert "Answer of v1" in page and "Answer of v2" in page
    assert '<del class="eb-del">6</del>' in page and '<ins class="eb-ins">5</ins>' in page
    assert 'v1: <span class="eb-s-failed">failed</span> → v2: <span class="eb-s-passed">passed</span>' in page
    browser.change.value = ALL
    browser.select("rows")
    assert "In v1" in browser.html and "rows[0].state" in browser.html  # loaded runs: mismatch lines
    frames = evalnb.compare(result.scores, result.scores)
    with pytest.raises(ValueError, match="needs the answers"):
        frames.explore()


def test_without_ipywidgets_the_error_says_what_to_install(
    result: evalnb.Result, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a)
    )
    with pytest.raises(ImportError, match=r'pip install "evalnb\[notebooks\]"'):
        result.explore()
