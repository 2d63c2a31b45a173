"""Probability-weighted scores (G-Eval) from a model judge on the local OpenAI-compatible server."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

import evalnb
from evalnb.chat._client import token_logprobs
from evalnb.judges import JudgeCache, OpenAIJudge, evaluate
from evalnb.judges._rubrics import score_distribution
from evalnb.suite import JudgedMetricCheck
from tests.judges.conftest import make_ctx
from tests.support.judge_stability import install, simulate, stability, stability_figure
from tests.support.openai_server import OpenAIServer, Reply, score_reply, score_tokens


def _judge(server: OpenAIServer, **kw: object) -> OpenAIJudge:
    return OpenAIJudge("judge-model", base_url=server.base_url, cache=False, retries=0, **kw)  # type: ignore[arg-type]


async def test_weighted_score_from_logprobs(openai_server: OpenAIServer) -> None:
    probs = {2: 0.1, 3: 0.3, 4: 0.6}
    tokens = score_tokens(3, "close call", probs)
    openai_server.default = Reply(content="".join(t["token"] for t in tokens), logprobs=tokens)
    score = await evaluate(
        JudgedMetricCheck(type="Relevance", threshold=3.5), make_ctx(), judge=_judge(openai_server)
    )
    body = openai_server.requests[0].json
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    expected = 2 * 0.1 + 3 * 0.3 + 4 * 0.6
    assert score.value == 3.0  # the score the judge wrote is kept
    assert score.weighted == pytest.approx(expected)
    assert score.spread == pytest.approx(math.sqrt(sum(p * (k - expected) ** 2 for k, p in probs.items())))
    # The pass decision uses the weighted score: 3.5 passes a threshold of 3.5 that the written 3 does not.
    assert score.passed is True
    assert score.reason.startswith("3/5, weighted 3.50 (sd 0.67, threshold 3.5): close call")


async def test_the_weighted_score_can_fail_what_the_written_score_passes(openai_server: OpenAIServer) -> None:
    tokens = score_tokens(3, "barely", {2: 0.55, 3: 0.45})
    openai_server.default = Reply(content="".join(t["token"] for t in tokens), logprobs=tokens)
    score = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=_judge(openai_server))
    assert score.value == 3.0 and score.weighted == pytest.approx(2.45) and score.passed is False


async def test_without_logprobs_nothing_changes(openai_server: OpenAIServer) -> None:
    openai_server.default = json.dumps({"score": 3, "reason": "fine"})  # a server that sends no logprobs
    score = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=_judge(openai_server))
    assert (score.value, score.passed, score.weighted, score.spread) == (3.0, True, None, None)
    assert score.reason == "3/5 (threshold 3): fine"
    # Asked not to: the request carries no logprobs fields at all.
    openai_server.clear()
    await evaluate(
        JudgedMetricCheck(type="Relevance"), make_ctx(), judge=_judge(openai_server, logprobs=False)
    )
    assert "logprobs" not in openai_server.requests[0].json


async def test_a_server_that_refuses_logprobs_is_asked_again_without(openai_server: OpenAIServer) -> None:
    def answer(req: object) -> Reply:
        if getattr(req, "json", {}).get("logprobs"):
            return Reply(status=400, body='{"error": {"message": "logprobs is not supported by this model"}}')
        return Reply(content=json.dumps({"score": 4, "reason": "plain"}))

    openai_server.default = answer
    judge = _judge(openai_server)
    first = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=judge)
    assert first.value == 4.0 and first.weighted is None and first.status == "ok"
    assert judge.logprobs is False  # it stops asking
    await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=judge)
    assert [bool(r.json.get("logprobs")) for r in openai_server.requests] == [True, False, False]
    # Any other 400 is a judge failure, as before.
    openai_server.default = Reply(status=400, body='{"error": {"message": "unknown model"}}')
    failed = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=_judge(openai_server))
    assert failed.status == "degraded" and "unknown model" in failed.reason


async def test_cached_answers_keep_their_distribution(openai_server: OpenAIServer, tmp_path: Path) -> None:
    tokens = score_tokens(4, "ok", {3: 0.25, 4: 0.75})
    openai_server.default = Reply(content="".join(t["token"] for t in tokens), logprobs=tokens)
    judge = OpenAIJudge("judge-model", base_url=openai_server.base_url, cache=JudgeCache(tmp_path / "c"))
    a = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=judge)
    b = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=judge)
    assert len(openai_server.requests) == 1 and a.weighted == pytest.approx(3.75)
    assert (b.value, b.weighted, b.spread, b.passed, b.reason) == (
        a.value,
        a.weighted,
        a.spread,
        a.passed,
        a.reason,
    )
    # A judge that does not ask for logprobs has its own cache entries (its answers differ).
    plain = OpenAIJudge(
        "judge-model", base_url=openai_server.base_url, cache=JudgeCache(tmp_path / "c"), logprobs=False
    )
    assert plain.cache_key("p") != judge.cache_key("p")


async def test_the_older_logprobs_form(openai_server: OpenAIServer) -> None:
    tokens = score_tokens(5, "old server", {4: 0.4, 5: 0.6})
    openai_server.default = Reply(
        content="".join(t["token"] for t in tokens), logprobs=tokens, logprobs_form="legacy"
    )
    score = await evaluate(JudgedMetricCheck(type="Coherence"), make_ctx(), judge=_judge(openai_server))
    assert score.weighted == pytest.approx(4.6)


def test_score_distribution_reads_the_score_token_only() -> None:
    def tok(t: str, alts: dict[str, float] | None = None) -> dict[str, object]:
        top = [{"token": k, "logprob": math.log(v)} for k, v in (alts or {}).items()]
        return {"token": t, "logprob": top[0]["logprob"] if top else 0.0, "top_logprobs": top}

    # "Score: 4" prose; the same digit with and without a leading space adds up; non-scores are ignored.
    lp = [tok("Score:"), tok(" 4", {" 4": 0.5, "4": 0.1, " 3": 0.2, " five": 0.1, "\n": 0.1}), tok("\nGood.")]
    dist = score_distribution("Score: 4\nGood.", lp)
    assert dist is not None and dist == pytest.approx({3: 0.25, 4: 0.75})
    # Digits in the reason before the score do not count; reasoning blocks are skipped.
    lp2 = [tok("<think>maybe 2</think>"), tok('{"score": '), tok("5", {"5": 0.9, "4": 0.1}), tok("}")]
    assert score_distribution("", lp2) == pytest.approx({4: 0.1, 5: 0.9})
    # A token holding more than the score, no score, no logprobs: no distribution.
    assert score_distribution("", [tok('{"score": '), tok("45", {"45": 1.0}), tok("}")]) is None
    assert score_distribution("", [tok("I cannot decide")]) is None
    assert score_distribution("", None) is None
    # The sampled token is counted even when the server left it out of its alternatives.
    lp3 = [tok('{"score": '), {"token": "2", "logprob": math.log(0.5), "top_logprobs": []}, tok("}")]
    assert score_distribution("", lp3) == {2: 1.0}


def test_token_logprobs_normalises_or_refuses() -> None:
    assert token_logprobs(None) is None and token_logprobs("x") is None
    assert token_logprobs({"content": [{"token": "a"}]}) is None  # no logprob: unusable, not half-read
    legacy = token_logprobs(
        {"tokens": ["4"], "token_logprobs": [-0.1], "top_logprobs": [{"4": -0.1, "3": -2}]}
    )
    assert legacy == [
        {
            "token": "4",
            "logprob": -0.1,
            "top_logprobs": [{"token": "4", "logprob": -0.1}, {"token": "3", "logprob": -2.0}],
        }
    ]


def test_score_reply_is_seeded_and_consistent() -> None:
    a = score_reply({2: 0.5, 3: 0.5}, random.Random(3), jitter=0.3)
    b = score_reply({2: 0.5, 3: 0.5}, random.Random(3), jitter=0.3)
    assert a == b and a.logprobs is not None
    written = json.loads(a.content or "")["score"]
    alternatives = {int(t["token"]): math.exp(t["logprob"]) for t in a.logprobs[1]["top_logprobs"]}
    assert sum(alternatives.values()) == pytest.approx(1.0) and written in alternatives


def test_the_run_to_run_sd_at_least_halves_over_20_runs(openai_server: OpenAIServer, tmp_path: Path) -> None:
    install(openai_server, seed=17)
    result = simulate(openai_server.base_url, runs=20)
    table = stability(result)
    assert (table["runs"] == 20).all() and len(table) == 6
    # Every case's weighted score varies less than half as much as the score the judge wrote.
    assert (table["sd_weighted"] <= table["sd_plain"] / 2).all(), table
    assert table["sd_weighted"].mean() <= table["sd_plain"].mean() / 2
    # The weighted columns are in the frames with their documented dtypes, and reach the store.
    assert str(result.scores["weighted"].dtype) == str(result.scores["spread"].dtype) == "float64"
    assert result.scores["weighted"].notna().all() and (result.scores["spread"] > 0).all()
    store = evalnb.Store(tmp_path / "s.db")
    store.save(result, version="v1")
    back = store.load("v1").scores
    assert back["weighted"].tolist() == pytest.approx(result.scores["weighted"].tolist())
    # The pass decision follows the weighted score.
    sc = result.scores
    assert (sc["passed"] == (sc["weighted"] >= 3)).all()
    # The figure renders (kaleido, system Chromium).
    png = tmp_path / "stability.png"
    stability_figure(result).write_image(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_simulation_without_logprobs_keeps_plain_scores(openai_server: OpenAIServer) -> None:
    install(openai_server, seed=17, logprobs=False)
    result = simulate(openai_server.base_url, runs=3)
    sc = result.scores
    assert sc["weighted"].isna().all() and sc["spread"].isna().all()
    assert (sc["passed"] == (sc["value"] >= 3)).all()


def test_rescore_records_the_weighted_score(openai_server: OpenAIServer) -> None:
    from tests.support.judge_stability import agent, suite_document

    suite = evalnb.load(json.dumps(suite_document()), format="dataset-json")
    first = evalnb.run(suite, agent, judge="heuristic", progress=False)
    assert first.scores["weighted"].isna().all()
    install(openai_server, seed=3)
    again = evalnb.rescore(first, judge=_judge(openai_server))
    judged = again.scores[again.scores["check"] == "Relevance"]
    assert judged["weighted"].notna().all() and (judged["passed"] == (judged["weighted"] >= 3)).all()
