"""The unit of work: one case run, a function of (case, run index, agent, judge, options) -> a record.

:class:`RunJob` holds what does not change while a run lasts (the suite, the agents by route, the judge, the
data source, timeout, retries, the working-directory option): what an executor needs to run case runs
anywhere. A :class:`Worker` runs case runs of one job on one event loop, with that loop's resources (the
timeout timer, thread pools for sync agents and for checks that burn CPU, working directories).

The turns of a multi-turn case run in order as one conversation: each turn's ``Request.history`` holds the
history the suite wrote for it, then the earlier prompts and the agent's actual answers. A turn without an
answer ends the conversation: later turns are skipped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalnb._costs import PriceTable, add_usage
from evalnb._scoring import (
    TurnPlan,
    agent_failed,
    disallowed_calls,
    not_allowed,
    not_checked,
    options_json,
    score_turn,
    status_of,
    turn_status,
    unanswered,
)
from evalnb.agents._base import Agent, Request
from evalnb.checks._registry import CheckContext
from evalnb.results._records import CaseRunRecord, TurnRecord
from evalnb.running._calls import Caller, DaemonThreads, PooledCallable, is_sync_callable
from evalnb.running._workdirs import Workdirs
from evalnb.suite import Case, Suite, Turn

__all__ = ["Plans", "RunJob", "Worker", "after_turn", "skipped", "turn_history", "without_answers"]


def turn_history(
    conversation: list[dict[str, str]], file_history: list[dict[str, str]]
) -> list[dict[str, str]]:
    """A turn's ``Request.history``: the conversation so far, then the turn's own file history (cube)."""
    return conversation + file_history if file_history else list(conversation)


def after_turn(history: list[dict[str, str]], prompt: str, answer: str) -> list[dict[str, str]]:
    """The conversation a later turn continues: this turn's history, its prompt and the actual answer."""
    return [*history, {"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


@dataclass
class RunJob:
    """What every case run of a run shares (see the module docstring).

    Attributes:
        suite: the suite that runs.
        routes: the agents by route id (``"default"`` for a single agent).
        names: their display names.
        judge: the judge, or None.
        data: the data source of cube ``referenceQuery`` checks, or None.
        timeout: seconds per agent call (None: no limit).
        retries: retries of transient agent failures.
        workdir: the directory every run uses, or None for a fresh one per run (made when first used).
        concurrency: case runs in flight at once (per worker loop).
        run_name: the same in every process running the run's case runs (their kept working directories go
            together, running/_workdirs.py).
        prices: the run's price table (:class:`evalnb._costs.PriceTable`), None without ``prices=``.
    """

    suite: Suite
    routes: dict[str, Agent]
    names: dict[str, str]
    judge: Any
    data: Any
    timeout: float | None
    retries: int
    workdir: Path | None
    concurrency: int
    run_name: str = ""
    prices: PriceTable | None = None

    @property
    def single(self) -> bool:
        """One agent serves every case, whatever agent the case names (README.md, agents)."""
        return len(self.routes) == 1 and "default" in self.routes and len(self.names) == 1

    def route(self, case: Case) -> str:
        return case.agent if (case.agent and not self.single) else "default"

    def agent_name(self, case: Case) -> str:
        return self.agent_name_of(self.route(case))

    def agent_name_of(self, route: str) -> str:
        return self.names.get(route, route)


class Plans:
    """The turn plans of one run, one per distinct turn shape (the suite is not expected to change while it runs).

    A plan depends on a turn's checks and its file history only, and the turns of a large suite mostly share
    their check objects (a dataset's defaults): keyed by the checks' identities, a million turns need a handful
    of plans instead of a million.
    """

    def __init__(self) -> None:
        self._plans: dict[tuple[int, ...], TurnPlan] = {}
        self._keep: list[Any] = []  # keeps the objects whose ids key the caches alive while the run lasts
        self._options: dict[int, str] = {}
        self._ids: dict[tuple[str, ...], list[str]] = {}

    def plan(self, turn: Turn) -> TurnPlan:
        # A plan holds its specs, so their ids stay theirs while the plan lives; a turn with a file history
        # has a plan of its own.
        key = (*map(id, turn.checks), -id(turn) if turn.history else 0)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = TurnPlan(turn, options=self._options_json, ids_cache=self._ids)
            if turn.history:
                self._keep.append(turn)
        return plan

    def _options_json(self, spec: Any) -> str:
        # Suites often share one spec object between cases: its options are serialised once per run.
        hit = self._options.get(id(spec))
        if hit is None:
            hit = self._options[id(spec)] = options_json(spec)
            self._keep.append(spec)
        return hit


def skipped(job: RunJob, plans: Plans, case: Case, run: int, reason: str) -> CaseRunRecord:
    """A case run that did not happen (the run was interrupted first): every turn skipped with ``reason``."""
    return without_answers(job, plans, case, run, status="skipped", reason=reason)


def without_answers(
    job: RunJob, plans: Plans, case: Case, run: int, *, status: str, reason: str, error: str | None = None
) -> CaseRunRecord:
    """A case run whose turns got no answer: every turn ``status`` (``skipped``, or ``degraded`` when the
    process running it was lost), its checks not scored, with ``reason`` and ``error``."""
    record = CaseRunRecord(
        suite=job.suite.name, case=case, run=run, agent=job.agent_name(case), started_at=time.time()
    )
    for t, turn in enumerate(case.turns):
        record.turns.append(_without_answer(plans.plan(turn), t, None, status, error, None, reason))
    return record


def _without_answer(
    plan: TurnPlan,
    t: int,
    request: Request | None,
    status: str,
    error: str | None,
    latency: float | None,
    reason: str,
) -> TurnRecord:
    return _turn_record(plan, t, request, None, unanswered(plan, status, reason), latency, status, error)


def _turn_record(
    plan: TurnPlan,
    t: int,
    request: Request | None,
    response: Any,
    scores: list[Any],
    latency: float | None,
    status: str | None = None,
    error: str | None = None,
    spend: tuple[dict[str, int] | None, float | None] = (None, None),
) -> TurnRecord:
    """One turn's record; its status is the scores' (scoring.turn_status) unless given."""
    statuses = [_status(s) for s in scores]
    return TurnRecord(
        t,
        request,
        response,
        turn_status(statuses) if status is None else status,
        error,
        latency,
        scores,
        statuses,
        plan.ids,
        plan.names,
        plan.options,
        *spend,
    )


def _status(score: Any) -> str:
    # scoring.status_of, with an answered check's status looked up first (every score of every turn)
    if score.status == "ok" and score.passed is not None:
        return "passed" if score.passed else "failed"
    return status_of(score)


def priced(
    prices: PriceTable | None, agent: Any, response: Any, spent: dict[str, int]
) -> tuple[dict[str, int] | None, float | None]:
    """A turn's agent usage (the failed attempts' and the answer's) and its cost (docs/costs.md; None without a
    price: unknown, never 0)."""
    if not spent and (response is None or not response.usage):
        return None, None  # the agent reported no usage (most agents of one's own)
    usage = add_usage(dict(spent), response.usage if response is not None else None) or None
    if usage is None or not prices:
        return usage, None
    model = (response.model if response is not None else None) or getattr(agent, "model", None)
    return usage, prices.cost(usage, model)


class Worker:
    """Runs case runs of one job on the current event loop; :meth:`close` releases what it made.

    Must be made inside the running loop (the timeout timer lives on it).
    """

    def __init__(self, job: RunJob) -> None:
        self.job = job
        self.caller = Caller(timeout=job.timeout, retries=job.retries)
        self.workdirs = Workdirs(job.workdir, run=job.run_name)
        self.routes = dict(job.routes)
        self.agent_pool: DaemonThreads | None = None
        if any(is_sync_callable(a) for a in self.routes.values()):
            self.agent_pool = DaemonThreads("evalnb-agent")
            self.routes = {
                k: PooledCallable(a, self.agent_pool) if is_sync_callable(a) else a  # type: ignore[arg-type]
                for k, a in self.routes.items()
            }
        # Checks that burn CPU or block (rows, slow regexes) run here, off the event loop; a thread for each one
        # in flight (at most one per case run in flight), so that N slow checks run side by side.
        self.check_pool = DaemonThreads("evalnb-check")
        self.plans = Plans()
        # One agent for every case (README.md, agents): its route and name, looked up once.
        self.single = (self.routes["default"], job.agent_name_of("default")) if job.single else None

    # -- per case run ---------------------------------------------------------------------------------

    # -- case runs -----------------------------------------------------------------------------------

    async def run_case(self, case: Case, run: int) -> CaseRunRecord:
        """Run ``case`` once (its turns as one conversation) and score it."""
        job = self.job
        started, t0 = time.time(), time.perf_counter()
        if self.single is not None:
            agent, agent_name = self.single
        else:
            agent, agent_name = self.routes[job.route(case)], job.agent_name(case)
        record = CaseRunRecord(suite=job.suite.name, case=case, run=run, agent=agent_name, started_at=started)
        # Made when the agent reads Request.workdir or a check that looks at files runs: a run that does
        # neither leaves nothing in the temporary folder (running/_workdirs.py).
        lease = self.workdirs.lease()
        conversation: list[dict[str, str]] = []
        n_turns = len(case.turns)
        stopped: str | None = None
        for t, turn in enumerate(case.turns):
            plan = self.plans.plan(turn)
            if stopped is not None:
                record.turns.append(_without_answer(plan, t, None, "skipped", None, None, stopped))
                continue
            # The conversation so far (earlier file history, prompts and actual answers), then this turn's
            # own file history (cube `history`), then the prompt itself.
            history = turn_history(conversation, plan.history)
            request = Request(
                prompt=turn.prompt,
                history=history,
                case=case.id,
                turn=t,
                run=run,
                workdir=lease.deferred(),
                suite=job.suite.name,
                case_meta={"name": case.name, "category": case.category, **case.meta},
                allowed_tools=None if turn.allowed_tools is None else list(turn.allowed_tools),
            )
            response, error, latency, spent = await self.caller.call(agent, request)
            spend = priced(job.prices, agent, response, spent)
            if response is None:
                # A conversation cannot go on after a turn without an answer: later turns are skipped.
                stopped = "skipped: an earlier turn degraded"
                reason = agent_failed(str(error))
                scores = unanswered(plan, "degraded", reason)
                record.turns.append(
                    _turn_record(plan, t, request, None, scores, latency, "degraded", error, spend)
                )
                continue
            bad = disallowed_calls(turn.allowed_tools, response.tool_calls)
            if bad:
                # docs/dataset-json.md, tool calls and allowlists: a call outside the allowlist makes the turn an
                # error, as an agent that did not answer (its checks are not checked), not a failed check; the answer
                # and its tool calls are kept. The conversation stops here, as after any turn without a usable answer.
                stopped = "skipped: an earlier turn degraded"
                error = not_allowed(bad, turn.allowed_tools or [])
                scores = unanswered(plan, "degraded", not_checked(error))
                record.turns.append(
                    _turn_record(plan, t, request, response, scores, latency, "degraded", error, spend)
                )
                continue
            ctx = CheckContext(
                suite=job.suite,
                case=case,
                turn=turn,
                turn_index=t,
                run=run,
                request=request,
                response=response,
                workdir=lease.path() if "workdir" in plan.needs else lease.made,
                judge=job.judge,
                data=job.data,
                conversation=history,
                prices=job.prices,
            )
            scores = await score_turn(plan, ctx, offload=self.check_pool)
            record.turns.append(_turn_record(plan, t, request, response, scores, latency, spend=spend))
            if t + 1 < n_turns:  # only a later turn reads the conversation
                conversation = after_turn(history, turn.prompt, response.text or "")
        passed = all(tr.status == "passed" for tr in record.turns)
        record.workdir = self.workdirs.give_back(lease, case.id, run, passed)
        record.elapsed_ms = (time.perf_counter() - t0) * 1000.0
        return record

    def close(self) -> None:
        if self.agent_pool is not None:
            self.agent_pool.shutdown(wait=False, cancel_futures=True)
        self.check_pool.shutdown(wait=False, cancel_futures=True)
        self.caller.close()
        self.workdirs.cleanup()
