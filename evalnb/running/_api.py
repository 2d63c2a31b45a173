"""``run`` and ``run_async``: a suite against an agent, from the start-up checks to the Result.

The flow: check the options, build the agents, judge and recorders, run the start-up checks, open the data
source; then the executor runs the case runs (lazily planned: suite order, each case ``runs`` times) and hands
each record to every recorder as it finishes; at the end the :class:`ResultRecorder` builds the Result and the
recorders finish. Every case runs ``runs`` times (the case's own count unless ``runs=`` overrides it); case
runs go in parallel up to ``concurrency``. Failures are data (STYLE habit 5): an agent that raises, times out
or returns something unusable makes its run ``degraded`` with the exception in ``error``, and the run goes on.

Example::

    result = evalnb.run(evalnb.examples.path("tasks"), lambda prompt: "summary: ...", runs=1)
    result.cases[["case_id", "status"]]
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import inspect
import time
from collections.abc import Awaitable, Callable, Container, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from evalnb import _gc
from evalnb._costs import price_table
from evalnb.errors import ConfigError, RunError
from evalnb.results._meta import RunMeta
from evalnb.results._recorders import Prior, Recorder, ResultRecorder, RunInfo
from evalnb.running import _setup as setup
from evalnb.running._budget import Budget, BudgetRule, Spend, check_budget
from evalnb.running._case_run import Plans, RunJob, skipped
from evalnb.running._done import Finished
from evalnb.running._executors import as_executor
from evalnb.running._loops import progress_bar, run_blocking
from evalnb.running._options import RunOptions, field_names
from evalnb.running._stopping import StopRule, as_stop_rule, run_in_batches
from evalnb.running._stops import Stops
from evalnb.running._workdirs import KEEP_FAILED, KEEP_RUNS, run_name

if TYPE_CHECKING:
    from os import PathLike
    from pathlib import Path

    from evalnb._costs import PriceTable
    from evalnb.agents import Agent
    from evalnb.judges import Judge
    from evalnb.results import Result
    from evalnb.results._records import CaseRunRecord
    from evalnb.store._recorder import StoreRecorder
    from evalnb.suite import Case, Suite
    from evalnb.typing import AgentLike, DataLike, JudgeLike, StoreLike

__all__ = ["SKIPPED_CAP", "RunOptions", "run", "run_async"]

SKIPPED_CAP = 100_000
"""An interrupted run records at most this many case runs it never started as skipped rows; the rest are
counted in ``meta.not_started`` (a run planned with millions of case runs must not fill memory on Ctrl-C)."""


def run(
    suite: Suite | str | PathLike[str] | None,
    agent: AgentLike,
    *,
    judge: JudgeLike = None,
    data: DataLike = None,
    runs: int | None = None,
    concurrency: int = 8,
    timeout: float | None = 120.0,
    retries: int = 2,
    cache: Any = None,
    progress: bool | None = None,
    workdir: str | PathLike[str] | None = None,
    create_workdir: bool = False,
    store: StoreLike = None,
    version: str | None = None,
    replace: bool = False,
    resume: str | None = None,
    executor: Any = None,
    preflight: bool = True,
    recorders: Sequence[Recorder] = (),
    prices: Any = None,
    budget: Budget | None = None,
    baseline: Any = None,
    stop: str | StopRule | None = None,
    margin: Any = 0.0,
    confidence: float = 0.95,
    seed: int = 0,
    options: RunOptions | None = None,
) -> Result:
    """Run ``suite`` against ``agent`` and return a :class:`~evalnb.results.Result`.

    Works in scripts and inside a running Jupyter event loop (the run then gets its own loop in a worker
    thread). Ctrl-C returns a Result holding what finished, the rest marked ``skipped``.

    Args:
        suite: a Suite or a path (loaded with ``evalnb.load``); ``None`` with ``resume`` (the stored suite).
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
        workdir: ``None`` gives each run a fresh temporary directory (made only when the agent or a check uses
            it); a path makes every run use that directory, which must exist.
        create_workdir: with ``workdir``: create the directory (and its parents) when it does not exist.
        store: an ``evalnb.Store`` (or a path/URL for one) to save the result into, each case run as it
            finishes.
        version: the version label to save under. A label the suite already has in the store is refused
            before anything runs (``StoreError`` ``VERSION_EXISTS``) unless ``replace``.
        replace: with ``version``: replace the suite's run of that label. The old run is deleted when the new
            one completes, so an interrupted run leaves it in place (resuming remembers ``replace``).
        resume: the run id of an interrupted stored run to continue: only case runs not stored yet run.
        executor: ``None`` or ``"local"`` runs case runs on this process's event loop; another registered
            executor's name or an executor object runs them elsewhere, with the same results and recorders.
        preflight: before any case runs (and before a store writes anything), check once per agent and for the
            judge that they can be reached: an OpenAI-compatible or HTTP endpoint accepts a connection, a
            command's program exists, a replay cassette is readable. ``False`` skips these checks.
        recorders: more recorders to hand every record to (see ``evalnb.running.Recorder``).
        prices: what calls cost, USD per 1M tokens: a mapping model -> ``{"input", "output", "cached_input"}``
            (optionally ``tiers`` by prompt length) or the path of a TOML/YAML file of that shape
            (docs/costs.md). Agent and judge calls get a ``cost``; a model without a price costs ``NA``, never
            0, and the run warns once (``evalnb.errors.CostWarning``) naming the models it could not price.
        budget: an ``evalnb.Budget(cost=USD, tokens=N)``: once the spent amount plus what the case runs in
            flight may spend would pass it, no new case run starts; the rest are ``skipped`` with the reason
            and ``result.budget_exhausted`` is true (a stored run stays resumable).
        baseline: with ``stop="decided"``: the Result to decide against, or a stored version label or run id
            (of ``store``).
        stop: ``"decided"``: the sequential gate (docs/comparison.md, "Deciding with fewer cases"): the cases
            run in a seeded random order in batches of at most 5% of the suite, and the run stops once every
            gating check is decided ``worse`` or ``not worse`` against ``baseline`` (anytime-valid); the case
            runs not run are ``skipped`` with the reason (``result.stopped_early``, ``result.calls_saved``). A
            ``evalnb.running.StopRule`` object is used as it is. ``None``: every case runs (resuming a run that
            ran the sequential gate, it goes on as it started).
        margin: with ``stop="decided"``: how much worse a check may get (as for ``evalnb.compare``).
        confidence: with ``stop="decided"``: one-sided confidence of the gate, over every check.
        seed: with ``stop="decided"``: seed of the order the cases run in.
        options: all of the above as one :class:`~evalnb.running.RunOptions` (then give none of them as
            keywords): the one object a script or the CLI passes around.

    Raises:
        TypeError: for ``options=`` beside keywords that set options too.
        ConfigError: when the run cannot start (unknown agent id, missing data source, bad option, an agent
            or judge that cannot be reached at start-up).

    Example::

        result = evalnb.run(suite, lambda prompt: "Paris", runs=1, progress=False)
        result.exit_code        # 0
    """
    the = RunOptions.of(options, _keywords(locals()))
    result: Result = run_blocking(lambda: _run(suite, agent, the))
    return _warned(result)


async def run_async(
    suite: Suite | str | PathLike[str] | None,
    agent: AgentLike,
    *,
    judge: JudgeLike = None,
    data: DataLike = None,
    runs: int | None = None,
    concurrency: int = 8,
    timeout: float | None = 120.0,
    retries: int = 2,
    cache: Any = None,
    progress: bool | None = None,
    workdir: str | PathLike[str] | None = None,
    create_workdir: bool = False,
    store: StoreLike = None,
    version: str | None = None,
    replace: bool = False,
    resume: str | None = None,
    executor: Any = None,
    preflight: bool = True,
    recorders: Sequence[Recorder] = (),
    prices: Any = None,
    budget: Budget | None = None,
    baseline: Any = None,
    stop: str | StopRule | None = None,
    margin: Any = 0.0,
    confidence: float = 0.95,
    seed: int = 0,
    options: RunOptions | None = None,
) -> Result:
    """The async form of :func:`run` (same arguments).

    Example::

        result = await evalnb.run_async(suite, my_async_agent, concurrency=32)
    """
    return _warned(await _run(suite, agent, RunOptions.of(options, _keywords(locals()))))


def _keywords(given: dict[str, Any]) -> dict[str, Any]:
    """The run options among a ``run`` call's arguments (its keywords are the fields of RunOptions)."""
    return {name: given[name] for name in field_names()}


@dataclass
class _Setup:
    """What a run sets up before its first case run: the suite, its agents and judge, where it records."""

    suite: Suite
    options: RunOptions  # with the run count a resumed run had
    rule: StopRule | None
    fixed: Path | None
    executor: Any
    judge: Judge | None
    table: PriceTable | None
    stored: StoreRecorder | None
    routes: dict[str, Agent]
    names: dict[str, str]


async def _set_up(suite: Suite | str | PathLike[str] | None, agent: AgentLike, options: RunOptions) -> _Setup:
    """Check the options, build the agents, judge and store recorder, run the start-up checks: everything that
    stops a run before anything is called or saved."""
    o = options
    setup.check_options(runs=o.runs, concurrency=o.concurrency, timeout=o.timeout, retries=o.retries)
    rule: StopRule | None = as_stop_rule(
        suite, baseline=o.baseline, stop=o.stop, margin=o.margin, confidence=o.confidence, seed=o.seed,
        store=o.store, resume=o.resume,
    )  # fmt: skip
    fixed = setup.fixed_workdir(o.workdir, create=o.create_workdir)
    the_executor = as_executor(o.executor)
    the_judge = setup.make_judge(o.judge, o.cache)
    table = price_table(o.prices)
    if o.budget is not None and not isinstance(o.budget, Budget):
        raise ConfigError(
            f"budget= takes an evalnb.Budget, not {type(o.budget).__name__}", code="INVALID_VALUE"
        )
    stored = None
    if o.store is not None or o.resume is not None:
        from evalnb.store._recorder import StoreRecorder

        stored = StoreRecorder(o.store, version=o.version, resume=o.resume, replace=o.replace)
    if stored is not None and stored.resuming:
        the_suite = stored.resumed_suite(None if suite is None else setup.as_suite(suite))
        if o.runs is None:
            o = dataclasses.replace(o, runs=stored.resumed_runs())
    else:
        the_suite = setup.as_suite(suite)
    if stored is not None:
        stored.claim(the_suite)  # a version label the suite already has stops the run before any call
    routes, names = setup.route(the_suite, agent)
    setup.check_dependencies(the_suite)
    check_budget(o.budget, table, list(routes.values()), the_judge)
    if o.preflight:
        # README.md, Use it in CI: an unreachable agent or judge stops the run before a store writes anything; a judge
        # the suite never calls need not be reachable.
        await setup.preflight(list(routes.values()), the_judge if setup.needs_judge(the_suite) else None)
    return _Setup(the_suite, o, rule, fixed, the_executor, the_judge, table, stored, routes, names)


def _begin_meta(s: _Setup, started_at: str) -> RunMeta:
    """The meta a run starts with (what a recorder's ``begin`` sees): who ran, with what, which checks."""
    recorded = s.options.recorded()
    if s.table:
        recorded["priced_models"] = sorted(s.table.models)
    if s.stored is not None and s.stored.replace:
        recorded["replace"] = True
    return RunMeta(
        agent=s.names.get("default") if len(s.names) == 1 else s.names,
        model=None,
        judge=setup.judge_name(s.judge),
        started_at=started_at,
        options=recorded,
        checks=_checks_config(s.suite),
        executor=s.executor.name if s.executor.name != "local" else None,
        # what the report says of the working directories kept (running/_workdirs.py)
        workdirs={"keep_failed": KEEP_FAILED, "keep_runs": KEEP_RUNS} if s.fixed is None else None,
    ).replace(**_design(s.rule))  # a stop rule's design is stored from the start: a resumed run reads it


async def _run(suite: Suite | str | PathLike[str] | None, agent: AgentLike, options: RunOptions) -> Result:
    """:func:`run_async` without its warning (``run`` says it in the caller's thread)."""
    started = time.perf_counter()
    started_at = datetime.now(timezone.utc).isoformat()
    _gc.no_collection_at_exit()  # the interpreter's exit skips collecting the Result, pandas and pyarrow
    # A full collection scans the suite: at a million cases one took 1.5 s, and the store's imports at set-up
    # made two (evalnb/_gc.py). Set-up builds nothing cyclic; the job runs with what exists before it frozen.
    with _gc.paused():
        s = await _set_up(suite, agent, options)
    source = setup.open_data(s.suite, options.data)
    try:
        with _gc.frozen():
            return await _run_job(s, source, started, started_at)
    finally:
        if source is not None and source is not options.data:
            source.close()  # opened from a path, URL or DataFrames for this run; a caller's Source stays open


async def _run_job(s: _Setup, source: Any, started: float, started_at: str) -> Result:
    """The case runs of a set-up run, each record handed to every recorder; the Result at the end."""
    o = s.options
    all_recorders: list[Any] = [
        ResultRecorder(s.suite),
        *([s.stored] if s.stored is not None else []),
        *o.recorders,
    ]
    collector: ResultRecorder = all_recorders[0]
    meta = _begin_meta(s, started_at)
    facts: dict[str, Any] = {}  # what the run learns as it goes (the stop rules', the executor's reports)
    job = RunJob(
        suite=s.suite,
        routes=s.routes,
        names=s.names,
        judge=s.judge,
        data=source,
        timeout=o.timeout,
        retries=o.retries,
        workdir=s.fixed,
        concurrency=o.concurrency,
        run_name=run_name(),
        prices=s.table,
    )
    spend = Spend()
    stops = Stops([spend, *([BudgetRule(o.budget, spend)] if o.budget is not None else [])])
    prepare = getattr(s.executor, "prepare", None)
    if prepare is not None:
        # A cluster that cannot be reached, or an agent that cannot be sent to it, stops the run before a
        # recorder (a store) writes anything.
        await _maybe(prepare(job))
    planned = sum(case.runs if o.runs is None else o.runs for case in s.suite.cases)
    for r in all_recorders:
        await _maybe(r.begin(RunInfo(suite=s.suite, meta=meta, planned=planned)))
    for r in all_recorders:
        attach = getattr(r, "attach", None)
        if attach is not None and r is not collector:
            attach(collector)  # it takes the rows the collector gathers (results/_recorders.py)
    prior = _prior(all_recorders)
    # what finished (a resumed run's stored case runs too), a bit per case run (running/_done.py)
    done = Finished(collector.positions, prior.keys if prior is not None else ())
    first_model: list[str] = []
    sink = _sink(all_recorders, collector, done, stops, s.rule, first_model)
    bar = progress_bar(o.progress, total=planned - len(done), desc=s.suite.name)
    try:
        try:
            interrupted, failed = await _run_plan(
                s.rule, stops, s.executor, job, o.runs, done, _counted(sink, bar), facts, all_recorders, prior
            )
        finally:
            if bar is not None:
                bar.close()
        collector.unsubscribe()  # the case runs that ran are the recorders'; those recorded skipped below are not
        if interrupted or stops.reason is not None:
            why = "the run was interrupted" if interrupted else str(stops.reason)
            left = _record_skipped(job, s.suite, o.runs, done, collector, f"skipped: {why}")
            if left:
                facts["not_started"] = left
        stops.finish(facts)
        if not s.table:
            facts.pop("unpriced", None)  # no prices asked for: no cost is expected, nothing to say
        facts.update(
            model=first_model[0] if first_model else None,
            finished_at=datetime.now(timezone.utc).isoformat(),
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            interrupted=interrupted or bool(facts.get("interrupted")),
        )
        meta = meta.replace(**facts)
        result = collector.build(meta, prior)
        await _finish(all_recorders, result, failed)
    except MemoryError:
        raise await _out_of_memory(
            collector, s.stored, s.suite, meta.replace(**facts), len(done), planned
        ) from None
    return result


def _sink(
    recorders: list[Any], collector: ResultRecorder, done: Finished, stops: Stops,
    rule: StopRule | None, first_model: list[str],
) -> Callable[[CaseRunRecord], Awaitable[None]]:  # fmt: skip
    """Where each finished case run goes: the stop rules, then every recorder (a failing store stops the run)."""
    observe = rule.record if rule is not None else _ignore

    async def sink(record: CaseRunRecord) -> None:
        done.add(record.key)
        stops.finished(record)
        observe(record)
        if not first_model:
            first_model.extend(tr.response.model for tr in record.turns if tr.response and tr.response.model)
        for r in recorders:
            try:
                if (out := r.record(record)) is not None:  # most recorders: nothing to await
                    await _maybe(out)
            except MemoryError:
                raise
            except Exception as exc:
                if r is collector:
                    raise
                raise _RecorderFailed(r, exc) from None

    return sink


def _counted(
    sink: Callable[[CaseRunRecord], Awaitable[None]], bar: Any
) -> Callable[[CaseRunRecord], Awaitable[None]]:
    """The sink, moving the progress bar on after each record."""
    if bar is None:
        return sink

    async def counted(record: CaseRunRecord) -> None:
        await sink(record)
        bar.update(1)

    return counted


class _RecorderFailed(Exception):
    """A recorder (a store) could not take a record: the run stops, as it could not keep what it does."""

    def __init__(self, recorder: Any, error: Exception) -> None:
        super().__init__(str(error))
        self.recorder = recorder
        self.error = error


async def _execute(
    executor: Any, job: RunJob, todo: Iterator[tuple[Case, int]], sink: Any, facts: dict[str, Any]
) -> tuple[bool, _RecorderFailed | None]:
    """Run the case runs; returns whether the run was interrupted, and the recorder failure that stopped it."""
    try:
        # The suite and whatever the caller holds are not scanned by the collector while the run lasts (a run
        # started by `run` is frozen already, from its recorders' begin to their finish).
        with _gc.frozen():
            info = await executor.execute(job, todo, sink)
        if isinstance(info, dict) and info:
            # a run in batches (a stop rule) executes once per batch: its counts add up
            facts["executor_info"] = _added(facts.get("executor_info"), info)
    except (asyncio.CancelledError, KeyboardInterrupt):
        # Interrupting returns what finished; the case runs that did not are recorded as skipped.
        return True, None
    except _RecorderFailed as failed:
        return True, failed
    return False, None


_COUNTED = ("batches", "lost_batches", "nodes")
"""What an executor reports as counts (``nodes``: case runs per node): a run in batches adds them up."""


def _added(before: Any, info: dict[str, Any]) -> dict[str, Any]:
    """An executor's report of one more batch added to the reports before it: counts summed, the rest the latest."""
    if not isinstance(before, dict):
        return info
    out = {**before, **info}
    for key in _COUNTED:
        old, new = before.get(key), info.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            out[key] = {k: old.get(k, 0) + new.get(k, 0) for k in {**old, **new}}
        elif isinstance(old, int) and isinstance(new, int):
            out[key] = old + new
    return out


def _design(rule: StopRule | None) -> dict[str, Any]:
    return {} if rule is None else {rule.name: rule.info()}


def _ignore(record: CaseRunRecord) -> None:
    return None


async def _run_plan(
    rule: StopRule | None, stops: Stops, executor: Any, job: RunJob, runs: int | None,
    done: Finished, sink: Any, facts: dict[str, Any], recorders: list[Any], prior: Prior | None,
) -> tuple[bool, _RecorderFailed | None]:  # fmt: skip
    """Every case run at once (lazily planned), or a stop rule's batches (running/_stopping.py) until it stops;
    either way no case run starts once ``stops`` (a budget: running/_stops.py) says no more."""
    if rule is None:
        return await _execute(executor, job, stops.plan(_plan(job.suite, runs, done)), sink, facts)
    rule.begin(job.suite, prior.result if prior is not None else None)
    interrupted, failed, reason, rest = await run_in_batches(
        rule, job.suite, runs, done, lambda todo: _execute(executor, job, stops.plan(todo), sink, facts)
    )
    await _skip_left(rule, job, reason, rest, facts, recorders)
    done.update((case.id, r) for case, r in rest)  # recorded as skipped already: not again for a budget
    return interrupted, failed


async def _skip_left(
    stop: StopRule, job: RunJob, reason: str | None, left: list[tuple[Case, int]], facts: dict[str, Any],
    recorders: list[Any],
) -> None:  # fmt: skip
    """The case runs a rule stopped short of (running/_stopping.py), recorded as skipped with its reason in every
    recorder (the run is complete: a store keeps them too); the meta says what the rule decided and saved."""
    plans = Plans()
    for case, r in left:
        record = skipped(job, plans, case, r, reason or "skipped: the run stopped early")
        for rec in recorders:
            await _maybe(rec.record(record))
    facts[stop.name] = stop.info()
    facts["stopped_early"] = bool(left)
    facts["calls_saved"] = len(left)


async def _finish(recorders: list[Any], result: Result, failed: _RecorderFailed | None) -> None:
    """Finish every recorder (not the one that failed mid-run); then raise the error that stopped the run, or
    the first one a recorder raised finishing, with the Result attached as ``error.result``."""
    error: BaseException | None = failed.error if failed is not None else None
    for r in recorders:
        if failed is not None and r is failed.recorder:
            continue
        try:
            await _maybe(r.finish(result))
        except MemoryError:
            raise
        except Exception as exc:
            error = error or exc
    if error is not None:
        with contextlib.suppress(AttributeError):
            error.result = result  # type: ignore[attr-defined]  # evalnb.errors.StoreError.result
        raise error


async def _out_of_memory(
    collector: ResultRecorder,
    stored: StoreRecorder | None,
    suite: Suite,
    meta: RunMeta,
    finished: int,
    planned: int,
) -> RunError:
    """The error of a run that ran out of memory: the rows held in memory are let go, what the store has is
    kept and marked interrupted (it can be resumed), and the message says what to change."""
    collector.discard()
    gc.collect()
    saved = ""
    if stored is not None and stored.run_id is not None:
        meta = meta.replace(interrupted=True, finished_at=datetime.now(timezone.utc).isoformat())
        with contextlib.suppress(Exception):  # what the writer holds is written, the run stays interrupted
            await _maybe(stored.finish(ResultRecorder(suite).build(meta)))
        saved = (
            f"; the store keeps {stored.saved:,} of them as run {stored.run_id} (interrupted): "
            f"`evalnb run --resume {stored.run_id}` (resume={stored.run_id!r} in Python) runs the others"
        )
    return RunError(
        f"the run ran out of memory after {finished:,} of its {planned:,} case runs{saved}. Run fewer at once "
        "(a lower --concurrency, concurrency= in Python) or fewer per process (split the suite, fewer --runs)",
        code="OUT_OF_MEMORY",
    )


def _plan(suite: Suite, runs: int | None, done: Container[tuple[str, int]]) -> Iterator[tuple[Case, int]]:
    """The case runs still to do, lazily: suite order, each case ``runs`` times (its own count by default)."""
    for case in suite.cases:
        for r in range(case.runs if runs is None else runs):
            if (case.id, r) not in done:
                yield case, r


def _record_skipped(
    job: RunJob,
    suite: Suite,
    runs: int | None,
    done: Finished,
    collector: ResultRecorder,
    reason: str,
) -> int:
    """Record the case runs an interrupted or stopped run never finished as skipped with ``reason``, up to
    :data:`SKIPPED_CAP`; returns how many more were left out (counted, not listed)."""
    plans = Plans()
    todo = _plan(suite, runs, done)
    recorded = 0
    for case, r in todo:
        collector.record(skipped(job, plans, case, r, reason))
        recorded += 1
        if recorded >= SKIPPED_CAP:
            break
    planned = sum(case.runs if runs is None else runs for case in suite.cases)
    return max(0, planned - len(done) - recorded)


def _warned(result: Result) -> Result:
    """docs/costs.md: the run says once which models it could not price (their calls cost NA)."""
    setup.warn_unpriced(result.meta.unpriced or [], stacklevel=3)  # the caller of run / run_async
    return result


def _prior(recorders: list[Any]) -> Prior | None:
    for r in recorders:
        prior: Prior | None = r.completed()
        if prior is not None:
            return prior
    return None


async def _maybe(out: Any) -> None:
    if inspect.isawaitable(out):
        await out


def _checks_config(suite: Suite) -> dict[str, dict[str, Any]]:
    """Every distinct check (by check_id) and its options, so a saved run says what was checked."""
    out: dict[str, dict[str, Any]] = {}
    ids: dict[tuple[str, ...], list[str]] = {}
    seen: set[tuple[int, ...]] = set()  # the same spec objects (a million turns share a few): looked at once
    for case in suite.cases:
        for turn in case.turns:
            same = tuple(map(id, turn.checks))
            if same in seen:
                continue
            seen.add(same)
            key = tuple(spec.name for spec in turn.checks)
            if key not in ids:
                ids[key] = turn.check_ids()
            for spec, cid in zip(turn.checks, ids[key], strict=True):
                if cid not in out:  # the first check with each id only: a suite's cases share them
                    out[cid] = {"check": spec.name, "options": spec.options()}
    return out
