"""Every dataset document evalnb writes validates against the published schema (Draft 2020-12), and output
statuses, error codes and messages follow the rules of dataset-json.md ("Output statuses")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evalnb
import evalnb.export
from evalnb.errors import AgentError, TransientError
from evalnb.export._codes import score_error_code, turn_error_code
from evalnb.formats._dataset_json import STARTER, items_document, save_items
from evalnb.suite import (
    Case,
    CustomCheck,
    ExactMatchCheck,
    FileExistsCheck,
    JudgedMetricCheck,
    PartialMatchCheck,
    RegexCheck,
    Suite,
    Turn,
)
from tests.support.documents import assert_valid
from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]


def _judge_failing(message: str) -> Any:
    def judge(prompt: str) -> str:
        raise RuntimeError(message)

    return judge


def test_the_documents_evalnb_writes_from_scratch_are_valid(tmp_path: Path) -> None:
    assert_valid(STARTER)
    assert_valid(items_document([{"prompt": "What is 2+2?", "expected_response": "4"}, {"prompt": "Hi"}]))
    path = save_items([{"prompt": "What is 2+2?", "expected_response": "4"}], tmp_path / "tried.json")
    assert_valid(json.loads(path.read_text()))
    # the shipped dataset and the output of a run of it
    shipped = EXAMPLES / "suites" / "knowledge-base.json"
    result = evalnb.run(
        shipped, lambda p: "The office is open Monday to Friday [1].", judge="heuristic", progress=False
    )
    assert_valid(evalnb.export.to_document(result))


def test_mixed_results_follow_the_output_rules(tmp_path: Path) -> None:
    # one evaluator passes and another fails -> fail (not partial); a judge that errors while the agent answered
    # -> partial with evaluatorsFailed (never agentRequestFailed); a turn after a failed one -> turnSkipped
    turns = [Turn(prompt="a", expected="yes", checks=[ExactMatchCheck(), PartialMatchCheck(threshold=0.9)])]
    suite = Suite(
        name="rules",
        format="dataset-json",
        cases=[
            Case(id="mixed", name="mixed", turns=[Turn(prompt="q1", expected="yes please", checks=[ExactMatchCheck(), PartialMatchCheck(threshold=0.9)])]),
            Case(id="judge", name="judge", turns=[Turn(prompt="q2", checks=[JudgedMetricCheck(type="Relevance", threshold=4), ExactMatchCheck()], expected="yes")]),
            Case(id="thread", name="thread", turns=[Turn(prompt="boom", checks=[ExactMatchCheck()], expected="x"), *turns]),
            Case(id="slow", name="slow", turns=[Turn(prompt="slow", checks=[ExactMatchCheck()], expected="x")]),
        ],
    )  # fmt: skip

    def agent(prompt: str) -> str:
        if prompt == "boom":
            raise AgentError("http://127.0.0.1:9/ask answered HTTP 429: slow down")
        if prompt == "slow":
            raise TransientError("busy")
        return "yes"

    result = evalnb.run(suite, agent, judge=_judge_failing("HTTP 503: overloaded"), retries=0, progress=False)
    doc = evalnb.export.to_document(result, tmp_path / "rules.json")
    assert_valid(doc)
    mixed, judged, thread, slow = doc["items"]
    assert mixed["status"] == "fail" and "error" not in mixed
    assert judged["status"] == "partial"
    assert judged["error"] == {
        "code": "evaluatorsFailed",
        "message": "Agent response obtained. 1 of 2 evaluators failed to run.",
    }
    assert judged["scores"]["relevance"]["code"] == "evaluatorError"  # a 503 has no code of its own
    assert judged["scores"]["exactMatch"] == {
        "match": True,
        "result": "pass",
        "reason": judged["scores"]["exactMatch"]["reason"],
    }
    first, second = thread["turns"]
    assert (
        first["status"] == "error" and first["error"]["code"] == "agentRateLimited" and "scores" not in first
    )
    assert second["status"] == "error" and second["error"] == {
        "code": "turnSkipped",
        "message": "skipped: an earlier turn degraded",
    }
    assert thread["summary"] == {
        "turns_total": 2, "turns_passed": 0, "turns_failed": 0, "turns_partial": 0, "turns_errored": 2,
        "overall_status": "error",
    }  # fmt: skip
    assert (
        slow["error"]["code"] == "agentRequestFailed" and slow["error"]["message"] == "TransientError: busy"
    )

    # read back: the same statuses (the partial item is degraded again: its judge failed), runs and errors
    back = evalnb.read_results(tmp_path / "rules.json")
    assert (
        back.cases["status"].tolist()
        == result.cases["status"].tolist()
        == ["failed", "degraded", "degraded", "degraded"]
    )
    cols = ["case_id", "turn", "status", "error"]
    assert back.runs[cols].astype(object).values.tolist() == result.runs[cols].astype(object).values.tolist()


def test_read_back_keeps_statuses_and_thresholds(tmp_path: Path) -> None:
    suite = Suite(
        name="kb",
        format="dataset-json",
        cases=[
            Case(id="a", name="a", turns=[Turn(prompt="q", expected="yes", checks=[JudgedMetricCheck(type="Coherence", threshold=4.5), PartialMatchCheck(threshold=0.25)])]),
            Case(id="b", name="b", turns=[Turn(prompt="r", expected="x", checks=[ExactMatchCheck()]), Turn(prompt="s", expected="y", checks=[ExactMatchCheck()])]),
        ],
    )  # fmt: skip
    result = evalnb.run(
        suite, lambda p: "yes", judge=lambda prompt: '{"score": 5, "reason": "fine"}', progress=False
    )
    path = tmp_path / "out.json"
    doc = evalnb.export.to_document(result, path)
    assert doc["items"][0]["scores"]["coherence"]["threshold"] == 4.5
    back = evalnb.read_results(path)
    assert back.cases["status"].tolist() == result.cases["status"].tolist()
    assert back.scores["options"].tolist() == result.scores["options"].tolist()
    again = evalnb.export.to_document(back)
    assert_valid(again)
    assert [i.get("scores") for i in again["items"]] == [i.get("scores") for i in doc["items"]]
    assert again["items"][0]["scores"]["coherence"]["threshold"] == 4.5
    assert again["items"][0]["scores"]["partialMatch"]["threshold"] == 0.25


def test_documents_of_other_formats_are_valid_and_read_back(tmp_path: Path) -> None:
    # a tasks suite: its checks are no evaluators of the dataset schema, so they travel in extensions
    suite = Suite(
        name="tasks",
        format="tasks-toml",
        cases=[Case(id="t", name="t", turns=[Turn(prompt="p", checks=[RegexCheck(on="result", pattern=r"\d+"), RegexCheck(on="result", pattern="x"), FileExistsCheck(path="out.txt")])])],
    )  # fmt: skip
    result = evalnb.run(suite, lambda p: "42", progress=False)
    path = tmp_path / "tasks.json"
    doc = evalnb.export.to_document(result, path)
    assert_valid(doc)
    assert doc["items"][0]["evaluators"] == {}
    back = evalnb.read_results(path)
    assert [s.name for s in back.suite.cases[0].turns[0].checks] == ["regex", "regex", "file_exists"]
    assert back.scores["check_id"].tolist() == ["regex", "regex#2", "file_exists"]
    assert back.cases["status"].tolist() == result.cases["status"].tolist()


def test_custom_evaluator_thresholds_are_written(tmp_path: Path) -> None:
    evalnb.checks.register(
        "Brevity", lambda turn, response, max_words=5: (1.0 / len((response.text or "x").split()), True, "ok")
    )
    try:
        suite = Suite(name="c", format="dataset-json", cases=[Case(id="c", name="c", turns=[Turn(prompt="p", checks=[CustomCheck(check="Brevity", settings={"max_words": 3}, threshold=0.4)])])])  # fmt: skip
        result = evalnb.run(suite, lambda p: "one two three", progress=False)
        doc = evalnb.export.to_document(result, tmp_path / "c.json")
        assert_valid(doc)
        assert doc["items"][0]["evaluators"] == {"Brevity": {"threshold": 0.4, "options": {"max_words": 3}}}
        assert doc["items"][0]["scores"]["Brevity"]["threshold"] == 0.4
        back = evalnb.read_results(tmp_path / "c.json")
        assert back.suite.cases[0].turns[0].checks[0].threshold == 0.4
    finally:
        evalnb.checks.unregister("Brevity")


@pytest.mark.parametrize(
    "error, code",
    [
        ("TimeoutError: the agent did not answer within 30s", "agentTimeout"),
        ("AgentError: http://h/ask answered HTTP 429: slow down (after 3 attempts)", "agentRateLimited"),
        (
            "AgentError: chat completion failed at http://h/v1 (model m): HTTP 401: bad key",
            "agentAuthenticationError",
        ),
        (
            "AgentError: http://h/ask answered with a body that is not JSON (text/html): <html>",
            "agentResponseUnparseable",
        ),
        (
            "AgentError: the agent returned int; return a str, a dict or an evalnb.Response",
            "agentResponseUnparseable",
        ),
        ("tool call not allowed: the agent asked to call 'x_y', ...", "toolCallNotAllowed"),
        ("RuntimeError: boom", "agentRequestFailed"),
    ],
)
def test_turn_error_codes(error: str, code: str) -> None:
    assert turn_error_code(error) == code


@pytest.mark.parametrize(
    "reason, judged, empty, code",
    [
        (
            "judge openai:m failed: chat completion failed ... HTTP 429 rate limited: x",
            True,
            False,
            "judgeRateLimited",
        ),
        (
            "judge openai:m failed: chat completion failed ... timed out after 60 s",
            True,
            False,
            "judgeTimeout",
        ),
        ("judge openai:m failed: ... HTTP 401: invalid key", True, False, "judgeAuthenticationError"),
        (
            "judge openai:m gave no readable answer after 2 attempt(s); raw answer: 'hm'",
            True,
            False,
            "judgeOutputUnparseable",
        ),
        ("judge openai:m failed: ValueError: x", True, True, "emptyAgentResponse"),
        (
            "llm judge not evaluated: this runner has no judge router",
            True,
            False,
            "evaluatorConfigurationError",
        ),
        (
            "Similarity not evaluated: the item has no expected_response to compare with",
            True,
            False,
            "evaluatorConfigurationError",
        ),
        (
            "ToolCallSelection not evaluated: tool-call evidence indeterminate, ...",
            False,
            True,
            "toolCallEvidenceIndeterminate",
        ),
        (
            "no check registered as 'Nope'; register it with evalnb.checks.register",
            False,
            False,
            "evaluatorLoadError",
        ),
        ("the check gave no verdict (passed is None): r", False, False, "invalidEvaluatorResult"),
        ("check Brevity raised ZeroDivisionError: division by zero", False, False, "evaluatorError"),
    ],
)
def test_errored_score_codes(reason: str, judged: bool, empty: bool, code: str) -> None:
    assert score_error_code(reason, judged=judged, empty_response=empty) == code
