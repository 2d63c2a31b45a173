"""The scoring core: the one home of how a turn is scored and how scores become statuses.

* :class:`TurnPlan`: the checks of a turn, looked up once (ids, names, options, registered definitions,
  what they need);
* :func:`score_turn`: score every check of a turn on one answer (checks that burn CPU run off the event loop);
* :func:`unanswered`: the scores of a turn that got no answer (skipped or degraded);
* :func:`status_of`: the Score -> status rule; :func:`turn_status`, :func:`worst`: how statuses combine
  into a turn's, a run's and a case's (docs/results.md, statuses: ``passed``, ``failed``, ``degraded``, ``skipped``);
* :func:`from_exception`: a check that raised becomes a degraded Score;
* :func:`disallowed_calls`, :func:`not_allowed`: a reported tool call outside the turn's allowlist makes the
  turn an error like an agent failure (docs/dataset-json.md, tool calls and allowlists): the turn is degraded, its
  checks not checked.

The runner, :func:`evalnb.rescore` and :class:`~evalnb.results.Result` all use these; nothing else decides a
status.

Example::

    plan = TurnPlan(turn)
    scores = await score_turn(plan, ctx)
    [status_of(s) for s in scores]          # ['passed', 'failed']
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

from evalnb.checks._registry import (
    CheckContext,
    CheckDef,
    Offload,
    Score,
    coerce_score,
    definition,
    user_definition,
)
from evalnb.suite import CustomCheck, IntentCheck

if TYPE_CHECKING:
    from evalnb.agents._base import ToolCall
    from evalnb.suite import Turn

__all__ = [
    "RANK",
    "STATUSES",
    "TOOL_NOT_ALLOWED",
    "TurnPlan",
    "disallowed_calls",
    "from_exception",
    "not_allowed",
    "options_json",
    "score_turn",
    "status_of",
    "turn_status",
    "unanswered",
    "worst",
]

STATUSES = ("passed", "failed", "degraded", "skipped")
"""The statuses of a score row, a turn, a run and a case (docs/results.md, statuses)."""

RANK = {"passed": 0, "skipped": 1, "failed": 2, "degraded": 3}
"""Worst last: a run takes the worst status of its turns and checks, a case the worst of its runs (a degraded
run outranks a failed one: its answer could not be obtained or judged at all)."""


# --------------------------------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------------------------------


def status_of(score: Score) -> str:
    """The status of one score row.

    A check that ran says passed or failed; one that ran and gave no verdict (``passed is None``) is degraded:
    it cannot pass, and must say so. A moot check (``not_checked``, after a cube intent mismatch) and a check of
    a turn without an answer (``skipped``) are skipped; a check that could not run is degraded.
    """
    if score.status == "ok":
        if score.passed is None:
            return "degraded"
        return "passed" if score.passed else "failed"
    return "skipped" if score.status in ("not_checked", "skipped") else "degraded"


def turn_status(statuses: Iterable[str]) -> str:
    """The status of an answered turn from its score statuses: degraded, else failed, else passed.

    A skipped (moot) check does not make an answered turn skipped.
    """
    out = "passed"
    for s in statuses:
        if s == "degraded":
            return "degraded"
        if s == "failed":
            out = "failed"
    return out


def worst(statuses: Iterable[str], *, empty: str = "skipped") -> str:
    """The worst status by :data:`RANK` (a run's from its turns, a case's from its runs); ``empty`` if none."""
    best = -1
    out = empty
    for s in statuses:
        r = RANK.get(s, 0)
        if r > best:
            best, out = r, s
    return out


def from_exception(spec: Any, exc: BaseException) -> Score:
    """A check that raised: degraded, with the exception in the reason (failures are data)."""
    return Score.degraded(f"check {spec.name} raised {type(exc).__name__}: {exc}")


TOOL_NOT_ALLOWED = "tool call not allowed"
"""How the error of a turn whose agent called a tool outside its allowlist starts (``runs.error``)."""


def disallowed_calls(allowed: list[str] | None, calls: list[ToolCall] | None) -> list[ToolCall]:
    """The reported tool calls the allowlist does not permit, in order.

    docs/dataset-json.md, tool calls and allowlists: only a suite that declares an allowlist is checked (``allowed``
    is ``None`` otherwise: nothing is); entries and tools match exactly and case-sensitively after trimming, and an
    empty list permits nothing. Every reported call counts, whatever became of it: the agent asked to make it.
    """
    if allowed is None or not calls:
        return []
    permitted = {t.strip() for t in allowed}
    return [c for c in calls if c.tool.strip() not in permitted]


def not_allowed(calls: list[ToolCall], allowed: list[str]) -> str:
    """The turn error of calls outside the allowlist: ``tool call not allowed: ...`` naming the tools and the
    allowlist (the dataset output document writes it with code ``toolCallNotAllowed``)."""
    tools = ", ".join(repr(t) for t in dict.fromkeys(c.tool for c in calls))
    permitted = (
        ", ".join(allowed) if allowed else "none (the suite declares an allowlist that permits no tool)"
    )
    return f"{TOOL_NOT_ALLOWED}: the agent asked to call {tools}, which allowed_tools does not permit (allowed: {permitted})"


UNANSWERED = "not checked:"
"""How the reason of every score of a turn without a usable answer starts (the agent failed, a tool call was
refused, its worker died): a comparison tells these, the agent's failure, from a check that could not run
(docs/comparison.md, degraded scores)."""


def not_checked(why: str) -> str:
    """The reason of a score of a turn without a usable answer: :data:`UNANSWERED` and why."""
    return f"{UNANSWERED} {why}"


def agent_failed(error: str) -> str:
    """The reason of a score of a turn whose agent failed (raised, timed out, answered what no check reads)."""
    return not_checked(f"the agent failed ({error})")


def unanswered(plan: TurnPlan, status: str, reason: str) -> list[Score]:
    """The scores of a turn without an answer: every check is recorded (so every run has the same checks), none
    passes. ``status`` is the turn's: ``degraded`` (the agent failed) or ``skipped``."""
    score = (
        Score.degraded(reason)
        if status == "degraded"
        else Score(value=None, passed=None, reason=reason, status="skipped")
    )
    return [score] * len(plan.specs)


def options_json(spec: Any) -> str:
    """A check's options as saved with every score row (its final values, keys sorted).

    A check of yours registered as lower-is-better records ``"higher_is_better": false`` too, so a comparison
    of the saved run knows it in a process that never ran your registration (docs/comparison.md, direction).
    """
    options = spec.options()
    if isinstance(spec, CustomCheck) and spec.higher_is_better is None:
        registered = user_definition(spec.check)
        if registered is not None and registered.higher_is_better is False:
            options["higher_is_better"] = False
    return json.dumps(options, sort_keys=True, default=str)


def threshold_applied(spec: Any, score: Score) -> Score:
    """docs/dataset-json.md, evaluators: a custom evaluator with a threshold passes at ``value >= threshold``."""
    threshold = getattr(spec, "threshold", None)
    if not isinstance(spec, CustomCheck) or threshold is None or score.status != "ok" or score.value is None:
        return score
    reason = f"{score.reason} (score {score.value:g}, threshold {threshold:g})".lstrip()
    return dataclasses.replace(score, passed=score.value >= threshold, reason=reason)


# --------------------------------------------------------------------------------------------------
# Planning and scoring a turn
# --------------------------------------------------------------------------------------------------


class TurnPlan:
    """What scoring a turn needs, computed once per turn and run: the specs, their ids (``regex``,
    ``regex#2``), names, saved options, registered definitions, and what the checks need.

    Attributes:
        needs: the union of what the turn's checks need (``workdir``, ``judge``, ``data``, ``cpu``).
        missing: per check, why it cannot be scored (no check registered under its name), else None.
    """

    __slots__ = ("defs", "has_intent", "history", "ids", "missing", "names", "needs", "options", "specs")

    def __init__(
        self,
        turn: Turn,
        *,
        options: Callable[[Any], str] = options_json,
        ids_cache: dict[tuple[str, ...], list[str]] | None = None,
    ) -> None:
        self.specs = list(turn.checks)
        self.names = [spec.name for spec in self.specs]
        key = tuple(self.names)
        # Check ids depend only on the sequence of check names (docs/results.md, `scores`: `regex`, `regex#2`), and
        # turns of a suite mostly share one: computed once per distinct sequence.
        ids = ids_cache.get(key) if ids_cache is not None else None
        if ids is None:
            ids = turn.check_ids()
            if ids_cache is not None:
                ids_cache[key] = ids
        self.ids = ids
        self.options = [options(spec) for spec in self.specs]
        self.has_intent = any(isinstance(spec, IntentCheck) for spec in self.specs)
        self.history = [m.model_dump() for m in turn.history]
        self.defs: list[CheckDef | None] = []
        self.missing: list[str | None] = []
        needs: set[str] = set()
        for spec in self.specs:
            try:
                found = definition(spec)
            except KeyError as exc:
                self.defs.append(None)
                self.missing.append(str(exc.args[0]) if exc.args else str(exc))
            else:
                self.defs.append(found)
                self.missing.append(None)
                needs |= found.needs
        self.needs = frozenset(needs)

    def subset(self, picked: list[int]) -> TurnPlan:
        """The plan of some of this turn's checks only (``rescore`` re-judges the judged ones).

        The cube intent rule does not apply to a subset: the checks were picked to be scored.
        """
        sub = object.__new__(TurnPlan)
        for name in ("defs", "ids", "missing", "names", "options", "specs"):
            whole = getattr(self, name)
            setattr(sub, name, [whole[i] for i in picked])
        sub.history = self.history
        sub.has_intent = False
        sub.needs = frozenset().union(*(d.needs for d in sub.defs if d is not None))
        return sub


async def score_turn(plan: TurnPlan, ctx: CheckContext, *, offload: Executor | None = None) -> list[Score]:
    """Score every check of the turn on ``ctx.response``, in the turn's check order.

    A check that raises becomes a degraded Score; a cube ``intent`` mismatch makes the turn's other checks
    ``not_checked`` (docs/cube-yaml.md, row comparison: the case fails on intent, its other checks are moot). Checks
    that need ``cpu``, and checks that hand back an :class:`~evalnb.checks._registry.Offload`, run in ``offload`` (a
    thread pool), so the event loop stays free for other case runs; without one they run in place.

    Example::

        scores = await score_turn(TurnPlan(turn), ctx)
        [s.passed for s in scores]          # [True, False]
    """
    specs = plan.specs
    scores: list[Score | None] = [None] * len(specs)
    if plan.has_intent:
        for i, spec in enumerate(specs):
            if isinstance(spec, IntentCheck):
                scores[i] = s = await _one(plan, i, ctx, offload)
                if s.passed is False:
                    moot = Score.not_checked("not checked: the intent did not match")
                    return [x if x is not None else moot for x in scores]
    pending: list[tuple[int, Any]] = []
    for i in range(len(specs)):
        if scores[i] is not None:
            continue
        d = plan.defs[i]
        if d is None or "cpu" in d.needs:
            pending.append((i, _one(plan, i, ctx, offload)))
            continue
        # The common case, inline: a pure check of the response (no task, no thread, no await).
        spec = specs[i]
        try:
            out = d.fn(spec, ctx)
            if type(out) is Score:  # the common case first: no Offload, no awaitable
                score = out
            elif isinstance(out, Offload):
                pending.append((i, _offloaded(spec, out, offload)))
                continue
            elif inspect.isawaitable(out):
                pending.append((i, _awaited(spec, out, offload)))
                continue
            else:
                score = coerce_score(out)
            scores[i] = threshold_applied(spec, score) if isinstance(spec, CustomCheck) else score
        except Exception as exc:
            scores[i] = from_exception(spec, exc)
    if pending:
        # Awaitable checks (judges, async checks of yours) and off-loop ones of one turn run concurrently.
        done = await asyncio.gather(*(p[1] for p in pending))
        for (i, _), s in zip(pending, done, strict=True):
            scores[i] = s
    return [s if s is not None else Score.degraded("check produced no score") for s in scores]


async def _one(plan: TurnPlan, i: int, ctx: CheckContext, offload: Executor | None) -> Score:
    spec, d = plan.specs[i], plan.defs[i]
    if d is None:
        return Score.degraded(plan.missing[i] or f"no check registered for {spec.name!r}")
    try:
        if "cpu" in d.needs:
            out = await _in_thread(offload, d.fn, spec, ctx)
        else:
            out = d.fn(spec, ctx)
        if isinstance(out, Offload):
            return await _offloaded(spec, out, offload)
        if inspect.isawaitable(out):
            return await _awaited(spec, out, offload)
        return threshold_applied(spec, coerce_score(out))
    except Exception as exc:
        return from_exception(spec, exc)


async def _awaited(spec: Any, awaitable: Any, offload: Executor | None) -> Score:
    try:
        out = await awaitable
        if isinstance(out, Offload):
            return await _offloaded(spec, out, offload)
        return threshold_applied(spec, coerce_score(out))
    except Exception as exc:
        return from_exception(spec, exc)


async def _offloaded(spec: Any, job: Offload, offload: Executor | None) -> Score:
    try:
        return threshold_applied(spec, coerce_score(await _in_thread(offload, job.fn, *job.args)))
    except Exception as exc:
        return from_exception(spec, exc)


async def _in_thread(offload: Executor | None, fn: Callable[..., Any], *args: Any) -> Any:
    if offload is None:
        return fn(*args)
    return await asyncio.get_running_loop().run_in_executor(offload, fn, *args)
