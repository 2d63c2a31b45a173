"""The runner: runs, multi-turn history, routing, concurrency, timeouts, retries, failures, interrupts."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.checks import _registry as registry
from evalnb.errors import ConfigError, TransientError
from evalnb.running import _calls as runner
from evalnb.suite import (
    Case,
    CustomCheck,
    ExactMatchCheck,
    ExitCodeCheck,
    FileExistsCheck,
    IntentCheck,
    LLMJudgeCheck,
    Message,
    ReferenceQuery,
    RegexCheck,
    RowsCheck,
    Suite,
    Turn,
)
from tests.support.suites import suite_of

ROOT = Path(__file__).resolve().parents[2]
NO_JUDGE = "llm judge not evaluated: this runner has no judge router"


def task(cid: str, prompt: str = "p", *, runs: int = 3, agent: str | None = None, checks: Any = None) -> Case:
    checks = checks if checks is not None else [RegexCheck(on="result", pattern="ok")]
    return Case(id=cid, name=cid, runs=runs, agent=agent, turns=[Turn(prompt=prompt, checks=checks)])


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "RETRY_BACKOFF", 0.01)


# --- runs --------------------------------------------------------------------------------------------


def test_default_three_runs_give_three_rows() -> None:
    result = evalnb.run(suite_of(task("a")), lambda prompt: "ok", progress=False)
    assert len(result.runs) == 3
    assert result.runs["run"].tolist() == [0, 1, 2]
    assert len(result.scores) == 3
    assert result.cases.loc[0, "runs"] == 3 and result.cases.loc[0, "passed_runs"] == 3
    assert result.passed and result.exit_code == 0


def test_runs_argument_overrides_every_case() -> None:
    s = suite_of(task("a", runs=3), task("b", runs=1))
    result = evalnb.run(s, lambda prompt: "ok", runs=2, progress=False)
    assert result.runs.groupby("case_id")["run"].count().to_dict() == {"a": 2, "b": 2}


def test_request_fields_and_agent_gets_prompt_or_request() -> None:
    seen: list[Any] = []

    def by_request(request: evalnb.Request) -> str:
        seen.append(request)
        if request.case == "a":
            assert request.workdir is not None and request.workdir.is_dir()
        return "ok"

    s = Suite(name="suite-x", format="tasks-toml", cases=[task("a", "hello", runs=1), task("b", runs=1)])
    evalnb.run(s, by_request, progress=False)
    by_case = {r.case: r for r in seen}  # the two run at once: either may ask first
    req = by_case["a"]
    assert (req.prompt, req.case, req.turn, req.run, req.suite) == ("hello", "a", 0, 0, "suite-x")
    assert req.workdir is not None and not req.workdir.exists()  # it passed: its directory is removed
    assert by_case["b"].workdir is None  # never read while it ran: it had none, and none is made afterwards
    s = Suite(name="suite-x", format="tasks-toml", cases=[task("a", "hello", runs=1)])
    prompts: list[str] = []
    evalnb.run(s, lambda p: prompts.append(p) or "ok", progress=False)
    assert prompts == ["hello"]


# --- multi-turn --------------------------------------------------------------------------------------


def test_multi_turn_history_holds_the_agents_actual_answers() -> None:
    histories: list[list[dict[str, str]]] = []
    counter = iter(range(100))

    def agent(request: evalnb.Request) -> str:
        histories.append(list(request.history))
        return f"answer-{next(counter)}"

    case = Case(
        id="conv",
        name="conv",
        runs=1,
        turns=[
            Turn(prompt="I spent $250", history=[Message(role="user", content="seed")]),
            Turn(prompt="What now?"),
            Turn(prompt="Thanks"),
        ],
    )
    result = evalnb.run(suite_of(case, fmt="dataset-json"), agent, progress=False)
    assert histories[0] == [{"role": "user", "content": "seed"}]
    assert histories[1] == [
        {"role": "user", "content": "seed"},
        {"role": "user", "content": "I spent $250"},
        {"role": "assistant", "content": "answer-0"},
    ]
    assert histories[2][-1] == {"role": "assistant", "content": "answer-1"}
    assert len(histories[2]) == 5
    assert result.runs["response"].tolist() == ["answer-0", "answer-1", "answer-2"]


def test_cube_history_is_sent_as_written() -> None:
    got: list[Any] = []
    case = Case(
        id="follow-up",
        name="follow-up",
        turns=[
            Turn(
                prompt="now break it down by state",
                history=[
                    Message(role="user", content="show store sales by country"),
                    Message(role="assistant", content="3 rows returned."),
                ],
            )
        ],
    )
    evalnb.run(
        suite_of(case, fmt="cube-yaml"), lambda request: got.append(request.history) or "x", progress=False
    )
    assert got == [
        [
            {"role": "user", "content": "show store sales by country"},
            {"role": "assistant", "content": "3 rows returned."},
        ]
    ]


def test_later_turns_are_skipped_after_a_degraded_turn() -> None:
    def agent(request: evalnb.Request) -> str:
        if request.turn == 0:
            raise ValueError("first turn broke")
        return "ok"

    case = Case(
        id="c", name="c", runs=1, turns=[Turn(prompt="a", checks=[ExactMatchCheck()]), Turn(prompt="b")]
    )
    result = evalnb.run(suite_of(case), agent, progress=False)
    assert result.runs["status"].tolist() == ["degraded", "skipped"]
    assert result.cases.loc[0, "status"] == "degraded"


# --- routing -----------------------------------------------------------------------------------------


def test_routing_by_agent_id_and_default() -> None:
    s = suite_of(task("a", agent="fast", runs=1), task("b", agent="slow", runs=1), task("c", runs=1))
    result = evalnb.run(
        s,
        {"fast": lambda p: "ok fast", "slow": lambda p: "ok slow", "default": lambda p: "ok default"},
        progress=False,
    )
    assert result.runs.set_index("case_id")["response"].to_dict() == {
        "a": "ok fast",
        "b": "ok slow",
        "c": "ok default",
    }


def test_unknown_agent_id_is_a_config_error_before_anything_runs() -> None:
    calls: list[str] = []
    s = suite_of(task("a", runs=1), task("b", agent="missing", runs=1))
    with pytest.raises(ConfigError, match="missing"):
        evalnb.run(s, {"default": lambda p: calls.append(p) or "ok"}, progress=False)
    assert calls == []


def test_single_agent_serves_every_case_whatever_it_names() -> None:
    s = suite_of(task("a", agent="x", runs=1), task("b", agent="y", runs=1))
    assert evalnb.run(s, lambda p: "ok", progress=False).passed


def test_not_an_agent_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        evalnb.run(suite_of(task("a")), 42, progress=False)


# --- concurrency -------------------------------------------------------------------------------------


class InFlight:
    def __init__(self) -> None:
        self.now = 0
        self.max = 0
        self.lock = threading.Lock()

    def enter(self) -> None:
        with self.lock:
            self.now += 1
            self.max = max(self.max, self.now)

    def leave(self) -> None:
        with self.lock:
            self.now -= 1


def test_async_calls_overlap_up_to_concurrency() -> None:
    meter = InFlight()

    async def agent(prompt: str) -> str:
        meter.enter()
        await asyncio.sleep(0.05)
        meter.leave()
        return "ok"

    s = suite_of(*[task(f"c{i}", runs=1) for i in range(12)])
    result = evalnb.run(s, agent, concurrency=4, progress=False)
    assert meter.max == 4  # overlapped up to the limit, never beyond (wall time is not asserted: load varies)
    assert result.passed


def test_sync_agents_get_threads_beyond_the_default_pool() -> None:
    # Every call waits until all 24 are in flight at once: this passes only when 24 worker threads exist
    # (more than asyncio's default pool of min(32, cpus + 4) on small machines), however busy the machine is.
    barrier = threading.Barrier(24, timeout=20)

    def agent(prompt: str) -> str:
        barrier.wait()
        return "ok"

    s = suite_of(*[task(f"c{i}", runs=1) for i in range(24)])
    result = evalnb.run(s, agent, concurrency=24, timeout=30, progress=False)
    assert result.runs["status"].tolist() == ["passed"] * 24


# --- timeouts, retries, failures --------------------------------------------------------------------


def test_timeout_makes_the_run_degraded() -> None:
    async def slow(prompt: str) -> str:
        await asyncio.sleep(5)
        return "ok"

    t0 = time.perf_counter()
    result = evalnb.run(suite_of(task("a", runs=1)), slow, timeout=0.05, retries=0, progress=False)
    assert time.perf_counter() - t0 < 2
    row = result.runs.iloc[0]
    assert row["status"] == "degraded"
    assert "TimeoutError" in row["error"] and "0.05s" in row["error"]
    assert result.exit_code == 1


def test_timeouts_of_concurrent_calls_expire_each_at_its_own_deadline() -> None:
    # One timer serves every call's deadline: slow calls time out while fast ones around them pass.
    async def agent(prompt: str) -> str:
        await asyncio.sleep(5 if prompt == "slow" else 0.01)
        return "ok"

    s = suite_of(*[task(f"c{i}", "slow" if i % 2 else "fast", runs=2) for i in range(8)])
    t0 = time.perf_counter()
    result = evalnb.run(s, agent, concurrency=5, timeout=0.2, retries=0, progress=False)
    assert time.perf_counter() - t0 < 3
    status = result.runs.groupby("case_id")["status"].unique().map(tuple).to_dict()
    assert status == {f"c{i}": ("degraded",) if i % 2 else ("passed",) for i in range(8)}
    errors = result.runs[result.runs["status"] == "degraded"]["error"]
    assert errors.str.contains("TimeoutError: the agent did not answer within 0.2s").all()


def test_timeouts_are_retried() -> None:
    calls = []

    async def flaky(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 1:
            await asyncio.sleep(5)
        return "ok"

    result = evalnb.run(suite_of(task("a", runs=1)), flaky, timeout=0.05, retries=1, progress=False)
    assert len(calls) == 2 and result.passed


def test_transient_errors_are_retried_with_backoff() -> None:
    calls = []

    def flaky(prompt: str) -> str:
        calls.append(time.perf_counter())
        if len(calls) < 3:
            raise TransientError("rate limited")
        return "ok"

    result = evalnb.run(suite_of(task("a", runs=1)), flaky, retries=2, progress=False)
    assert len(calls) == 3 and result.passed
    assert calls[1] - calls[0] >= 0.004 and calls[2] - calls[1] >= 0.009  # backoff 0.01 then 0.02, +-50%


def test_transient_error_gives_up_after_retries() -> None:
    calls = []

    def flaky(prompt: str) -> str:
        calls.append(1)
        raise TransientError("still down")

    result = evalnb.run(suite_of(task("a", runs=1)), flaky, retries=2, progress=False)
    assert len(calls) == 3
    assert "after 3 attempts" in result.runs.loc[0, "error"]


def test_wrong_answers_and_plain_errors_are_not_retried() -> None:
    calls = []

    def wrong(prompt: str) -> str:
        calls.append(1)
        return "nope"

    result = evalnb.run(suite_of(task("a", runs=1)), wrong, retries=5, progress=False)
    assert len(calls) == 1 and result.cases.loc[0, "status"] == "failed"

    calls.clear()

    def broken(prompt: str) -> str:
        calls.append(1)
        raise KeyError("boom")

    evalnb.run(suite_of(task("a", runs=1)), broken, retries=5, progress=False)
    assert len(calls) == 1


def test_agent_that_raises_is_degraded_and_the_run_goes_on() -> None:
    def agent(prompt: str) -> str:
        if prompt == "bad":
            raise RuntimeError("agent exploded")
        return "ok"

    s = suite_of(task("bad", "bad", runs=1), task("good", "good", runs=1))
    result = evalnb.run(s, agent, progress=False)
    status = result.cases.set_index("case_id")["status"].to_dict()
    assert status == {"bad": "degraded", "good": "passed"}
    bad = result.runs[result.runs["case_id"] == "bad"].iloc[0]
    assert bad["error"] == "RuntimeError: agent exploded"
    sc = result.scores[result.scores["case_id"] == "bad"].iloc[0]
    assert sc["status"] == "degraded" and "agent exploded" in sc["reason"]
    assert "DEGRADED: bad" in result.report() and "RuntimeError: agent exploded" in result.report()


def test_unusable_return_is_degraded() -> None:
    result = evalnb.run(suite_of(task("a", runs=1)), lambda p: 42, progress=False)
    assert result.runs.loc[0, "status"] == "degraded"
    assert "AgentError" in result.runs.loc[0, "error"] and "int" in result.runs.loc[0, "error"]


def test_llm_judge_without_judge_fails_with_the_spec_reason() -> None:
    s = suite_of(task("a", runs=1, checks=[LLMJudgeCheck(rubric="coherent")]))
    result = evalnb.run(s, lambda p: "ok", progress=False)
    row = result.scores.iloc[0]
    assert row["reason"] == NO_JUDGE
    assert row["status"] == "failed" and not row["passed"]
    assert result.exit_code == 1


def test_check_that_raises_is_degraded() -> None:
    def bad_check(turn: Any, response: Any) -> bool:
        raise ZeroDivisionError("oops")

    registry.register("BadCheck", bad_check)
    try:
        s = suite_of(
            task("a", runs=1, checks=[CustomCheck(check="BadCheck"), RegexCheck(on="result", pattern="ok")])
        )
        result = evalnb.run(s, lambda p: "ok", progress=False)
    finally:
        registry.unregister("BadCheck")
    rows = result.scores.set_index("check_id")
    assert rows.loc["BadCheck", "status"] == "degraded"
    assert "ZeroDivisionError: oops" in rows.loc["BadCheck", "reason"]
    assert rows.loc["regex", "status"] == "passed"
    assert result.cases.loc[0, "status"] == "degraded"


def test_unregistered_custom_check_is_degraded_with_a_hint() -> None:
    s = suite_of(task("a", runs=1, checks=[CustomCheck(check="NoSuchCheck")]))
    row = evalnb.run(s, lambda p: "ok", progress=False).scores.iloc[0]
    assert row["status"] == "degraded" and "register" in row["reason"]


def test_intent_mismatch_makes_other_checks_not_checked() -> None:
    checks = [IntentCheck(expected="QUERY"), RegexCheck(on="result", pattern="x")]
    s = suite_of(Case(id="c", name="c", turns=[Turn(prompt="q", checks=checks)]), fmt="cube-yaml")
    result = evalnb.run(s, lambda p: {"text": "x", "intent": "INSIGHT"}, progress=False)
    rows = result.scores.set_index("check_id")
    assert rows.loc["intent", "status"] == "failed"
    assert rows.loc["regex", "status"] == "skipped"
    assert rows.loc["regex", "passed"] is pd_na()
    assert result.cases.loc[0, "status"] == "failed"


def pd_na() -> Any:
    import pandas as pd

    return pd.NA


def test_reference_query_without_data_is_a_config_error() -> None:
    check = RowsCheck(reference_query=ReferenceQuery(sql="select 1"))
    s = suite_of(Case(id="c", name="c", turns=[Turn(prompt="q", checks=[check])]), fmt="cube-yaml")
    with pytest.raises(ConfigError, match="data"):
        evalnb.run(s, lambda p: "x", progress=False)


# --- working directories -----------------------------------------------------------------------------


def test_each_run_gets_a_fresh_workdir_kept_only_when_failed() -> None:
    dirs: list[Path] = []

    def agent(request: evalnb.Request) -> dict[str, Any]:
        assert request.workdir is not None and request.workdir.is_dir()
        assert list(request.workdir.iterdir()) == []  # fresh
        dirs.append(request.workdir)
        if request.case == "writes":
            (request.workdir / "output").mkdir()
            (request.workdir / "output" / "summary.txt").write_text("s")
        return {"text": "ok", "exit_code": 0}

    s = suite_of(
        task("writes", runs=2, checks=[FileExistsCheck(path="output/summary.txt")]),
        task("nothing", runs=1, checks=[FileExistsCheck(path="output/summary.txt")]),
    )
    result = evalnb.run(s, agent, progress=False)
    assert len(set(dirs)) == 3
    kept = result.runs.set_index("case_id")["workdir"]
    assert kept["nothing"] is not pd_na() and Path(kept["nothing"]).is_dir()
    assert result.runs[result.runs["case_id"] == "writes"]["workdir"].isna().all()
    assert not any(d.exists() for d in dirs if d != Path(kept["nothing"]))


def test_a_failed_run_that_never_used_its_workdir_keeps_none() -> None:
    # The agent never sees the Request and the regex check never looks at the directory: none is made, so a
    # failed run has none to keep (running/workdirs.py).
    s = suite_of(task("good", "ok", runs=2), task("bad run/1", "no", runs=1))
    result = evalnb.run(s, lambda prompt: prompt, progress=False)
    assert result.runs["workdir"].isna().all()
    assert "Kept for inspection" not in result.report()


def test_a_check_that_may_use_the_workdir_still_gets_one_with_a_prompt_only_agent() -> None:
    seen: list[Path | None] = []

    def uses_workdir(spec: Any, ctx: Any) -> Any:
        seen.append(ctx.workdir)
        assert ctx.workdir is not None and ctx.workdir.is_dir()
        return registry.Score.of(True)

    # Registered over `regex`, whose built-in never reads the directory: decided by function, not by name.
    s = suite_of(task("a", runs=2))
    original = registry.get("regex")
    registry.builtin("regex")(uses_workdir)
    try:
        result = evalnb.run(s, lambda prompt: "ok", progress=False)
    finally:
        registry.builtin("regex", needs=())(original)
    assert len(seen) == 2 and result.passed


def test_workdir_argument_is_used_by_every_run(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("x")
    s = suite_of(task("a", runs=2, checks=[FileExistsCheck(path="README.md"), ExitCodeCheck(equals=0)]))
    seen: list[Path] = []
    result = evalnb.run(
        s,
        lambda request: seen.append(request.workdir) or {"text": "ok", "exit_code": 0},
        workdir=tmp_path,
        progress=False,
    )
    assert seen == [tmp_path, tmp_path] and result.passed
    assert (tmp_path / "README.md").exists()


# --- loops, interrupts, callbacks --------------------------------------------------------------------


async def test_run_inside_a_running_event_loop() -> None:
    asyncio.get_running_loop()  # as in Jupyter
    result = evalnb.run(suite_of(task("a", runs=1)), lambda p: "ok", progress=False)
    assert result.passed


async def test_run_async_hands_every_record_to_a_recorder() -> None:
    seen: list[tuple[str, int, str, int]] = []
    events: list[str] = []

    class Recorder:
        def begin(self, info: Any) -> None:
            events.append(f"begin {info.suite.name} {info.planned}")

        def completed(self) -> None:
            return None

        async def record(self, record: Any) -> None:
            seen.append((record.case.id, record.run, record.status, len(record.turns[0].scores)))

        def finish(self, result: Any) -> None:
            events.append(f"finish {result.counts()['passed']}")

    async def agent(prompt: str) -> str:
        return "ok"

    result = await evalnb.run_async(
        suite_of(task("a"), task("b", runs=1)), agent, recorders=[Recorder()], progress=False
    )
    assert sorted(seen) == [
        ("a", 0, "passed", 1),
        ("a", 1, "passed", 1),
        ("a", 2, "passed", 1),
        ("b", 0, "passed", 1),
    ]
    assert events == ["begin t 4", "finish 2"]
    assert result.passed


async def test_cancellation_returns_what_finished_and_skips_the_rest() -> None:
    never = asyncio.Event()
    fast_recorded = asyncio.Event()

    async def agent(prompt: str) -> str:
        if prompt == "slow":
            await never.wait()
        return "ok"

    class WhenFastIsDone:
        def begin(self, info: Any) -> None: ...

        def completed(self) -> None:
            return None

        def record(self, record: Any) -> None:
            if record.case.id == "fast":
                fast_recorded.set()

        def finish(self, result: Any) -> None: ...

    s = suite_of(task("fast", "fast", runs=1), task("slow", "slow", runs=1))
    job = asyncio.ensure_future(
        evalnb.run_async(s, agent, concurrency=2, progress=False, recorders=[WhenFastIsDone()])
    )
    await fast_recorded.wait()  # cancelled exactly when one case run finished and the other is in flight
    job.cancel()
    result = await job
    assert result.cases.set_index("case_id")["status"].to_dict() == {"fast": "passed", "slow": "skipped"}
    assert result.meta["interrupted"] is True
    assert result.exit_code == 1


def test_ctrl_c_in_run_returns_a_partial_result(tmp_path: Path) -> None:
    script = tmp_path / "interrupt.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, signal, time
            import evalnb
            from evalnb.suite import Case, Suite, Turn, RegexCheck

            def agent(prompt):
                if prompt == "p3":
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.5)
                return "ok"

            cases = [Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"p{i}",
                     checks=[RegexCheck(on="result", pattern="ok")])]) for i in range(6)]
            result = evalnb.run(Suite(name="s", format="tasks-toml", cases=cases), agent,
                                concurrency=1, progress=False)
            print(result.cases["status"].tolist())
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    statuses = eval(out.stdout.strip())
    assert statuses[:3] == ["passed"] * 3
    assert statuses[3:] == ["skipped"] * 3


def test_progress_bar_can_be_forced(capsys: pytest.CaptureFixture[str]) -> None:
    evalnb.run(suite_of(task("a", runs=2)), lambda p: "ok", progress=True)
    assert "run" in capsys.readouterr().err
    evalnb.run(suite_of(task("a", runs=2)), lambda p: "ok", progress=False)
    assert capsys.readouterr().err == ""


def test_bad_options_are_config_errors() -> None:
    for kw in ({"concurrency": 0}, {"timeout": -1}, {"retries": -1}, {"runs": -2}):
        with pytest.raises(ConfigError):
            evalnb.run(suite_of(task("a")), lambda p: "ok", progress=False, **kw)


def test_request_annotations_with_none_get_the_request() -> None:
    from typing import Optional

    from evalnb.agents._base import CallableAgent

    def a(x: evalnb.Request | None) -> str:  # a postponed (string) annotation in this module
        return "r"

    def b(x: Optional[evalnb.Request]) -> str:  # noqa: UP045 - the older spelling users still write
        return "r"

    def c(x) -> str:  # type: ignore[no-untyped-def]
        return "r"

    c.__annotations__ = {"x": Optional[evalnb.Request]}  # noqa: UP045 - an evaluated annotation

    def d(x: str) -> str:
        return "p"

    assert [CallableAgent(f).wants_request for f in (a, b, c, d)] == [True, True, True, False]


def test_an_object_with_a_sync_respond_gets_a_clear_message() -> None:
    class Sync:
        def respond(self, request: evalnb.Request) -> str:
            return "x"

    with pytest.raises(ConfigError, match="must be `async def respond"):
        evalnb.run(suite_of(task("a", runs=1)), Sync(), progress=False)
