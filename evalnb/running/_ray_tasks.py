"""What runs on the Ray cluster: a batch of case runs in a worker, and the actor that shares rate limits.

:func:`run_batch` is the Ray task: it unpacks the job (once per worker process and run), runs its batch of
case runs on an event loop of its own with the local executor (``job.concurrency`` at a time, the same
:class:`~evalnb.running._case_run.Worker` as a local run), and returns their records in a compact form that
:func:`records_of` turns back into :class:`~evalnb.results._records.CaseRunRecord` on the driver (the suite's
cases do not travel back: a record names its case by position).

:class:`Limits` is an async actor holding one :class:`~evalnb.chat._limiter.AIMDLimiter` per endpoint for the
whole cluster; on a worker, :class:`SharedLimiter` stands in for the endpoint's local limiter, so every
worker's calls to an endpoint count against one concurrency limit, and a 429 seen by one worker backs them all
off. A slot is a lease that expires after :data:`LEASE_SECONDS`, so slots held by a worker that died come back.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, fields
from typing import Any

from evalnb.chat._limiter import AIMDLimiter, share_limits
from evalnb.errors import ConfigError
from evalnb.results._records import CaseRunRecord
from evalnb.running._executors import Local
from evalnb.running._shipping import unpack
from evalnb.suite import Suite

__all__ = ["LEASE_SECONDS", "Batch", "Limits", "SharedLimiter", "records_of", "run_batch"]

LEASE_SECONDS = 180.0
"""How long a shared limiter's slot stays taken without being given back (a worker that died holding it)."""

_FIELDS = tuple(f.name for f in fields(CaseRunRecord) if f.name not in ("case", "_rows"))
_JOBS: OrderedDict[str, Any] = OrderedDict()  # run token -> unpacked job, the last few runs of this process
_KEEP_JOBS = 2


@dataclass
class Batch:
    """What a batch task returns.

    Attributes:
        node: the Ray node id it ran on.
        seconds: its wall time on the worker.
        fields: the record fields each row holds, in order (all but ``case``).
        rows: per case run, ``(position of its case in the suite, field values)``.
    """

    node: str
    seconds: float
    fields: tuple[str, ...]
    rows: list[tuple[int, list[Any]]]


def records_of(batch: Batch, suite: Suite) -> list[CaseRunRecord]:
    """The batch's records, each with its case from the driver's suite."""
    cases = suite.cases
    return [
        CaseRunRecord(case=cases[i], **dict(zip(batch.fields, values, strict=True)))
        for i, values in batch.rows
    ]


def _job(token: str, box: list[Any]) -> Any:
    job = _JOBS.get(token)
    if job is None:
        import ray

        try:
            job = unpack(ray.get(box[0]))
        except Exception as exc:
            node = ray.get_runtime_context().get_node_id()
            raise ConfigError(
                f"a Ray worker (node {node[:12]}) cannot unpack the run: {type(exc).__name__}: {exc}; the workers "
                "must be able to import the modules your agents and checks come from (install them there, or "
                "give Ray(runtime_env={'working_dir': ...}))"
            ) from None
        _JOBS[token] = job
        while len(_JOBS) > _KEEP_JOBS:
            _JOBS.popitem(last=False)
    return job


def run_batch(token: str, box: list[Any], items: list[tuple[int, int]], limits: Any = None) -> Batch:
    """The Ray task: run the case runs ``items`` (``(case position, run)``) of the job in ``box``.

    ``box`` holds the job's object reference inside a list, so that Ray hands the reference over rather than
    the bytes: a worker unpacks a job once, not once per batch.
    """
    import ray

    job = _job(token, box)
    node = ray.get_runtime_context().get_node_id()
    started = time.perf_counter()
    records = asyncio.run(_run(job, items, limits, node)) if items else []
    return Batch(node=node, seconds=time.perf_counter() - started, fields=_FIELDS, rows=records)


async def _run(job: Any, items: list[tuple[int, int]], limits: Any, node: str) -> list[tuple[int, list[Any]]]:
    if limits is not None:
        share_limits(lambda endpoint, initial: SharedLimiter(limits, endpoint, initial, caller=node))
    cases = job.suite.cases
    position = {id(cases[i]): i for i, _ in items}
    out: list[tuple[int, list[Any]]] = []

    async def sink(record: CaseRunRecord) -> None:
        out.append((position[id(record.case)], [getattr(record, name) for name in _FIELDS]))

    await Local().execute(job, ((cases[i], run) for i, run in items), sink)
    return out


class SharedLimiter(AIMDLimiter):
    """An endpoint's limiter on a worker whose state is the :class:`Limits` actor's (see the module docstring)."""

    def __init__(self, actor: Any, endpoint: str, initial: float, *, caller: str = "") -> None:
        super().__init__(initial=initial)
        self.actor = actor
        self.endpoint = endpoint
        self.initial = initial
        self.caller = caller
        self._leases: deque[int] = deque()

    async def acquire(self) -> float:
        lease, started, limit = await self.actor.acquire.remote(self.endpoint, self.initial, self.caller)
        self._leases.append(lease)
        self.in_flight += 1
        self.limit = limit
        return float(started)

    def release(self) -> None:
        self.in_flight -= 1
        if self._leases:  # the leases of one endpoint are alike: any one of them goes back
            self.actor.release.remote(self._leases.popleft())

    def on_success(self) -> None:
        self.actor.succeeded.remote(self.endpoint)

    def on_rate_limited(self, started: float) -> None:
        self.actor.rate_limited.remote(self.endpoint, started)


class Limits:
    """The cluster's endpoint limits (a Ray async actor; see the module docstring)."""

    def __init__(self) -> None:
        self.limiters: dict[str, AIMDLimiter] = {}
        self.leases: dict[int, tuple[str, float]] = {}
        self.stats: dict[str, dict[str, Any]] = {}
        self.next_lease = 0
        self.sweeper: asyncio.Future[None] | None = None

    async def acquire(self, endpoint: str, initial: float, caller: str) -> tuple[int, float, float]:
        if self.sweeper is None:
            self.sweeper = asyncio.ensure_future(self._sweep())
        lim = self.limiters.get(endpoint)
        if lim is None:
            lim = self.limiters[endpoint] = AIMDLimiter(initial=initial)
        started = await lim.acquire()
        self.next_lease += 1
        self.leases[self.next_lease] = (endpoint, time.monotonic() + LEASE_SECONDS)
        stats = self.stats.setdefault(endpoint, {"calls": 0, "peak_in_flight": 0, "callers": set()})
        stats["calls"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], lim.in_flight)
        stats["callers"].add(caller)
        return self.next_lease, started, lim.limit

    async def release(self, lease: int) -> None:
        entry = self.leases.pop(lease, None)
        if entry is not None:
            self.limiters[entry[0]].release()

    async def succeeded(self, endpoint: str) -> None:
        self.limiters[endpoint].on_success()

    async def rate_limited(self, endpoint: str, started: float) -> None:
        self.limiters[endpoint].on_rate_limited(started)

    async def report(self) -> dict[str, dict[str, Any]]:
        """Per endpoint: the limit it settled at, its decreases, calls, the most in flight at once, callers."""
        return {
            endpoint: {
                "limit": round(self.limiters[endpoint].limit, 2),
                "decreases": self.limiters[endpoint].decreases,
                "calls": s["calls"],
                "peak_in_flight": s["peak_in_flight"],
                "nodes": len(s["callers"]),
            }
            for endpoint, s in self.stats.items()
        }

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for lease in [k for k, (_, until) in self.leases.items() if until < now]:
                await self.release(lease)
