"""``PairwiseOptions``: the options ``pairwise``, ``pairwise_async``, ``rank`` and ``rank_async`` share, in one
place: each takes them as keywords or as ``options=PairwiseOptions(...)``, and the judging below reads the one
object.

Example::

    opts = PairwiseOptions(judge="openai:gpt-4o-mini", orderings=1, seed=7)
    evalnb.pairwise(a, b, options=opts)
    evalnb.rank([a, b, c], options=opts)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.typing import JudgeLike

__all__ = ["PairwiseOptions", "field_names"]


@dataclass(frozen=True, kw_only=True)
class PairwiseOptions:
    """How a judge compares two versions' answers (each as :func:`evalnb.pairwise` documents it).

    Attributes:
        judge: a callable ``f(prompt, first, second) -> "first" | "second" | "tie"``, a model judge (given a
            pairwise prompt), or ``"heuristic"`` / ``"embedding"`` when every turn has an expected answer.
        rubric: the criterion a model judge compares by.
        orderings: 2 judges each pair in both orders; 1 once, in a seeded random order.
        confidence: the confidence of the test and of the intervals.
        seed: the seed of the random orders (and of the test's sign patterns, of rank's bootstrap).
        concurrency: judge calls at a time.
        cache: the judge cache option (``None`` keeps the judge's own).
        base_url: the endpoint of an ``"openai:MODEL"`` string.

    Example::

        PairwiseOptions(judge="heuristic", orderings=1).orderings     # 1
    """

    judge: JudgeLike = None
    rubric: str | None = None
    orderings: int = 2
    confidence: float = 0.95
    seed: int = 0
    concurrency: int = 8
    cache: Any = None
    base_url: str | None = None


def field_names() -> tuple[str, ...]:
    """The names of the pairwise options, in order."""
    return tuple(f.name for f in dataclasses.fields(PairwiseOptions))
