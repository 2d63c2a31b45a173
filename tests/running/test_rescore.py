"""``evalnb.rescore`` (evalnb/running/_rescore.py): turns degraded by a failed judge are repaired, turns the
agent never answered are left alone, the judge sees the conversation the run showed."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalnb
from evalnb import rescore
from evalnb.suite import Case, LLMJudgeCheck, Message, Suite, Turn


@pytest.fixture(autouse=True)
def _in_tmp(offline_env: Path) -> None:
    """Every test here runs offline in a temp folder (see tests/conftest.py)."""


ONE_ITEM = """{"schemaVersion": "1.6.0", "default_evaluators": {"Relevance": {}},
  "items": [{"prompt": "What is 2+2?", "expected_response": "4"}]}"""


def _failing_judge(prompt: str) -> str:
    raise RuntimeError("judge endpoint down")


def test_rescore_repairs_turns_degraded_by_a_failed_judge(tmp_path: Path) -> None:
    suite = evalnb.load(ONE_ITEM, format="dataset-json")
    first = evalnb.run(suite, lambda p: "4", judge=_failing_judge, progress=False)
    assert first.runs["status"].tolist() == ["degraded"] and first.exit_code == 1
    again = rescore(first, judge=lambda p: '{"score": 5, "reason": "correct"}')
    assert again.scores[["status", "value"]].values.tolist() == [["passed", 5.0]]
    assert again.runs["status"].tolist() == ["passed"]
    assert again.cases["status"].tolist() == ["passed"] and again.exit_code == 0

    # The same from a run saved in a real SQLite store and loaded back.
    store = evalnb.Store(str(tmp_path / "runs.db"))
    loaded = store.load(store.save(first, version="v1"))
    again2 = rescore(loaded, judge=lambda p: '{"score": 2, "reason": "meh"}')
    assert again2.scores[["status", "value"]].values.tolist() == [["failed", 2.0]]
    assert again2.runs["status"].tolist() == ["failed"]


def test_rescore_leaves_turns_the_agent_never_answered(tmp_path: Path) -> None:
    suite = evalnb.load(ONE_ITEM, format="dataset-json")

    def broken(prompt: str) -> str:
        raise RuntimeError("agent down")

    first = evalnb.run(suite, broken, judge="heuristic", retries=0, progress=False)
    asked: list[str] = []
    again = rescore(first, judge=lambda p: asked.append(p) or '{"score": 5, "reason": "x"}')
    assert asked == [] and again.runs["status"].tolist() == ["degraded"]


def test_rescore_shows_the_judge_the_conversation_the_run_showed() -> None:
    judge_check = LLMJudgeCheck(rubric="Answers the follow-up.")
    suite = Suite(
        name="conv",
        format="dataset-json",
        cases=[
            Case(
                id="c",
                name="c",
                turns=[
                    Turn(
                        prompt="first question",
                        history=[Message(role="system", content="You answer about sales.")],
                    ),
                    Turn(prompt="second question", checks=[judge_check]),
                ],
            )
        ],
    )
    seen: list[str] = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return '{"verdict": "PASS", "reason": "ok"}'

    first = evalnb.run(suite, lambda p: f"answer to {p}", judge=judge, progress=False)
    rescore(first, judge=judge)
    assert len(seen) == 2
    assert "You answer about sales." in seen[0]
    assert seen[1] == seen[0]  # the same prompt, so the same cache key and the same judgment
