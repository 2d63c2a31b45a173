"""The scale of each check's value: its range and kind, read by comparisons, trends and their words.

One home for what a check's ``value`` can be, beside the registry of what the check does. A comparison
reads it to count a failed score without a value as the worst value of the scale, to word a difference
("pass rate", "1-5 score") and to keep intervals inside the range; ``Store.trend`` keeps its intervals
within ``[low, high]``. A check that is not listed (a user check nobody declared) has no known scale: its
values are taken as they come (``scale_of`` returns ``None``).

A scale also says which way is better. Every built-in check is higher-is-better; a check whose value should
go down (a count of retries, a cost, a latency) declares ``higher_is_better=False`` here, when registering it
(``evalnb.checks.register(..., higher_is_better=False)``) or per use (``CustomCheck(higher_is_better=False)``);
:func:`higher_is_better` reads them in that order of precedence, and the comparison's gate, triage and plans
follow it (``docs/comparison.md``, direction).

Example::

    from evalnb.checks.scales import scale_of, declare
    scale_of("Relevance")
    # Scale(low=1.0, high=5.0, kind='score', label='1-5 score', higher_is_better=True)
    declare("Tone", low=0.0, high=10.0, kind="score", label="0-10 score")
    declare("Retries", low=0.0, high=math.inf, kind="count", higher_is_better=False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

__all__ = ["Scale", "declare", "higher_is_better", "scale_of"]

ScaleKind = Literal["pass/fail", "fraction", "score", "count"]


@dataclass(frozen=True)
class Scale:
    """What a check's value can be.

    Attributes:
        low: the lowest (worst) value.
        high: the highest (best) value; ``math.inf`` for a count.
        kind: ``pass/fail`` (1.0 or 0.0 per score), ``fraction`` (anywhere in [0, 1]), ``score`` (a rating
            such as 1-5) or ``count`` (0, 1, 2, ...).
        label: how a report names it (``pass rate``, ``0-1``, ``1-5 score``, ``count``).
        higher_is_better: which way is better: ``True`` for every built-in check; ``False`` for a value that
            should go down (a count of retries, a cost, a latency), whose worst value is then ``high``.
    """

    low: float
    high: float
    kind: ScaleKind
    label: str
    higher_is_better: bool = True

    @property
    def worst(self) -> float:
        """The worst value of the scale: ``low``, or ``high`` when lower is better (may be infinite)."""
        return self.low if self.higher_is_better else self.high

    @property
    def bounded(self) -> bool:
        """Whether both ends are finite (an interval can be drawn inside them)."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    @property
    def span(self) -> float:
        """``high - low`` (infinite for a count)."""
        return self.high - self.low


PASS_FAIL = Scale(0.0, 1.0, "pass/fail", "pass rate")
FRACTION = Scale(0.0, 1.0, "fraction", "0-1")
JUDGED = Scale(1.0, 5.0, "score", "1-5 score")
COUNT = Scale(0.0, math.inf, "count", "count")
COSINE = Scale(-1.0, 1.0, "score", "cosine")

# check name (the ``check`` column) -> scale of its value; the values are what the checks in this package
# return (text.py, process.py, cube.py, rows.py, judged.py and the judges' parsers).
_SCALES: dict[str, Scale] = {
    "regex": PASS_FAIL,
    "ExactMatch": PASS_FAIL,
    "exit_code": PASS_FAIL,
    "file_exists": PASS_FAIL,
    "intent": PASS_FAIL,
    "refusal": PASS_FAIL,
    "llm_judge": PASS_FAIL,  # the judge's PASS/FAIL verdict
    "insight": FRACTION,  # share of the expected substrings found
    "rows": FRACTION,  # share of expected cells that matched
    "PartialMatch": FRACTION,  # token F1
    "Relevance": JUDGED,
    "Coherence": JUDGED,
    "Groundedness": JUDGED,
    "Similarity": JUDGED,
    "SemanticSimilarity": COSINE,  # the embedding cosine (semantic.py)
    "semantic_similarity": COSINE,
    "similar": COSINE,
    "not-similar": COSINE,
    # promptfoo's asserts (docs/promptfoo.md): pass/fail, an edit distance, a latency and a cost
    **dict.fromkeys(
        [
            f"{neg}{kind}"
            for neg in ("", "not-")
            for kind in (
                "equals",
                "contains",
                "icontains",
                "contains-any",
                "contains-all",
                "icontains-any",
                "icontains-all",
                "starts-with",
                "regex",
                "is-json",
                "contains-json",
            )
        ],
        PASS_FAIL,
    ),
    "llm-rubric": PASS_FAIL,
    "model-graded-closedqa": PASS_FAIL,
    "levenshtein": Scale(0.0, math.inf, "count", "edit distance", higher_is_better=False),
    "latency": Scale(0.0, math.inf, "count", "ms", higher_is_better=False),
    "cost": Scale(0.0, math.inf, "count", "USD", higher_is_better=False),
    "Citations": COUNT,
    "RetrievalQuery": COUNT,
    "RetrievalResult": COUNT,
}


def scale_of(check: str) -> Scale | None:
    """The scale of a check by its name, or of a ``check_id`` (``regex#2`` is a ``regex``); ``None`` if unknown.

    Example::

        scale_of("regex#2").label
        # 'pass rate'
    """
    return _SCALES.get(check) or _SCALES.get(check.split("#", 1)[0])


def declare(
    name: str,
    *,
    low: float,
    high: float,
    kind: ScaleKind = "score",
    label: str | None = None,
    higher_is_better: bool = True,
) -> Scale:
    """Declare the scale of a user check, so comparisons and trends word it and bound it like a built-in.

    ``higher_is_better=False`` declares a value that should go down: the gate then fires when it rises.

    Example::

        declare("NoApology", low=0.0, high=1.0, kind="pass/fail")
        declare("ToolCalls", low=0.0, high=math.inf, kind="count", higher_is_better=False)
    """
    if not low < high:
        raise ValueError(f"a scale needs low < high, got [{low}, {high}]")
    if not isinstance(higher_is_better, bool):
        raise TypeError(f"higher_is_better must be True or False, not {higher_is_better!r}")
    default = "count" if kind == "count" and not math.isfinite(high) else f"{low:g}-{high:g}"
    scale = Scale(float(low), float(high), kind, label or default, higher_is_better)
    _SCALES[name] = scale
    return scale


def higher_is_better(check: str) -> bool:
    """Whether a higher value of the check (by name or ``check_id``) is better.

    Your registration's ``higher_is_better`` first (``evalnb.checks.register`` / ``check``), then the declared
    or built-in scale's, else ``True``. A check spec that says it per use (``CustomCheck.higher_is_better``) is
    recorded in the run's options and read from there by the comparison.

    Example::

        higher_is_better("Relevance")
        # True
    """
    from evalnb.checks._registry import user_definition

    name = check.split("#", 1)[0]
    for key in (check, name):
        hit = user_definition(key)
        if hit is not None and hit.higher_is_better is not None:
            return hit.higher_is_better
    scale = scale_of(check)
    return True if scale is None else scale.higher_is_better
