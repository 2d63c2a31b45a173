"""``pairwise(a, b, judge=...)``: every turn both versions answered, judged side by side, in both orders.

docs/comparison.md, pairwise: with ``orderings=2`` each pair is judged with a's answer first and with b's
first; a verdict that changes with the order is a tie and counts in ``position_bias``. With ``orderings=1``
each pair is judged once, in an order drawn from ``seed``, so a judge that always prefers one position is
unbiased over the cases. Identical answers still go to the judge. A judge failure is a row with status
``degraded`` and its reason, and the statistics leave it out.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalnb.comparison._frames import label_of
from evalnb.errors import ConfigError
from evalnb.preference._judging import OfflinePairJudge, Verdict, no_expected_message, pair_judge
from evalnb.preference._options import PairwiseOptions, field_names
from evalnb.preference._pairs import Pair, pairs_of
from evalnb.preference._result import Pairwise, frame
from evalnb.preference._stats import win_rate_test
from evalnb.running._options import one_of

if TYPE_CHECKING:
    from evalnb.results import Result
    from evalnb.typing import JudgeLike

__all__ = ["judged_pairs", "pairwise", "pairwise_async"]

_SIDE = {("ab", "first"): "a", ("ab", "second"): "b", ("ba", "first"): "b", ("ba", "second"): "a"}
_SHARE = {"a": 0.0, "tie": 0.5, "b": 1.0}


def _check_options(orderings: Any, confidence: Any, concurrency: Any) -> None:
    if orderings not in (1, 2) or isinstance(orderings, bool):
        raise ConfigError(f"orderings must be 1 or 2, not {orderings!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ConfigError(f"confidence must be a number between 0 and 1 (0.95), not {confidence!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a whole number of 1 or more, not {concurrency!r}")


def _side_of(order: str, v: Verdict | None) -> str | None:
    if v is None or v.choice is None:
        return None
    return "tie" if v.choice == "tie" else _SIDE[(order, v.choice)]


def _b_share(order: str, v: Verdict) -> float | None:
    """b's probability-weighted share in one order, from the verdict's distribution."""
    if v.probs is None:
        return None
    b_pos = "second" if order == "ab" else "first"
    return float(v.probs.get(b_pos, 0.0)) + 0.5 * float(v.probs.get("tie", 0.0))


def _reason(verdicts: dict[str, Verdict], consistent: bool | None, labels: tuple[str, str]) -> str:
    if len(verdicts) == 1 or consistent:
        return next(iter(verdicts.values())).reason
    names = {"ab": f"{labels[0]} first", "ba": f"{labels[1]} first"}
    return "; ".join(f"{names[o]}: {v.reason}" for o, v in verdicts.items())


def _row(pair: Pair, verdicts: dict[str, Verdict], label: str, labels: tuple[str, str]) -> dict[str, Any]:
    sides = {o: _side_of(o, v) for o, v in verdicts.items()}
    judged = all(s is not None for s in sides.values())
    consistent: bool | None = None
    winner = score = None
    weighted = False
    if judged:
        values = list(sides.values())
        if len(values) == 2:
            consistent = values[0] == values[1]
        winner = values[0] if consistent is not False else "tie"
        shares = [_b_share(o, v) for o, v in verdicts.items()]
        if all(s is not None for s in shares):
            score, weighted = sum(s for s in shares if s is not None) / len(shares), True
        else:
            score = _SHARE[str(winner)]
    usage = [v.usage or {} for v in verdicts.values()]
    costs = [v.cost for v in verdicts.values() if v.cost is not None]
    failed = [v.reason for v in verdicts.values() if v.choice is None]
    return {
        "case_id": pair.case_id,
        "case_name": pair.case_name,
        "category": pair.category,
        "turn": pair.turn,
        "run": pair.run,
        "winner": winner,
        "verdict_ab": sides.get("ab"),
        "verdict_ba": sides.get("ba"),
        "consistent": consistent,
        "score": score,
        "weighted": weighted if judged else None,
        "status": "judged" if judged else "degraded",
        "reason": _reason(verdicts, consistent, labels) if judged else "; ".join(failed),
        "prompt": pair.prompt,
        "a": pair.a,
        "b": pair.b,
        "judge": label,
        "prompt_tokens": sum(int(u.get("prompt_tokens", 0)) for u in usage) if any(usage) else None,
        "completion_tokens": sum(int(u.get("completion_tokens", 0)) for u in usage) if any(usage) else None,
        "cost": sum(costs) if costs else None,
    }


async def _judge_pair(judge: Any, pair: Pair, order: str, gate: asyncio.Semaphore) -> Verdict:
    first, second = (pair.a, pair.b) if order == "ab" else (pair.b, pair.a)
    earlier = [(p, x, y) if order == "ab" else (p, y, x) for p, x, y in pair.earlier]
    async with gate:
        try:
            verdict: Verdict = await judge.verdict(
                question=pair.prompt,
                first=first,
                second=second,
                expected=pair.expected,
                history=pair.history,
                earlier=earlier,
            )
        except ConfigError:
            raise
        except Exception as exc:  # any judge failure is data (STYLE: failures are data)
            return Verdict(None, f"judge {judge.label} failed: {type(exc).__name__}: {exc}")
        return verdict


def _position(rows: Sequence[dict[str, Any]]) -> tuple[float, int, int]:
    """The share of pairs judged in both orders whose verdicts differ; the flips; those that favoured first."""
    both = [r for r in rows if r["consistent"] is not None]
    flips = [r for r in both if r["consistent"] is False]
    lean = {"a": 1, "b": -1, "tie": 0}
    first = sum(1 for r in flips if lean[r["verdict_ab"]] - lean[r["verdict_ba"]] > 0)
    return (len(flips) / len(both) if both else math.nan), len(flips), first


async def pairwise_async(
    a: Result,
    b: Result,
    *,
    judge: JudgeLike | Callable[[str, str, str], str] = None,
    rubric: str | None = None,
    orderings: int = 2,
    confidence: float = 0.95,
    seed: int = 0,
    concurrency: int = 8,
    cache: Any = None,
    base_url: str | None = None,
    labels: tuple[str, str] | None = None,
    options: PairwiseOptions | None = None,
) -> Pairwise:
    """:func:`pairwise` on the running event loop (same arguments)."""
    return await judged_pairs(a, b, one_of(PairwiseOptions, options, _keywords(locals())), labels)


def _keywords(given: dict[str, Any]) -> dict[str, Any]:
    """The pairwise options among a call's arguments (its keywords are the fields of PairwiseOptions)."""
    return {name: given[name] for name in field_names()}


async def judged_pairs(a: Any, b: Any, o: PairwiseOptions, labels: Sequence[str] | None) -> Pairwise:
    """:func:`pairwise_async` with its options as one object (``rank`` judges each pair of versions with it)."""
    import numpy as np
    import pandas as pd

    orderings, confidence, seed = o.orderings, o.confidence, o.seed
    _check_options(orderings, confidence, o.concurrency)
    judge_ = pair_judge(o.judge, rubric=o.rubric, cache=o.cache, base_url=o.base_url)
    found = pairs_of(a, b)
    if not found.items:
        why = "; ".join(sorted({str(x["why"]) for x in found.left_out})) or "no case on either side"
        raise ConfigError(f"nothing to compare: no case and turn that both versions answered ({why})")
    if isinstance(judge_, OfflinePairJudge):
        turns = list(dict.fromkeys(f"{p.case_id} turn {p.turn}" for p in found.items))
        lacking = list(dict.fromkeys(f"{p.case_id} turn {p.turn}" for p in found.items if p.expected is None))
        if lacking:
            raise ConfigError(no_expected_message(judge_.label, len(lacking), len(turns), lacking))
    check = getattr(judge_, "preflight", None)
    if check is not None:
        await check()  # an endpoint that cannot be reached is a ConfigError now, not a column of failures
    rng = random.Random(seed)
    plan = [["ab", "ba"] if orderings == 2 else [rng.choice(("ab", "ba"))] for _ in found.items]
    gate = asyncio.Semaphore(o.concurrency)
    asked = [
        [asyncio.ensure_future(_judge_pair(judge_, pair, order, gate)) for order in orders]
        for pair, orders in zip(found.items, plan, strict=True)
    ]
    try:
        done = [await asyncio.gather(*tasks) for tasks in asked]
    finally:
        for tasks in asked:
            for t in tasks:
                t.cancel()
    label = str(judge_.label)
    la, lb = labels if labels is not None else (label_of(a, "a"), label_of(b, "b"))
    if la == lb:
        la, lb = f"{la} (a)", f"{lb} (b)"
    rows = [
        _row(pair, dict(zip(orders, verdicts, strict=True)), label, (la, lb))
        for pair, orders, verdicts in zip(found.items, plan, done, strict=True)
    ]
    cases = frame(rows)
    judged = cases[cases["status"] == "judged"]
    per_case = judged.groupby("case_id", sort=False)["score"].mean()
    test = win_rate_test(np.asarray(per_case, dtype=float), confidence=confidence, seed=seed)
    bias, flips, first = _position(rows)
    left = pd.DataFrame(found.left_out, columns=["case_id", "turn", "run", "why"]).astype(
        {"case_id": "string", "turn": "Int64", "run": "Int64", "why": "string"}
    )
    return Pairwise(
        cases=cases,
        win_rate=test.win_rate,
        ci_low=test.ci_low,
        ci_high=test.ci_high,
        p_value=test.p_value,
        p_better=test.p_better,
        position_bias=bias,
        confidence=float(confidence),
        a_label=la,
        b_label=lb,
        judge=label,
        orderings=orderings,
        left_out=left,
        suite=found.suite,
        cases_counted=test.cases,
        first_favoured=first,
        flips=flips,
        can_reject=test.can_reject,
        _results=(a, b),
    )


def pairwise(
    a: Result,
    b: Result,
    *,
    judge: JudgeLike | Callable[[str, str, str], str] = None,
    rubric: str | None = None,
    orderings: int = 2,
    confidence: float = 0.95,
    seed: int = 0,
    concurrency: int = 8,
    cache: Any = None,
    base_url: str | None = None,
    labels: tuple[str, str] | None = None,
    options: PairwiseOptions | None = None,
) -> Pairwise:
    """Which of two versions is better when there is no reference answer: a judge compares their answers.

    For every case, turn and run that both Results answered, the judge sees the prompt (the conversation
    before it, the expected answer when there is one) and the two answers labelled neutrally; by default in
    both orders. b's win rate over cases (ties as half) gets an interval and a one-sided test of "b is worse".

    Args:
        a: the baseline Result.
        b: the candidate Result.
        judge: a callable ``f(prompt, first, second) -> "first" | "second" | "tie"``; a model judge
            (``"openai:MODEL"``, ``evalnb.judges.OpenAIJudge(...)``, any object from ``evalnb.judges``), which
            gets a pairwise prompt; or ``"heuristic"`` / ``"embedding"``, offline, when every turn has an
            expected answer (the answer closer to it wins; not an LLM).
        rubric: the criterion the model judge compares by (default: the better answer to the request).
        orderings: 2 judges each pair in both orders (a verdict that flips is a tie); 1 once, in a seeded
            random order.
        confidence: the confidence of the test and of the interval.
        seed: the seed of the random orders and of the test's random sign patterns.
        concurrency: judge calls at a time.
        cache: the judge cache option (as ``evalnb.run``'s ``cache``): None keeps the judge's own.
        base_url: the endpoint of an ``"openai:MODEL"`` string.
        labels: names for a and b in reports (default: their version labels).
        options: the options above but ``labels`` as one :class:`~evalnb.preference.PairwiseOptions` (then
            give none of them as keywords).

    Returns:
        A :class:`Pairwise`: ``cases``, ``win_rate``, ``ci_low``, ``ci_high``, ``p_value``, ``position_bias``,
        ``exit_code``.

    Raises:
        ConfigError: no judge, a model judge whose endpoint cannot be reached, an offline judge without expected
            answers, nothing both versions answered, or a bad option.

    Example::

        pw = evalnb.pairwise(a, b, judge=lambda prompt, first, second: "tie")
        pw.win_rate, pw.exit_code
        # (0.5, 0)
    """
    from evalnb.running._loops import run_blocking

    the = one_of(PairwiseOptions, options, _keywords(locals()))
    out: Pairwise = run_blocking(lambda: judged_pairs(a, b, the, labels))
    return out
