"""`store.costs(suite)`: tokens, cost and latency percentiles per saved version, agent and judge together."""

from __future__ import annotations

import math
from contextlib import nullcontext
from pathlib import Path

import pytest

import evalnb
from evalnb.judges import OpenAIJudge
from tests.running.test_costs import AGENT_CALL, JUDGE_CALL, PRICES, USAGE, answer, table_suite
from tests.support.openai_server import OpenAIServer


def agent_of(model: str):  # type: ignore[no-untyped-def]
    def agent(request: evalnb.Request) -> evalnb.Response:
        index = int(request.case[1:])
        return evalnb.Response(text="Paris", model=model, usage=USAGE, latency_ms=10.0 * (index + 1))

    return agent


def test_costs_per_version_with_latency_percentiles(tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / "runs.db")
    suite = table_suite(10, judged=True)
    with OpenAIServer(default=answer) as server:
        judge = OpenAIJudge("judge-model", base_url=server.base_url, cache=False)
        for version, model in (("v1", "agent-model"), ("v2", "agent-model"), ("v3", "unknown-model")):
            with pytest.warns(evalnb.errors.CostWarning) if model == "unknown-model" else nullcontext():
                evalnb.run(
                    suite,
                    agent_of(model),
                    judge=judge,
                    prices=PRICES,
                    store=store,
                    version=version,
                    progress=False,
                )
        streamed = evalnb.run(suite, agent_of("agent-model"), judge=judge, prices=PRICES, progress=False)
    store.save(streamed, version="v4")  # saved afterwards: the same figures as streamed
    costs = store.costs("costs")
    assert list(costs.columns) == [
        "version",
        "cases",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "cost_per_case",
        "latency_p50_ms",
        "latency_p90_ms",
    ]
    assert costs["version"].tolist() == ["v1", "v2", "v3", "v4"]
    assert costs["cases"].tolist() == [10] * 4
    assert costs["prompt_tokens"].tolist() == [10 * (1200 + 400)] * 4
    assert costs["completion_tokens"].tolist() == [10 * (300 + 20)] * 4
    per_case = AGENT_CALL + JUDGE_CALL
    for i in (0, 1, 3):
        assert costs["cost"].iloc[i] == pytest.approx(10 * per_case, rel=1e-12)
        assert costs["cost_per_case"].iloc[i] == pytest.approx(per_case, rel=1e-12)
    assert math.isnan(costs["cost"].iloc[2]) and math.isnan(costs["cost_per_case"].iloc[2])  # unpriced: NA
    # latencies 10, 20, ..., 100 ms: numpy's linear percentiles
    assert costs["latency_p50_ms"].tolist() == [55.0] * 4
    assert costs["latency_p90_ms"].tolist() == pytest.approx([91.0] * 4)
    with pytest.raises(evalnb.errors.StoreError, match="no saved run of suite 'nope'"):
        store.costs("nope")
