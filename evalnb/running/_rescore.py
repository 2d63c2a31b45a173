"""``rescore``: judged checks (or a new judge) applied to the answers already in a Result, without calling the
agent again, so two judges can be compared on the very same answers.

The turns are scored through the same core as a run (:mod:`evalnb._scoring`): the same check functions, the
same Score -> status rule, the same turn status rule.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from evalnb._costs import PriceTable, price_table, usage_of
from evalnb._numbers import count
from evalnb._scoring import TurnPlan, score_turn, status_of, turn_status
from evalnb.agents._base import Request
from evalnb.checks._registry import CheckContext, Score
from evalnb.results import Result
from evalnb.results._frames import RUNS_COLUMNS, SCORES_COLUMNS, is_na, make_frame
from evalnb.running import _setup as setup
from evalnb.running._case_run import Plans, after_turn, turn_history
from evalnb.running._loops import run_blocking

if TYPE_CHECKING:
    from evalnb.suite import Turn
    from evalnb.typing import JudgeLike

__all__ = ["rescore", "rescore_async"]


def _answered(row: Any) -> bool:
    """Whether the agent answered this turn, so its response can be judged again.

    Passed and failed turns did; a degraded turn did too when no agent error is recorded: a check degraded it
    (a judge that failed, the very case re-scoring is for). Skipped turns and agent failures have no answer.
    """
    status = str(row.status)
    if status in ("passed", "failed"):
        return True
    error = getattr(row, "error", None)
    return status == "degraded" and (is_na(error) or str(error) == "")


def rescore(
    result: Result,
    *,
    judge: JudgeLike,
    checks: Iterable[str] | None = None,
    cache: Any = None,
    concurrency: int = 8,
    preflight: bool = True,
    prices: Any = None,
) -> Result:
    """A new Result whose judged checks are scored again by ``judge``; the agent is not called.

    Args:
        result: a Result from ``evalnb.run`` or ``Store.load`` (responses are rebuilt from ``runs`` when not
            in memory).
        judge: anything :func:`~evalnb.judges.as_judge` accepts (``"openai:gpt-4o"``, ``HeuristicJudge()`` ...).
        checks: names or check ids to re-score (``["Relevance", "llm_judge#2"]``); default: every judged
            check.
        cache: the judge cache option (see ``as_judge``).
        concurrency: judge calls in flight at once.
        preflight: first check that the judge can be reached (as ``run`` does); ``False`` skips it.
        prices: what the judge's calls cost, as ``run(prices=...)`` takes them (docs/costs.md); a judge's own
            ``prices=`` come first. Without either, the new scores have tokens and no cost.

    Returns:
        A new Result: the same runs, with those score rows replaced and run statuses updated.

    Raises:
        ConfigError: when the judge cannot be built or reached.

    Example::

        strict = evalnb.rescore(result, judge="openai:gpt-4o")
        evalnb.judges.agreement(result.scores, strict.scores)
    """
    done: tuple[Result, list[str]] = run_blocking(
        lambda: _rescore(
            result,
            judge=judge,
            checks=checks,
            cache=cache,
            concurrency=concurrency,
            preflight=preflight,
            prices=prices,
        )
    )
    setup.warn_unpriced(done[1], stacklevel=2)  # the caller of rescore
    return done[0]


async def rescore_async(
    result: Result,
    *,
    judge: JudgeLike,
    checks: Iterable[str] | None = None,
    cache: Any = None,
    concurrency: int = 8,
    preflight: bool = True,
    prices: Any = None,
) -> Result:
    """The async form of :func:`rescore` (same arguments)."""
    out, unpriced = await _rescore(
        result, judge=judge, checks=checks, cache=cache, concurrency=concurrency, preflight=preflight,
        prices=prices,
    )  # fmt: skip
    setup.warn_unpriced(unpriced, stacklevel=2)  # the caller of rescore_async
    return out


async def _rescore(
    result: Result,
    *,
    judge: JudgeLike,
    checks: Iterable[str] | None,
    cache: Any,
    concurrency: int,
    preflight: bool,
    prices: Any,
) -> tuple[Result, list[str]]:
    """The re-scored Result, and the models of the new scores that could not be priced."""
    count("concurrency", concurrency, minimum=1)
    table = price_table(prices)
    the_judge = setup.make_judge(judge, cache)
    wanted = set(checks) if checks is not None else None
    suite = result.suite
    if preflight and the_judge is not None:
        await setup.preflight([], the_judge)
    jobs = _jobs(result, the_judge, wanted, asyncio.Semaphore(max(1, concurrency)), table)
    done = await asyncio.gather(*(j[3] for j in jobs))
    new: dict[tuple[str, int, int, str], Score] = {}
    for (key, picked, plan, _), scores in zip(jobs, done, strict=True):
        for i, score in zip(picked, scores, strict=True):
            new[(key[0], key[1], key[2], plan.ids[i])] = score
    run_records, records = _rescored(result, new)
    priced = table is not None or bool(getattr(the_judge, "prices", None))
    # Without any prices the new scores are not expected to have a cost: nothing to say.
    added = sorted(
        {
            sc.model or f"the judge {sc.judge}"
            for sc in new.values()
            if priced and sc.usage and sc.cost is None
        }
    )
    meta = result.meta.replace(
        judge=setup.judge_name(the_judge),
        rescored_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        unpriced=_unpriced(result, new, added),
    )
    out = Result(
        suite=suite,
        runs=make_frame(run_records, RUNS_COLUMNS),
        scores=make_frame(records, SCORES_COLUMNS),
        mismatches=result.mismatches,
        meta=meta,
        responses=result.responses,
        tool_calls=result.tool_calls,
    )
    return out, added


_Job = tuple[tuple[str, int, int], list[int], TurnPlan, Any]
"""A turn to judge again: its key, the checks picked (by position), its plan, the coroutine judging them."""


def _jobs(
    result: Result, judge: Any, wanted: set[str] | None, sem: asyncio.Semaphore, prices: PriceTable | None
) -> list[_Job]:
    """The turns whose picked judged checks are scored again, each with the conversation the run built."""
    suite = result.suite
    plans = Plans()
    # Earlier turns of each run, to rebuild the conversation each turn's judge sees.
    by_run: dict[tuple[str, int], dict[int, Any]] = {}
    for row in result.runs.itertuples(index=False):
        by_run.setdefault((str(row.case_id), int(row.run)), {})[int(row.turn)] = row

    jobs: list[_Job] = []
    for (case_id, run), turns in by_run.items():
        try:
            case = suite.case(case_id)
        except KeyError:
            continue
        conversation: list[dict[str, str]] = []
        for t in sorted(turns):
            if t >= len(case.turns):
                break
            row, turn = turns[t], case.turns[t]
            plan = plans.plan(turn)
            # The judge sees the conversation exactly as the run built it.
            history = turn_history(conversation, plan.history)
            if _answered(row):
                picked = [
                    i
                    for i, spec in enumerate(plan.specs)
                    if spec.judged and (wanted is None or {spec.name, plan.ids[i]} & wanted)
                ]
                if picked:
                    response = result.response_for(case_id, run, t)
                    request = Request(
                        prompt=turn.prompt, history=history, case=case_id, turn=t, run=run, suite=suite.name
                    )
                    ctx = CheckContext(
                        suite=suite,
                        case=case,
                        turn=turn,
                        turn_index=t,
                        run=run,
                        request=request,
                        response=response,
                        judge=judge,
                        conversation=history,
                        prices=prices,
                    )
                    jobs.append(((case_id, run, t), picked, plan, _judged(sem, plan, turn, picked, ctx)))
                text = result.response_for(case_id, run, t).text or ""
            else:
                text = "" if row.response is None or is_na(row.response) else str(row.response)
            conversation = after_turn(history, turn.prompt, text)
    return jobs


def _unpriced(
    result: Result, new: dict[tuple[str, int, int, str], Score], added: list[str]
) -> list[str] | None:
    """The models without a price after re-scoring (docs/costs.md): the Result's own, less the judges whose
    every score was replaced, plus those the new scores could not price."""
    scores = result.scores
    keys = zip(scores["case_id"], scores["run"], scores["turn"], scores["check_id"], strict=True)
    replaced: set[str] = set()
    kept: set[str] = set()  # judges of the scores left as they were: still unpriced if they were
    for (case, run, turn, check), model in zip(keys, scores["judge_model"], strict=True):
        if not is_na(model):
            key = (str(case), int(run), int(turn), str(check))
            (replaced if key in new else kept).add(str(model))
    return sorted((set(result.meta.unpriced or []) - (replaced - kept)) | set(added)) or None


def _rescored(
    result: Result, new: dict[tuple[str, int, int, str], Score]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The run and score records with the new scores in place and the touched turns' statuses updated."""
    records = result.scores.to_dict("records")
    touched: dict[tuple[str, int, int], list[str]] = {}
    for rec in records:
        key = (str(rec["case_id"]), int(rec["run"]), int(rec["turn"]))
        score = new.get((key[0], key[1], key[2], str(rec["check_id"])))
        if score is not None:
            rec.update(_score_fields(score))
            touched.setdefault(key, [])
    for rec in records:
        key = (str(rec["case_id"]), int(rec["run"]), int(rec["turn"]))
        if key in touched:
            touched[key].append(str(rec["status"]))
    run_records = result.runs.to_dict("records")
    for rec in run_records:
        key = (str(rec["case_id"]), int(rec["run"]), int(rec["turn"]))
        if key in touched:
            rec["status"] = turn_status(touched[key])
    return run_records, records


async def _judged(
    sem: asyncio.Semaphore, plan: TurnPlan, turn: Turn, picked: list[int], ctx: CheckContext
) -> list[Score]:
    """The picked checks of one turn, scored by the core (the same check functions as a run)."""
    sub = plan.subset(picked)
    async with sem:
        return await score_turn(sub, ctx)


def _score_fields(score: Score) -> dict[str, Any]:
    usage = usage_of(score.usage) or {}
    return {
        "value": score.value,
        "passed": score.passed,
        "status": status_of(score),
        "reason": score.reason,
        "judge": score.judge,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cost": score.cost,
        "weighted": score.weighted,
        "spread": score.spread,
        "judge_model": score.model,
        "cached_tokens": usage.get("cached_tokens"),
        "reasoning_tokens": usage.get("reasoning_tokens"),
    }
