"""Budgets: a cap on what a run may spend, in USD and in tokens (docs/costs.md, budgets).

Before each case run starts, the spent amount plus what the case runs in flight may spend is compared with the
cap; once the next case run could take it past the cap, no new case run starts. What a case run in flight may
spend is the most a finished case run of this run has spent (until one has finished, it is unknown: the first
``concurrency`` case runs start together). The case runs in flight finish and are kept; the rest are
``skipped`` with the reason, ``result.budget_exhausted`` is true, and a stored run stays resumable
(``--resume`` continues it within a new budget).

A cost budget needs every call priced: a call of a model without a price stops the run (its spend cannot be
counted), and a model the agent or judge names up front with no price stops it before it starts.

Example::

    result = evalnb.run(suite, agent, prices=PRICES, budget=evalnb.Budget(cost=2.0))
    result.budget_exhausted, result.meta["budget"]["spent_cost"]
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb._costs import usage_of
from evalnb.errors import ConfigError

if TYPE_CHECKING:
    from evalnb.results._records import CaseRunRecord

__all__ = ["Budget", "BudgetRule", "Spend", "check_budget", "record_spend"]


@dataclass(frozen=True)
class Budget:
    """The most a run may spend: ``cost`` in USD (agent and judge calls, priced by ``prices=``) and/or
    ``tokens`` (prompt plus completion tokens of agent and judge calls).

    Example::

        evalnb.run(suite, agent, prices={"m": {"input": 1.0, "output": 2.0}}, budget=evalnb.Budget(cost=0.5))
    """

    cost: float | None = None
    tokens: int | None = None

    def __post_init__(self) -> None:
        c, t = self.cost, self.tokens
        if c is not None and (
            isinstance(c, bool) or not isinstance(c, numbers.Real) or not math.isfinite(float(c)) or c <= 0
        ):
            raise ConfigError(f"Budget(cost={c!r}): give a number of USD above 0", code="INVALID_VALUE")
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 1):
            raise ConfigError(
                f"Budget(tokens={t!r}): give a whole number of tokens, 1 or more", code="INVALID_VALUE"
            )
        if c is None and t is None:
            raise ConfigError("Budget(): give cost= (USD) or tokens=, or both", code="INVALID_VALUE")


def record_spend(record: CaseRunRecord) -> tuple[float, int, set[str]]:
    """What one case run spent: cost (the priced calls), tokens, and the models of calls without a price."""
    cost, tokens, unpriced = 0.0, 0, set()
    for tr in record.turns:
        usage = tr.usage
        if usage:
            tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        if tr.cost is not None:
            cost += tr.cost
        elif usage:
            model = tr.response.model if tr.response is not None else None
            unpriced.add(model or f"the agent {record.agent}")
        for score in tr.scores:
            if score.usage is None and score.cost is None:
                continue  # a deterministic check spent nothing (most scores of a large run)
            su = usage_of(score.usage) or {}
            tokens += su.get("prompt_tokens", 0) + su.get("completion_tokens", 0)
            if score.cost is not None:
                cost += score.cost
            elif su:
                unpriced.add(score.model or f"the judge {score.judge}")
    return cost, tokens, unpriced


class Spend:
    """What a run has spent so far, and the models it could not price (a stop rule that never stops)."""

    def __init__(self) -> None:
        self.cost = 0.0
        self.tokens = 0
        self.unpriced: set[str] = set()
        self.most_cost = 0.0
        self.most_tokens = 0
        self.finished_runs = 0

    def reason(self, in_flight: int) -> str | None:
        return None

    def finished(self, record: CaseRunRecord) -> None:
        cost, tokens, unpriced = record_spend(record)
        self.cost += cost
        self.tokens += tokens
        self.unpriced |= unpriced
        self.most_cost = max(self.most_cost, cost)
        self.most_tokens = max(self.most_tokens, tokens)
        self.finished_runs += 1

    def finish(self, meta: dict[str, Any], *, stopped: bool) -> None:
        if self.unpriced:
            meta["unpriced"] = sorted(self.unpriced)


class BudgetRule:
    """The :class:`Budget` as a stop rule over a :class:`Spend` (see the module docstring)."""

    def __init__(self, budget: Budget, spend: Spend) -> None:
        self.budget = budget
        self.spend = spend
        self.last: str | None = None

    def reason(self, in_flight: int) -> str | None:
        self.last = self._reason(in_flight)
        return self.last

    def _reason(self, in_flight: int) -> str | None:
        b, s = self.budget, self.spend
        if b.cost is not None and s.unpriced:
            return (
                f"the cost budget cannot count calls of {', '.join(sorted(s.unpriced))} "
                "(no price; give one with prices=)"
            )
        # The next case run counts as in flight: it starts only when it fits.
        ahead = in_flight + 1
        if b.cost is not None and (s.cost >= b.cost or s.cost + ahead * s.most_cost > b.cost):
            return (
                f"the cost budget of ${b.cost:g} is reached (${s.cost:.4g} spent, {in_flight} case run(s) in "
                f"flight at up to ${s.most_cost:.4g} each)"
            )
        if b.tokens is not None and (s.tokens >= b.tokens or s.tokens + ahead * s.most_tokens > b.tokens):
            return (
                f"the token budget of {b.tokens:,} is reached ({s.tokens:,} spent, {in_flight} case run(s) "
                f"in flight at up to {s.most_tokens:,} each)"
            )
        return None

    def finished(self, record: CaseRunRecord) -> None:
        pass  # the Spend beside it counts the record

    def finish(self, meta: dict[str, Any], *, stopped: bool) -> None:
        b, s = self.budget, self.spend
        meta["budget"] = {
            "cost": b.cost,
            "tokens": b.tokens,
            "spent_cost": s.cost if not s.unpriced else None,
            "spent_tokens": s.tokens,
            "exhausted": stopped,
            **({"reason": reason} if stopped and (reason := self.last) else {}),
        }
        if stopped:
            meta["interrupted"] = True  # a stored run stays resumable: --resume continues within a new budget


def check_budget(budget: Budget | None, prices: Any, agents: list[Any], judge: Any) -> None:
    """Before anything runs: a cost budget needs prices, and a price for every model named up front."""
    if budget is None or budget.cost is None:
        return
    if not prices:
        raise ConfigError(
            "a cost budget needs prices: give prices= (--prices FILE, or [prices.MODEL] in evalnb.toml)",
            code="INVALID_VALUE",
        )
    named = [getattr(a, "model", None) for a in agents]
    if judge is not None and getattr(judge, "kind", None) == "llm" and not getattr(judge, "prices", None):
        named.append(getattr(judge, "model", None))
    missing = sorted({m for m in named if isinstance(m, str) and m and prices.find(m) is None})
    if missing:
        raise ConfigError(
            f"a cost budget needs every model priced; no price for {', '.join(missing)} (add it to the prices)",
            code="INVALID_VALUE",
        )
