"""The Ray executor: case runs in batches on a Ray cluster, their records streamed back to this process.

``evalnb.run(..., executor="ray")`` runs on the cluster ``ray.init()`` finds (``RAY_ADDRESS``, a cluster started
with ``ray start`` on this machine, else a new local one); ``executor=evalnb.executors.Ray(address=...)`` names
one. The driver (this process) keeps the plan, the recorders and the progress bar; the workers run case runs:

* :meth:`Ray.prepare` connects and serialises the job (:mod:`~evalnb.running._shipping`) before anything is
  recorded, so an object that cannot travel, or a cluster that cannot be reached, stops the run at start-up;
* :meth:`Ray.execute` takes case runs from the lazy plan in batches, as many batches in flight as the cluster
  has slots for (twice: one running, one waiting), each a Ray task (:func:`~evalnb.running._ray_tasks.run_batch`)
  that runs its batch with the job's concurrency on an event loop of its own; a batch's records go to the sink
  (the recorders) when it finishes, so a stored run is written, and resumes, as a local one;
* a batch aims at :data:`BATCH_SECONDS` of work, sized from how fast the batches before it went: small enough to
  stream and balance, large enough that a task's overhead does not show;
* a worker or node that dies takes its batch with it: Ray runs the task again (``max_retries``), and the driver
  records each batch once, whatever ran twice; a batch that still fails is recorded as ``degraded`` case runs
  that say why, never lost;
* the endpoints of OpenAI-compatible agents and judges share one adaptive limit across workers (an actor,
  :class:`~evalnb.running._ray_tasks.Limits`), so a rate limit holds for the cluster, not per worker.

Results are the local executor's: the same records, put in suite order by the Result.

Example::

    result = evalnb.run(suite, Command(["python", "agent.py"]), executor=Ray(address="10.0.0.5:6379"))
    result.meta["executor_info"]["nodes"]     # case runs per node
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from evalnb._numbers import count, positive
from evalnb._scoring import not_checked
from evalnb.errors import ConfigError
from evalnb.results._records import CaseRunRecord
from evalnb.running import _shipping as shipping
from evalnb.running._case_run import Plans, RunJob, without_answers
from evalnb.running._executors import register_executor
from evalnb.running._ray_tasks import Limits, records_of, run_batch
from evalnb.suite import Case

__all__ = ["BATCH_SECONDS", "MAX_BATCH", "Ray"]

BATCH_SECONDS = 2.0
"""The work a batch aims at, in seconds of a worker's time."""
MAX_BATCH = 2_000
"""The most case runs in one batch."""

Sink = Callable[[CaseRunRecord], Awaitable[None]]
_TASKS: dict[str, Any] = {}  # the Ray remote function and actor class, made once per process


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError('the Ray executor needs Ray: pip install "evalnb[ray]"') from None
    return ray


class Ray:
    """Runs case runs on a Ray cluster (see the module docstring).

    Args:
        address: the cluster (``"HOST:PORT"`` of its head, ``"ray://HOST:10001"`` for Ray Client); ``None``:
            the one ``ray.init()`` finds, else a new local one. A process already connected to Ray uses that
            connection.
        batch_size: case runs per batch; ``None`` sizes batches to about :data:`BATCH_SECONDS` of work each.
        max_retries: how often Ray runs a batch again whose worker died.
        num_cpus: the CPUs a batch takes on its node (a batch runs ``concurrency`` case runs at once).
        runtime_env: Ray's runtime environment of the batch tasks (``{"working_dir": ".", "pip": [...]}``), for
            workers that need your code or packages.
        share_limits: whether the workers share one adaptive limit per OpenAI-compatible endpoint.
        init: further keyword arguments of ``ray.init`` when this executor connects.

    Raises:
        ConfigError: for an option out of range; when the run starts, for a cluster that cannot be reached or
            a job that cannot be sent to it.

    Example::

        evalnb.run(suite, agent, executor=evalnb.executors.Ray(address="127.0.0.1:6379", batch_size=50))
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        batch_size: int | None = None,
        max_retries: int = 3,
        num_cpus: float = 1.0,
        runtime_env: Mapping[str, Any] | None = None,
        share_limits: bool = True,
        init: Mapping[str, Any] | None = None,
    ) -> None:
        count("Ray batch_size", batch_size, minimum=1, none=True)  # evalnb._numbers: the one rule
        count("Ray max_retries", max_retries)
        positive("Ray num_cpus", num_cpus)
        self.address = address.strip() if isinstance(address, str) and address.strip() else None
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.num_cpus = float(num_cpus)
        self.runtime_env = dict(runtime_env) if runtime_env else None
        self.share_limits = share_limits
        self.init = dict(init or {})
        self._prepared: dict[int, _Prepared] = {}

    def __repr__(self) -> str:
        return f"Ray(address={self.address!r})"

    # -- start-up ------------------------------------------------------------------------------------

    def prepare(self, job: RunJob) -> None:
        """Connect to the cluster and serialise the job, before anything runs or is recorded.

        Raises:
            ConfigError: naming what cannot be sent to the workers, or why the cluster cannot be reached.
        """
        shipped = job
        if job.workdir is not None and not job.workdir.is_absolute():
            shipped = dataclasses.replace(job, workdir=job.workdir.resolve())  # the workers' cwd is not ours
        packed = shipping.pack(shipped)
        ray = _ray()
        self._connect(ray)
        task, _ = _remote(ray)
        box = [ray.put(packed.payload)]
        token = uuid.uuid4().hex
        # One worker unpacks the job now: a module of yours that the workers cannot import stops the run here,
        # before anything is recorded, and that worker starts warm.
        try:
            ray.get(
                task.options(num_cpus=0, max_retries=self.max_retries, **self._env()).remote(token, box, [])
            )
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, BaseException) else exc) from None
        # only the latest job is kept: a run with a stop rule executes it batch after batch (running/_stopping.py)
        self._prepared = {id(job): _Prepared(packed, box, token)}

    def _env(self) -> dict[str, Any]:
        return {"runtime_env": self.runtime_env} if self.runtime_env is not None else {}

    def _connect(self, ray: Any) -> None:
        if ray.is_initialized():
            current = ray.get_runtime_context().gcs_address
            if (
                self.address is not None
                and self.address not in (current, "auto")
                and "://" not in self.address
            ):
                raise ConfigError(
                    f"this process is connected to the Ray cluster at {current}, not {self.address}; call "
                    "ray.shutdown() first to use another"
                )
            return
        try:
            ray.init(address=self.address, **self.init)
        except Exception as exc:  # ConnectionError, a timeout, a bad address: the run cannot start
            where = self.address or "found by ray.init()"
            raise ConfigError(
                f"cannot connect to the Ray cluster at {where}: {type(exc).__name__}: {exc}"
            ) from None

    # -- the run -------------------------------------------------------------------------------------

    async def execute(self, job: RunJob, todo: Iterator[tuple[Case, int]], sink: Sink) -> dict[str, Any]:
        """Run the case runs of ``todo`` on the cluster; returns what ran where (``meta["executor_info"]``)."""
        ray = _ray()
        if id(job) not in self._prepared:
            self.prepare(job)
        ready = self._prepared[id(job)]
        task, actor_class = _remote(ray)
        box, token = ready.box, ready.token
        limits = _limits(ray, actor_class) if ready.packed.endpoints and self.share_limits else None
        submit = task.options(num_cpus=self.num_cpus, max_retries=self.max_retries, **self._env())
        sizer = _Sizer(self.batch_size, job.concurrency)
        plan = _Positions(job.suite.cases, todo)
        slots = max(1, int(ray.cluster_resources().get("CPU", 1) // self.num_cpus))
        pending: dict[asyncio.Future[Any], tuple[Any, list[tuple[int, Case, int]]]] = {}
        info: dict[str, Any] = {"address": ray.get_runtime_context().gcs_address, "batches": 0, "nodes": {}}
        plans = Plans()
        try:
            while True:
                while len(pending) < 2 * slots:
                    chunk = list(itertools.islice(plan, sizer.size))
                    if not chunk:
                        break
                    ref = submit.remote(token, box, [(i, run) for i, _, run in chunk], limits)
                    pending[asyncio.wrap_future(ref.future())] = (ref, chunk)
                if not pending:
                    break
                finished, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in finished:
                    _, chunk = pending.pop(future)
                    for record in self._records(ray, future, chunk, job, plans, sizer, info):
                        await sink(record)
            if limits is not None:
                info["limits"] = await asyncio.wrap_future(limits.report.remote().future())
        finally:
            for ref, _ in pending.values():
                ray.cancel(
                    ref
                )  # not force: the worker's loop cancels its case runs, which stop their programs
            if limits is not None:
                ray.kill(limits)
        return info

    def _records(
        self,
        ray: Any,
        future: asyncio.Future[Any],
        chunk: list[tuple[int, Case, int]],
        job: RunJob,
        plans: Plans,
        sizer: _Sizer,
        info: dict[str, Any],
    ) -> list[CaseRunRecord]:
        """A finished batch's records, once: its own, or degraded ones saying why the batch was lost."""
        try:
            batch = future.result()
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)  # the task raised: as a local run would, the run stops
            raise (cause if isinstance(cause, BaseException) else exc) from None
        except ray.exceptions.RayError as exc:
            # Its worker or node died more often than Ray retries: the case runs are failures, with the reason.
            info["lost_batches"] = info.get("lost_batches", 0) + 1
            error = f"{type(exc).__name__}: the Ray worker running this case run died ({self.max_retries + 1} attempts)"
            reason = not_checked(error)
            return [
                without_answers(job, plans, case, run, status="degraded", reason=reason, error=error)
                for _, case, run in chunk
            ]
        info["batches"] += 1
        nodes = info["nodes"]
        nodes[batch.node] = nodes.get(batch.node, 0) + len(batch.rows)
        sizer.learn(len(batch.rows), batch.seconds)
        return records_of(batch, job.suite)


@dataclasses.dataclass
class _Prepared:
    packed: shipping.Packed
    box: list[Any]
    token: str


class _Sizer:
    """The size of the next batch: fixed, or about :data:`BATCH_SECONDS` of work at the rate measured so far."""

    def __init__(self, fixed: int | None, concurrency: int) -> None:
        self.fixed = fixed
        self.size = fixed or max(2, 2 * concurrency)
        self.rate: float | None = None  # case runs per second of one batch task

    def learn(self, count: int, seconds: float) -> None:
        if self.fixed is not None or count == 0:
            return
        rate = count / max(seconds, 1e-3)
        self.rate = rate if self.rate is None else 0.7 * self.rate + 0.3 * rate
        self.size = max(1, min(MAX_BATCH, round(self.rate * BATCH_SECONDS)))


class _Positions:
    """``(position in the suite, case, run)`` for each case run of the plan.

    The plan comes in suite order, so a pointer walking the suite finds each case's position without a
    dictionary of every case; a plan in another order falls back to one.
    """

    def __init__(self, cases: list[Case], todo: Iterator[tuple[Case, int]]) -> None:
        self.cases = cases
        self.todo = todo
        self.at = 0
        self.index: dict[int, int] | None = None

    def __iter__(self) -> Iterator[tuple[int, Case, int]]:
        return self

    def __next__(self) -> tuple[int, Case, int]:
        case, run = next(self.todo)
        return self.position(case), case, run

    def position(self, case: Case) -> int:
        cases = self.cases
        if self.index is None:
            at = self.at
            while at < len(cases) and cases[at] is not case:
                at += 1
            if at < len(cases):
                self.at = at
                return at
            self.index = {id(c): i for i, c in enumerate(cases)}
        try:
            return self.index[id(case)]
        except KeyError:
            raise ConfigError(f"case {case.id!r} is not a case of the suite that runs") from None


def _remote(ray: Any) -> tuple[Any, Any]:
    if "task" not in _TASKS:
        _TASKS["task"] = ray.remote(run_batch)
        _TASKS["actor"] = ray.remote(Limits)
    return _TASKS["task"], _TASKS["actor"]


def _limits(ray: Any, actor_class: Any) -> Any:
    """The run's limiter actor, on this process's node (where it lives as long as the run can)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
    return actor_class.options(num_cpus=0, max_restarts=-1, scheduling_strategy=here).remote()


register_executor("ray", Ray)
