"""Answers are capped like a Command's output (1 MB, the head kept, the cut said): a 200 MB answer from a
callable, an HTTP service, a chat agent or a judge keeps the run's memory small."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import evalnb
from evalnb._caps import MAX_ANSWER
from evalnb.agents import HTTP, OpenAIChat
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, JudgedMetricCheck, RegexCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "scripts" / "big_answer.py"
NOTE = "[evalnb: text truncated at 1000000 characters; it had 200000000 characters]"
BODY_NOTE = (
    "[evalnb: the answer truncated at 8000000 bytes of the response body; it had more than 8000000 bytes of "
    "the response body]"
)


def _measured(*args: str) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _suite(check: Any) -> Suite:
    return Suite(
        name="s",
        format="tasks-toml",
        cases=[Case(id="c", name="c", turns=[Turn(prompt="p", checks=[check])])],
    )


def test_a_200mb_callable_answer_keeps_peak_rss_under_600mb(tmp_path: Path) -> None:
    # Saved in a store, exported to JSON and read back: before the cap, 0.9-1.1 GB.
    seen = _measured("callable", str(tmp_path / "runs.db"))
    assert seen["peak_mb"] < 600, seen
    assert seen["status"] == "passed"  # the head still answers the check
    assert seen["response"].endswith(NOTE) and seen["response_chars"] == MAX_ANSWER + len(NOTE) + 1


def test_a_200mb_judge_answer_keeps_peak_rss_under_600mb(openai_server: OpenAIServer) -> None:
    openai_server.default = Reply(repeat=("x", 200_000_000))  # streamed: never held whole by the server
    seen = _measured("judge", openai_server.base_url)
    assert seen["peak_mb"] < 600, seen
    assert seen["status"] == "degraded"  # the head holds no score: asked once more, then degraded
    assert "gave no readable answer after 2 attempt(s); raw answer: 'xxxx" in seen["reason"]
    assert len(openai_server.requests) == 2


def test_a_long_judge_answer_keeps_its_head(openai_server: OpenAIServer) -> None:
    # A score, then 3 MB of reasoning: the answer is cut to 1,000,000 characters, and the score is read.
    openai_server.default = '{"score": 4, "reason": "' + "because " * 400_000 + '"}'
    judge = OpenAIJudge("m", base_url=openai_server.base_url, cache=False)
    reply = judge.client
    result = evalnb.run(
        _suite(JudgedMetricCheck(type="Relevance")), lambda p: "a", judge=judge, progress=False
    )
    score = result.scores.iloc[0]
    assert score["status"] == "passed" and score["value"] == 4.0, score["reason"][:200]
    assert len(score["reason"]) < 1_100_000 and reply is judge.client


def test_a_200mb_http_answer_keeps_its_head(tmp_path: Path) -> None:
    with OpenAIServer(default=Reply(repeat=("x", 200_000_000), body_only=True)) as service:
        agent = HTTP(f"{service.url}/chat/completions")
        result = evalnb.run(_suite(RegexCheck(on="result", pattern="^x+")), agent, progress=False)
    text = result.runs["response"].iloc[0]
    assert result.passed and len(text) < MAX_ANSWER + 200
    assert text.endswith(BODY_NOTE)
    assert result.responses[("c", 0, 0)].meta["body_truncated"] is True


def test_a_200mb_chat_answer_keeps_its_head(openai_server: OpenAIServer) -> None:
    openai_server.default = Reply(repeat=("y", 200_000_000))
    agent = OpenAIChat("m", base_url=openai_server.base_url, retries=0)
    result = evalnb.run(_suite(RegexCheck(on="result", pattern="^y+")), agent, progress=False)
    text = result.runs["response"].iloc[0]
    assert result.passed and text.startswith("y" * 1000) and len(text) < MAX_ANSWER + 300
    assert text.endswith(BODY_NOTE)
