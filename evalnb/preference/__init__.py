"""Preference judging: which version is better when there is no reference answer.

* :func:`pairwise` (also ``evalnb.pairwise``) has a judge compare two versions' answers, case by case, in both
  orders, and returns a :class:`Pairwise`: the verdicts per case, b's win rate over cases with its interval,
  the one-sided test of "b is worse", the judge's position bias and an exit code;
* :func:`rank` (also ``evalnb.rank``) ranks several versions from their pairwise verdicts (Bradley-Terry
  with Davidson's ties) with intervals from a bootstrap over cases, as a :class:`Ranking`.

The judge is a callable ``f(prompt, first, second) -> "first" | "second" | "tie"``, a model judge from
``evalnb.judges`` (given a pairwise prompt), or an offline judge when every turn has an expected answer. See
``docs/comparison.md``.

Example::

    pw = evalnb.pairwise(a, b, judge="openai:gpt-4o-mini")
    pw.win_rate, pw.ci_low, pw.ci_high, pw.p_value, pw.position_bias, pw.exit_code
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.preference._core import pairwise, pairwise_async
from evalnb.preference._options import PairwiseOptions
from evalnb.preference._rank import Ranking, rank, rank_async
from evalnb.preference._result import Pairwise

__all__ = ["Pairwise", "PairwiseOptions", "Ranking", "pairwise", "pairwise_async", "rank", "rank_async"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
