"""``rescore``: apply judged checks (or a new judge) to the responses already in a Result, without calling
the agent again, so two judges can be compared on the very same answers.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from evalnb.agents.base import Request
from evalnb.checks.registry import CheckContext, Score

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["rescore", "rescore_async"]


def _answered(row: Any) -> bool:
    """Whether the agent answered this turn, so its response can be judged again.

    Passed and failed turns did; a degraded turn did too when no agent error is recorded: a check degraded it
    (a judge that failed, the very case re-scoring is for). Skipped turns and agent failures have no answer.
    """
    status = str(row.status)
    if status in ("passed", "failed"):
        return True
    from evalnb.results import _na

    error = getattr(row, "error", None)
    return status == "degraded" and (_na(error) or str(error) == "")


def rescore(
    result: Result,
    *,
    judge: Any,
    checks: Iterable[str] | None = None,
    cache: Any = None,
    concurrency: int = 8,
) -> Result:
    """A new Result whose judged checks are scored again by ``judge``; the agent is not called.

    Args:
        result: a Result from ``evalnb.run`` or ``Store.load`` (responses are rebuilt from ``runs`` when not
            in memory).
        judge: anything :func:`~evalnb.judges.as_judge` accepts (``"openai:gpt-4o"``, ``Heuristic()`` ...).
        checks: names or check ids to re-score (``["Relevance", "llm_judge#2"]``); default: every judged
            check.
        cache: the judge cache option (see ``as_judge``).
        concurrency: judge calls in flight at once.

    Returns:
        A new Result: the same runs, with those score rows replaced and run statuses updated.

    Example:
        >>> strict = evalnb.rescore(result, judge="openai:gpt-4o")
        >>> evalnb.judges.agreement(result.scores, strict.scores)
    """
    from evalnb.runner import run_blocking

    return run_blocking(
        lambda: rescore_async(result, judge=judge, checks=checks, cache=cache, concurrency=concurrency)
    )


async def rescore_async(
    result: Result,
    *,
    judge: Any,
    checks: Iterable[str] | None = None,
    cache: Any = None,
    concurrency: int = 8,
) -> Result:
    """The async form of :func:`rescore` (same arguments)."""
    from evalnb.judges.resolve import as_judge
    from evalnb.judges.scoring import evaluate, judge_label
    from evalnb.results import SCORES_COLUMNS, Result, make_frame
    from evalnb.runner import after_turn, turn_history

    the_judge = as_judge(judge, cache=cache)
    wanted = set(checks) if checks is not None else None
    suite = result.suite
    runs = result.runs
    sem = asyncio.Semaphore(max(1, concurrency))

    # Earlier turns of each run, to rebuild the conversation each turn's judge sees.
    by_run: dict[tuple[str, int], dict[int, Any]] = {}
    for row in runs.itertuples(index=False):
        by_run.setdefault((str(row.case_id), int(row.run)), {})[int(row.turn)] = row

    jobs: list[tuple[tuple[str, int, int, str], Any]] = []
    for (case_id, run), turns in by_run.items():
        try:
            case = suite.case(case_id)
        except KeyError:
            continue
        conversation: list[dict[str, str]] = []
        for t in sorted(turns):
            row = turns[t]
            if t >= len(case.turns):
                break
            turn = case.turns[t]
            # The judge sees the conversation exactly as the run built it.
            history = turn_history(conversation, [m.model_dump() for m in turn.history])
            if _answered(row):
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
                    judge=the_judge,
                    conversation=history,
                )
                for spec, cid in zip(turn.checks, turn.check_ids(), strict=False):
                    if not spec.judged or (wanted is not None and not ({spec.name, cid} & wanted)):
                        continue
                    jobs.append(((case_id, run, t, cid), _one(sem, spec, ctx, the_judge, evaluate)))
                text = response.text or ""
            else:
                text = "" if row.response is None or str(row.response) == "<NA>" else str(row.response)
            conversation = after_turn(history, turn.prompt, text)

    done = await asyncio.gather(*(j[1] for j in jobs))
    new = {key: score for (key, _), score in zip(jobs, done, strict=True)}

    records = result.scores.to_dict("records")
    touched: dict[tuple[str, int, int], list[str]] = {}
    for rec in records:
        key = (str(rec["case_id"]), int(rec["run"]), int(rec["turn"]), str(rec["check_id"]))
        score = new.get(key)
        if score is None:
            continue
        rec.update(_score_fields(score))
        touched.setdefault(key[:3], [])
    for rec in records:
        k3 = (str(rec["case_id"]), int(rec["run"]), int(rec["turn"]))
        if k3 in touched:
            touched[k3].append(str(rec["status"]))
    scores = make_frame(records, SCORES_COLUMNS)

    run_records = runs.to_dict("records")
    for rec in run_records:
        k3 = (str(rec["case_id"]), int(rec["run"]), int(rec["turn"]))
        if k3 in touched:
            statuses = touched[k3]
            rec["status"] = (
                "degraded" if "degraded" in statuses else "failed" if "failed" in statuses else "passed"
            )
    from evalnb.results import RUNS_COLUMNS

    meta = dict(result.meta)
    meta["judge"] = judge_label(the_judge) if the_judge is not None else None
    meta["rescored_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return Result(
        suite=suite,
        runs=make_frame(run_records, RUNS_COLUMNS),
        scores=scores,
        mismatches=result.mismatches,
        meta=meta,
        responses=result.responses,
    )


async def _one(sem: asyncio.Semaphore, spec: Any, ctx: CheckContext, judge: Any, evaluate: Any) -> Score:
    async with sem:
        if judge is None:
            from evalnb.checks.judged import NO_JUDGE_REASON

            return Score(value=None, passed=False, reason=NO_JUDGE_REASON)
        try:
            score: Score = await evaluate(spec, ctx)
        except Exception as exc:  # failures are data, as in a run
            return Score.degraded(f"check {spec.name} raised {type(exc).__name__}: {exc}")
        return score


def _score_fields(score: Score) -> dict[str, Any]:
    status: str = ("passed" if score.passed else "failed") if score.status == "ok" else score.status
    if score.status == "not_checked":
        status = "skipped"
    usage = score.usage or {}
    return {
        "value": score.value,
        "passed": score.passed,
        "status": status,
        "reason": score.reason,
        "judge": score.judge,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "cost": score.cost,
    }
