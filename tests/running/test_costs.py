"""What a run costs: usage from every agent and judge, the user's prices, NA for an unpriced model, budgets.

Against the loopback OpenAI-compatible server (tests/support/openai_server.py) answering with usage that holds
cached and reasoning tokens, as OpenAI's API reports them.
"""

from __future__ import annotations

import asyncio
import math
import sys
import textwrap
import warnings
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb._costs import Price, PriceTable, price_table, usage_of
from evalnb.agents import HTTP, Command, OpenAIChat
from evalnb.errors import ConfigError, CostWarning, TransientError
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, LLMJudgeCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer, Recorded, Reply

USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 300,
    "total_tokens": 1500,
    "prompt_tokens_details": {"cached_tokens": 1000},
    "completion_tokens_details": {"reasoning_tokens": 120},
}
JUDGE_USAGE = {
    "prompt_tokens": 400,
    "completion_tokens": 20,
    "prompt_tokens_details": {"cached_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0},
}
PRICES = {
    "agent-model": {"input": 2.0, "output": 8.0, "cached_input": 0.5},
    "judge-model": {"input": 0.15, "output": 0.60},
}
# ((1200 - 1000) * 2.0 + 1000 * 0.5 + 300 * 8.0) / 1e6 = (400 + 500 + 2400) / 1e6
AGENT_CALL = 3300 / 1e6
# (400 * 0.15 + 20 * 0.60) / 1e6 (no cached_input price: cached tokens would cost input)
JUDGE_CALL = 72 / 1e6


def table_suite(n: int, *, judged: bool = False) -> Suite:
    checks = [LLMJudgeCheck(rubric="The answer names Paris.")] if judged else []
    return Suite(
        name="costs",
        format="tasks-toml",
        cases=[
            Case(
                id=f"c{i}",
                name=f"c{i}",
                turns=[Turn(prompt=f"question {i}", expected="Paris", checks=checks)],
            )
            for i in range(n)
        ],
    )


def answer(req: Recorded) -> Reply:
    """The agent's model answers with USAGE; the judge's (the prompt holds the rubric) passes with its own."""
    if "names Paris" in req.last_user:
        return Reply(content='{"verdict": "PASS", "reason": "names Paris"}', usage=JUDGE_USAGE)
    return Reply(content="Paris", usage=USAGE, model="agent-model-2025-01-01")


def test_usage_of_reads_every_shape() -> None:
    assert usage_of(USAGE) == {
        "prompt_tokens": 1200,
        "completion_tokens": 300,
        "cached_tokens": 1000,
        "reasoning_tokens": 120,
    }
    assert usage_of(
        {"input_tokens": 5, "output_tokens": 2, "output_tokens_details": {"reasoning_tokens": 1}}
    ) == {
        "prompt_tokens": 5,
        "completion_tokens": 2,
        "reasoning_tokens": 1,
    }
    assert usage_of({"prompt_tokens": "12"}) is None and usage_of(None) is None and usage_of({}) is None
    # what is not a count is skipped (a later path may still give it); a mapping of another kind reads alike
    from types import MappingProxyType

    odd: dict[str, object] = {
        "prompt_tokens": -1,
        "input_tokens": 7.0,
        "completion_tokens": True,
        "output_tokens": float("nan"),
    }
    odd |= {
        "cached_tokens": None,
        "prompt_tokens_details": None,
        "input_tokens_details": {"cached_tokens": 2},
    }
    odd["completion_tokens_details"] = MappingProxyType({"reasoning_tokens": 3})
    assert usage_of(odd) == {"prompt_tokens": 7, "cached_tokens": 2, "reasoning_tokens": 3}
    assert usage_of(MappingProxyType({"prompt_tokens": 4})) == {"prompt_tokens": 4}
    assert usage_of(["prompt_tokens"]) is None  # type: ignore[arg-type]


def test_the_cost_rule_reasoning_not_charged_twice_and_cached_as_input_without_a_price() -> None:
    price = Price(input=2.0, output=8.0, cached_input=0.5)
    assert price.cost(USAGE) == pytest.approx(AGENT_CALL, rel=1e-12)
    # without cached_input, cached tokens cost input: (1200 * 2 + 300 * 8) / 1e6
    assert Price(2.0, 8.0).cost(USAGE) == pytest.approx(4800 / 1e6, rel=1e-12)
    # a tier prices the whole call once the prompt is longer than its threshold
    tiered = price_table(
        {"m": {"input": 1.0, "output": 2.0, "tiers": [{"above": 1000, "input": 3.0, "output": 4.0}]}}
    )
    assert tiered is not None
    assert tiered.cost({"prompt_tokens": 1000, "completion_tokens": 10}, "m") == pytest.approx(1020 / 1e6)
    assert tiered.cost({"prompt_tokens": 1001, "completion_tokens": 10}, "m") == pytest.approx(3043 / 1e6)
    # a dated name the server reports finds the alias's price; an unknown model has none (never 0)
    table = PriceTable({"gpt-4o": Price(2.5, 10.0), "gpt-4o-mini": Price(0.15, 0.6)})
    assert table.find("gpt-4o-mini-2024-07-18") == Price(0.15, 0.6)
    assert table.cost(USAGE, "claude-x") is None


def test_a_price_file_in_toml_or_yaml_and_its_errors(tmp_path: Path) -> None:
    toml = tmp_path / "prices.toml"
    toml.write_text("[prices.m]\ninput = 1.0\noutput = 2.0\ncached_input = 0.25\n", encoding="utf-8")
    yaml = tmp_path / "prices.yaml"
    yaml.write_text("m: {input: 1.0, output: 2.0, cached_input: 0.25}\n", encoding="utf-8")
    assert price_table(toml) == price_table(yaml) == PriceTable({"m": Price(1.0, 2.0, 0.25)})
    bad = tmp_path / "bad.toml"
    bad.write_text("[m]\ninput = 1.0\nouptut = 2.0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.toml: m: unknown key 'ouptut' \(did you mean 'output'\?\)"):
        price_table(bad)
    with pytest.raises(ConfigError, match=r"prices\.m\.input: a price cannot be negative"):
        price_table({"m": {"input": -1, "output": 1}})
    with pytest.raises(ConfigError, match="missing key 'output'"):
        price_table({"m": {"input": 1}})


def test_exact_costs_per_call_and_per_run_for_agent_and_judge() -> None:
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        judge = OpenAIJudge("judge-model", base_url=server.base_url, cache=False)
        result = evalnb.run(table_suite(5, judged=True), agent, judge=judge, prices=PRICES, progress=False)
    runs = result.runs
    assert runs["prompt_tokens"].tolist() == [1200] * 5
    assert runs["completion_tokens"].tolist() == [300] * 5
    assert runs["cached_tokens"].tolist() == [1000] * 5
    assert runs["reasoning_tokens"].tolist() == [120] * 5
    assert runs["cost"].tolist() == pytest.approx([AGENT_CALL] * 5, rel=1e-12)
    scores = result.scores
    assert scores["judge_model"].tolist() == ["judge-model"] * 5
    assert scores["cost"].tolist() == pytest.approx([JUDGE_CALL] * 5, rel=1e-12)
    assert scores["cached_tokens"].tolist() == [0] * 5
    costs = result.costs()
    assert list(costs.columns) == [
        "source",
        "model",
        "calls",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "reasoning_tokens",
        "cost",
        "cost_per_case",
        "cost_per_passed_case",
    ]
    agent_row, judge_row = costs.to_dict("records")
    assert agent_row["source"] == "agent" and agent_row["model"] == "agent-model-2025-01-01"
    assert (agent_row["calls"], agent_row["prompt_tokens"], agent_row["cached_tokens"]) == (5, 6000, 5000)
    assert agent_row["cost"] == pytest.approx(5 * AGENT_CALL, rel=1e-12)
    assert agent_row["cost_per_case"] == pytest.approx(AGENT_CALL, rel=1e-12)
    assert judge_row["source"] == "judge" and judge_row["model"] == "judge-model"
    assert judge_row["cost"] == pytest.approx(5 * JUDGE_CALL, rel=1e-12)
    assert judge_row["cost_per_passed_case"] == pytest.approx(JUDGE_CALL, rel=1e-12)
    report = result.report()
    assert f"cost ${5 * (AGENT_CALL + JUDGE_CALL):.4g}" in report and "tokens 9,600" in report
    assert "Spent: tokens 9,600" in result._repr_html_()


def test_an_unpriced_model_costs_na_never_zero_and_the_run_says_so_once() -> None:
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        judge = OpenAIJudge("judge-model", base_url=server.base_url, cache=False)
        with pytest.warns(CostWarning) as caught:
            result = evalnb.run(
                table_suite(3, judged=True),
                agent,
                judge=judge,
                prices={"judge-model": PRICES["judge-model"]},
                progress=False,
            )
    assert len(caught) == 1
    assert "agent-model-2025-01-01" in str(caught[0].message)
    assert result.meta["unpriced"] == ["agent-model-2025-01-01"]
    assert result.runs["cost"].isna().all() and result.runs["prompt_tokens"].tolist() == [1200] * 3
    assert result.scores["cost"].tolist() == pytest.approx([JUDGE_CALL] * 3)
    costs = result.costs().set_index("source")
    assert pd.isna(costs.loc["agent", "cost"]) and math.isnan(costs.loc["agent", "cost_per_case"])
    assert costs.loc["judge", "cost"] == pytest.approx(3 * JUDGE_CALL)
    assert "cost NA; no price for agent-model-2025-01-01" in result.report()


def test_without_prices_there_is_no_cost_and_no_warning() -> None:
    with OpenAIServer(default=answer) as server:
        result = evalnb.run(
            table_suite(2), OpenAIChat("agent-model", base_url=server.base_url), progress=False
        )
    assert result.runs["cost"].isna().all() and result.runs["cached_tokens"].tolist() == [1000, 1000]
    assert "unpriced" not in result.meta
    assert "Spent: tokens 3,000 (prompt 2,400, completion 600)\n" in result.report()


def test_a_retried_agent_call_costs_every_attempt() -> None:
    attempts: dict[str, int] = {}

    def flaky(request: evalnb.Request) -> evalnb.Response:
        attempts[request.case] = attempts.get(request.case, 0) + 1
        if attempts[request.case] == 1:  # the first attempt was paid for, then the connection dropped
            raise TransientError("connection reset", usage={"prompt_tokens": 100, "completion_tokens": 50})
        return evalnb.Response(text="Paris", model="m", usage={"prompt_tokens": 100, "completion_tokens": 50})

    prices = {"m": {"input": 1.0, "output": 2.0}}
    result = evalnb.run(table_suite(2), flaky, prices=prices, retries=1, progress=False)
    assert attempts == {"c0": 2, "c1": 2}
    assert result.runs["prompt_tokens"].tolist() == [200, 200]
    assert result.runs["cost"].tolist() == pytest.approx([2 * 200 / 1e6] * 2)  # twice (100 + 50 * 2) / 1e6


def test_a_degraded_turn_keeps_what_its_calls_spent() -> None:
    """A tool round answered, then the endpoint failed: the answered round was paid for and is counted."""
    with OpenAIServer() as server:
        server.default = lambda req: (
            Reply(status=400) if req.tool_results else Reply(tool_calls=[("lookup", {"q": "x"})], usage=USAGE)
        )
        agent = OpenAIChat(
            "agent-model", base_url=server.base_url, retries=0, tool_functions={"lookup": lambda q: "Paris"}
        )
        result = evalnb.run(table_suite(1), agent, prices=PRICES, progress=False)
    assert result.runs["status"].tolist() == ["degraded"]
    assert result.runs["prompt_tokens"].tolist() == [1200]
    assert result.runs["cost"].tolist() == pytest.approx([AGENT_CALL])
    assert result.costs()["cost"].tolist() == pytest.approx([AGENT_CALL])


def test_a_judge_answer_asked_again_costs_twice() -> None:
    with OpenAIServer() as server:
        server.script(
            Reply(content="I am not sure what to say.", usage=JUDGE_USAGE),  # unreadable: asked again
            Reply(content='{"verdict": "PASS", "reason": "ok"}', usage=JUDGE_USAGE),
        )
        judge = OpenAIJudge("judge-model", base_url=server.base_url, cache=False)
        result = evalnb.run(
            table_suite(1, judged=True), lambda p: "Paris", judge=judge, prices=PRICES, progress=False
        )
        assert len(server.requests) == 2
    assert result.scores["passed"].tolist() == [True]
    assert result.scores["prompt_tokens"].tolist() == [800]
    assert result.scores["cost"].tolist() == pytest.approx([2 * JUDGE_CALL])


def test_command_json_output_and_http_usage_mappings_are_counted(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            sys.stdin.read()
            print(json.dumps({"answer": "Paris", "model": "agent-model", "usage": {
                "prompt_tokens": 1200, "completion_tokens": 300,
                "prompt_tokens_details": {"cached_tokens": 1000},
                "completion_tokens_details": {"reasoning_tokens": 120}}}))
            """
        ),
        encoding="utf-8",
    )
    command = Command([sys.executable, str(script)], result="json:answer")
    by_command = evalnb.run(table_suite(2), command, prices=PRICES, progress=False)
    assert by_command.runs["cost"].tolist() == pytest.approx([AGENT_CALL] * 2)
    assert by_command.runs["reasoning_tokens"].tolist() == [120, 120]
    with OpenAIServer(default=answer) as server:
        body = {"model": "agent-model", "messages": [{"role": "user", "content": "{prompt}"}]}
        whole = HTTP(
            f"{server.base_url}/chat/completions",
            body=body,
            response_map={"text": "choices.0.message.content", "usage": "usage", "model": "model"},
        )
        counts = HTTP(
            f"{server.base_url}/chat/completions",
            body=body,
            response_map={
                "text": "choices.0.message.content",
                "model": "model",
                "prompt_tokens": "usage.prompt_tokens",
                "completion_tokens": "usage.completion_tokens",
                "cached_tokens": "usage.prompt_tokens_details.cached_tokens",
            },
        )
        for agent in (whole, counts):
            result = evalnb.run(table_suite(2), agent, prices=PRICES, progress=False)
            assert result.runs["cached_tokens"].tolist() == [1000, 1000]
            assert result.runs["cost"].tolist() == pytest.approx([AGENT_CALL] * 2)


# -- budgets --------------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_cost_budget_stops_within_the_case_runs_in_flight_of_its_cap(concurrency: int) -> None:
    cap = 10.5 * AGENT_CALL
    with OpenAIServer(default=answer, delay=0.02) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        result = evalnb.run(
            table_suite(40),
            agent,
            prices=PRICES,
            budget=evalnb.Budget(cost=cap),
            concurrency=concurrency,
            progress=False,
        )
        calls = len(server.requests)
    ran = result.runs[result.runs["status"] != "skipped"]
    spent = float(ran["cost"].sum())
    assert result.budget_exhausted and result.exit_code == 1
    assert calls == len(ran)  # a skipped case run made no call
    # Each case run costs AGENT_CALL: once one has finished, a new one starts only when it fits under the cap;
    # before that, the first `concurrency` start together.
    assert spent <= max(cap, concurrency * AGENT_CALL) + 1e-12
    assert spent >= cap - (concurrency + 1) * AGENT_CALL  # it did not stop early either
    assert result.meta["budget"]["spent_cost"] == pytest.approx(spent)
    reasons = result.runs.loc[result.runs["status"] == "skipped", "case_id"]
    assert len(reasons) == 40 - len(ran)
    cases = result.cases.set_index("case_id")
    assert (cases.loc[reasons.tolist(), "status"] == "skipped").all()
    assert "Budget exhausted: the cost budget of $" in result.report()


def test_a_token_budget_and_the_reason_on_the_skipped_rows() -> None:
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        result = evalnb.run(
            table_suite(10, judged=True),
            agent,
            judge=OpenAIJudge("judge-model", base_url=server.base_url, cache=False),
            budget=evalnb.Budget(tokens=3 * (1500 + 420)),
            concurrency=1,
            progress=False,
        )
    assert result.budget_exhausted
    ran = result.runs[result.runs["status"] != "skipped"]
    assert len(ran) == 3 and result.meta["budget"]["spent_tokens"] == 3 * 1920
    skipped = result.scores[result.scores["status"] == "skipped"]
    assert len(skipped) == 7
    assert skipped["reason"].str.startswith("skipped: the token budget of 5,760 is reached").all()


def test_a_cost_budget_needs_every_model_priced_before_it_starts() -> None:
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        with pytest.raises(ConfigError, match="needs prices"):
            evalnb.run(table_suite(2), agent, budget=evalnb.Budget(cost=1.0), progress=False)
        with pytest.raises(ConfigError, match="no price for agent-model"):
            evalnb.run(
                table_suite(2), agent, prices={"x": PRICES["judge-model"]}, budget=evalnb.Budget(cost=1.0)
            )
        assert server.requests == []
    with pytest.raises(ConfigError, match="give a number of USD above 0"):
        evalnb.Budget(cost=0)
    with pytest.raises(ConfigError, match=r"give cost= .* or tokens="):
        evalnb.Budget()


def test_a_call_the_budget_cannot_price_stops_the_run() -> None:
    def agent(prompt: str) -> evalnb.Response:
        return evalnb.Response(
            text="Paris", model="surprise-model", usage={"prompt_tokens": 10, "completion_tokens": 1}
        )

    with pytest.warns(CostWarning, match="surprise-model"):
        result = evalnb.run(
            table_suite(5),
            agent,
            prices=PRICES,
            budget=evalnb.Budget(cost=1.0),
            concurrency=1,
            progress=False,
        )
    assert result.budget_exhausted
    assert (result.runs["status"] == "skipped").sum() == 4
    assert result.meta["budget"]["spent_cost"] is None  # not 0: it is not known


def test_resume_continues_a_budget_stopped_run_within_a_new_budget(tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / "runs.db")
    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        first = evalnb.run(
            table_suite(8),
            agent,
            prices=PRICES,
            budget=evalnb.Budget(cost=3 * AGENT_CALL),
            concurrency=1,
            store=store,
            version="v1",
            progress=False,
        )
        assert first.budget_exhausted and (first.runs["status"] != "skipped").sum() == 3
        run_id = first.meta["run_id"]
        again = evalnb.run(
            None,
            agent,
            prices=PRICES,
            budget=evalnb.Budget(cost=3 * AGENT_CALL),
            concurrency=1,
            store=store,
            resume=run_id,
            progress=False,
        )
        assert again.budget_exhausted and (again.runs["status"] != "skipped").sum() == 6
        last = evalnb.run(None, agent, prices=PRICES, store=store, resume=run_id, progress=False)
        assert len(server.requests) == 8  # no case run was called twice
    assert not last.budget_exhausted and last.passed
    assert store.load("v1").runs["cost"].tolist() == pytest.approx([AGENT_CALL] * 8)
    assert "budget" not in last.meta


def test_the_html_and_junit_reports_show_the_totals(tmp_path: Path) -> None:
    def agent(prompt: str) -> evalnb.Response:
        return evalnb.Response(text="Paris", model="agent-model", usage=USAGE)

    result = evalnb.run(table_suite(4), agent, prices=PRICES, progress=False)
    line = f"Spent: tokens 6,000 (prompt 4,800, completion 1,200) · cost ${4 * AGENT_CALL:.4g}"
    assert line in result.report()
    page = result.to_html(tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"cost ${4 * AGENT_CALL:.4g} (${AGENT_CALL:.4g} per case)" in page
    from evalnb.export._junit import junit_xml

    xml = junit_xml(result)
    assert '<property name="tokens" value="6000" />' in xml
    assert f'<property name="cost" value="{4 * AGENT_CALL:.6g}" />' in xml


def test_rescore_prices_the_new_judge_and_says_which_it_could_not() -> None:
    # docs/costs.md, prices: rescore(prices=) prices the new judge's calls as a run prices its judge's
    def judged(req: Recorded) -> Reply:
        return Reply(content='{"verdict": "PASS", "reason": "names Paris"}', usage=JUDGE_USAGE)

    with OpenAIServer(default=answer) as server:
        agent = OpenAIChat("agent-model", base_url=server.base_url)
        judge = OpenAIJudge("judge-model", base_url=server.base_url, cache=False)
        with pytest.warns(CostWarning):  # the agent's model has no price here
            result = evalnb.run(
                table_suite(3, judged=True), agent, judge=judge, prices={"judge-model": PRICES["judge-model"]},
                progress=False,
            )  # fmt: skip
    assert result.meta["unpriced"] == ["agent-model-2025-01-01"]
    with OpenAIServer(default=judged) as server:
        other = OpenAIJudge("judge-2", base_url=server.base_url, cache=False)
        priced = evalnb.rescore(result, judge=other, prices={"judge-2": {"input": 1.0, "output": 2.0}})
        with pytest.warns(CostWarning) as caught:
            unpriced = evalnb.rescore(result, judge=other, prices=PRICES)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no prices asked for: no cost expected, nothing said
            plain = evalnb.rescore(result, judge=other)
    # (400 * 1.0 + 20 * 2.0) / 1e6 per call
    assert priced.scores["cost"].tolist() == pytest.approx([440 / 1e6] * 3, rel=1e-12)
    assert priced.scores["judge_model"].tolist() == ["judge-2"] * 3
    assert priced.meta["unpriced"] == ["agent-model-2025-01-01"]  # the agent's, kept
    assert len(caught) == 1 and "judge-2" in str(caught[0].message)
    assert caught[0].filename == __file__  # said at the caller's line, as run says it
    assert unpriced.scores["cost"].isna().all() and unpriced.scores["prompt_tokens"].tolist() == [400] * 3
    assert unpriced.meta["unpriced"] == ["agent-model-2025-01-01", "judge-2"]
    assert plain.scores["cost"].isna().all() and plain.meta["unpriced"] == ["agent-model-2025-01-01"]
    assert priced.runs["cost"].isna().all()  # the agent was not called again: its rows as they were
    with pytest.raises(ConfigError):
        evalnb.rescore(result, judge=other, prices={"judge-2": {"input": "cheap"}})


def test_rescore_keeps_an_unpriced_judge_that_still_judges_other_checks() -> None:
    # docs/costs.md, prices: a judge leaves meta["unpriced"] only when every score of it was replaced
    def judged(req: Recorded) -> Reply:
        return Reply(content='{"verdict": "PASS", "reason": "fine"}', usage=JUDGE_USAGE)

    checks = [LLMJudgeCheck(rubric="The answer names Paris."), LLMJudgeCheck(rubric="The answer is short.")]
    two = Suite(
        name="costs",
        format="tasks-toml",
        cases=[Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"q{i}", checks=checks)]) for i in range(2)],
    )
    with OpenAIServer(default=judged) as server:
        old = OpenAIJudge("judge-model", base_url=server.base_url, cache=False)
        with pytest.warns(CostWarning):
            result = evalnb.run(two, lambda p: "Paris", judge=old, prices={"other": PRICES["judge-model"]},
                                progress=False)  # fmt: skip
        assert result.meta["unpriced"] == ["judge-model"]
        second = sorted(set(result.scores["check_id"]))[-1]  # llm_judge#2 ("llm_judge" names both)
        new = OpenAIJudge(
            "judge-2", base_url=server.base_url, cache=False, prices={"judge-2": PRICES["judge-model"]}
        )
        one = evalnb.rescore(result, judge=new, checks=[second])
        every = asyncio.run(evalnb.running.rescore_async(result, judge=new))
    assert one.meta["unpriced"] == ["judge-model"]  # it still judges the other check
    assert "unpriced" not in every.meta  # every score of it replaced, the new judge priced
    assert every.scores["cost"].tolist() == pytest.approx([JUDGE_CALL] * 4, rel=1e-12)
