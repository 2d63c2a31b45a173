"""The outcome of one check on one response: :class:`Score` (public as ``evalnb.checks.Score``).

It sits below the checks and the judges, which both make scores: a judged check's score comes from
``evalnb.judges`` and the check registry (``evalnb.checks``) hands it on, so neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Score", "ScoreStatus"]

ScoreStatus = Literal["ok", "degraded", "not_checked", "skipped"]


@dataclass(frozen=True, slots=True)
class Score:
    """The outcome of one check on one response.

    Attributes:
        value: the numeric value (1-5 score, F1, count, 1.0/0.0 for booleans); ``None`` when not checked.
        passed: pass flag; ``None`` when the check was not checked (e.g. after a cube intent mismatch).
        reason: one readable sentence.
        status: ``ok``; ``degraded`` when the check could not run (a judge failed); ``not_checked`` when the
            check was moot (a cube intent mismatch); ``skipped`` when the turn had no answer to check.
        judge: the judge that scored it, for judged checks (``heuristic`` for the offline one).
        usage: judge token usage (``prompt_tokens``, ``completion_tokens``, ``cached_tokens``,
            ``reasoning_tokens``), every attempt's added.
        cost: judge cost in USD (docs/costs.md), when the judge's model has a price; None otherwise.
        details: structured detail (row mismatches) that a result frame expands.
        weighted: for a 1-5 judged check whose judge returned token probabilities, the probability-weighted
            score ``sum p(k) * k`` over the score tokens 1..5 (renormalised), as G-Eval does; the pass
            decision uses it. ``value`` keeps the score the judge wrote.
        spread: the standard deviation of that distribution, ``sqrt(sum p(k) * (k - weighted)**2)``: how
            unsure the judge was (0 when it put all its probability on one score).
        model: the model that answered a judged check (what its cost is priced by), when known.
    """

    value: float | None
    passed: bool | None
    reason: str = ""
    status: ScoreStatus = "ok"
    judge: str | None = None
    usage: dict[str, Any] | None = None
    cost: float | None = None
    details: list[dict[str, Any]] | None = None
    weighted: float | None = None
    spread: float | None = None
    model: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # A frozen dataclass unpickles through a Python-level __setstate__ (dataclasses'), ten times the cost of
        # its constructor: scores travel back from cluster workers by the hundred thousand.
        return (
            Score,
            (
                self.value,
                self.passed,
                self.reason,
                self.status,
                self.judge,
                self.usage,
                self.cost,
                self.details,
                self.weighted,
                self.spread,
                self.model,
            ),
        )

    @classmethod
    def of(cls, passed: bool, reason: str = "", value: float | None = None) -> Score:
        """A boolean score whose value is 1.0 or 0.0 unless given."""
        return cls(value=float(passed) if value is None else value, passed=passed, reason=reason)

    @classmethod
    def degraded(cls, reason: str, **kw: Any) -> Score:
        """A check that could not run: never a pass, never a NaN counted as a score."""
        return cls(value=None, passed=False, reason=reason, status="degraded", **kw)

    @classmethod
    def not_checked(cls, reason: str) -> Score:
        """A check that was moot for this answer (it neither passed nor failed)."""
        return cls(value=None, passed=None, reason=reason, status="not_checked")
