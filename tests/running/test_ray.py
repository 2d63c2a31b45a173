"""The Ray executor on a real Ray cluster: a head node and a second node on a loopback address, started with
``ray start`` (tests/support/ray_cluster.py); a third node joins for the test that kills it mid-run.

Ray is a dev dependency: without it this module fails to import (it never skips).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import ray

import evalnb
from evalnb.agents import Command, OpenAIChat
from evalnb.errors import ConfigError
from evalnb.executors import Ray
from evalnb.suite import Case, CustomCheck, ExactMatchCheck, RegexCheck, Suite, Turn
from tests.support.cli import ROOT, evalnb_cli
from tests.support.openai_server import OpenAIServer
from tests.support.ray_cluster import LocalCluster

AGENT = str(ROOT / "tests" / "scripts" / "seeded_agent.py")
VOLATILE = ["latency_ms", "workdir", "stdout"]  # timing, where it ran, and the agent's note of its node


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """The head node (1 CPU) and a second node (1 CPU), this process connected as the driver."""
    with LocalCluster(head_cpus=1) as c:
        c.add_node(num_cpus=1)
        ray.init(address=c.address, log_to_driver=False)
        try:
            c.wait_for_nodes(2)
            yield c
        finally:
            ray.shutdown()


def _suite(n: int, *, checks: list[Any] | None = None, name: str = "seeded") -> Suite:
    checks = checks if checks is not None else [ExactMatchCheck(), RegexCheck(on="result", pattern=r"^\d$")]
    return Suite(
        name=name,
        format="dataset-json",
        cases=[
            Case(
                id=f"c-{i}",
                name=f"case {i}",
                turns=[Turn(prompt=f"question {i}", expected=str(i % 10), checks=checks)],
            )
            for i in range(n)
        ],
    )


def _agent(*extra: str) -> Command:
    return Command(
        [sys.executable, AGENT, "{case}", "{run}", *extra],
        prompt_via="stdin",
        result="json:answer",
        pass_env=["RAY_RAYLET_PID"],
        name="seeded",
    )


def _rows(frame: pd.DataFrame) -> list[list[Any]]:
    kept = frame.drop(columns=[c for c in VOLATILE if c in frame.columns])
    return kept.astype(object).where(kept.notna(), None).values.tolist()


def _nodes(result: evalnb.Result) -> set[str]:
    return {json.loads(s)["node"] for s in result.runs["stdout"]}


def test_results_equal_the_local_executors_and_both_nodes_run_case_runs(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    suite = _suite(300)
    local = evalnb.run(suite, _agent(), concurrency=4, progress=False)
    store = evalnb.Store(tmp_path / "runs.db")
    on_ray = evalnb.run(
        suite,
        _agent(),
        concurrency=4,
        executor=Ray(address=cluster.address),
        store=store,
        version="v1",
        progress=False,
    )
    assert len(on_ray.runs) == 300 and on_ray.runs["case_id"].is_unique
    assert _rows(on_ray.runs) == _rows(local.runs)
    assert _rows(on_ray.scores) == _rows(local.scores)
    assert on_ray.cases["status"].tolist() == local.cases["status"].tolist()
    assert (
        0.5 < local.runs["status"].eq("passed").mean() < 0.9
    )  # the seeded agent fails some: a real comparison
    info = on_ray.meta["executor_info"]
    assert on_ray.meta["executor"] == "ray" and len(info["nodes"]) == 2 and sum(info["nodes"].values()) == 300
    assert len(_nodes(on_ray)) == 2  # the agent's programs ran under both nodes' raylets
    saved = store.load("v1")
    assert _rows(saved.scores) == _rows(local.scores)


def test_by_name_the_cluster_ray_init_finds(cluster: LocalCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", cluster.address)
    result = evalnb.run(_suite(20), _agent(), executor="ray", progress=False)
    assert result.meta["executor"] == "ray" and len(result.runs) == 20
    again = evalnb.run(_suite(20), _agent(), executor=f"ray={cluster.address}", progress=False)
    assert _rows(again.scores) == _rows(result.scores)
    with pytest.raises(ConfigError, match=r"connected to the Ray cluster at .*, not 127\.0\.0\.9:1"):
        evalnb.run(_suite(2), _agent(), executor="ray=127.0.0.9:1", progress=False)


def test_checks_of_yours_closures_and_the_data_source_travel(cluster: LocalCluster, tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "facts.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE digits (d TEXT)")
        con.executemany("INSERT INTO digits VALUES (?)", [(str(i),) for i in range(5)])
    allowed = {"0", "1", "2", "3", "4"}  # a closure: travels by value with the check

    def in_table(spec: Any, ctx: Any) -> bool:
        found = set(ctx.data.query("SELECT d FROM digits")["d"])  # the worker opens the file itself
        return (ctx.response.text or "") in found and (ctx.response.text or "") in allowed

    evalnb.checks.check("InDigitsTable", in_table, needs={"data"})
    evalnb.checks.register("Short", lambda turn, response, most=1: len(response.text or "") <= most)
    try:
        suite = _suite(
            40, checks=[CustomCheck(check="InDigitsTable"), CustomCheck(check="Short", settings={"most": 1})]
        )
        local = evalnb.run(suite, _agent(), data=db, progress=False)
        on_ray = evalnb.run(suite, _agent(), data=db, executor=Ray(address=cluster.address), progress=False)
    finally:
        evalnb.checks.unregister("InDigitsTable")
        evalnb.checks.unregister("Short")
    assert _rows(on_ray.scores) == _rows(local.scores)
    assert on_ray.scores["passed"].any() and not on_ray.scores["passed"].all()
    assert on_ray.scores["status"].isin(["passed", "failed"]).all()  # every check ran on the workers


def test_what_cannot_travel_is_a_config_error_naming_it_before_anything_is_stored(tmp_path: Path) -> None:
    # Needs no cluster: the job is serialised before the executor connects.
    conn = socket.socket()
    lock = threading.Lock()
    try:

        def agent(prompt: str) -> str:
            conn.getsockname()
            return "1"

        store = evalnb.Store(tmp_path / "s.db")
        with pytest.raises(
            ConfigError, match=r"agent 'default': \.fn -> closure 'conn' is a socket\.socket that cannot"
        ):
            evalnb.run(
                _suite(3),
                agent,
                executor=Ray(address="127.0.0.9:1"),
                store=store,
                version="v",
                progress=False,
            )
        assert store.history().empty  # nothing was written

        class Judge:
            name = label = "locked"
            kind = "callable"

            def __init__(self) -> None:
                self.guard = lock

            async def complete(self, prompt: str) -> Any: ...

        with pytest.raises(ConfigError, match=r"the judge: \.guard is a _thread\.lock"):
            evalnb.run(
                _suite(3), lambda p: "1", judge=Judge(), executor=Ray(address="127.0.0.9:1"), progress=False
            )
    finally:
        conn.close()


def test_the_command_line_takes_executor_ray_address(cluster: LocalCluster, tmp_path: Path) -> None:
    suite = tmp_path / "evals.json"
    suite.write_text(
        json.dumps(
            {
                "schemaVersion": "1.2.0",
                "default_evaluators": {"ExactMatch": {}},
                "items": [
                    {"name": f"c-{i}", "prompt": f"q{i}", "expected_response": str(i)} for i in range(6)
                ],
            }
        )
    )
    agents = tmp_path / "agents.py"
    agents.write_text("def answer(prompt):\n    return prompt[1:]\n")
    out = evalnb_cli(
        "run",
        str(suite),
        "--agent",
        f"{agents}:answer",
        "--executor",
        f"ray={cluster.address}",
        "-f",
        "json",
        cwd=tmp_path,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["meta"]["executor"] == "ray" and len(data["meta"]["executor_info"]["nodes"]) >= 1
    bad = evalnb_cli("run", str(suite), "--agent", f"{agents}:answer", "--executor", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and "unknown executor 'nope'; known: local, ray" in bad.stderr


async def test_an_interrupted_run_on_the_cluster_resumes_as_a_local_one(
    cluster: LocalCluster, tmp_path: Path
) -> None:
    suite = _suite(120)
    local = evalnb.run(suite, _agent(), progress=False)
    store = evalnb.Store(tmp_path / "runs.db")
    seen = asyncio.Event()

    class Watch:
        count = 0

        def begin(self, info: Any) -> None: ...
        def completed(self) -> None: ...
        def finish(self, result: Any) -> None: ...
        def record(self, record: Any) -> None:
            self.count += 1
            if self.count == 30:
                seen.set()

    job = asyncio.ensure_future(
        evalnb.run_async(
            suite,
            _agent(),
            executor=Ray(address=cluster.address, batch_size=10),
            store=store,
            version="v",
            recorders=[Watch()],
            progress=False,
        )
    )
    await seen.wait()
    job.cancel()
    partial = await job
    assert partial.meta["interrupted"] is True
    stored = store.load("v")
    done = int(stored.runs["status"].ne("skipped").sum())
    assert 30 <= done < 120
    run_id = partial.meta["run_id"]
    resumed = await evalnb.run_async(
        None, _agent(), executor=Ray(address=cluster.address), store=store, resume=run_id, progress=False
    )
    final = store.load(run_id)
    assert final.runs["case_id"].is_unique and len(final.runs) == 120
    assert _rows(final.scores) == _rows(local.scores)
    assert _rows(resumed.scores) == _rows(local.scores)


def test_two_workers_share_an_endpoints_rate_limit(cluster: LocalCluster) -> None:
    with OpenAIServer(rate_limit=(20, 1.0), delay=0.1) as server:
        server.default = lambda req: str(int(req.last_user.split()[-1]) % 10)
        agent = OpenAIChat("m", base_url=server.base_url, api_key_env="NO_SUCH_KEY", retries=8)
        result = evalnb.run(
            _suite(120),
            agent,
            concurrency=8,
            executor=Ray(address=cluster.address, batch_size=15),
            progress=False,
        )
    assert result.runs["status"].eq("passed").all()  # every call got through, after waiting its turn
    limits = result.meta["executor_info"]["limits"][server.base_url]
    assert limits["nodes"] == 2 and limits["calls"] >= 120  # both nodes' calls went through one limit
    assert server.rejected > 0 and limits["decreases"] >= 1  # the rate limit was hit and backed off from
    assert server.rejected < len(server.accepted)  # ... without hammering the server


def test_a_node_killed_mid_run_loses_and_duplicates_nothing(cluster: LocalCluster, tmp_path: Path) -> None:
    third = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes(3)
    raylet = cluster.raylet_pid(third)
    log = tmp_path / "calls.log"
    suite = _suite(150)
    agent = _agent("--sleep", "0.15", "--log", str(log))
    local = evalnb.run(suite, _agent(), progress=False)
    store = evalnb.Store(tmp_path / "runs.db")

    recorded: set[tuple[str, int]] = set()
    stop = threading.Event()

    class Keys:
        def begin(self, info: Any) -> None: ...
        def completed(self) -> None: ...
        def finish(self, result: Any) -> None: ...
        def record(self, record: Any) -> None:
            recorded.add(record.key)

    def kill_when_the_third_node_is_mid_batch() -> None:
        # A call logged under the third node's raylet whose case run is not recorded yet: it holds a batch.
        while not stop.wait(0.05):
            lines = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
            if any(node == str(raylet) and (c, int(r)) not in recorded for c, r, node in lines):
                cluster.kill(third)
                return

    killer = threading.Thread(target=kill_when_the_third_node_is_mid_batch, daemon=True)
    killer.start()
    try:
        result = evalnb.run(
            suite,
            agent,
            concurrency=2,
            executor=Ray(address=cluster.address, batch_size=6),
            store=store,
            version="k",
            recorders=[Keys()],
            progress=False,
        )
    finally:
        stop.set()
        killer.join(60)
    assert not third.alive
    calls = [line.split() for line in log.read_text().splitlines()]
    on_third = {(c, int(r)) for c, r, node in calls if node == str(raylet)}
    final_nodes = {(row.case_id, row.run): json.loads(row.stdout)["node"] for row in result.runs.itertuples()}
    lost = [k for k in on_third if final_nodes[k] != str(raylet)]
    assert lost, "the killed node had a batch in flight, whose case runs ran again on the other nodes"
    assert len(result.runs) == 150 and result.runs["case_id"].is_unique  # nothing lost, nothing twice
    assert _rows(result.scores) == _rows(local.scores)
    saved = store.load("k")
    assert len(saved.runs) == 150 and saved.runs["case_id"].is_unique
    assert _rows(saved.scores) == _rows(local.scores)
