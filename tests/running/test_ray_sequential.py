"""The sequential gate on a real Ray cluster (tests/support/ray_cluster.py): each batch runs on the cluster and
comes back whole before the decision, so every agent call made is recorded and the decision is the local one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

import evalnb
from evalnb.executors import Ray
from tests.running.test_ray import _agent, _suite
from tests.support.ray_cluster import LocalCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # one node is enough here (tests/running/test_ray.py spreads runs over two): batches, not placement
    with LocalCluster(head_cpus=2) as c:
        ray.init(address=c.address, log_to_driver=False)
        try:
            c.wait_for_nodes(1)
            yield c
        finally:
            ray.shutdown()


def test_batches_on_the_cluster_stop_where_the_local_run_stops(cluster: LocalCluster, tmp_path: Path) -> None:
    suite = _suite(300)
    base = evalnb.run(suite, _agent(), concurrency=4, progress=False)
    local = evalnb.run(
        suite, _agent(), concurrency=4, progress=False, baseline=base, stop="decided", margin=0.1
    )
    log = tmp_path / "calls.log"
    on_ray = evalnb.run(
        suite, _agent("--log", str(log)), concurrency=4, progress=False, baseline=base, stop="decided",
        margin=0.1, executor=Ray(address=cluster.address),
    )  # fmt: skip
    ran = on_ray.meta["sequential"]["cases_run"]
    assert on_ray.stopped_early and ran == local.meta["sequential"]["cases_run"] and ran < 300
    calls = log.read_text().splitlines()
    assert len(calls) == ran  # every call the cluster made is in the result: nothing in flight was dropped
    assert on_ray.calls_saved == 300 - ran == (on_ray.runs["status"] == "skipped").sum()
    info = on_ray.meta["executor_info"]
    assert sum(info["nodes"].values()) == ran  # the batches' reports add up
    words = evalnb.compare(base, on_ray).checks["words"].tolist()
    assert words == evalnb.compare(base, local).checks["words"].tolist()
    assert evalnb.compare(base, on_ray).checks["verdict"].eq("not worse").all()
