"""Executors: how the case runs of a run are carried out. One interface; local asyncio is the default.

An executor takes the :class:`~evalnb.running._case_run.RunJob`, the case runs to do (an iterator: the plan is
lazy, so memory does not grow with ``runs``) and a sink; it runs every case run (a
:class:`~evalnb.running._case_run.Worker` turns one into a record) and hands each record to the sink as soon as
it finishes, in any order. Cancelling ``execute`` stops it: case runs in flight are cancelled, and the runner
records what never finished as skipped.

An executor may also have ``prepare(job)``: the runner calls it before anything is recorded, so that what
stops a run at start-up (a cluster that cannot be reached, an agent that cannot be sent to it) stops it before
a store writes anything. ``execute`` may return a dict of what ran where; the Result's meta keeps it as
``executor_info``.

Executors are found by name (``executor="local"``) in a registry; ``"NAME=ARGUMENT"`` passes one argument to
the factory (``"ray=10.0.0.5:6379"``: the cluster's address). Two ship with evalnb: ``local`` (this class) and
``ray`` (:mod:`evalnb.running._ray_executor`, imported when first named); another one registers itself the same
way and is chosen with ``evalnb.run(..., executor=NAME)`` or an instance.

Example::

    class Sequential:
        name = "sequential"
        async def execute(self, job, todo, sink):
            worker = Worker(job)
            try:
                for case, run in todo:
                    await sink(await worker.run_case(case, run))
            finally:
                worker.close()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol, runtime_checkable

from evalnb._registry import Registry
from evalnb.errors import ConfigError
from evalnb.results._records import CaseRunRecord
from evalnb.running._case_run import RunJob, Worker
from evalnb.suite import Case

__all__ = ["Executor", "Local", "as_executor", "register_executor"]

Sink = Callable[[CaseRunRecord], Awaitable[None]]


@runtime_checkable
class Executor(Protocol):
    """Runs case runs and hands their records to a sink (see the module docstring)."""

    name: str

    async def execute(self, job: RunJob, todo: Iterator[tuple[Case, int]], sink: Sink) -> Any: ...


class Local:
    """Case runs on this process's event loop, ``job.concurrency`` at a time.

    A fixed set of workers pulls from one iterator: that bounds concurrency like a semaphore, without a task
    per case run (that overhead shows at thousands of runs), and keeps the plan lazy.
    """

    name = "local"

    async def execute(self, job: RunJob, todo: Iterator[tuple[Case, int]], sink: Sink) -> None:
        worker = Worker(job)

        async def pull() -> None:
            for case, run in todo:
                # Handed over in place: a recorder's write finishes before this slot takes the next case run.
                await sink(await worker.run_case(case, run))

        tasks = [asyncio.ensure_future(pull()) for _ in range(max(1, job.concurrency))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            worker.close()


_EXECUTORS: Registry[Callable[..., Executor]] = Registry(
    "executor", builtins={"local": "evalnb.running._executors", "ray": "evalnb.running._ray_executor"}
)


def register_executor(name: str, factory: Callable[..., Executor]) -> None:
    """Make ``executor=name`` (and ``evalnb run --executor name``) build an executor with ``factory()``
    (``factory(argument)`` for ``"name=argument"``)."""
    _EXECUTORS.register(name, factory, replace=True)


register_executor("local", Local)


def as_executor(executor: Any) -> Executor:
    """An Executor from ``None`` (local), a registered name (``"NAME"`` or ``"NAME=ARGUMENT"``), or an object
    with ``execute``.

    Example::

        as_executor("ray=127.0.0.1:6379")      # Ray(address="127.0.0.1:6379")
    """
    if executor is None:
        return Local()
    if isinstance(executor, str):
        name, sep, argument = executor.strip().partition("=")
        factory = _EXECUTORS.get(name.strip().lower())
        if factory is None:
            raise ConfigError(f"unknown executor {executor!r}; known: {', '.join(_EXECUTORS.names())}")
        if not sep:
            return factory()
        try:
            return factory(argument.strip())
        except TypeError:
            raise ConfigError(f"executor {name!r} takes no argument (got {executor!r})") from None
    if isinstance(executor, Executor):
        return executor
    raise ConfigError(
        f"executor must be None, a name ({', '.join(_EXECUTORS.names())}) or an object with an async "
        f"execute(job, todo, sink), not {type(executor).__name__}"
    )
