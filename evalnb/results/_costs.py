"""``result.costs()`` and the cost totals reports show, derived from the ``runs`` and ``scores`` frames.

docs/costs.md: a call whose model has no price costs ``NA``; a total over calls of which one is unpriced is
``NA`` too (a sum that leaves out what it cannot price would look cheaper than the run was). Costs of failed and
degraded case runs count: they were paid for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results._result import Result

__all__ = ["COSTS_COLUMNS", "CostTotals", "costs", "totals"]

COSTS_COLUMNS: dict[str, str] = {
    "source": "string",
    "model": "string",
    "calls": "Int64",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "cached_tokens": "Int64",
    "reasoning_tokens": "Int64",
    "cost": "float64",
    "cost_per_case": "float64",
    "cost_per_passed_case": "float64",
}

_TOKENS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")


def _calls(result: Result) -> list[tuple[str, pd.DataFrame]]:
    """The agent's calls (run rows that reached the agent) and the judge's (score rows with usage or cost)."""
    runs = result.runs
    agent = runs[runs["status"] != "skipped"]
    agent = agent.assign(model=agent["model"].fillna(agent["agent"]))
    scores = result.scores
    judged = scores[scores["judge"].notna() & (scores["prompt_tokens"].notna() | scores["cost"].notna())]
    judged = judged.assign(model=judged["judge_model"].fillna(judged["judge"]))
    return [("agent", agent), ("judge", judged)]


def _cost(frame: pd.DataFrame) -> float | None:
    """The cost of some calls: None when one of them used tokens and has no cost (unpriced), or none is priced."""
    priced = frame["cost"].notna()
    if not priced.any():
        return None
    if (frame["prompt_tokens"].notna() & ~priced).any():
        return None
    return float(frame.loc[priced, "cost"].sum())


def _case_counts(result: Result) -> tuple[int, int]:
    """Cases that ran (a row not skipped) and cases that passed."""
    cases = result.cases
    ran = result.runs.loc[result.runs["status"] != "skipped", "case_id"].nunique()
    return int(ran), int((cases["status"] == "passed").sum())


def _per(cost: float | None, n: int) -> float:
    return cost / n if cost is not None and n else math.nan


def costs(result: Result) -> pd.DataFrame:
    """One row per source (``agent``, ``judge``) and model: calls, tokens, cost, cost per case and per passed
    case (docs/costs.md). Costs are NA where a call had no price.

    Example::

        result.costs()[["source", "model", "calls", "cost", "cost_per_case"]]
    """
    import pandas as pd

    from evalnb.results._frames import make_frame

    ran, passed = _case_counts(result)
    rows: list[dict[str, Any]] = []
    for source, frame in _calls(result):
        if frame.empty:
            continue
        for model, group in frame.groupby("model", sort=True, dropna=False):
            cost = _cost(group)
            rows.append(
                {
                    "source": source,
                    "model": None if pd.isna(model) else str(model),
                    "calls": len(group),
                    **{k: _sum(group[k]) for k in _TOKENS},
                    "cost": cost,
                    "cost_per_case": _per(cost, ran),
                    "cost_per_passed_case": _per(cost, passed),
                }
            )
    return make_frame(rows, COSTS_COLUMNS)


def _sum(column: pd.Series) -> Any:
    return int(column.sum()) if column.notna().any() else None


@dataclass(frozen=True)
class CostTotals:
    """A run's totals: tokens of agent and judge calls, cost (None: unknown), cost per case, unpriced models."""

    tokens: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None
    cost_per_case: float | None
    unpriced: tuple[str, ...]
    priced: bool = True

    @property
    def any(self) -> bool:
        """Whether there is anything to show (some call reported usage or a cost)."""
        return bool(self.tokens) or self.cost is not None

    def line(self) -> str:
        """``tokens 12,345 (prompt 10,000, completion 2,345) · cost $0.0123 ($0.0012 per case)``."""
        tokens = (
            f"tokens {self.tokens:,} (prompt {self.prompt_tokens:,}, completion {self.completion_tokens:,})"
        )
        if not self.priced:
            return tokens  # no prices given: no cost is expected
        cost = "cost NA" if self.cost is None else f"cost ${self.cost:.4g}"
        if self.cost is not None and self.cost_per_case is not None:
            cost += f" (${self.cost_per_case:.4g} per case)"
        if self.unpriced:
            cost += f"; no price for {', '.join(self.unpriced)}"
        return f"{tokens} · {cost}"


def totals(result: Result) -> CostTotals:
    """The run's cost totals (agent and judge together), as the reports show them.

    Example::

        totals(result).line()
    """
    prompt = completion = 0
    parts: list[pd.DataFrame] = []
    for _, frame in _calls(result):
        prompt += int(frame["prompt_tokens"].sum()) if frame["prompt_tokens"].notna().any() else 0
        completion += int(frame["completion_tokens"].sum()) if frame["completion_tokens"].notna().any() else 0
        if not frame.empty:
            parts.append(frame[["cost", "prompt_tokens"]])
    cost: float | None = None
    if parts:
        import pandas as pd

        cost = _cost(pd.concat(parts, ignore_index=True))
    ran, _ = _case_counts(result)
    unpriced = tuple(result.meta.unpriced or ())
    return CostTotals(
        tokens=prompt + completion,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost=cost,
        cost_per_case=cost / ran if cost is not None and ran else None,
        unpriced=unpriced,
        priced=cost is not None or bool(unpriced) or bool((result.meta.options or {}).get("priced_models")),
    )
