"""The statistics of pairwise judging: b's win rate over cases and its test; Bradley-Terry-Davidson strengths.

docs/comparison.md, pairwise:

* **Cases are the unit.** Each judged pair (case x turn x run) scores b's share: 1 when b wins, 0.5 for a tie,
  0 when a wins (or, when the judge gave the verdict's probabilities in every order, the probability-weighted
  share ``p(b better) + p(tie) / 2`` averaged over the orders). A case's score is the mean over its pairs, so
  its runs and turns go together; ``win_rate`` is the mean over cases.
* **The test** of "b is worse" is the paired sign-flip test of the case scores about 0.5 (the comparison gate's
  test, :class:`~evalnb.comparison._stats.SignFlip`): with equal versions, swapping the names a and b swaps
  every verdict (a judge sees the same two answers in the other roles), so each case's ``score - 0.5`` is as
  likely to be positive as negative. A case judged a tie (0.5) carries no sign: ties are neither wins nor
  losses and do not dilute the test.
* **The interval** of the win rate is the Wilson score interval with the effective number of cases (the
  comparison's interval of a bounded mean, :func:`~evalnb.comparison._stats.bounded_interval`, with Student's
  t): a win rate of 100 % over 12 cases is not known to be 100 %. It describes; the test decides.
* **Several versions:** the Davidson (1970) extension of Bradley-Terry, ``P(i beats j) = pi_i / (pi_i + pi_j +
  nu sqrt(pi_i pi_j))`` and ``P(tie) = nu sqrt(pi_i pi_j) / (...)``, fitted by Newton's method on the
  log-strengths (a weak normal prior, sd 4, keeps a version that won every comparison finite); intervals from
  a bootstrap over cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb.comparison._stats import SignFlip, bounded_interval

if TYPE_CHECKING:
    import numpy as np

__all__ = ["WinRate", "bootstrap_strengths", "davidson", "win_rate_test"]

PRIOR_SD = 4.0


@dataclass(frozen=True)
class WinRate:
    """b's win rate over cases, its two-sided interval, and the one-sided p-values of "b is worse" / better."""

    win_rate: float
    ci_low: float
    ci_high: float
    p_value: float
    p_better: float
    cases: int
    can_reject: bool


def win_rate_test(scores: Any, *, confidence: float, seed: int = 0, draws: int = 9999) -> WinRate:
    """Test "b is worse" on per-case scores (b's share in [0, 1]); the interval at ``confidence`` (two-sided).

    Example::

        t = win_rate_test(np.array([0.0] * 8 + [0.5] * 4), confidence=0.95)
        round(t.win_rate, 3), t.p_value < 0.05
        # (0.167, True)
    """
    import numpy as np

    s = np.asarray(scores, dtype=float)
    n = len(s)
    if n == 0:
        return WinRate(math.nan, math.nan, math.nan, math.nan, math.nan, 0, False)
    alpha = 1.0 - confidence
    sf = SignFlip(s - 0.5, draws=draws, seed=seed)
    mean = float(s.mean())
    var = float(((s - mean) ** 2).sum() / (n * (n - 1))) if n > 1 else math.nan
    lo, hi = bounded_interval(
        np.array([mean]), np.array([var]), np.array([n]), low=0.0, high=1.0, confidence=confidence
    )
    return WinRate(
        win_rate=mean,
        ci_low=float(lo[0]),
        ci_high=float(hi[0]),
        p_value=sf.p_below(0.0),
        p_better=sf.p_above(0.0),
        cases=n,
        can_reject=sf.can_reject(alpha) and sf.min_p(0.0) <= alpha,
    )


# --------------------------------------------------------------------------------------------------
# Bradley-Terry with Davidson's ties
# --------------------------------------------------------------------------------------------------


def _gradient(x: np.ndarray, wins: np.ndarray, ties: np.ndarray) -> tuple[float, np.ndarray]:
    """Log-posterior and its gradient in ``x = (theta_1..theta_k, log nu)``."""
    import numpy as np

    k = len(x) - 1
    theta, lam = x[:k], x[k]
    ti, tj = theta[:, None], theta[None, :]
    a, b = np.exp(ti - np.maximum(ti, tj)), np.exp(tj - np.maximum(ti, tj))
    c = np.exp(lam + (ti + tj) / 2 - np.maximum(ti, tj))
    d = a + b + c
    n = wins + wins.T + ties  # comparisons of each pair (ties counted in both cells, halved below)
    iu = np.triu_indices(k, 1)
    log_d = np.log(d) + np.maximum(ti, tj)
    ll = float(
        (wins * theta[:, None]).sum()
        + (ties[iu] * (lam + (ti + tj)[iu] / 2)).sum()
        - (n[iu] * log_d[iu]).sum()
    )
    ll -= float((theta**2).sum() + lam**2) / (2 * PRIOR_SD**2)
    share = (a + c / 2) / d  # d log D / d theta_i for the pair (i, j)
    g_theta = wins.sum(axis=1) + ties.sum(axis=1) / 2 - (n * share).sum(axis=1)
    g_theta -= theta / PRIOR_SD**2
    g_lam = float(ties[iu].sum() - (n[iu] * (c / d)[iu]).sum()) - lam / PRIOR_SD**2
    return ll, np.append(g_theta, g_lam)


def davidson(wins: Any, ties: Any, *, iterations: int = 100) -> tuple[np.ndarray, float]:
    """Fit log-strengths (centred on 0) and the tie parameter ``nu`` from pair counts.

    Args:
        wins: ``k x k``; ``wins[i, j]`` is how often ``i`` beat ``j`` (fractions allowed).
        ties: ``k x k`` symmetric; ``ties[i, j]`` the ties of ``i`` and ``j``.

    Example::

        theta, nu = davidson(np.array([[0, 8], [2, 0]]), np.zeros((2, 2)))
        theta[0] > theta[1]
        # True
    """
    import numpy as np

    wins = np.asarray(wins, dtype=float)
    ties = np.asarray(ties, dtype=float)
    ties = (ties + ties.T) / 2
    np.fill_diagonal(wins, 0.0)
    np.fill_diagonal(ties, 0.0)
    k = len(wins)
    x = np.zeros(k + 1)
    x[k] = -1.0
    ll, g = _gradient(x, wins, ties)
    for _ in range(iterations):
        h = np.empty((k + 1, k + 1))
        eps = 1e-5
        for j in range(k + 1):
            step = np.zeros(k + 1)
            step[j] = eps
            h[:, j] = (_gradient(x + step, wins, ties)[1] - _gradient(x - step, wins, ties)[1]) / (2 * eps)
        h = (h + h.T) / 2 - 1e-9 * np.eye(k + 1)
        try:
            move = np.linalg.solve(-h, g)
        except np.linalg.LinAlgError:
            move = g
        t = 1.0
        while t > 1e-6:
            new_ll, new_g = _gradient(x + t * move, wins, ties)
            if new_ll >= ll - 1e-12:
                break
            t /= 2
        x, ll, g = x + t * move, new_ll, new_g
        if float(np.abs(t * move).max()) < 1e-8:
            break
    theta = x[:k] - x[:k].mean()
    return theta, float(math.exp(x[k]))


def bootstrap_strengths(wins: Any, ties: Any, *, draws: int, seed: int) -> np.ndarray:
    """Log-strengths refitted on ``draws`` resamples of the cases (with replacement): ``draws x k``.

    Args:
        wins: per case, ``C x k x k`` win counts.
        ties: per case, ``C x k x k`` tie counts.
    """
    import numpy as np

    wins = np.asarray(wins, dtype=float)
    ties = np.asarray(ties, dtype=float)
    c = len(wins)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(draws):
        m = rng.multinomial(c, np.full(c, 1.0 / c)).astype(float)
        w = np.tensordot(m, wins, axes=1)
        t = np.tensordot(m, ties, axes=1)
        out.append(davidson(w, t, iterations=50)[0])
    return np.array(out)
