"""The dataset output document (evalnb/export/_document.py): the published schema's shape without a judge, and
read back with degraded scores as not passed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import evalnb
from evalnb import export
from evalnb.demo.kb import KBAssistant
from tests.support.documents import assert_valid
from tests.support.examples import EXAMPLES

DATA = EXAMPLES / "suites"


def test_dataset_document_without_a_judge_follows_the_schema_and_reads_back(tmp_path: Path) -> None:
    suite = evalnb.load(DATA / "knowledge-base.json")
    result = evalnb.run(suite, KBAssistant(), progress=False, runs=2)
    path = tmp_path / "kb-results.json"
    doc = export.to_document(result, path)
    assert_valid(doc)  # the published schema itself
    first = doc["items"][0]["scores"]["relevance"]
    assert first == {
        "result": "error",
        "code": "evaluatorConfigurationError",
        "error": "llm judge not evaluated: this runner has no judge router",
    }
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
    assert_valid(export.to_document(result, path))
    back = evalnb.read_results(path)
    # as the runner writes them: a check of a turn whose agent failed did not pass (False, not missing), and the
    # turns after it in a conversation were skipped
    cols = ["case_id", "turn", "check_id", "passed", "status", "reason"]
    pd.testing.assert_frame_equal(back.scores[cols], result.scores[cols])
    assert not back.scores["passed"].fillna(False).any()
    assert set(back.scores["status"]) == {"degraded", "skipped"}
    assert back.cases["status"].eq("degraded").all()


def test_partial_match_reasons_follow_the_dataset_tools_wording(tmp_path: Path) -> None:
    from evalnb.suite import Case, ExactMatchCheck, PartialMatchCheck, Suite, Turn

    checks = [ExactMatchCheck(), PartialMatchCheck(), PartialMatchCheck(threshold=0.8)]
    suite = Suite(name="words", format="dataset-json", cases=[
        Case(id="paris", name="capital", turns=[Turn(prompt="capital of France?", expected="Paris", checks=checks)]),
        Case(id="half", name="half", turns=[Turn(prompt="two words", expected="open nine", checks=checks)]),
    ])  # fmt: skip
    result = evalnb.run(suite, lambda p: "Paris" if "France" in p else "open ten", progress=False)
    path = tmp_path / "words.json"
    doc = export.to_document(result, path)
    assert_valid(doc)
    # the document writes what the dataset tool's own output documents write; the threshold is its own key
    paris, half = (item["scores"] for item in doc["items"])
    assert paris["partialMatch"] == {
        "score": 1.0,
        "result": "pass",
        "threshold": 0.5,
        "reason": "Match score: 1.000",
    }
    assert (
        paris["partialMatch#2"]["reason"] == "Match score: 1.000"
        and paris["partialMatch#2"]["threshold"] == 0.8
    )
    assert (
        half["partialMatch"]["reason"] == "Match score: 0.500" and half["partialMatch#2"]["result"] == "fail"
    )
    # evalnb's fuller reason stays in result.scores, and reading the document back gives it again
    reasons = result.scores.set_index(["case_id", "check_id"])["reason"]
    assert reasons[("paris", "PartialMatch")] == "Match score: 1.000 (threshold 0.5)"
    assert reasons[("half", "PartialMatch#2")] == "Match score: 0.500 (threshold 0.8)"
    back = evalnb.read_results(path)
    pd.testing.assert_series_equal(back.scores["reason"], result.scores["reason"])
