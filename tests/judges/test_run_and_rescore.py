"""Judges inside evalnb.run, re-scoring a Result without the agent, end to end."""

from __future__ import annotations

import json
import re

import pandas as pd

import evalnb
from evalnb import rescore
from evalnb.judges import CallableJudge, OpenAIJudge
from evalnb.results import Result
from tests.judges.conftest import blocks
from tests.support.openai_server import OpenAIServer, Recorded

# The dataset spec's full example, verbatim.
FULL_EXAMPLE = """{
  "schemaVersion": "1.6.0",
  "default_evaluators": { "Relevance": {}, "Coherence": {} },
  "items": [
    {
      "prompt": "What is Microsoft Graph?",
      "expected_response": "A unified API endpoint for Microsoft services.",
      "evaluators": { "Citations": { "citation_format": "mixed" } },
      "evaluators_mode": "extend"
    },
    {
      "name": "Expense policy flow",
      "turns": [
        { "prompt": "I spent $250 on dinner. Is that okay?",
          "expected_response": "The per-diem meal allowance is $200." },
        { "prompt": "What should I do about the overage?",
          "expected_response": "Request manager approval.",
          "evaluators": { "ExactMatch": { "case_sensitive": false } },
          "evaluators_mode": "replace" }
      ]
    }
  ]
}"""

ANSWERS = {
    "What is Microsoft Graph?": "Microsoft Graph is a unified API endpoint for Microsoft services [1].",
    "I spent $250 on dinner. Is that okay?": "The per-diem meal allowance is $200, so it is over by $50.",
    "What should I do about the overage?": "Request manager approval.",
}


def agent(prompt: str) -> str:
    return ANSWERS[prompt]


def scripted_judge(req: Recorded) -> str:
    """Relevance 4 and Coherence 2 for every response, named after the rubric it was asked."""
    prompt = req.last_user
    metric = re.search(r"## Rubric: (\w+)", prompt)
    assert metric is not None
    value = {"Relevance": 4, "Coherence": 2}[metric.group(1)]
    return json.dumps(
        {"score": value, "reason": f"{metric.group(1)} judged on {blocks(prompt)['response'][:20]}"}
    )


def test_full_json_example_end_to_end(openai_server: OpenAIServer) -> None:
    openai_server.default = scripted_judge
    suite = evalnb.load(FULL_EXAMPLE, format="dataset-json")
    judge = OpenAIJudge(
        "judge-model", base_url=openai_server.base_url, cache=False, prices={"judge-model": (0.5, 1.5)}
    )
    result = evalnb.run(suite, agent, judge=judge, progress=False)
    s = result.scores
    got = {
        (str(r.case_id), int(r.turn)): sorted(
            g_check for g_check in s[(s.case_id == r.case_id) & (s.turn == r.turn)]["check"]
        )
        for r in s.itertuples()
    }
    first, flow = suite.cases[0].id, suite.cases[1].id
    # dataset spec: item 1 = defaults + Citations; item 2 turn 1 = defaults; turn 2 = ExactMatch only.
    assert got == {
        (first, 0): ["Citations", "Coherence", "Relevance"],
        (flow, 0): ["Coherence", "Relevance"],
        (flow, 1): ["ExactMatch"],
    }
    judged = s[s["check"].isin(["Relevance", "Coherence"])]
    assert len(judged) == 4 and len(openai_server.requests) == 4  # one judge call per judged check, no more
    assert {json.loads(o)["threshold"] for o in judged["options"]} == {3}
    rel = judged[judged["check"] == "Relevance"]
    coh = judged[judged["check"] == "Coherence"]
    assert rel["value"].tolist() == [4.0, 4.0] and rel["passed"].tolist() == [True, True]
    assert coh["value"].tolist() == [2.0, 2.0] and coh["passed"].tolist() == [False, False]
    assert (judged["judge"] == "openai:judge-model").all()
    assert (judged["prompt_tokens"] == 10).all() and (judged["completion_tokens"] == 5).all()
    assert judged["cost"].tolist() == [(10 * 0.5 + 5 * 1.5) / 1000] * 4
    assert judged["reason"].str.contains("judged on").all()
    assert s.loc[s["check"] == "ExactMatch", "passed"].tolist() == [True]
    assert result.exit_code == 1  # Coherence 2 < 3 fails


def test_threshold_override_from_the_suite(openai_server: OpenAIServer) -> None:
    openai_server.default = scripted_judge
    doc = json.loads(FULL_EXAMPLE)
    doc["default_evaluators"] = {"Relevance": {"threshold": 5}, "Coherence": {"threshold": 2}}
    suite = evalnb.load(json.dumps(doc), format="dataset-json")
    result = evalnb.run(suite, agent, judge=OpenAIJudge("m", base_url=openai_server.base_url, cache=False))
    s = result.scores.set_index(["case_id", "turn", "check"])
    row = s.loc[(suite.cases[0].id, 0, "Relevance")]
    assert (row["value"], row["passed"], json.loads(row["options"])["threshold"]) == (4.0, False, 5)
    row = s.loc[(suite.cases[0].id, 0, "Coherence")]
    assert (row["value"], row["passed"]) == (2.0, True)


TOML = """
name = "judged"

[[tasks]]
id = "summary"
prompt = "Summarise: the cat sat on the mat."
runs = 2

  [[tasks.assertions]]
  type = "llm_judge"
  rubric = "The answer must mention the cat."
"""


def test_llm_judge_in_a_run_and_heuristic_label() -> None:
    suite = evalnb.load(TOML, format="tasks-toml")
    verdicts = iter(['{"verdict": "PASS", "reason": "mentions the cat"}', "FAIL: no cat"])
    result = evalnb.run(
        suite, lambda p: "A cat sat.", judge=CallableJudge(lambda p: next(verdicts)), concurrency=1
    )
    assert sorted(result.scores["passed"].tolist()) == [False, True]
    offline = evalnb.run(suite, lambda p: "A cat sat on a mat.", judge="heuristic")
    assert (offline.scores["judge"] == "heuristic (not an LLM)").all()
    assert offline.scores["passed"].all()


def test_rescore_replaces_the_judge_without_calling_the_agent() -> None:
    suite = evalnb.load(FULL_EXAMPLE, format="dataset-json")
    calls = 0

    def counting_agent(prompt: str) -> str:
        nonlocal calls
        calls += 1
        return ANSWERS[prompt]

    first = evalnb.run(suite, counting_agent, judge="heuristic")
    assert calls == 3
    asked: list[str] = []

    def strict(prompt: str) -> str:
        asked.append(blocks(prompt)["response"])
        return '{"score": 1, "reason": "strict judge"}'

    again = rescore(first, judge=strict)
    assert calls == 3  # the agent was not called again
    assert isinstance(again, Result) and again is not first
    judged = again.scores["check"].isin(["Relevance", "Coherence"])
    assert (again.scores.loc[judged, "value"] == 1.0).all()
    assert (again.scores.loc[judged, "judge"].str.startswith("callable:")).all()
    assert (~again.scores.loc[judged, "passed"].astype(bool)).all()
    # Checks that need no judge are untouched.
    pd.testing.assert_frame_equal(
        again.scores.loc[~judged].reset_index(drop=True), first.scores.loc[~judged].reset_index(drop=True)
    )
    # Two judged checks on each of the two responses that have them.
    assert len(asked) == 4
    assert sorted(set(asked)) == sorted(
        [ANSWERS["What is Microsoft Graph?"], ANSWERS["I spent $250 on dinner. Is that okay?"]]
    )
    assert set(again.runs.loc[again.runs["turn"] == 0, "status"]) == {"failed"}
    assert again.meta["judge"].startswith("callable:")
    # The first result is unchanged: scores are a new frame.
    assert (first.scores.loc[judged, "judge"] == "heuristic (not an LLM)").all()


def test_rescore_only_some_checks_from_saved_frames() -> None:
    suite = evalnb.load(FULL_EXAMPLE, format="dataset-json")
    first = evalnb.run(suite, agent, judge="heuristic")
    # As a store would give it back: no Response objects in memory.
    saved = Result.from_frames(suite=first.suite, runs=first.runs, scores=first.scores, meta=first.meta)
    assert not saved.responses
    again = rescore(saved, judge=lambda p: '{"score": 5, "reason": "generous"}', checks=["Coherence"])
    s = again.scores
    assert (s.loc[s["check"] == "Coherence", "value"] == 5.0).all()
    pd.testing.assert_series_equal(
        s.loc[s["check"] == "Relevance", "value"].reset_index(drop=True),
        first.scores.loc[first.scores["check"] == "Relevance", "value"].reset_index(drop=True),
    )


def test_rescore_sees_the_conversation() -> None:
    doc = json.loads(FULL_EXAMPLE)
    doc["items"][1]["turns"][1]["evaluators"] = {"Relevance": {}}
    suite = evalnb.load(json.dumps(doc), format="dataset-json")
    first = evalnb.run(suite, agent)  # no judge: judged checks fail as not evaluated
    assert first.scores.loc[first.scores["check"] == "Relevance", "passed"].eq(False).all()
    seen: dict[str, str] = {}

    def judge(prompt: str) -> str:
        seen[blocks(prompt)["question"]] = blocks(prompt).get("conversation-so-far", "")
        return '{"score": 4, "reason": "ok"}'

    again = rescore(first, judge=judge, checks=["Relevance"])
    assert again.scores.loc[again.scores["check"] == "Relevance", "value"].eq(4.0).all()
    assert "$250 on dinner" in seen["What should I do about the overage?"]
    assert "allowance is $200, so it is over" in seen["What should I do about the overage?"]


async def test_rescore_inside_a_running_loop() -> None:
    # As in Jupyter: rescore() is called while an event loop is running.
    suite = evalnb.load(FULL_EXAMPLE, format="dataset-json")
    first = await evalnb.run_async(suite, agent)
    again = rescore(first, judge="heuristic")
    judged = again.scores["check"].isin(["Relevance", "Coherence"])
    assert (again.scores.loc[judged, "judge"] == "heuristic (not an LLM)").all()
    assert again.scores.loc[judged, "value"].notna().all()
