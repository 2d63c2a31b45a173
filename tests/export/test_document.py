"""The dataset output document (evalnb/export/document.py): the published schema's shape without a judge, and
read back with degraded scores as not passed."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pandas as pd

import evalnb
from evalnb import export
from evalnb.demo.kb import KBAssistant

DATA = Path(__file__).resolve().parents[2] / "data" / "suites"


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
