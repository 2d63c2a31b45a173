"""Cost and latency in the comparison: a `cost` row that gates on a doubled price and not on equal ones, a
`latency` row, reported without margins; false alarms and power by simulation."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import evalnb
from evalnb.agents import OpenAIChat
from evalnb.comparison._spend import _row
from evalnb.errors import ConfigError
from tests.running.test_costs import PRICES, answer, table_suite
from tests.support.cli import evalnb_cli
from tests.support.openai_server import OpenAIServer

DOUBLED = {m: {k: 2 * v for k, v in p.items()} for m, p in PRICES.items()}


def test_the_cost_gate_fires_on_a_doubled_price_and_not_on_equal_ones() -> None:
    suite = table_suite(12)
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        a = evalnb.run(suite, agent, prices=PRICES, progress=False)
        same = evalnb.run(suite, agent, prices=PRICES, progress=False)
        doubled = evalnb.run(suite, agent, prices=DOUBLED, progress=False)
    gated = evalnb.compare(a, doubled, cost_margin=0.10)
    cost = gated.checks.set_index("check_id").loc["cost"]
    assert cost["verdict"] == "worse" and bool(cost["gates"]) and gated.regressed and gated.exit_code == 1
    assert cost["mean_b"] == pytest.approx(2 * cost["mean_a"]) and cost["paired"] == 12
    assert "(x2.00): rose beyond the margin +10%" in cost["words"]
    assert "cost" in gated.headline() and "rose beyond the margin" in gated.report()
    calm = evalnb.compare(a, same, cost_margin="10%")
    row = calm.checks.set_index("check_id").loc["cost"]
    assert row["verdict"] == "no detectable difference" and not bool(row["gates"]) and calm.exit_code == 0
    # without a margin: reported, never gated
    told = evalnb.compare(a, doubled)
    row = told.checks.set_index("check_id").loc["cost"]
    assert row["verdict"] == "reported" and not bool(row["gates"]) and told.exit_code == 0
    assert "latency" in set(told.checks["check_id"]) and not told.checks["gates"].any()
    # several suites gated as one keep the rows (the gate re-decides the quality checks only)
    both = evalnb.comparison.gate([gated, calm])
    assert both.regressed and set(both.checks["check_id"]) >= {"cost", "latency"}


def test_the_latency_gate_and_margin_errors() -> None:
    def slow(ms: float):  # type: ignore[no-untyped-def]
        def agent(request: evalnb.Request) -> evalnb.Response:
            jitter = 1 + 0.01 * (int(request.case[1:]) % 3)
            return evalnb.Response(text="Paris", latency_ms=ms * jitter)

        return agent

    suite = table_suite(10)
    a = evalnb.run(suite, slow(100), progress=False)
    b = evalnb.run(suite, slow(150), progress=False)
    cmp = evalnb.compare(a, b, latency_margin=0.2)
    row = cmp.checks.set_index("check_id").loc["latency"]
    assert row["verdict"] == "worse" and cmp.exit_code == 1
    assert "cost" not in set(cmp.checks["check_id"])  # no call had a cost: no cost row
    assert evalnb.compare(a, b, latency_margin=0.6).exit_code == 0
    with pytest.raises(ConfigError, match="cost_margin: give a share"):
        evalnb.compare(a, b, cost_margin="ten")
    notes = evalnb.compare(a.scores, b.scores, cost_margin=0.1).notes
    assert any("need two Results" in n for n in notes)


def _sim(rise: float, margin: float, rng: random.Random, n: int = 30) -> bool:
    base = np.array([rng.uniform(0.5, 2.0) for _ in range(n)])
    a = base * np.array([rng.lognormvariate(0, 0.3) for _ in range(n)])
    b = rise * base * np.array([rng.lognormvariate(0, 0.3) for _ in range(n)])
    row = _row("cost", a, b, np.ones(n, dtype=bool), margin=margin, confidence=0.95, draws=999, seed=0)
    assert row is not None
    return bool(row["gates"])


def test_false_alarms_at_the_margin_and_power_beyond_it_by_simulation() -> None:
    rng = random.Random(11)
    trials = 300
    # b costs exactly the margin more: the gate fires at most 5% of the time (plus simulation error)
    alarms = sum(_sim(1.10, 0.10, rng) for _ in range(trials)) / trials
    assert alarms <= 0.05 + 2 * (0.05 * 0.95 / trials) ** 0.5, alarms
    # equal costs never come near the level
    assert sum(_sim(1.0, 0.10, rng) for _ in range(trials)) / trials < 0.01
    # a doubled cost is caught nearly always with 30 cases
    assert sum(_sim(2.0, 0.10, rng) for _ in range(100)) / 100 >= 0.95


def test_evalnb_compare_cost_margin_from_the_store(tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / "runs.db")
    suite = table_suite(12)
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        evalnb.run(suite, agent, prices=PRICES, store=store, version="v1", progress=False)
        evalnb.run(suite, agent, prices=DOUBLED, store=store, version="v2", progress=False)
    args = ["compare", "v1", "v2", "--store", str(tmp_path / "runs.db")]
    out = evalnb_cli(*args, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "reported, not gated" in out.stdout
    out = evalnb_cli(*args, "--cost-margin", "10%", cwd=tmp_path)
    assert out.returncode == 1 and "rose beyond the margin +10%" in out.stdout, out.stdout + out.stderr
    assert evalnb_cli(*args, "--cost-margin", "150%", cwd=tmp_path).returncode == 0
