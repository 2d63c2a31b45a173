"""as_judge, the answer cache under concurrency, light imports, and usage/cost in the summary."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import ConfigError
from evalnb.judges import (
    CallableJudge,
    HeuristicJudge,
    JudgeCache,
    JudgeReply,
    OpenAIJudge,
    as_judge,
    evaluate,
)
from evalnb.suite import JudgedMetricCheck
from tests.judges.conftest import make_ctx
from tests.support.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]


def test_as_judge_strings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    j = as_judge("openai:gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    assert isinstance(j, OpenAIJudge) and j.label == "openai:gpt-4o-mini" and j.kind == "llm"
    assert j.cache is not None and j.cache.root == tmp_path / ".evals" / "cache"
    assert as_judge("openai:m", cache=False).cache is None
    assert as_judge("openai:m", cache=tmp_path / "x").cache.root == tmp_path / "x"
    assert isinstance(as_judge("heuristic"), HeuristicJudge)
    fn = as_judge("json:dumps")
    assert isinstance(fn, CallableJudge) and fn.cache is None  # callables are not cached unless asked
    assert as_judge(len, cache=True).cache is not None
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    az = as_judge("azure:gpt4o-prod")
    assert az.label == "azure:gpt4o-prod"
    assert az.client.url.startswith(
        "https://example.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?"
    )
    assert as_judge(None) is None
    for bad in ("nonsense", "openai:", "no_such_module_xyz:fn"):
        with pytest.raises(ConfigError):
            as_judge(bad)
    with pytest.raises(ConfigError):
        as_judge(42)


def test_file_function_judge(tmp_path: Path) -> None:
    (tmp_path / "myjudge.py").write_text("def judge(prompt):\n    return 'Score: 4'\n", encoding="utf-8")
    j = as_judge(f"{tmp_path / 'myjudge.py'}:judge")
    assert asyncio.run(j.complete("x")) == JudgeReply(text="Score: 4", model="judge")


async def test_concurrent_writers_leave_one_complete_file(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.default = '{"score": 5, "reason": "same"}'
    openai_server.delay = 0.05  # all in flight before any answer is cached
    judges = [OpenAIJudge("m", base_url=openai_server.base_url, cache=tmp_path / "c") for _ in range(10)]
    scores = await asyncio.gather(
        *(evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(judge=j)) for j in judges)
    )
    assert {s.value for s in scores} == {5.0}
    files = list((tmp_path / "c").rglob("*"))
    entries = [f for f in files if f.is_file()]
    assert len(entries) == 1 and not entries[0].name.startswith(".")  # no temporary file left
    key = judges[0].cache_key(openai_server.requests[0].last_user)
    assert JudgeCache(tmp_path / "c").get(key) == JudgeReply(
        text='{"score": 5, "reason": "same"}',
        usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        model="m",
        cached=True,
    )


def test_cache_key_covers_endpoint_model_prompt_options(tmp_path: Path) -> None:
    a = OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", cache=False)
    keys = {
        a.cache_key("p"),
        a.cache_key("q"),
        OpenAIJudge("m2", base_url="http://127.0.0.1:1/v1", cache=False).cache_key("p"),
        OpenAIJudge("m", base_url="http://127.0.0.1:2/v1", cache=False).cache_key("p"),
        OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", temperature=0.7, cache=False).cache_key("p"),
    }
    assert len(keys) == 5
    secret = OpenAIJudge("m", base_url="http://127.0.0.1:1/v1", api_key="sk-a", cache=False)
    assert secret.cache_key("p") == a.cache_key("p")  # the key is not part of it (nor stored anywhere)
    assert "sk-a" not in repr(secret)


def test_imports_stay_light() -> None:
    code = "import sys, evalnb, evalnb.judges; print(sorted(m for m in ('aiohttp', 'openai', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_top_level_rescore_and_exports() -> None:
    assert evalnb.rescore is evalnb.running.rescore
    with pytest.warns(FutureWarning, match="evalnb.rescore"):
        assert evalnb.judges.rescore is evalnb.rescore  # the old home keeps working, with a warning
    assert {
        "Judge",
        "OpenAIJudge",
        "CallableJudge",
        "HeuristicJudge",
        "as_judge",
        "evaluate",
        "agreement",
    } <= set(evalnb.judges.__all__)


def test_usage_and_cost_reach_the_summary(openai_server: OpenAIServer) -> None:
    openai_server.default = '{"score": 4, "reason": "ok"}'
    suite = evalnb.load('[{"prompt": "What is 2+2?", "expected_response": "4"}]', format="dataset-json")
    judge = OpenAIJudge("m", base_url=openai_server.base_url, cache=False, prices={"m": (2.0, 4.0)})
    result = evalnb.run(suite, lambda p: "4", judge=judge)
    summary = result.summary().set_index("check")
    assert summary.loc["Relevance", "judge"] == "openai:m"
    assert summary.loc["Relevance", "prompt_tokens"] == 10
    assert summary.loc["Relevance", "cost"] == pytest.approx((10 * 2 + 5 * 4) / 1000)


def test_a_cache_write_failing_midway_keeps_the_old_entry(tmp_path: Path) -> None:
    from tests.support.disk import assert_write_fails

    cache = JudgeCache(tmp_path)
    key = JudgeCache.key(endpoint="e", model="m", prompt="p", options={})
    cache.put(key, JudgeReply(text='{"score": 3}', model="m"))
    with assert_write_fails(1_000):
        cache.put(key, JudgeReply(text="x" * 5_000, model="m"))
    assert cache.get(key) == JudgeReply(text='{"score": 3}', model="m", cached=True)
    assert [f.name for f in tmp_path.rglob("*") if f.is_file()] == [f"{key}.json"]


ONE_ITEM = """{"schemaVersion": "1.6.0", "default_evaluators": {"Relevance": {}},
  "items": [{"prompt": "What is 2+2?", "expected_response": "4"}]}"""


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
