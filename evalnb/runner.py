"""Run a suite against an agent: concurrency, timeouts, retries, working directories, progress, scoring.

:func:`run_async` does the work; :func:`run` wraps it for scripts and notebooks (inside Jupyter's running
event loop it runs the coroutine on its own loop in a separate thread).

Every case runs ``runs`` times (the case's own count unless ``runs=`` overrides it). The turns of a
multi-turn case run in order as one conversation: each turn's ``Request.history`` holds the history the suite
wrote for it, then the earlier prompts and the agent's actual answers. Case runs go in parallel up to
``concurrency``. Failures are data (STYLE habit 5): an agent that raises, times out or returns something
unusable makes its run ``degraded`` with the exception in ``error``, and the run goes on.

Example:
    >>> import evalnb
    >>> result = evalnb.run("data/suites/tasks.toml", lambda prompt: "summary: ...", runs=1)
    >>> result.cases[["case_id", "status"]]
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.agents.base import Agent, CallableAgent, Request, Response, as_agent, to_response
from evalnb.checks import registry
from evalnb.checks.registry import BuiltinFn, CheckContext, Score
from evalnb.errors import AgentError, ConfigError
from evalnb.results import (
    MISMATCH_COLUMNS,
    RUNS_COLUMNS,
    SCORES_COLUMNS,
    Result,
    frame_from_tuples,
    make_frame,
    mismatch_value,
)
from evalnb.suite import Case, CustomCheck, IntentCheck, RowsCheck, Suite, Turn

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["run", "run_async"]

RETRY_BACKOFF = 0.5
"""Seconds before the first retry; doubles on each further retry, with +-50% jitter, capped at RETRY_MAX."""
RETRY_MAX = 20.0

CaseCallback = Callable[..., Any]
"""``(case_id, runs_rows, score_rows)``, or with a fourth positional ``mismatch_rows`` when it accepts one."""

if sys.version_info >= (3, 11):
    _timeout_cm = asyncio.timeout
else:  # pragma: no cover - Python 3.10 has no asyncio.timeout; wait_for is the portable fallback
    _timeout_cm = None


# --------------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------------


def run(
    suite: Suite | str | PathLike[str],
    agent: Any,
    *,
    judge: Any = None,
    data: Any = None,
    runs: int | None = None,
    concurrency: int = 8,
    timeout: float | None = 120.0,
    retries: int = 2,
    cache: Any = None,
    progress: bool | None = None,
    workdir: str | PathLike[str] | None = None,
    store: Any = None,
    version: str | None = None,
    resume: str | None = None,
    preflight: bool = True,
) -> Result:
    """Run ``suite`` against ``agent`` and return a :class:`~evalnb.results.Result`.

    Works in scripts and inside a running Jupyter event loop (the run then gets its own loop in a worker
    thread). Ctrl-C returns a Result holding what finished, the rest marked ``skipped``.

    Args:
        suite: a Suite or a path (loaded with ``evalnb.load``).
        agent: a callable (sync or async, taking the prompt or a ``Request``), an object from
            ``evalnb.agents``, or a mapping ``{agent_id: agent}`` routing cases that name their agent.
        judge: ``None`` (judged checks fail as not evaluated), a callable or an ``evalnb.judges`` object.
        data: the data source for cube ``referenceQuery`` checks.
        runs: overrides every case's run count.
        concurrency: case runs in flight at once.
        timeout: seconds per agent call (``None``: no limit).
        retries: retries of transient agent failures and timeouts (never of a wrong answer).
        cache: the judge cache (see ``evalnb.judges.as_judge``).
        progress: ``None`` shows a progress bar on a terminal or in a notebook; ``False`` never; ``True`` always.
        workdir: ``None`` gives each run a fresh temporary directory; a path makes every run use it.
        store: an ``evalnb.Store`` (or a path/URL for one) to save the result into.
        version: the version label to save under; each case is written as soon as all its runs finish.
        resume: the run id of an interrupted stored run to continue: only cases not stored yet run.
        preflight: before any case runs (and before a store writes anything), check once per agent and for the
            judge that they can be reached: an OpenAI-compatible or HTTP endpoint accepts a connection, a
            command's program exists, a replay cassette is readable. ``False`` skips these checks.

    Raises:
        ConfigError: when the run cannot start (unknown agent id, missing data source, bad option, an agent
            or judge that cannot be reached at start-up).

    Example:
        >>> result = evalnb.run(suite, lambda prompt: "Paris", runs=1, progress=False)
        >>> result.exit_code
        0
    """
    kwargs = dict(
        judge=judge,
        data=data,
        runs=runs,
        concurrency=concurrency,
        timeout=timeout,
        retries=retries,
        cache=cache,
        progress=progress,
        workdir=workdir,
        store=store,
        version=version,
        resume=resume,
        preflight=preflight,
    )
    return run_blocking(lambda: run_async(suite, agent, **kwargs))


def run_blocking(make: Callable[[], Any]) -> Result:
    """Run the coroutine ``make()`` returns to completion from sync code, Jupyter included.

    Outside a loop it runs on a fresh loop; inside a running loop (Jupyter) a loop cannot be nested, so it runs
    on its own loop in a separate thread. Either way Ctrl-C cancels it, and a run returns its partial Result.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_in_new_loop(make)
    return _run_in_thread(make)


def turn_history(
    conversation: list[dict[str, str]], file_history: list[dict[str, str]]
) -> list[dict[str, str]]:
    """A turn's ``Request.history``: the conversation so far, then the turn's own file history (cube)."""
    return conversation + file_history if file_history else list(conversation)


def after_turn(history: list[dict[str, str]], prompt: str, answer: str) -> list[dict[str, str]]:
    """The conversation a later turn continues: this turn's history, its prompt and the actual answer."""
    return [*history, {"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


async def run_async(
    suite: Suite | str | PathLike[str],
    agent: Any,
    *,
    judge: Any = None,
    data: Any = None,
    runs: int | None = None,
    concurrency: int = 8,
    timeout: float | None = 120.0,
    retries: int = 2,
    cache: Any = None,
    progress: bool | None = None,
    workdir: str | PathLike[str] | None = None,
    store: Any = None,
    version: str | None = None,
    resume: str | None = None,
    preflight: bool = True,
    _on_case: CaseCallback | None = None,
) -> Result:
    """The async form of :func:`run` (same arguments).

    ``_on_case(case_id, runs_rows, score_rows[, mismatch_rows])`` (private) is called, and awaited if it
    returns an awaitable, when every run of a case has finished; a store uses it to persist cases as they
    complete (the mismatch rows are passed when the callback takes a fourth argument).

    Example:
        >>> result = await evalnb.run_async(suite, my_async_agent, concurrency=32)
    """
    if (store is not None or resume is not None) and _on_case is None:
        # A stored run writes each finished case as it completes (and can resume); see evalnb.store.
        from evalnb.store import run_stored

        if preflight:
            # api contract: an unreachable agent or judge stops the run before the store writes a run row.
            agents = (
                [_build(v, f"agent {k!r}") for k, v in agent.items()]
                if _is_mapping_of_agents(agent)
                else [_build(agent, "agent")]
            )
            # On resume the suite comes from the store: check the judge then, as it may be needed.
            needs_judge = suite is None or _needs_judge(_as_suite(suite))
            await _preflight(agents, _as_judge(judge, cache) if needs_judge else None)
        return await run_stored(
            run_async, suite, agent, store=store, version=version, resume=resume, judge=judge, data=data,
            runs=runs, concurrency=concurrency, timeout=timeout, retries=retries, cache=cache,
            progress=progress, workdir=workdir, preflight=False,
        )  # fmt: skip
    started = time.perf_counter()
    started_at = datetime.now(timezone.utc).isoformat()
    the_suite = _as_suite(suite)
    _check_options(runs=runs, concurrency=concurrency, timeout=timeout, retries=retries)
    routes, names = _route(the_suite, agent)
    the_judge = _as_judge(judge, cache)
    if preflight:
        # A judge the suite never calls need not be reachable.
        await _preflight(list(routes.values()), the_judge if _needs_judge(the_suite) else None)
    source = _open_data(the_suite, data)

    plan = [(case, r) for case in the_suite.cases for r in range(case.runs if runs is None else runs)]
    state = _State(
        suite=the_suite,
        routes=routes,
        names=names,
        judge=the_judge,
        data=source,
        timeout=timeout,
        retries=retries,
        workdir=Path(workdir) if workdir is not None else None,
        on_case=_on_case,
        remaining={},
    )
    for case, _ in plan:
        state.remaining[case.id] = state.remaining.get(case.id, 0) + 1
    if timeout is not None and _timeout_cm is not None:
        state.deadlines = _Deadlines(asyncio.get_running_loop(), float(timeout))
    if any(_sync_callable(a) for a in routes.values()):
        # asyncio.to_thread's default pool has min(32, cpus + 4) threads: too few for `concurrency` sync agents.
        state.pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="evalnb-agent")
        state.routes = {
            k: _PooledCallable(a, state.pool) if isinstance(a, CallableAgent) and not a.is_async else a
            for k, a in routes.items()
        }

    bar = _progress_bar(progress, total=len(plan), desc=the_suite.name)
    state.bar = bar
    queue = iter(range(len(plan)))
    interrupted = False

    async def worker() -> None:
        # A fixed set of workers pulling from one iterator bounds concurrency like a semaphore, without a
        # task per case run (that overhead shows at thousands of runs).
        for i in queue:
            case, r = plan[i]
            await state.run_case(case, r)

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, min(concurrency, len(plan))))]
    try:
        await asyncio.gather(*workers)
    except (asyncio.CancelledError, KeyboardInterrupt):
        # Interrupting returns what finished; unfinished case runs are recorded as skipped (issue 3).
        interrupted = True
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    finally:
        if bar is not None:
            bar.close()
        if state.pool is not None:
            state.pool.shutdown(wait=False, cancel_futures=True)
        if state.deadlines is not None:
            state.deadlines.close()
        state.cleanup()
        if source is not None and source is not data:
            source.close()  # opened from a path, URL or DataFrames for this run; a caller's Source stays open

    if interrupted:
        for case, r in plan:
            if (case.id, r) not in state.done:
                state.skip_run(case, r, "skipped: the run was interrupted")

    # Case runs finish in any order; rows follow suite order, then run, then turn.
    run_rows: list[dict[str, Any]] = []
    score_rows: list[tuple[Any, ...]] = []
    mismatch_rows: list[dict[str, Any]] = []
    for case, r in plan:
        slot = state.slots.get((case.id, r))
        if slot is not None:
            run_rows += slot[0]
            score_rows += slot[1]
            mismatch_rows += slot[2]
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    meta = {
        "agent": names.get("default") if len(names) == 1 else names,
        "model": _first_model(state.responses.values()),
        "judge": _judge_name(the_judge),
        "started_at": started_at,
        "finished_at": datetime.now(timezone.utc).isoformat(),
        "elapsed_ms": elapsed_ms,
        "interrupted": interrupted,
        "options": {
            "runs": runs,
            "concurrency": concurrency,
            "timeout": timeout,
            "retries": retries,
            "workdir": str(workdir) if workdir is not None else None,
        },
        "checks": _checks_config(the_suite, state.plan),
    }
    result = Result(
        suite=the_suite,
        runs=make_frame(run_rows, RUNS_COLUMNS),
        scores=frame_from_tuples(score_rows, SCORES_COLUMNS),
        mismatches=make_frame(mismatch_rows, MISMATCH_COLUMNS),
        meta=meta,
        responses=state.responses,
    )
    return result


# --------------------------------------------------------------------------------------------------
# Setup: suite, options, routing, judge, data
# --------------------------------------------------------------------------------------------------


def _as_suite(suite: Any) -> Suite:
    if isinstance(suite, Suite):
        return suite
    if isinstance(suite, (str, os.PathLike)):
        from evalnb.formats import load

        return load(suite)
    raise ConfigError(f"suite must be an evalnb.Suite or a path, not {type(suite).__name__}")


def _check_options(*, runs: int | None, concurrency: int, timeout: float | None, retries: int) -> None:
    if runs is not None and (not isinstance(runs, int) or runs < 0):
        raise ConfigError(f"runs must be a non-negative integer, got {runs!r}")
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ConfigError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    if not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries must be a non-negative integer, got {retries!r}")


def _is_mapping_of_agents(agent: Any) -> bool:
    return isinstance(agent, Mapping) and not hasattr(agent, "respond")


def _agent_name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or getattr(agent, "__qualname__", None) or type(agent).__name__)


def _build(agent: Any, label: str) -> Agent:
    try:
        return as_agent(agent)
    except TypeError as exc:
        raise ConfigError(f"{label}: {exc}") from exc


def _route(suite: Suite, agent: Any) -> tuple[dict[str, Agent], dict[str, str]]:
    """api contract: a single agent serves every case; a mapping routes by ``case.agent`` or ``"default"``.

    Returns the agents keyed by route id (``"default"`` for a single agent) and their display names.
    Raises ConfigError before anything runs when a case names an agent the mapping lacks (tasks spec rule 5).
    """
    if not _is_mapping_of_agents(agent):
        return {"default": _build(agent, "agent")}, {"default": _agent_name(agent)}
    routes = {str(k): _build(v, f"agent {k!r}") for k, v in agent.items()}
    missing: dict[str, list[str]] = {}
    for case in suite.cases:
        key = case.agent or "default"
        if key not in routes:
            missing.setdefault(key, []).append(case.id)
    if missing:
        detail = "; ".join(
            f"{k!r} (cases: {', '.join(v[:5])}{' ...' if len(v) > 5 else ''})" for k, v in missing.items()
        )
        raise ConfigError(
            f"no agent given for {detail}; agents given: {sorted(routes) or 'none'}. "
            "Pass a mapping with these ids (a case naming no agent uses 'default')."
        )
    return routes, {k: _agent_name(v) for k, v in agent.items()}


def _as_judge(judge: Any, cache: Any) -> Any:
    if judge is None:
        return None
    try:
        from evalnb.judges import as_judge
    except ImportError as exc:
        raise ConfigError(f"judges are not available in this installation: {exc}") from exc
    return as_judge(judge, cache=cache)


async def _preflight(agents: list[Any], judge: Any) -> None:
    """Run the ``preflight()`` of each distinct agent and of the judge, concurrently, before any case runs.

    api contract: an agent or judge that cannot be reached at start-up is a run that could not start (exit 2),
    not a column of degraded rows. Agents and judges without ``preflight`` (plain callables, the heuristic
    judge) have nothing to check. Every failure is reported, not only the first.
    """
    checks: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for label, obj in [("agent", a) for a in agents] + ([("judge", judge)] if judge is not None else []):
        check = getattr(obj, "preflight", None)
        if id(obj) in seen or check is None or not callable(check):
            continue
        seen.add(id(obj))
        checks.append((f"{label} {_agent_name(obj)}", check))
    if not checks:
        return
    outcomes = await asyncio.gather(*(_await_check(check) for _, check in checks), return_exceptions=True)
    problems: list[ConfigError] = []
    for (label, _), out in zip(checks, outcomes, strict=True):
        if isinstance(out, ConfigError):
            problems.append(out)
        elif isinstance(out, Exception):
            problems.append(ConfigError(f"{label} failed its start-up check: {type(out).__name__}: {out}"))
        elif isinstance(out, BaseException):
            raise out  # cancellation, Ctrl-C
    if len(problems) == 1:
        raise problems[0]
    if problems:
        lines = "\n".join(f"- {p.message}" for p in problems)
        raise ConfigError(f"the run cannot start:\n{lines}", code=problems[0].code)


async def _await_check(check: Any) -> None:
    out = check()
    if inspect.isawaitable(out):
        await out


def _needs_judge(suite: Suite) -> bool:
    return any(spec.judged for case in suite.cases for turn in case.turns for spec in turn.checks)


def _needs_data(suite: Suite) -> bool:
    return any(
        isinstance(spec, RowsCheck) and spec.reference_query is not None
        for case in suite.cases
        for turn in case.turns
        for spec in turn.checks
    )


def _open_data(suite: Suite, data: Any) -> Any:
    """Open the data source before anything runs (api contract); ConfigError when it is needed and absent."""
    if data is None and not _needs_data(suite):
        return None
    try:
        from evalnb.data import open_source
    except ModuleNotFoundError as exc:
        if exc.name not in ("evalnb.data", "evalnb"):
            raise
        raise ConfigError(
            "this suite needs a data source (cube referenceQuery) but evalnb.data is not available"
        ) from exc
    return open_source(suite, data)


def _judge_name(judge: Any) -> str | None:
    if judge is None:
        return None
    return str(getattr(judge, "label", None) or getattr(judge, "name", None) or type(judge).__name__)


def _checks_config(suite: Suite, plan: Callable[[Turn], TurnPlan]) -> dict[str, dict[str, Any]]:
    """Every distinct check (by check_id) and its options, so a saved run says what was checked."""
    out: dict[str, dict[str, Any]] = {}
    for case in suite.cases:
        for turn in case.turns:
            # The turn plans hold the check ids already (most were built while the cases ran).
            p = plan(turn)
            for spec, cid in zip(p.specs, p.ids, strict=True):
                if cid not in out:
                    out[cid] = {"check": spec.name, "options": spec.options()}
    return out


def _first_model(responses: Any) -> str | None:
    for resp in responses:
        if resp.model:
            return str(resp.model)
    return None


# --------------------------------------------------------------------------------------------------
# Sync agents on a dedicated pool
# --------------------------------------------------------------------------------------------------


def _sync_callable(agent: Any) -> bool:
    return isinstance(agent, CallableAgent) and not agent.is_async


class _PooledCallable:
    """A sync CallableAgent run on the runner's own pool (sized to ``concurrency``)."""

    def __init__(self, inner: CallableAgent, pool: ThreadPoolExecutor) -> None:
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


# --------------------------------------------------------------------------------------------------
# Running case runs
# --------------------------------------------------------------------------------------------------


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


class _Deadlines:
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


class _State:
    """Shared state of one run: routes, options, collected rows."""

    def __init__(
        self,
        *,
        suite: Suite,
        routes: dict[str, Agent],
        names: dict[str, str],
        judge: Any,
        data: Any,
        timeout: float | None,
        retries: int,
        workdir: Path | None,
        on_case: CaseCallback | None,
        remaining: dict[str, int],
    ) -> None:
        self.suite = suite
        self.routes = routes
        self.names = names
        self.single = len(routes) == 1 and "default" in routes and len(names) == 1
        self.judge = judge
        self.data = data
        self.timeout = timeout
        self.retries = retries
        self.fixed_workdir = workdir
        self.on_case = on_case
        self.remaining = remaining
        self.pool: ThreadPoolExecutor | None = None
        self.bar: Any = None
        self.deadlines: _Deadlines | None = None
        # (run rows, score rows as tuples in SCORES_COLUMNS order, mismatch rows) per (case id, run)
        self.slots: dict[
            tuple[str, int], tuple[list[dict[str, Any]], list[tuple[Any, ...]], list[dict[str, Any]]]
        ] = {}
        self.responses: dict[tuple[str, int, int], Response] = {}
        self.done: set[tuple[str, int]] = set()
        self.order = {c.id: i for i, c in enumerate(suite.cases)}
        self.meta_cache: dict[str, dict[str, Any]] = {}
        self._parent: Path | None = None
        self._free: list[Path] = []
        self._plans: dict[int, TurnPlan] = {}
        self._keep: list[Any] = []  # keeps the ids cached below unique while the run lasts
        self._bases: dict[str, dict[str, Any]] = {}
        self._options: dict[int, str] = {}
        self._made = 0
        self._by_case: dict[
            str, tuple[list[dict[str, Any]], list[tuple[Any, ...]], list[dict[str, Any]]]
        ] = {}
        self._ids: dict[tuple[str, ...], list[str]] = {}
        self._prompt_only: dict[int, bool] = {}
        self._workdir_free: dict[int, bool] = {}  # by id(case): the suite keeps its cases alive

    # -- working directories -------------------------------------------------------------------------

    def make_workdir(self) -> Path:
        if self.fixed_workdir is not None:
            self.fixed_workdir.mkdir(parents=True, exist_ok=True)
            return self.fixed_workdir
        if self._free:
            return self._free.pop()
        if self._parent is None:
            self._parent = Path(tempfile.mkdtemp(prefix="evalnb-"))
        self._made += 1
        path = self._parent / f"run-{self._made}"
        path.mkdir()
        return path

    def release_workdir(self, path: Path, case: Case, run: int, passed: bool) -> str | None:
        """Free a passing run's directory; keep a failed one and return its path for ``runs.workdir``.

        An empty directory left by a passing run is handed to the next run instead of being deleted: it is
        as fresh as a new one, and directory creation and removal cost more than the whole per-call
        overhead budget on some filesystems at thousands of runs.
        """
        if self.fixed_workdir is not None:
            return str(path)
        if passed:
            with os.scandir(path) as entries:
                empty = next(entries, None) is None
            if empty:
                self._free.append(path)
            else:
                shutil.rmtree(path, ignore_errors=True)
            return None
        # Kept for inspection, under a name that says which case run it was.
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case.id)[:80] or "case"
        target = path.with_name(f"{safe}-run{run + 1}")
        try:
            path.rename(target)
        except OSError:
            return str(path)
        return str(target)

    def needs_workdir(self, agent: Any, case: Case) -> bool:
        """Whether a case run must get its directory before it starts.

        A directory nobody can see need not exist while the run lasts: the agent only gets the prompt (a plain
        callable that does not take the Request), and every check of the case is a built-in that never looks
        at the working directory. Such a run gets its directory only when it fails and the directory is kept
        (:meth:`keep_unused_workdir`), so ``runs.workdir`` still names a directory that exists.
        """
        if self.fixed_workdir is not None:
            return True
        prompt_only = self._prompt_only.get(id(agent))
        if prompt_only is None:
            inner = agent.inner if isinstance(agent, _PooledCallable) else agent
            prompt_only = self._prompt_only[id(agent)] = (
                isinstance(inner, CallableAgent) and not inner.wants_request
            )
        if not prompt_only:
            return True
        free = self._workdir_free.get(id(case))
        if free is None:
            free = self._workdir_free[id(case)] = all(self.plan(turn).workdir_free for turn in case.turns)
        return not free

    def keep_unused_workdir(self, case: Case, run: int) -> str:
        """The kept directory of a failed run that never needed one: empty, as the run left it untouched."""
        if self._parent is None:
            self._parent = Path(tempfile.mkdtemp(prefix="evalnb-"))
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case.id)[:80] or "case"
        target = self._parent / f"{safe}-run{run + 1}"
        try:
            target.mkdir()
        except OSError:
            # The name is taken (two case ids with the same safe form): a fresh run directory, as when
            # renaming a used one fails.
            self._made += 1
            target = self._parent / f"run-{self._made}"
            target.mkdir()
        return str(target)

    def cleanup(self) -> None:
        for path in self._free:
            shutil.rmtree(path, ignore_errors=True)
        self._free.clear()
        if self._parent is not None:
            with contextlib.suppress(OSError):
                self._parent.rmdir()  # only when every run passed (nothing kept)

    # -- one case run --------------------------------------------------------------------------------

    def case_meta(self, case: Case) -> dict[str, Any]:
        base = self.meta_cache.get(case.id)
        if base is None:
            base = {"name": case.name, "category": case.category, **case.meta}
            self.meta_cache[case.id] = base
        return base

    async def run_case(self, case: Case, run: int) -> None:
        route = case.agent if (case.agent and not self.single) else "default"
        agent = self.routes[route]
        agent_name = self.names.get(route, route)
        workdir = self.make_workdir() if self.needs_workdir(agent, case) else None
        conversation: list[dict[str, str]] = []
        run_rows: list[dict[str, Any]] = []
        score_rows: list[tuple[Any, ...]] = []
        mismatch_rows: list[dict[str, Any]] = []
        failed_turn = False
        all_passed = True
        n_turns = len(case.turns)
        for t, turn in enumerate(case.turns):
            if failed_turn:
                # A conversation cannot go on after a turn without an answer: later turns are skipped.
                run_rows.append(self._run_row(case, run, t, turn, None, "skipped", None, None, agent_name))
                score_rows += self._flat_scores(
                    case, run, t, turn, "skipped", "skipped: an earlier turn degraded"
                )
                continue
            # The conversation so far (earlier file history, prompts and actual answers), then this turn's
            # own file history (cube `history`), then the prompt itself.
            plan = self.plan(turn)
            history = turn_history(conversation, plan.history)
            request = Request(
                prompt=turn.prompt,
                history=history,
                case=case.id,
                turn=t,
                run=run,
                workdir=workdir,
                suite=self.suite.name,
                case_meta=dict(self.case_meta(case)),
            )
            response, error, latency = await self.call(agent, request)
            if response is None:
                failed_turn = True
                all_passed = False
                run_rows.append(
                    self._run_row(case, run, t, turn, None, "degraded", error, latency, agent_name)
                )
                score_rows += self._flat_scores(
                    case, run, t, turn, "degraded", f"not checked: the agent failed ({error})"
                )
                continue
            self.responses[(case.id, run, t)] = response
            ctx = CheckContext(
                suite=self.suite,
                case=case,
                turn=turn,
                turn_index=t,
                run=run,
                request=request,
                response=response,
                workdir=workdir,
                judge=self.judge,
                data=self.data,
                conversation=history,
            )
            scores = await score_turn(turn, ctx, plan=plan)
            status = "passed"
            base = self.case_base(case)
            for i, score in enumerate(scores):
                row_status = _row_status(score)
                score_rows.append(self._score_row(base, run, t, plan, i, score, row_status))
                if row_status == "degraded":
                    status = "degraded"
                elif row_status == "failed" and status == "passed":
                    status = "failed"
                if score.details and plan.rows[i]:
                    mismatch_rows += self._mismatches(case, run, t, score.details)
            if status != "passed":
                all_passed = False
            run_rows.append(self._run_row(case, run, t, turn, response, status, None, latency, agent_name))
            if t + 1 < n_turns:  # only a later turn reads the conversation
                conversation = after_turn(history, turn.prompt, response.text or "")
        if workdir is not None:
            kept = self.release_workdir(workdir, case, run, all_passed)
        else:
            kept = None if all_passed else self.keep_unused_workdir(case, run)
        for row in run_rows:
            row["workdir"] = kept
        await self.finish(case, run, run_rows, score_rows, mismatch_rows)

    async def finish(
        self,
        case: Case,
        run: int,
        run_rows: list[dict[str, Any]],
        score_rows: list[tuple[Any, ...]],
        mismatch_rows: list[dict[str, Any]],
    ) -> None:
        self.slots[(case.id, run)] = (run_rows, score_rows, mismatch_rows)
        self.done.add((case.id, run))
        if self.bar is not None:
            self.bar.update(1)
        if self.on_case is not None:
            acc = self._by_case.setdefault(case.id, ([], [], []))
            acc[0].extend(run_rows)
            acc[1].extend(score_rows)
            acc[2].extend(mismatch_rows)
            self.remaining[case.id] -= 1
            if self.remaining[case.id] == 0:
                rr, ss, mm = self._by_case.pop(case.id)
                args = [case.id, _public(rr), [dict(zip(SCORES_COLUMNS, row, strict=True)) for row in ss]]
                if _positional_arity(self.on_case) >= 4:
                    args.append(_public(mm))  # the store keeps a case's mismatch rows with the case
                out = self.on_case(*args)
                if inspect.isawaitable(out):
                    # Awaited in place: a store write finishes before this slot takes the next case run.
                    await out

    def skip_run(self, case: Case, run: int, reason: str) -> None:
        name = (
            self.names.get(case.agent or "default", "default") if not self.single else self.names["default"]
        )
        run_rows: list[dict[str, Any]] = []
        score_rows: list[tuple[Any, ...]] = []
        for t, turn in enumerate(case.turns):
            run_rows.append(self._run_row(case, run, t, turn, None, "skipped", None, None, name))
            score_rows += self._flat_scores(case, run, t, turn, "skipped", reason)
        self.slots[(case.id, run)] = (run_rows, score_rows, [])

    async def call(self, agent: Agent, request: Request) -> tuple[Response | None, str | None, float | None]:
        """One agent call with timeout and retries; returns (response, error, latency_ms)."""
        attempt = 0
        while True:
            t0 = time.perf_counter()
            try:
                if self.timeout is None:
                    response = await agent.respond(request)
                elif self.deadlines is not None:
                    response = await self.deadlines.run(agent.respond(request))
                elif _timeout_cm is not None:
                    async with _timeout_cm(self.timeout):
                        response = await agent.respond(request)
                else:  # pragma: no cover - Python 3.10
                    response = await asyncio.wait_for(agent.respond(request), self.timeout)
                if not isinstance(response, Response):
                    response = to_response(response)
                latency = (time.perf_counter() - t0) * 1000.0
                if response.latency_ms is None:
                    response.latency_ms = latency
                return response, None, response.latency_ms
            except (asyncio.TimeoutError, TimeoutError):
                latency = (time.perf_counter() - t0) * 1000.0
                error = f"TimeoutError: the agent did not answer within {self.timeout:g}s"
                transient, wait_hint = True, None
            except ConfigError:
                raise  # a configuration problem (e.g. a strict Replay miss) stops the run, it is not a row
            except AgentError as exc:
                latency = (time.perf_counter() - t0) * 1000.0
                error = f"{type(exc).__name__}: {exc}"
                transient, wait_hint = exc.transient, getattr(exc, "retry_after", None)
            except Exception as exc:
                latency = (time.perf_counter() - t0) * 1000.0
                error = f"{type(exc).__name__}: {exc}"
                transient, wait_hint = False, None
            if not transient or attempt >= self.retries:
                if attempt:
                    error += f" (after {attempt + 1} attempts)"
                return None, error, latency
            await asyncio.sleep(_backoff(attempt, wait_hint))
            attempt += 1

    # -- rows ----------------------------------------------------------------------------------------

    def _run_row(
        self,
        case: Case,
        run: int,
        t: int,
        turn: Turn,
        response: Response | None,
        status: str,
        error: str | None,
        latency: float | None,
        agent_name: str,
    ) -> dict[str, Any]:
        usage = (response.usage or {}) if response is not None else {}
        r = response
        return {
            "suite": self.suite.name,
            "case_id": case.id,
            "case_name": case.name,
            "category": case.category,
            "run": run,
            "turn": t,
            "prompt": turn.prompt,
            "expected": turn.expected,
            "response": r.text if r else None,
            "stdout": r.stdout if r else None,
            "exit_code": r.exit_code if r else None,
            "intent": r.intent if r else None,
            "refusal": r.refusal if r else None,
            "insight": r.insight if r else None,
            "context": (r.context if r and r.context is not None else turn.context),
            "status": status,
            "error": error,
            "latency_ms": latency,
            "model": r.model if r else None,
            "agent": agent_name,
            "workdir": None,
            "prompt_tokens": _tokens(usage, "prompt_tokens", "input_tokens"),
            "completion_tokens": _tokens(usage, "completion_tokens", "output_tokens"),
        }

    def plan(self, turn: Turn) -> TurnPlan:
        plan = self._plans.get(id(turn))
        if plan is None:
            # Built once per turn for this run; the suite is not expected to change while it runs.
            plan = self._plans[id(turn)] = TurnPlan(turn, self.options_json, self._ids)
            self._keep.append(turn)
        return plan

    def options_json(self, spec: Any) -> str:
        # Suites often share one spec object between cases: its options are serialised once per run.
        hit = self._options.get(id(spec))
        if hit is None:
            hit = self._options[id(spec)] = _options_json(spec)
            self._keep.append(spec)
        return hit

    def case_base(self, case: Case) -> dict[str, Any]:
        base = self._bases.get(case.id)
        if base is None:
            base = self._bases[case.id] = {
                "suite": self.suite.name,
                "case_id": case.id,
                "case_name": case.name,
                "category": case.category,
            }
        return base

    def _score_row(
        self, base: dict[str, Any], run: int, t: int, plan: TurnPlan, i: int, score: Score, status: str
    ) -> tuple[Any, ...]:
        # A tuple in SCORES_COLUMNS order: tens of thousands of these are built per large run, and the frame
        # is built from them by one transpose (results.frame_from_tuples).
        usage = score.usage
        return (
            base["suite"],
            base["case_id"],
            base["case_name"],
            base["category"],
            run,
            t,
            plan.names[i],
            plan.ids[i],
            score.value,
            score.passed,
            status,
            score.reason,
            score.judge,
            plan.options[i],
            _tokens(usage, "prompt_tokens", "input_tokens") if usage else None,
            _tokens(usage, "completion_tokens", "output_tokens") if usage else None,
            score.cost,
        )

    def _flat_scores(
        self, case: Case, run: int, t: int, turn: Turn, status: str, reason: str
    ) -> list[tuple[Any, ...]]:
        # Checks of a turn without an answer: recorded (so every run has the same checks) but never a pass.
        passed = False if status == "degraded" else None
        score = Score(
            value=None, passed=passed, reason=reason, status="degraded" if status == "degraded" else "ok"
        )
        plan = self.plan(turn)
        base = self.case_base(case)
        return [self._score_row(base, run, t, plan, i, score, status) for i in range(len(plan.specs))]

    def _mismatches(
        self, case: Case, run: int, t: int, details: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        rows = []
        for d in details:
            tol = d.get("tolerance")
            rows.append(
                {
                    "suite": self.suite.name,
                    "case_id": case.id,
                    "run": run,
                    "turn": t,
                    "row": d.get("row"),
                    "key": d.get("key"),
                    "expected": mismatch_value(d.get("expected")),
                    "actual": mismatch_value(d.get("actual")),
                    "tolerance": tol if isinstance(tol, str) or tol is None else json.dumps(tol, default=str),
                    "reason": d.get("reason"),
                }
            )
        return rows


def _row_status(score: Score) -> str:
    # api contract: a score row's status is passed, failed, degraded or skipped; a check that was not
    # checked (after a cube intent mismatch) is skipped, with the reason saying why.
    if score.status == "ok":
        if score.passed is None:
            return "degraded"  # no verdict from a check that says it ran: it cannot pass, and must say so
        return "passed" if score.passed else "failed"
    return "skipped" if score.status == "not_checked" else score.status


def _positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` takes (``*args`` counts as many)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 3
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 1_000
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _public(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def _options_json(spec: Any) -> str:
    return json.dumps(spec.options(), sort_keys=True, default=str)


def _tokens(usage: Mapping[str, Any], *names: str) -> int | None:
    for n in names:
        v = usage.get(n)
        if v is not None:
            try:
                return int(v)
            except (TypeError, ValueError):
                return None
    return None


def _backoff(attempt: int, hint: Any) -> float:
    """Exponential backoff with jitter; an agent's ``retry_after`` hint is a lower bound."""
    base = min(RETRY_MAX, RETRY_BACKOFF * (2**attempt))
    delay = base * random.uniform(0.5, 1.5)
    if isinstance(hint, (int, float)) and hint > 0:
        delay = max(delay, float(hint))
    return float(delay)


# --------------------------------------------------------------------------------------------------
# Scoring one turn
# --------------------------------------------------------------------------------------------------


class TurnPlan:
    """What scoring a turn needs, computed once per turn and run call (ids, names, option JSON, the
    scoring function of each built-in check, whether any check may look at the working directory)."""

    __slots__ = (
        "direct",
        "has_intent",
        "history",
        "ids",
        "names",
        "options",
        "rows",
        "specs",
        "workdir_free",
    )

    def __init__(
        self,
        turn: Turn,
        options_json: Callable[[Any], str] | None = None,
        ids_cache: dict[tuple[str, ...], list[str]] | None = None,
    ) -> None:
        self.specs = list(turn.checks)
        self.names = [spec.name for spec in self.specs]
        key = tuple(self.names)
        # Check ids depend only on the sequence of check names (api contract: `regex`, `regex#2`), and
        # turns of a suite mostly share one: computed once per distinct sequence.
        ids = ids_cache.get(key) if ids_cache is not None else None
        if ids is None:
            ids = turn.check_ids()
            if ids_cache is not None:
                ids_cache[key] = ids
        self.ids = ids
        dump = options_json or _options_json
        self.options = [dump(spec) for spec in self.specs]
        self.has_intent = any(isinstance(spec, IntentCheck) for spec in self.specs)
        self.rows = [isinstance(spec, RowsCheck) for spec in self.specs]
        self.history = [m.model_dump() for m in turn.history]
        # Each synchronous-path check's scoring function, looked up once; None where score_turn takes
        # another path (custom checks) or the type is unknown (score_turn then reports the lookup error).
        self.direct: list[BuiltinFn | None] = []
        for spec in self.specs:
            fn = None
            if not isinstance(spec, CustomCheck):
                with contextlib.suppress(KeyError):
                    fn = registry.get(spec.type)
            self.direct.append(fn)
        safe = _workdir_free_checks()
        self.workdir_free = all(fn is not None and fn in safe for fn in self.direct)


@functools.lru_cache(maxsize=1)
def _workdir_free_checks() -> frozenset[Any]:
    """The built-in checks that never look at the working directory (nor at the Request that names it).

    By function, not by type name: a check registered over a built-in name may well use the directory.
    """
    from evalnb.checks import text

    return frozenset(
        {
            text.regex_check,
            text.exact_match_check,
            text.partial_match_check,
            text.citations_check,
            text.retrieval_query_check,
            text.retrieval_result_check,
        }
    )


async def score_turn(turn: Turn, ctx: CheckContext, *, plan: TurnPlan | None = None) -> list[Score]:
    """Score every check of ``turn`` on ``ctx.response``, in the turn's check order.

    A check that raises becomes a degraded Score with the exception; a cube ``intent`` mismatch makes the
    turn's other checks ``not_checked`` (cube spec: the case fails on intent, its other checks are moot).

    Example:
        >>> scores = await score_turn(turn, ctx)
        >>> [s.passed for s in scores]
        [True, False]
    """
    specs = plan.specs if plan is not None else list(turn.checks)
    has_intent = plan.has_intent if plan is not None else any(isinstance(x, IntentCheck) for x in specs)
    direct = plan.direct if plan is not None else None
    scores: list[Score | None] = [None] * len(specs)
    intent_failed = False
    if has_intent:
        for i, spec in enumerate(specs):
            if isinstance(spec, IntentCheck):
                s = await _score_one(spec, ctx)
                scores[i] = s
                if s.passed is False:
                    intent_failed = True
    pending: list[tuple[int, Any]] = []
    for i, spec in enumerate(specs):
        if scores[i] is not None:
            continue
        if intent_failed:
            scores[i] = Score.not_checked("not checked: the intent did not match")
            continue
        if isinstance(spec, CustomCheck):
            pending.append((i, _score_one(spec, ctx)))
            continue
        try:
            fn = direct[i] if direct is not None else None
            out = (fn if fn is not None else registry.get(spec.type))(spec, ctx)
        except Exception as exc:
            scores[i] = _raised(spec, exc)
            continue
        if isinstance(out, Score):
            scores[i] = out
        elif inspect.isawaitable(out):
            pending.append((i, _guard(spec, out)))
        else:
            scores[i] = registry.coerce_score(out)
    if pending:
        # Awaitable checks (judges, user async checks) of one turn run concurrently.
        done = await asyncio.gather(*(p[1] for p in pending))
        for (i, _), s in zip(pending, done, strict=True):
            scores[i] = s
    return [s if s is not None else Score.degraded("check produced no score") for s in scores]


def _raised(spec: Any, exc: BaseException) -> Score:
    return Score.degraded(f"check {spec.name} raised {type(exc).__name__}: {exc}")


async def _guard(spec: Any, awaitable: Any) -> Score:
    try:
        out = await awaitable
    except Exception as exc:
        return _raised(spec, exc)
    return out if isinstance(out, Score) else registry.coerce_score(out)


async def _score_one(spec: Any, ctx: CheckContext) -> Score:
    try:
        if isinstance(spec, CustomCheck):
            if registry.get_user(spec.check) is None:
                return Score.degraded(
                    f"no check registered as {spec.check!r}; register it with evalnb.checks.register"
                )
            score = await registry.call_user(spec.check, ctx.turn, ctx.response, dict(spec.settings))
            if spec.threshold is not None and score.status == "ok" and score.value is not None:
                # published dataset schema: a custom evaluator passes when its score >= threshold
                passed = score.value >= spec.threshold
                reason = f"{score.reason} (score {score.value:g}, threshold {spec.threshold:g})".lstrip()
                score = dataclasses.replace(score, passed=passed, reason=reason)
            return score
        out = registry.get(spec.type)(spec, ctx)
        if inspect.isawaitable(out):
            out = await out
        return out if isinstance(out, Score) else registry.coerce_score(out)
    except Exception as exc:
        return _raised(spec, exc)


# --------------------------------------------------------------------------------------------------
# Loops, threads, interrupts, progress
# --------------------------------------------------------------------------------------------------


def _run_in_new_loop(make: Callable[[], Any]) -> Result:
    """Run on a fresh loop; Ctrl-C cancels the run task, which returns a partial Result (not an exception)."""
    import signal

    loop = asyncio.new_event_loop()
    task = loop.create_task(make())
    handler_set = False
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        task.cancel()

    if threading.current_thread() is threading.main_thread():
        try:
            loop.add_signal_handler(signal.SIGINT, on_sigint)
            handler_set = True
        except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - Windows
            pass
    try:
        result: Result = loop.run_until_complete(task)
        return result
    except asyncio.CancelledError:
        if interrupted:
            # Ctrl-C before the cases started (preflight, opening the data): an interrupt, not a cancellation.
            raise KeyboardInterrupt from None
        raise
    finally:
        if handler_set:
            loop.remove_signal_handler(signal.SIGINT)
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _run_in_thread(make: Callable[[], Any]) -> Result:
    """Run on a new loop in a worker thread (inside Jupyter); Ctrl-C in the waiting thread cancels the run."""
    import signal

    box: dict[str, Any] = {}
    ready = threading.Event()
    finished = threading.Event()

    def target() -> None:
        loop = asyncio.new_event_loop()
        try:
            task = loop.create_task(make())
            box["loop"], box["task"] = loop, task
            ready.set()
            box["result"] = loop.run_until_complete(task)
        except BaseException as exc:
            box["error"] = exc
        finally:
            ready.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
                finished.set()

    # The waiting thread is told the run is over by an Event, not by Thread.join: a KeyboardInterrupt that
    # lands inside Thread.join(timeout) makes CPython (3.11) mark the still-running thread as stopped, so a
    # later join() returned at once and the partial result was lost (KeyError: 'result').
    # A running loop may own SIGINT (asyncio.run cancels its main task and raises nothing while this thread
    # blocks): Ctrl-C must raise here, as it does in Jupyter, so the default handler is put back meanwhile.
    previous = None
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, TypeError):
            previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupted = False
    thread = threading.Thread(target=target, name="evalnb-run", daemon=True)
    thread.start()
    try:
        try:
            while not finished.wait(0.1):
                pass
        except KeyboardInterrupt:
            interrupted = True
            ready.wait()
            if "task" in box:
                box["loop"].call_soon_threadsafe(box["task"].cancel)
            finished.wait()  # a second Ctrl-C here gives up on the partial result
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    thread.join()
    if "error" in box:
        if interrupted and isinstance(box["error"], asyncio.CancelledError):
            raise KeyboardInterrupt from None
        raise box["error"]
    result: Result = box["result"]
    return result


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _progress_bar(progress: bool | None, *, total: int, desc: str) -> Any:
    """A ``tqdm.auto`` bar when asked, or when ``progress`` is None on a terminal or in a notebook."""
    if progress is False or total == 0:
        return None
    if progress is None and not _interactive():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    # delay: short runs finish before a bar would flash on screen.
    return tqdm(total=total, desc=desc, unit="run", delay=0.5 if progress is None else 0, leave=False)
