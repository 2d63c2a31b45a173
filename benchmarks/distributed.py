"""Ray executor benchmark: a CPU-bound agent on one node vs two, and what one driver absorbs per second.

1. Scale-out. A local Ray cluster (``ray start``, loopback only): a head node of one CPU, pinned to core 0 with
   everything it starts; a ``Command`` agent that burns 200 ms of CPU per call (tests/scripts/seeded_agent.py
   ``--burn 200``), one case run at a time per node (``concurrency=1``: one CPU's worth of work). The same suite
   runs on the head alone, then after a second one-CPU node, pinned to core 1, joins. Prints case runs per
   second and the ratio (aim: >= 1.8x on two nodes), with the local executor at concurrency 1 as a baseline.
   Nodes and their agents are pinned to cores, so one node cannot borrow the other's core; the driver itself is
   not pinned and shares the machine.
2. Driver cost. The driver's side alone: batches as the workers send them (serialised records of real case
   runs, each a turn with two checks) are deserialised, turned back into records and handed to the run's
   recorders (the Result; and a SQLite store) through ``evalnb.run``'s sink, by an executor that replays them
   instead of running anything. Prints records per second (aim: >= 50,000 for the Result) and what that means
   on paper: how many nodes of the agent above one driver keeps up with.

    python benchmarks/distributed.py               # 40 CPU-bound case runs, 100,000 records through the driver
    python benchmarks/distributed.py --quick       # 16 and 20,000
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This folder holds http.py, which would shadow the standard library's http (Ray's imports need that one).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ray  # noqa: E402

import evalnb  # noqa: E402
from evalnb.agents import Command  # noqa: E402
from evalnb.executors import Ray  # noqa: E402
from evalnb.results._records import CaseRunRecord  # noqa: E402
from evalnb.running._ray_tasks import Batch, records_of  # noqa: E402
from evalnb.suite import Case, ExactMatchCheck, RegexCheck, Suite, Turn  # noqa: E402
from tests.support.ray_cluster import LocalCluster  # noqa: E402

AGENT = Path(__file__).resolve().parents[1] / "tests" / "scripts" / "seeded_agent.py"
BURN_MS = 200
BATCH = 1_000  # records per replayed batch


def suite_of(n: int, runs: int = 1) -> Suite:
    checks = [ExactMatchCheck(), RegexCheck(on="result", pattern=r"^\d$")]
    cases = [
        Case(
            id=f"c-{i}",
            name=f"case {i}",
            runs=runs,
            turns=[Turn(prompt=f"question {i}", expected=str(i % 10), checks=checks)],
        )
        for i in range(n)
    ]
    return Suite(name="distributed", format="dataset-json", cases=cases)


def burner() -> Command:
    return Command(
        [sys.executable, str(AGENT), "{case}", "{run}", "--burn", str(BURN_MS)], result="json:answer"
    )


def timed(suite: Suite, executor: Any) -> float:
    started = time.perf_counter()
    result = evalnb.run(suite, burner(), concurrency=1, executor=executor, progress=False)
    elapsed = time.perf_counter() - started
    assert len(result.runs) == len(suite.cases) and result.runs["status"].isin(["passed", "failed"]).all()
    return elapsed


def scale_out(n: int) -> float:
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise SystemExit("the scale-out benchmark needs two CPU cores")
    suite, warm = suite_of(n), suite_of(4)
    local = timed(suite, None)
    print(f"local executor, concurrency 1      {n / local:6.2f} case runs/s  ({local:5.1f} s)", flush=True)
    with LocalCluster(head_cpus=1, head_cores={cores[0]}) as cluster:
        ray.init(address=cluster.address, log_to_driver=False, logging_level="warning")
        try:
            on = Ray(address=cluster.address)
            cluster.wait_for_nodes(1)
            timed(warm, on)  # the node's first worker process starts here, not in the timing
            one = timed(suite, on)
            print(f"Ray, one node of one CPU          {n / one:6.2f} case runs/s  ({one:5.1f} s)")
            cluster.add_node(num_cpus=1, cores={cores[1]})
            cluster.wait_for_nodes(2)
            timed(suite_of(8), on)
            two = timed(suite, on)
            print(f"Ray, two nodes of one CPU each    {n / two:6.2f} case runs/s  ({two:5.1f} s)")
        finally:
            ray.shutdown()
    print(f"two nodes / one node: {one / two:.2f}x (aim >= 1.8x); one node / local: {local / one:.2f}x")
    return n / two / 2  # case runs per second of one one-CPU node


def _unused(prompt: str) -> str:
    raise AssertionError("the replaying executor calls no agent")


class Replay:
    """An executor that runs nothing: it hands over serialised batches as the driver receives them."""

    name = "replay"

    def __init__(self, payloads: list[bytes], suite: Suite) -> None:
        self.payloads = payloads
        self.suite = suite
        self.seconds = 0.0

    async def execute(self, job: Any, todo: Any, sink: Any) -> None:
        started = time.perf_counter()
        for payload in self.payloads:
            for record in records_of(pickle.loads(payload), self.suite):
                await sink(record)
        self.seconds = time.perf_counter() - started


def driver_cost(total: int, per_node: float) -> None:
    # Real records of BATCH case runs (an instant agent), serialised as a worker returns them; replayed as
    # total / BATCH batches, each batch another run index of the same cases.
    suite = suite_of(BATCH)
    kept: list[CaseRunRecord] = []

    class Keep:
        def begin(self, info: Any) -> None: ...
        def completed(self) -> None: ...
        def finish(self, result: Any) -> None: ...
        def record(self, record: CaseRunRecord) -> None:
            kept.append(record)

    evalnb.run(suite, lambda prompt: prompt[-1], recorders=[Keep()], progress=False)
    index = {c.id: i for i, c in enumerate(suite.cases)}
    names = tuple(f for f in CaseRunRecord.__dataclass_fields__ if f not in ("case", "_rows"))
    batches = total // BATCH
    payloads = []
    for run in range(batches):
        rows = [(index[r.case.id], [run if f == "run" else getattr(r, f) for f in names]) for r in kept]
        payloads.append(pickle.dumps(Batch(node="n", seconds=1.0, fields=names, rows=rows), protocol=5))
    suite = suite_of(BATCH, runs=batches)
    n = batches * BATCH
    print(f"\ndriver: {n:,} records in {batches} batches of {BATCH:,} (a turn with 2 checks each)")

    started = time.perf_counter()
    for payload in payloads:
        records_of(pickle.loads(payload), suite)
    unpack = time.perf_counter() - started
    print(f"deserialise + rebuild records      {n / unpack:9,.0f} records/s")

    replay = Replay(payloads, suite)
    started = time.perf_counter()
    result = evalnb.run(suite, _unused, executor=replay, progress=False, preflight=False)
    to_result = time.perf_counter() - started
    assert len(result.runs) == n
    absorbed = n / replay.seconds
    print(f"... + sink + ResultRecorder        {absorbed:9,.0f} records/s  (aim >= 50,000)")
    print(f"... + building the Result's frames {n / to_result:9,.0f} records/s  (the whole evalnb.run)")

    with tempfile.TemporaryDirectory() as tmp:
        store = evalnb.Store(Path(tmp) / "runs.db")
        replay = Replay(payloads, suite)
        started = time.perf_counter()
        evalnb.run(suite, _unused, executor=replay, store=store, version="v", progress=False)
        to_store = time.perf_counter() - started
    print(
        f"... + a SQLite store (whole run)   {n / to_store:9,.0f} records/s  (streaming: {n / replay.seconds:,.0f}/s)"
    )
    rate = absorbed
    # How much of that is the garbage collector walking a heap that grows with every record kept.
    gc.collect()
    gc.disable()
    try:
        replay = Replay(payloads, suite)
        evalnb.run(suite, _unused, executor=replay, progress=False, preflight=False)
    finally:
        gc.enable()
    print(f"... + sink + ResultRecorder, with the garbage collector off {n / replay.seconds:9,.0f} records/s")
    print(
        f"on paper: one driver absorbs {rate:,.0f} case runs/s; at {per_node:.2f} case runs/s per one-CPU node "
        f"({BURN_MS} ms agents) that is {rate / per_node:,.0f} nodes ({n / to_store / per_node:,.0f} with a store)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-cluster", action="store_true", help="only the driver's cost")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    per_node = 1000.0 / BURN_MS
    if not args.skip_cluster:
        per_node = scale_out(16 if args.quick else 40)
    driver_cost(20_000 if args.quick else 100_000, per_node)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
