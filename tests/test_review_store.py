"""Comparisons, the store's version labels and the dataset document on the inputs that used to go wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

import evalnb
from evalnb import export
from evalnb.cli import app
from evalnb.comparison import compare
from evalnb.demo.kb import KBAssistant
from evalnb.errors import StoreError
from evalnb.suite import Case, RegexCheck, Suite, Turn

DATA = Path(__file__).resolve().parents[1] / "data" / "suites"


def frame(rows: list[dict]) -> pd.DataFrame:
    f = pd.DataFrame(rows)
    f["value"] = f["value"].astype("float64")
    f["passed"] = f["passed"].astype("boolean")
    return f


def pass_only(passed: bool, *, cases: int = 10, runs: int = 3) -> pd.DataFrame:
    """A user check that only says pass or fail (no value), several runs per case."""
    return frame(
        [
            {"case_id": f"c{i}", "case_name": f"case {i}", "category": "k", "run": r, "turn": 0,
             "check": "mine", "check_id": "mine", "value": None, "passed": passed,
             "status": "passed" if passed else "failed"}
            for i in range(cases) for r in range(runs)
        ]
    )  # fmt: skip


def test_a_pass_only_check_that_breaks_is_a_regression() -> None:
    cmp = compare(pass_only(True), pass_only(False))
    assert cmp.regressed and cmp.exit_code == 1
    assert cmp.cases["change"].eq("regressed").all()
    # three runs a side cannot reach significance (3/3 against 0/3: Fisher p = 0.1)
    assert not cmp.cases["significant"].any()
    row = cmp.checks.iloc[0]
    assert row["verdict"] == "worse" and row["diff"] == -1.0
    assert compare(pass_only(False), pass_only(True)).cases["change"].eq("improved").all()


def test_errors_count_as_the_worst_score_so_the_verdict_is_not_better() -> None:
    n = 20
    a = frame(
        [{"case_id": f"c{i}", "case_name": "x", "category": "k", "run": 0, "turn": 0, "check": "Relevance",
          "check_id": "Relevance", "value": 4.0, "passed": True, "status": "passed"} for i in range(n)]
    )  # fmt: skip
    # the candidate scores a little higher where it answers, and errors on every other case
    b = frame(
        [{"case_id": f"c{i}", "case_name": "x", "category": "k", "run": 0, "turn": 0, "check": "Relevance",
          "check_id": "Relevance", "value": 4.5 if i % 2 else None, "passed": bool(i % 2),
          "status": "passed" if i % 2 else "degraded"} for i in range(n)]
    )  # fmt: skip
    row = compare(a, b).checks.iloc[0]
    # a judge failure is the bottom of the 1-5 scale (1), not 0: the mean stays on the scale
    assert row["mean_b"] == pytest.approx((10 * 4.5 + 10 * 1.0) / 20)
    assert row["scale"] == "1-5 score"
    assert row["verdict"] == "worse"


def test_checks_on_one_side_only_are_new_or_gone_and_other_suites_are_noted() -> None:
    a = pass_only(True).assign(check="old", check_id="old", suite="s1")
    b = pass_only(True).assign(check="fresh", check_id="fresh", suite="s2")
    cmp = compare(a, b)
    assert cmp.checks.set_index("check_id")["verdict"].to_dict() == {"fresh": "new", "old": "gone"}
    assert "suite 's1'" in cmp.report() and "suite 's2'" in cmp.report()


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


def test_a_version_label_shared_by_suites_is_ambiguous(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = evalnb.Store(db)
    answers = {"A": "yes", "B": "no"}
    ids = {s: store.save(evalnb.run(mk(s), lambda p, s=s: answers[s], progress=False), version="v1")
           for s in ("A", "B")}  # fmt: skip
    with pytest.raises(StoreError) as err:
        store.load("v1")
    assert err.value.code == "AMBIGUOUS_VERSION" and f"'A' (latest run {ids['A']})" in str(err.value)
    with pytest.raises(StoreError, match="several suites"):
        store.compare("v1", "v1")
    assert store.load("v1", suite="A").meta["run_id"] == ids["A"]
    # three cases support no verdict on a check: the gate says so instead of "no detectable difference"
    assert store.compare("v1", "v1", suite="B").checks["words"].tolist() == [
        "too few cases to tell (3 paired cases)"
    ]
    # compare_all compares every suite the label names
    both = store.compare_all("v1", "v1")
    assert list(both) == ["A", "B"] and both.exit_code == 0
    # delete() of a label shared by suites needs the suite (or all_suites): it names the suites
    with pytest.raises(StoreError, match="several suites: A, B") as err:
        store.delete("v1")
    assert err.value.code == "AMBIGUOUS_VERSION"
    assert len(store.runs()) == 2

    runner = CliRunner()
    out = runner.invoke(app, ["report", "v1", "--store", str(db)])
    assert out.exit_code == 2 and "several suites" in out.output
    assert ids["A"] in out.output and ids["B"] in out.output  # the run ids to report instead
    out = runner.invoke(app, ["report", ids["A"], "--store", str(db)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["compare", "v1", "v1", "--store", str(db), "--suite", "A"])
    assert out.exit_code == 0 and "too few cases to tell" in out.output
    out = runner.invoke(app, ["compare", "v1", "v1", "--store", str(db)])
    assert out.exit_code == 0 and "=== A ===" in out.output and "=== B ===" in out.output


# The parts of the published dataset schema (eval document 1.6.0) that the output document exercises.
_VALID = {"type": "object", "required": ["score", "result", "threshold"],
          "properties": {"score": {"type": "number"}, "result": {"enum": ["pass", "fail"]},
                         "threshold": {"type": "number"}}}  # fmt: skip
_ERRORED = {"type": "object", "required": ["result", "error"], "additionalProperties": False,
            "properties": {"result": {"const": "error"}, "error": {"type": "string", "minLength": 1}}}  # fmt: skip
_SCORES = {
    "type": "object",
    "properties": {
        k: {"oneOf": [_VALID, _ERRORED]} for k in ("relevance", "coherence", "groundedness", "partialMatch")
    },
}
_STATUS = {"enum": ["pass", "fail", "partial", "error"]}
_TURN_PROPS = {k: {} for k in ("prompt", "expected_response", "response", "context", "evaluators",
                               "evaluators_mode", "citations", "diagnostics", "error", "extensions")}  # fmt: skip
_TURN = {"type": "object", "required": ["prompt"], "additionalProperties": False,
         "properties": {**_TURN_PROPS, "scores": _SCORES, "status": _STATUS}}  # fmt: skip
SCHEMA = {
    "type": "object",
    "required": ["schemaVersion", "items"],
    "properties": {
        "items": {"type": "array", "items": {"oneOf": [
            {**_TURN, "not": {"required": ["turns"]}},
            {"type": "object", "required": ["turns"], "additionalProperties": False,
             "properties": {"name": {}, "description": {}, "conversation_id": {}, "extensions": {},
                            "summary": {}, "turns": {"type": "array", "items": _TURN}}},
        ]}},
    },
}  # fmt: skip


def test_dataset_document_without_a_judge_follows_the_schema_and_reads_back(tmp_path: Path) -> None:
    suite = evalnb.load(DATA / "knowledge-base.json")
    result = evalnb.run(suite, KBAssistant(), progress=False, runs=2)
    path = tmp_path / "kb-results.json"
    doc = export.to_document(result, path)
    jsonschema.validate(doc, SCHEMA)
    first = doc["items"][0]["scores"]["relevance"]
    assert first == {"result": "error", "error": "llm judge not evaluated: this runner has no judge router"}
    # the not-evaluated judge is a failure in our terms, so the item is partial or failed, never an error
    assert {i.get("status") or i["summary"]["overall_status"] for i in doc["items"]} <= {
        "pass",
        "fail",
        "partial",
    }

    back = evalnb.read_results(path)
    cols = ["case_id", "run", "turn", "check_id", "value", "passed", "status", "reason"]
    pd.testing.assert_frame_equal(back.scores[cols], result.scores[cols])
    assert back.cases["status"].tolist() == result.cases["status"].tolist()


def test_degraded_scores_read_back_as_not_passed(tmp_path: Path) -> None:
    def agent(prompt: str) -> str:
        raise RuntimeError("down")

    result = evalnb.run(evalnb.load(DATA / "knowledge-base.json"), agent, progress=False, retries=0)
    path = tmp_path / "down.json"
    jsonschema.validate(export.to_document(result, path), SCHEMA)
    back = evalnb.read_results(path)
    # as the runner writes them: an errored check did not pass (False, not missing)
    assert back.scores["passed"].notna().all() and not back.scores["passed"].any()
    assert back.scores["status"].eq("degraded").all()
    assert back.cases["status"].eq("degraded").all()


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def test_html_case_table_sorts_ids_in_natural_order(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    suite = mk("natural")
    suite.cases = [
        c.model_copy(update={"id": f"case{n}"}) for c, n in zip(suite.cases, (10, 2, 1), strict=True)
    ]
    path = evalnb.run(suite, lambda p: "yes", progress=False).to_html(tmp_path / "card.html")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page()
            page.goto(path.as_uri())
            page.locator("#cases th", has_text="case_id").click()
            ids = page.locator("#cases tbody tr td:nth-child(1)").all_inner_texts()
            assert ids == ["case1", "case2", "case10"]
        finally:
            browser.close()


def test_compare_all_names_a_suite_only_one_version_has(tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / "runs.db")
    for name in ("A", "B"):
        store.save(evalnb.run(mk(name), lambda p: "yes", progress=False), version="v1")
    store.save(evalnb.run(mk("A"), lambda p: "yes", progress=False), version="v2")
    both = store.compare_all("v1", "v2")
    assert list(both) == ["A"] and both.missing_suites == {"B": "baseline only"}
    assert both.exit_code == 0 and "B: compared on one side only (baseline only)" in both.report()
    assert store.compare_all("v1", "v2", fail_on_missing=True).exit_code == 1
    with pytest.raises(StoreError) as err:
        store.compare_all("v1", "nope")
    assert err.value.code == "RUN_NOT_FOUND"
    store.save(evalnb.run(mk("C"), lambda p: "yes", progress=False), version="v3")
    with pytest.raises(StoreError, match="share no suite") as err:
        store.compare_all("v2", "v3")
    assert err.value.code == "NO_SHARED_SUITE"
    runner = CliRunner()
    out = runner.invoke(
        app, ["compare", "v1", "v2", "--store", str(tmp_path / "runs.db"), "--fail-on-missing"]
    )
    assert out.exit_code == 1 and "(gates: fail on missing)" in out.output, out.output
