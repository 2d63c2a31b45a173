"""Judges and agent adapters used as a demanding user would: odd judge answers, re-scoring, agreement numbers,
command placeholders, HTTP mappings that do not fit, secrets in URLs, configuration mistakes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb import rescore
from evalnb.agents import HTTP, Command, OpenAIChat, Record
from evalnb.config import Config, load_config
from evalnb.errors import AgentError, ConfigError
from evalnb.judges import JudgeReply, OpenAIJudge, agreement
from evalnb.judges.rubrics import parse_score, parse_verdict
from evalnb.suite import Case, LLMJudgeCheck, Message, Suite, Turn
from tests.support.openai_server import OpenAIServer, Reply

ONE_ITEM = """{"schemaVersion": "1.6.0", "default_evaluators": {"Relevance": {}},
  "items": [{"prompt": "What is 2+2?", "expected_response": "4"}]}"""


@pytest.fixture(autouse=True)
def _in_tmp(offline_env: Path) -> None:
    """Every test here runs offline in a temp folder (see tests/conftest.py)."""


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    return openai_server


# --------------------------------------------------------------------------------------------------
# Odd judge answers
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("Score (1-5): 4", 4.0),  # the scale is not the score
        ("Score (1 to 5): 2\nReason: off topic", 2.0),
        ("<think>\nAt first I thought score: 1, but no.\n</think>\nScore: 4\nGood.", 4.0),
        ("<think>maybe 2</think>\n" + '{"score": 5, "reason": "final"}', 5.0),
        ('{"evaluation": {"score": 4, "reason": "nested"}}', 4.0),
        ("Score: 4/5 - good", 4.0),
    ],
)
def test_scores_are_read_from_realistic_answers(answer: str, score: float) -> None:
    parsed = parse_score(answer)
    assert parsed is not None and parsed[0] == score


def test_a_range_alone_is_no_score_and_a_nested_reason_is_kept() -> None:
    assert parse_score("Score: 1-5 scale, I would say good") is None
    assert parse_score('{"evaluation": {"score": 4, "reason": "nested"}}') == (4.0, "nested")


@pytest.mark.parametrize(
    "answer",
    [
        "The response does NOT PASS the criterion.",
        "It doesn't PASS.",
        '{"verdict": "PASS" or "FAIL", "reason": "..."}',  # the answer template echoed back
        '{"verdict": "PASS/FAIL"}',
        "Verdict: PASS or FAIL? Hard to say.",
    ],
)
def test_negated_or_echoed_verdicts_are_not_a_pass(answer: str) -> None:
    assert parse_verdict(answer) is None


def test_plain_verdicts_still_read() -> None:
    assert parse_verdict("Verdict: FAIL. It does not PASS")[0] is False  # type: ignore[index]
    assert parse_verdict("<think>PASS?</think>\nFAIL: two sentences")[0] is False  # type: ignore[index]
    assert parse_verdict("PASS - it mentions the cat")[0] is True  # type: ignore[index]


def test_a_judge_saying_does_not_pass_degrades_the_check(server: OpenAIServer) -> None:
    server.default = "The response does NOT PASS the criterion."
    suite = evalnb.load(
        'name = "j"\n[[tasks]]\nid = "t"\nprompt = "p"\nruns = 1\n'
        '[[tasks.assertions]]\ntype = "llm_judge"\nrubric = "Mentions the cat."\n',
        format="tasks-toml",
    )
    judge = OpenAIJudge("m", base_url=server.base_url, cache=False)
    result = evalnb.run(suite, lambda p: "A dog.", judge=judge, progress=False)
    row = result.scores.iloc[0]
    assert row["status"] == "degraded" and not row["passed"]
    assert "does NOT PASS" in row["reason"] and len(server.requests) == 2  # asked again, then degraded


# --------------------------------------------------------------------------------------------------
# A judge of one's own with a cache
# --------------------------------------------------------------------------------------------------


class CountingJudge:
    """A judge written against the protocol only: no cache_key, no cache attribute."""

    name = label = "counting"
    kind = "llm"

    def __init__(self) -> None:
        self.calls: list[str] = []  # shared with the copy that run(cache=...) makes

    async def complete(self, prompt: str) -> JudgeReply:
        self.calls.append(prompt)
        return JudgeReply('{"score": 4, "reason": "fine"}')


def test_own_judge_with_a_cache_option_is_cached(tmp_path: Path) -> None:
    suite = evalnb.load(ONE_ITEM, format="dataset-json")
    judge = CountingJudge()
    first = evalnb.run(suite, lambda p: "4", judge=judge, cache=tmp_path / "c", progress=False)
    assert first.scores["status"].tolist() == ["passed"] and first.scores["value"].tolist() == [4.0]
    again = evalnb.run(suite, lambda p: "4", judge=judge, cache=tmp_path / "c", progress=False)
    assert again.scores["value"].tolist() == [4.0]
    assert len(judge.calls) == 1  # the second run was answered from the cache


# --------------------------------------------------------------------------------------------------
# Re-scoring
# --------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------
# Agreement
# --------------------------------------------------------------------------------------------------


def _labels(values: list[float], check: str = "Relevance", cases: list[str] | None = None) -> pd.DataFrame:
    ids = cases or [f"q{i}" for i in range(len(values))]
    return pd.DataFrame(
        {"case_id": ids, "turn": [0] * len(values), "check": [check] * len(values), "value": values}
    )


def test_agreement_numbers_by_hand() -> None:
    a, b = [1, 2, 3, 4, 5, 3, 2], [1, 2, 3, 5, 5, 2, 2]
    out = agreement(_labels(a), _labels(b)).iloc[0]
    # Quadratic-weighted kappa over 1..5, computed from its definition.
    obs = np.zeros((5, 5))
    for x, y in zip(a, b, strict=True):
        obs[x - 1, y - 1] += 1
    w = np.array([[(i - j) ** 2 / 16 for j in range(5)] for i in range(5)])
    exp = np.outer(obs.sum(1), obs.sum(0)) / obs.sum()
    kappa = 1 - (w * obs).sum() / (w * exp).sum()
    assert out["n"] == 7 and out["exact"] == pytest.approx(5 / 7)
    assert out["kappa"] == pytest.approx(kappa)
    ra, rb = pd.Series(a).rank(), pd.Series(b).rank()
    assert out["spearman"] == pytest.approx(np.corrcoef(ra, rb)[0, 1])
    # Pass/fail (0/1) values: quadratic weights on two categories give Cohen's plain kappa, here 0.5.
    pf = agreement(_labels([1, 0, 1, 1], "llm_judge"), _labels([1, 0, 0, 1], "llm_judge")).iloc[0]
    assert (pf["exact"], pf["kappa"]) == (0.75, pytest.approx(0.5))


def test_agreement_refuses_to_pair_many_rows_with_many() -> None:
    # Two llm_judge checks in one turn, matched on `check` against labels that also have two rows: every
    # row would meet every other and invent pairs.
    a = _labels([1, 0], "llm_judge", cases=["t", "t"])
    b = _labels([1, 1], "llm_judge", cases=["t", "t"])
    with pytest.raises(ValueError, match=r"several rows for case_id=t.*check_id"):
        agreement(a, b)
    # Many to one is fine: every run of a judge against one human label.
    runs = pd.DataFrame(
        {
            "case_id": ["t"] * 3,
            "run": [0, 1, 2],
            "turn": [0] * 3,
            "check": ["Relevance"] * 3,
            "value": [3, 4, 4],
        }
    )
    out = agreement(runs, _labels([4], cases=["t"])).iloc[0]
    assert out["n"] == 3 and out["exact"] == pytest.approx(2 / 3)


# --------------------------------------------------------------------------------------------------
# Command agent
# --------------------------------------------------------------------------------------------------

ECHO_ARG = [sys.executable, "-c", "import sys; sys.stdout.write(sys.argv[1])", "{prompt}"]


async def test_a_prompt_with_placeholder_text_reaches_the_program_verbatim(tmp_path: Path) -> None:
    agent = Command(ECHO_ARG, prompt_via="arg")
    prompt = "Fill {case} and {turn} of {suite} in {workdir}; keep {prompt} — ünïcødé ✓ 日本"
    r = await agent.respond(evalnb.Request(prompt=prompt, case="C1", suite="S", workdir=tmp_path))
    assert r.text == prompt and r.exit_code == 0


async def test_large_stdin_and_a_program_that_ignores_it(tmp_path: Path) -> None:
    count = Command([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"])
    r = await count.respond(evalnb.Request(prompt="x" * 3_000_000, workdir=tmp_path))
    assert r.text == "3000000"
    ignore = Command([sys.executable, "-c", "print('done')"])
    r = await ignore.respond(evalnb.Request(prompt="y" * 3_000_000, workdir=tmp_path))
    assert r.text == "done" and r.exit_code == 0


async def test_prompts_the_os_cannot_pass_give_a_clear_agent_error(tmp_path: Path) -> None:
    env_agent = Command([sys.executable, "-c", "print(1)"], prompt_via="env")
    with pytest.raises(AgentError, match=r"NUL character.*prompt_via=.stdin."):
        await env_agent.respond(evalnb.Request(prompt="a\x00b", workdir=tmp_path))
    with pytest.raises(AgentError, match="NUL character"):
        await Command(ECHO_ARG, prompt_via="arg").respond(evalnb.Request(prompt="a\x00b", workdir=tmp_path))
    stdin_agent = Command([sys.executable, "-c", "print(1)"])
    with pytest.raises(AgentError, match=r"cannot be written to .* as utf-8"):
        await stdin_agent.respond(evalnb.Request(prompt="a\ud800b", workdir=tmp_path))


# --------------------------------------------------------------------------------------------------
# HTTP agent
# --------------------------------------------------------------------------------------------------


def _raw(body: str, status: int = 200) -> Reply:
    return Reply(body=body, status=status, headers={"Content-Type": "application/json"})


async def test_a_mapping_that_fits_nothing_in_the_answer_is_an_agent_error(server: OpenAIServer) -> None:
    server.default = _raw(json.dumps({"answer": "42", "meta": {"took": 3}}))
    agent = HTTP(f"{server.url}/chat/completions", response_map={"text": "anser", "intent": "kind"})
    with pytest.raises(AgentError) as err:
        await agent.respond(evalnb.Request(prompt="q"))
    msg = str(err.value)
    assert "none of the mapped paths" in msg and "text: anser" in msg and "'answer'" in msg
    assert not err.value.transient
    # One mapped path present, even as null, is an answer: the other fields are simply absent.
    server.default = _raw(json.dumps({"answer": None, "kind": "QUERY"}))
    agent2 = HTTP(f"{server.url}/chat/completions", response_map={"text": "answer", "intent": "kind"})
    r = await agent2.respond(evalnb.Request(prompt="q"))
    assert (r.text, r.intent) == (None, "QUERY")
    server.default = _raw(json.dumps({"answer": None}))
    assert (await agent2.respond(evalnb.Request(prompt="q"))).text is None


def test_the_mismatch_is_the_reason_in_the_results(server: OpenAIServer) -> None:
    server.default = _raw(json.dumps({"answer": "42"}))
    suite = evalnb.load(ONE_ITEM, format="dataset-json")
    agent = HTTP(f"{server.url}/chat/completions", response_map={"text": "result.text"})
    result = evalnb.run(suite, agent, judge="heuristic", retries=0, progress=False)
    assert result.runs["status"].tolist() == ["degraded"]
    assert "none of the mapped paths (text: result.text)" in result.runs["error"].iloc[0]


async def test_secrets_stay_out_of_http_messages(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-SECRET-4242"
    monkeypatch.setenv("GW_TOKEN", token)
    # A gateway that echoes the header back in a page that is not JSON.
    server.default = lambda req: Reply(body=f"<html>denied for {req.headers.get('X-Gw')}</html>")
    url = f"http://alice:pa55word@127.0.0.1:{server.port}/v1/chat/completions"
    agent = HTTP(url, secret_headers={"X-Gw": "${GW_TOKEN}"}, response_map={"text": "answer"})
    with pytest.raises(AgentError) as err:
        await agent.respond(evalnb.Request(prompt="q"))
    assert "not JSON" in str(err.value)
    for text in (str(err.value), repr(agent)):
        assert token not in text and "pa55word" not in text


# --------------------------------------------------------------------------------------------------
# Chat endpoints with credentials in the URL
# --------------------------------------------------------------------------------------------------


def test_url_passwords_stay_out_of_errors_reprs_and_cassettes(server: OpenAIServer, tmp_path: Path) -> None:
    server.default = Reply(status=401)
    base = f"http://bob:hunter2pw@127.0.0.1:{server.port}/v1"
    suite = evalnb.load(ONE_ITEM, format="dataset-json")
    judge = OpenAIJudge("m", base_url=base, cache=False, retries=0)
    server.script("4")  # the agent's answer; then the judge gets the 401
    cassette = tmp_path / "c.jsonl"
    agent = Record(OpenAIChat("m", base_url=base, retries=0), cassette)
    result = evalnb.run(suite, agent, judge=judge, retries=0, progress=False)
    assert result.scores["status"].tolist() == ["degraded"]
    assert "HTTP 401" in result.scores["reason"].iloc[0]
    outputs = [
        result.scores.to_csv(),
        result.runs.to_csv(),
        result.to_json(),
        repr(judge),
        repr(agent),
        repr(judge.client),
        cassette.read_text(encoding="utf-8"),
    ]
    for text in outputs:
        assert "hunter2pw" not in text
    assert "127.0.0.1" in result.scores["reason"].iloc[0]  # the endpoint is still named


# --------------------------------------------------------------------------------------------------
# evalnb.toml
# --------------------------------------------------------------------------------------------------


def test_judge_prices_need_two_numbers(tmp_path: Path) -> None:
    cfg = tmp_path / "evalnb.toml"
    cfg.write_text('[judge]\nmodel = "m"\nprices = { m = [0.5] }\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"judge\.prices\.m: give two numbers") as err:
        load_config(cfg)
    assert err.value.code == "INVALID_VALUE" and "evalnb.toml" in str(err.value)
    cfg.write_text('[judge]\nmodel = "m"\nprices = { m = [0.5, 1.5] }\n', encoding="utf-8")
    loaded = load_config(cfg)
    assert loaded is not None and loaded.judge(cache=False).prices == {"m": (0.5, 1.5)}


def test_a_judge_without_a_model_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "evalnb.toml"
    cfg.write_text('[judge]\ntype = "openai"\n', encoding="utf-8")
    loaded = load_config(cfg)
    assert loaded is not None
    with pytest.raises(ConfigError, match=r"evalnb\.toml: judge: no model given"):
        loaded.judge()
    with pytest.raises(ConfigError, match=r"^judge: no model given"):
        Config.from_dict({"judge": {"type": "openai"}}).judge()


async def test_a_chat_answer_of_another_shape_is_a_clear_error(server: OpenAIServer) -> None:
    from evalnb.chat import ChatClient, ChatError

    server.script(
        _raw(json.dumps({"choices": [{"message": "hi"}]})),
        _raw(json.dumps({"choices": [{"message": {"content": "ok"}}], "usage": ["odd"]})),
    )
    client = ChatClient("m", base_url=server.base_url, retries=0)
    with pytest.raises(ChatError, match="unexpected body"):
        await client.complete("q")
    reply = await client.complete("q")
    assert (reply.text, reply.usage) == ("ok", {})
