"""Calling an agent: one call with its timeout and retries, sync agents on the run's own thread pool.

README.md, agents: only transient failures are retried (an ``evalnb.TransientError``, a timeout, HTTP 429/5xx from
an endpoint); a plain exception from a callable is recorded at once, never retried. A configuration problem
(``ConfigError``, e.g. a strict Replay miss) stops the run: it is not a row. Nor is running out of memory (a
``MemoryError``, or no memory for one more thread): the process, not the agent, failed, and every later case
run would fail the same way; the run stops as one that could not complete (``running/_api.py``).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from evalnb._costs import add_usage
from evalnb._retry import backoff
from evalnb.agents._base import Agent, CallableAgent, Request, Response, encodable, to_response
from evalnb.errors import AgentError, ConfigError

__all__ = ["RETRY_BACKOFF", "RETRY_MAX", "Caller", "DaemonThreads", "PooledCallable"]

RETRY_BACKOFF = 0.5
"""Seconds before the first retry; doubles on each further retry, with jitter, capped at RETRY_MAX."""
RETRY_MAX = 20.0

_HAS_TIMEOUT = sys.version_info >= (3, 11)  # asyncio.timeout and Task.cancelling/uncancel


class DaemonThreads(Executor):
    """The threads sync agents (and checks that run off the event loop) run in: daemon threads, reused when
    idle, a new one whenever none is.

    A sync call that blocks past its timeout cannot be stopped (Python cannot kill a thread): the run abandons
    it and goes on. With a fixed pool such calls would keep its threads, and the calls of other cases would
    queue behind them; and a thread pool's threads are joined when the interpreter exits, so the process
    would hang after the run. Here an abandoned call keeps only its own thread, other calls get another, and
    the process exits without waiting for it.

    When no other thread can start (its stack does not fit in the memory left: "can't start new thread"), a
    call waits for one of the threads there are, as with a lower concurrency; only when there is none at all
    is it a ``MemoryError`` (the run stops as one that ran out of memory).
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._idle: list[_Slot] = []
        self._waiting: deque[Any] = (
            deque()
        )  # calls no new thread could take, for the next thread that is free
        self._lock = threading.Lock()
        self._made = 0
        self._alive = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        job = (future, fn, args, kwargs)
        with self._lock:
            if self._closed:
                raise RuntimeError("the agent threads are shut down")
            slot = self._idle.pop() if self._idle else None
            if slot is None:
                try:
                    slot = _Slot(self, f"{self._name}-{self._made + 1}")
                except RuntimeError as exc:
                    if not self._alive:
                        raise MemoryError(f"no memory for a thread ({exc})") from None
                    self._waiting.append(job)  # a thread there is takes it when its call ends
                    return future
                self._made += 1
                self._alive += 1
        slot.give(job)
        return future

    def _next(self, slot: _Slot) -> Any:
        """What a thread whose call ended does next: a waiting call, else it goes idle (``_IDLE``), or it ends
        (``None``: shut down)."""
        with self._lock:
            if self._closed:
                return None
            if self._waiting:
                return self._waiting.popleft()
            self._idle.append(slot)
            return _IDLE

    def _lost(self) -> None:
        """A thread ended on an error of its own: with no thread left, the calls waiting for one fail (they
        would wait forever) as the process's want of memory."""
        with self._lock:
            self._alive -= 1
            if self._alive > 0:
                return
            waiting, self._waiting = list(self._waiting), deque()
        for future, *_ in waiting:
            if future.set_running_or_notify_cancel():
                future.set_exception(MemoryError("no thread left to run the call"))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            waiting, self._waiting = list(self._waiting), deque()
        for slot in idle:
            slot.give(None)
        for future, *_ in waiting:
            future.cancel()


_IDLE = object()


class _Slot:
    """One daemon thread of :class:`DaemonThreads`, running the jobs it is given one at a time."""

    def __init__(self, owner: DaemonThreads, name: str) -> None:
        self.owner = owner
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def give(self, job: Any) -> None:
        self.jobs.put(job)

    def _work(self) -> None:
        try:
            job = self.jobs.get()
            while job is not None:
                future, fn, args, kwargs = job
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(fn(*args, **kwargs))
                    except (
                        BaseException
                    ) as exc:  # SystemExit and KeyboardInterrupt from the agent are its failure
                        future.set_exception(_as_failure(exc))
                del job, future, fn, args, kwargs
                job = self.owner._next(self)
                if job is _IDLE:
                    job = self.jobs.get()
        except BaseException:  # no memory left even for this loop's own bookkeeping: the thread is lost
            self.owner._lost()


def _as_failure(exc: BaseException) -> BaseException:
    """An agent that exits or raises KeyboardInterrupt (argparse and click call ``sys.exit``) fails its case run:
    it does not end the whole process."""
    if isinstance(exc, SystemExit):
        return AgentError(f"SystemExit: the agent called sys.exit({exc.code!r})")
    if isinstance(exc, KeyboardInterrupt):
        return AgentError("KeyboardInterrupt raised inside the agent")
    return exc


class PooledCallable:
    """A sync CallableAgent run in the run's own :class:`DaemonThreads` (not asyncio.to_thread's default pool,
    which has min(32, cpus + 4) threads and whose threads the interpreter waits for at exit)."""

    def __init__(self, inner: CallableAgent, pool: Executor) -> None:
        self.inner = inner
        self.pool = pool
        self.name = inner.name

    async def respond(self, request: Request) -> Response:
        arg: Any = request if self.inner.wants_request else request.prompt
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        value = await loop.run_in_executor(self.pool, functools.partial(ctx.run, self.inner.fn, arg))
        if inspect.isawaitable(value):
            value = await value
        return to_response(value)


def is_sync_callable(agent: Any) -> bool:
    return isinstance(agent, CallableAgent) and not agent.is_async


class _Deadline:
    __slots__ = ("cancelling", "state", "task", "when")

    def __init__(self, task: Any, when: float) -> None:
        # Any: Task.cancelling()/uncancel() are Python 3.11+ (the deadlines are only used there), and mypy
        # checks the package as 3.10.
        self.task = task
        self.when = when
        self.cancelling = task.cancelling()
        self.state = _ACTIVE


_ACTIVE, _EXPIRING, _DONE = 0, 1, 2


class Deadlines:
    """The agent-call timeouts of one run, on one timer handle instead of one per call.

    Every call gets the same timeout and calls start in time order, so deadlines arrive in order: a queue
    whose head is the next to expire. One timer is armed for the oldest call still in flight; when it fires,
    the calls past their deadline are cancelled (as ``asyncio.timeout`` does: the cancellation becomes a
    TimeoutError when it is ours) and the timer is re-armed for the next call in flight. A call cancelled at
    its deadline is cancelled at the same moment a per-call timer would have fired.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self.loop = loop
        self.timeout = timeout
        self.queue: deque[_Deadline] = deque()
        self.handle: asyncio.TimerHandle | None = None
        # The loop runs a timer up to one clock tick early; so may a deadline expire, like asyncio.timeout's.
        self.slack = time.get_clock_info("monotonic").resolution

    async def run(self, awaitable: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None  # the runner's workers are tasks
        entry = _Deadline(task, self.loop.time() + self.timeout)
        self.queue.append(entry)
        if self.handle is None:
            self.handle = self.loop.call_at(entry.when, self._fire)
        try:
            out = await awaitable
        except asyncio.CancelledError as exc:
            if self._leave(entry):
                raise TimeoutError from exc
            raise
        except BaseException:
            self._leave(entry)
            raise
        self._leave(entry)
        return out

    def _leave(self, entry: _Deadline) -> bool:
        """Mark the call finished; True when its deadline cancelled it and nobody else asked to cancel."""
        expired = entry.state == _EXPIRING
        entry.state = _DONE
        queue = self.queue
        while queue and queue[0].state == _DONE:
            queue.popleft()
        # asyncio.timeout's rule: a cancellation is a timeout only when no other cancel request is pending.
        return expired and entry.task.uncancel() <= entry.cancelling

    def _fire(self) -> None:
        self.handle = None
        now = self.loop.time() + self.slack
        queue = self.queue
        while queue:
            entry = queue[0]
            if entry.state != _ACTIVE:
                queue.popleft()
            elif entry.when <= now:
                queue.popleft()
                entry.state = _EXPIRING
                entry.task.cancel()
            else:
                self.handle = self.loop.call_at(entry.when, self._fire)
                return

    def close(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None
        self.queue.clear()


class Caller:
    """Calls agents with the run's timeout and retries (one per worker loop)."""

    def __init__(self, *, timeout: float | None, retries: int) -> None:
        self.timeout = timeout
        self.retries = retries
        self.deadlines: Deadlines | None = None
        if timeout is not None and _HAS_TIMEOUT:
            self.deadlines = Deadlines(asyncio.get_running_loop(), float(timeout))

    async def _respond(self, agent: Agent, request: Request) -> Any:
        if self.timeout is None:
            return await agent.respond(request)
        if self.deadlines is not None:
            return await self.deadlines.run(agent.respond(request))
        return await asyncio.wait_for(agent.respond(request), self.timeout)  # pragma: no cover - 3.10

    async def call(
        self, agent: Agent, request: Request
    ) -> tuple[Response | None, str | None, float | None, dict[str, int]]:
        """One agent call with timeout and retries; returns (response, error, latency_ms, spent): ``spent`` is
        the token usage the failed attempts reported (``AgentError.usage``), which a retry does not undo
        (docs/costs.md: a retried call costs every attempt)."""
        attempt = 0
        spent: dict[str, int] = {}
        while True:
            t0 = time.perf_counter()
            try:
                response = await self._respond(agent, request)
                if not isinstance(response, Response):
                    response = to_response(response)
                encodable(response)
                if response.latency_ms is None:
                    response.latency_ms = (time.perf_counter() - t0) * 1000.0
                return response, None, response.latency_ms, spent
            except (asyncio.TimeoutError, TimeoutError):
                error = f"TimeoutError: the agent did not answer within {self.timeout:g}s"
                transient, hint = True, None
            except (ConfigError, MemoryError):
                raise
            except (SystemExit, KeyboardInterrupt) as exc:
                # Raised by the agent's own code (a real Ctrl-C cancels the run's task instead): that case run
                # fails, the run goes on.
                error = str(_as_failure(exc))
                transient, hint = False, None
            except AgentError as exc:
                error = f"{type(exc).__name__}: {exc}"
                transient, hint = exc.transient, getattr(exc, "retry_after", None)
                add_usage(spent, getattr(exc, "usage", None))
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                transient, hint = False, None
            latency = (time.perf_counter() - t0) * 1000.0
            if not transient or attempt >= self.retries:
                if attempt:
                    error += f" (after {attempt + 1} attempts)"
                return None, error, latency, spent
            await asyncio.sleep(backoff(attempt, base=RETRY_BACKOFF, cap=RETRY_MAX, hint=hint))
            attempt += 1

    def close(self) -> None:
        if self.deadlines is not None:
            self.deadlines.close()
