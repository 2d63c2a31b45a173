"""The executor seam: one interface, local asyncio by default; another executor gives the same results and feeds
the same recorders."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import ConfigError
from evalnb.running import CaseRunRecord
from evalnb.running._case_run import RunJob, Worker
from evalnb.running._executors import Local, as_executor, register_executor
from evalnb.suite import Case, ExactMatchCheck, RegexCheck, Suite, Turn


def _suite() -> Suite:
    checks = [RegexCheck(on="result", pattern=r"\d"), ExactMatchCheck()]
    cases = [
        Case(
            id=f"c{i}", name=f"case {i}", runs=2, turns=[Turn(prompt=f"q{i}", expected=str(i), checks=checks)]
        )
        for i in range(6)
    ]
    return Suite(name="seam", format="dataset-json", cases=cases)


def _agent(prompt: str) -> str:
    n = int(prompt[1:])
    return str(n) if n % 3 else "none"


class Sequential:
    """An executor of one's own: case runs one at a time, in reverse plan order."""

    name = "sequential"

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    async def execute(
        self,
        job: RunJob,
        todo: Iterator[tuple[Case, int]],
        sink: Callable[[CaseRunRecord], Awaitable[None]],
    ) -> None:
        worker = Worker(job)
        try:
            for case, run in reversed(list(todo)):
                self.seen.append((case.id, run))
                await sink(await worker.run_case(case, run))
        finally:
            worker.close()


def _frames(result: evalnb.Result) -> tuple[list, list]:
    drop = ["latency_ms", "workdir"]
    return (
        result.runs.drop(columns=drop).astype(object).where(result.runs.notna(), None).values.tolist(),
        result.scores.astype(object).where(result.scores.notna(), None).values.tolist(),
    )


def test_another_executor_gives_the_same_result_in_suite_order(tmp_path: Path) -> None:
    local = evalnb.run(_suite(), _agent, progress=False)
    mine = Sequential()
    store = evalnb.Store(tmp_path / "s.db")
    other = evalnb.run(_suite(), _agent, executor=mine, store=store, version="v1", progress=False)
    assert mine.seen[0] == ("c5", 1) and len(mine.seen) == 12  # it really ran them, its own way
    assert _frames(other) == _frames(local)  # rows in suite order whatever order the case runs finished in
    assert other.meta["executor"] == "sequential" and "executor" not in local.meta
    saved = store.load("v1")
    assert saved.runs["case_id"].tolist() == local.runs["case_id"].tolist()
    assert saved.cases["status"].tolist() == local.cases["status"].tolist()


def test_executors_by_name() -> None:
    assert isinstance(as_executor(None), Local) and isinstance(as_executor("local"), Local)
    register_executor("sequential", Sequential)
    assert isinstance(as_executor("sequential"), Sequential)
    with pytest.raises(ConfigError, match=r"unknown executor 'nope'; known: .*local"):
        evalnb.run(_suite(), _agent, executor="nope", progress=False)
    with pytest.raises(ConfigError, match="executor must be None, a name"):
        evalnb.run(_suite(), _agent, executor=42, progress=False)


def test_a_name_with_an_argument_and_the_ray_executor_by_name() -> None:
    from evalnb.executors import Ray

    ray_executor = as_executor("ray=127.0.0.1:6379")
    assert isinstance(ray_executor, Ray) and ray_executor.address == "127.0.0.1:6379"
    assert isinstance(as_executor("ray"), Ray) and as_executor("ray").address is None
    with pytest.raises(ConfigError, match="executor 'local' takes no argument"):
        as_executor("local=x")
    with pytest.raises(ConfigError, match="batch_size must be a whole number, 1 or more"):
        Ray(batch_size=0)
