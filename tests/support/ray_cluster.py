"""A real Ray cluster on this machine for tests: a head node and more nodes, started with ``ray start``.

Every node listens on a loopback address only. Ray turns ``127.0.0.1`` into the machine's network address (it
wants nodes other machines can reach), so the cluster uses ``127.0.0.2``, which is loopback too. Each cluster is
isolated from any other Ray on the machine: its own temporary folder (``RAY_TMPDIR``, where ``ray.init()`` looks
for "the cluster started last"), free ports for every server Ray starts, no dashboard, no usage reporting.

Each node is a ``ray start --block`` process in a process group of its own: :meth:`LocalCluster.kill` kills a
node at once (its raylet and object store; its workers exit when their raylet goes), as a machine that dies.

Example::

    with LocalCluster() as cluster:          # or the session fixture ``ray_cluster`` (tests/running/conftest.py)
        second = cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(2)
        ...
        cluster.kill(second)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IP", "LocalCluster", "Node"]

IP = "127.0.0.2"
START_TIMEOUT = 120.0  # seconds; a loaded 2-core machine takes 20-40 s to bring a head node up


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((IP, 0))
        return int(s.getsockname()[1])


def _processes() -> dict[int, tuple[str, int, int]]:
    """Every process of the machine: pid -> (command name, parent pid, process group)."""
    out: dict[int, tuple[str, int, int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError):
            pid, rest = stat.read_text().split(" ", 1)
            comm, fields = rest.rsplit(")", 1)
            parts = fields.split()
            out[int(pid)] = (comm.lstrip("("), int(parts[1]), int(parts[2]))
    return out


@dataclass
class Node:
    """One ``ray start --block`` process."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


class LocalCluster:
    """A Ray cluster of nodes on this machine (see the module docstring)."""

    def __init__(self, *, head_cpus: int = 1, head_cores: set[int] | None = None) -> None:
        self.head_cpus = head_cpus
        self.head_cores = head_cores
        self.root = Path(tempfile.mkdtemp(prefix="evalnb-ray-"))  # short: Ray's socket paths must stay short
        self.port = 0
        self.nodes: list[Node] = []
        self.env = {
            **os.environ,
            "RAY_TMPDIR": str(self.root),
            "RAY_USAGE_STATS_ENABLED": "0",
            # A loaded 2-core machine can take over a minute to register a raylet (Ray's default wait is 30 s).
            "RAY_raylet_start_wait_time_s": "180",
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        self.env.pop("RAY_ADDRESS", None)

    @property
    def address(self) -> str:
        return f"{IP}:{self.port}"

    def _ray(self) -> str:
        return str(Path(sys.executable).with_name("ray"))

    def _ports(self) -> list[str]:
        flags = (
            "--node-manager-port",
            "--object-manager-port",
            "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port",
            "--metrics-export-port",
        )
        out = [x for flag in flags for x in (flag, str(_free_port()))]
        return [*out, "--min-worker-port", "0", "--max-worker-port", "0", "--node-ip-address", IP]

    def _start(self, name: str, argv: list[str], cores: set[int] | None = None) -> Node:
        """``cores``: the CPU cores the node and everything it starts may use (a node of that many CPUs)."""
        log = self.root / f"{name}.log"

        def pin() -> None:
            if cores is not None:
                os.sched_setaffinity(0, cores)

        with log.open("wb") as out:
            process = subprocess.Popen(
                [self._ray(), "start", *argv, *self._ports(), "--block", "--disable-usage-stats"],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=pin if cores is not None else None,
            )
        node = Node(name, process, log)
        self.nodes.append(node)
        return node

    def start(self) -> LocalCluster:
        """Start the head node and wait until it takes drivers."""
        self.port = _free_port()
        argv = ["--head", "--port", str(self.port), "--num-cpus", str(self.head_cpus)]
        head = self._start("head", [*argv, "--include-dashboard", "false"], self.head_cores)
        self._wait(lambda: b"Ray runtime started" in head.log.read_bytes(), head, "the head node")
        return self

    def add_node(self, *, num_cpus: int = 1, cores: set[int] | None = None) -> Node:
        """Start another node joining the head (returns at once; see :meth:`wait_for_nodes`)."""
        name = f"node{len(self.nodes)}"
        return self._start(name, ["--address", self.address, "--num-cpus", str(num_cpus)], cores)

    def alive_nodes(self) -> int:
        """How many nodes the cluster counts alive (asks the connected driver)."""
        import ray

        return sum(1 for n in ray.nodes() if n["Alive"])

    def wait_for_nodes(self, count: int, *, timeout: float = START_TIMEOUT) -> None:
        """Wait until the connected driver sees ``count`` nodes alive."""
        self._wait(lambda: self.alive_nodes() == count, None, f"{count} nodes", timeout=timeout)

    def _wait(self, ready: object, node: Node | None, what: str, *, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():  # type: ignore[operator]
                return
            if node is not None and not node.alive:
                raise RuntimeError(f"{what} exited:\n{node.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.3)
        raise RuntimeError(f"{what} not up after {timeout:g}s")

    def raylet_pid(self, node: Node) -> int:
        """The pid of the node's raylet (its workers see it as ``RAY_RAYLET_PID``)."""
        for pid, (comm, _, pgrp) in _processes().items():
            if comm.endswith("raylet") and pgrp == node.process.pid:
                return pid
        raise RuntimeError(f"no raylet in the process group of {node.name}")

    def kill(self, node: Node) -> None:
        """Kill a node at once, as a machine that dies: SIGKILL to every process it started (its raylet and
        object store; its workers, which run in sessions of their own; the programs they started)."""
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (_, ppid, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        doomed, todo = [], [node.process.pid]
        while todo:
            pid = todo.pop()
            doomed.append(pid)
            todo += children.get(pid, [])
        doomed += [pid for pid, (_, _, pgrp) in table.items() if pgrp == node.process.pid]
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        node.process.wait(30)

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after a grace period) and remove the cluster's folder."""
        for node in reversed(self.nodes):
            if node.alive:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(node.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for node in self.nodes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.process.wait(max(0.1, deadline - time.monotonic()))
        for node in self.nodes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(node.process.pid, signal.SIGKILL)  # the group: raylet, object store, GCS
            node.process.wait(30)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
