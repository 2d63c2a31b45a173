"""Anytime-valid one-sided confidence sequences for a mean paired difference, by betting.

The sequential gate (``docs/comparison.md``, "Deciding with fewer cases") looks at the paired per-case
differences after every batch of cases and stops once each gating check is decided. Looking after every
batch at a fixed-sample test inflates its false alarms; a *confidence sequence* does not: it holds at every
look at once, so the run may stop whenever it likes.

The construction is the betting confidence sequence of Waudby-Smith and Ramdas (2023) for a bounded mean.
A check's oriented differences ``g`` (positive: better) lie in ``[-span, span]`` (``span`` the width of the
check's scale: 1 for a pass rate, 4 for a 1-5 score) and are put on ``[0, 1]`` as ``y = (g + span) / (2 span)``.
Against "the mean is at most ``m``", a gambler starting with 1 bets ``lambda_i`` on each new case and holds
``K_t(m) = prod (1 + lambda_i (y_i - m))``; against "at least ``m``", ``prod (1 - lambda_i (y_i - m))``. Under
the hypothesis each is a nonnegative supermartingale, so by Ville's inequality it reaches ``1 / alpha`` with
probability at most ``alpha`` *ever*: ``1 / max K`` is an anytime-valid p-value. The bets are the predictable
plug-in of that paper, ``lambda_i = min(CAP, sqrt(2 log(1 / alpha) / (s2_{i-1} i log(1 + i))))``, with
``s2_{i-1}`` the running variance of the cases before ``i``: the sequence narrows like the observed variance
allows (the U-shaped mix of always-passing, always-failing and flaky cases has a paired variance far below
the range's), where a bound from the range alone (Hoeffding) needs about three times the cases.

The bets do not depend on ``m`` (they are capped at ``CAP`` instead of ``CAP / m``), so each capital is
monotone in ``m``: the set of means not rejected is an interval ``[lower, upper]``, and "the interval lies
entirely below ``-margin``" is exactly "the test at ``-margin`` rejects". The p-values are over the looks
(batch ends) only, the running maximum of the capital, so a decision once taken stays.

Several checks (and suites) share one error rate by Holm's procedure on these p-values at every look: the
running minimum of an anytime-valid p-value is a valid p-value at any stopping time, and Holm needs nothing
more. Each direction ("worse", "not worse") is its own family, as in the fixed gate.

Everything is vectorised over leading axes (trials of a simulation, checks), with numpy only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CAP",
    "NOT_DECIDED",
    "NOT_WORSE",
    "WORSE",
    "Track",
    "TrackVerdict",
    "bets",
    "bounds",
    "decide_family",
    "decide_tracks",
    "holm_levels",
    "looks_of",
    "p_values",
    "to_unit",
]

CAP = 0.75
"""The largest bet, as a share of the capital (a loss of all of it on one case must be impossible)."""

WORSE, NOT_DECIDED, NOT_WORSE = -1, 0, 1
"""The decisions of one check: worse beyond the margin, not decided yet, not worse beyond it."""


def to_unit(g: Any, span: float) -> np.ndarray:
    """Differences in ``[-span, span]`` put on ``[0, 1]`` (clipped: a value outside its scale is its end)."""
    import numpy as np

    return np.clip((np.asarray(g, dtype=float) + span) / (2.0 * span), 0.0, 1.0)


def bets(y: np.ndarray, *, level: float) -> np.ndarray:
    """The predictable bets ``lambda_i`` for ``y`` in ``[0, 1]`` (last axis: cases in run order).

    ``lambda_i`` uses only ``y_1 .. y_{i-1}``: the running mean ``(1/2 + sum y) / (t + 1)`` and variance
    ``(1/4 + sum (y_j - mean_j)^2) / (t + 1)`` (both start from a fair prior), tuned for ``level``.
    """
    import numpy as np

    y = np.asarray(y, dtype=float)
    n = y.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mean = (0.5 + np.cumsum(y, axis=-1)) / (t + 1.0)
    var = (0.25 + np.cumsum((y - mean) ** 2, axis=-1)) / (t + 1.0)
    before = np.concatenate([np.full((*y.shape[:-1], 1), 0.25), var[..., :-1]], axis=-1)
    lam = np.sqrt(2.0 * math.log(1.0 / level) / (before * t * np.log1p(t)))
    return np.minimum(lam, CAP)


def looks_of(counts: Any, n: int) -> np.ndarray:
    """The looks as indices into the cases: the last case seen at each look (counts of cases seen, clipped to
    ``1..n``). Looks before any case count nothing and are dropped."""
    import numpy as np

    c = np.asarray(counts, dtype=np.int64)
    return np.unique(np.clip(c[c > 0], 1, max(n, 1))) - 1


def _log_capital(y: np.ndarray, lam: np.ndarray, m: Any, side: int) -> np.ndarray:
    """Cumulative log capital of the bet that the mean is above ``m`` (``side`` 1) or below it (-1)."""
    import numpy as np

    m = np.asarray(m, dtype=float)[..., None] if np.ndim(m) else m
    return np.cumsum(np.log1p(side * lam * (y - m)), axis=-1)


def p_values(
    y: np.ndarray, looks: np.ndarray, m: Any, *, level: float, lam: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Anytime-valid one-sided p-values at every look, against ``m`` (on the ``[0, 1]`` scale).

    Returns ``(p_worse, p_not_worse)``, each shaped ``(..., looks)``: ``p_worse`` is small when the mean is
    below ``m`` (the candidate is worse than the margin allows), ``p_not_worse`` when it is above. Both are
    ``1 / max K`` over the looks so far, at most 1.
    """
    import numpy as np

    lam = bets(y, level=level) if lam is None else lam
    if y.shape[-1] == 0 or len(looks) == 0:
        ones = np.ones((*y.shape[:-1], len(looks)))
        return ones, ones
    below = np.maximum.accumulate(_log_capital(y, lam, m, -1)[..., looks], axis=-1)
    above = np.maximum.accumulate(_log_capital(y, lam, m, 1)[..., looks], axis=-1)
    return np.minimum(1.0, np.exp(-below)), np.minimum(1.0, np.exp(-above))


def bounds(y: np.ndarray, looks: np.ndarray, *, level: float, alpha: Any) -> tuple[np.ndarray, np.ndarray]:
    """The one-sided bounds ``(lower, upper)`` on the ``[0, 1]`` scale of the sequence at the last look.

    ``lower`` is the smallest mean "at most m" cannot reject at ``alpha`` over the looks (``upper`` the
    largest for "at least m"); each capital is monotone in ``m``, so bisection finds them. Vectorised over the
    leading axes; ``alpha`` may be an array over them.
    """
    import numpy as np

    y = np.asarray(y, dtype=float)
    lead = y.shape[:-1]
    thresh = np.broadcast_to(np.log(1.0 / np.asarray(alpha, dtype=float)), lead)
    if y.shape[-1] == 0 or len(looks) == 0:
        return np.zeros(lead), np.ones(lead)
    lam = bets(y, level=level)

    def best(m: np.ndarray, side: int) -> np.ndarray:
        return np.asarray(_log_capital(y, lam, m, side)[..., looks].max(axis=-1))

    out = []
    for side in (1, -1):
        # side 1: capital against "mean <= m" falls as m rises; the lower bound is where it meets the threshold
        lo, hi = np.zeros(lead), np.ones(lead)
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            rejected = best(mid, side) >= thresh
            if side == 1:
                lo, hi = np.where(rejected, mid, lo), np.where(rejected, hi, mid)
            else:
                lo, hi = np.where(rejected, lo, mid), np.where(rejected, mid, hi)
        # the side that is not rejected at the end of the range keeps the end (no evidence beyond it)
        edge = best(np.zeros(lead) if side == 1 else np.ones(lead), side) < thresh
        out.append(np.where(edge, 0.0 if side == 1 else 1.0, (lo + hi) / 2))
    return out[0], out[1]


def holm_levels(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Holm's step-down over the last axis: which hypotheses are rejected, and each one's level.

    The level of a rejected hypothesis is the one it was rejected at (``alpha / (k - rank)``); of one not
    rejected, the level it would need next (``alpha / (k - rejected)``). Vectorised over the leading axes.
    """
    import numpy as np

    p = np.asarray(p, dtype=float)
    k = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1)
    steps = alpha / (k - np.arange(k))
    ok = np.logical_and.accumulate(ranked <= steps, axis=-1)
    n_rejected = ok.sum(axis=-1, keepdims=True)
    level_sorted = np.where(ok, steps, alpha / np.maximum(k - n_rejected, 1))
    rejected, level = np.empty_like(ok), np.empty_like(level_sorted)
    np.put_along_axis(rejected, order, ok, axis=-1)
    np.put_along_axis(level, order, level_sorted, axis=-1)
    return rejected, level


def decide_family(
    p_worse: np.ndarray, p_not_worse: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """The decisions of a family of checks, look by look: Holm over the checks in each direction.

    ``p_worse`` and ``p_not_worse`` are shaped ``(..., checks, looks)`` (running minima, as
    :func:`p_values` gives them). Returns ``(decision, look)`` shaped ``(..., checks)``: :data:`WORSE`,
    :data:`NOT_WORSE` or :data:`NOT_DECIDED`, and the index of the look that decided it (the last look when
    not decided). A decision once taken stays; at a look deciding both ways (possible only at wildly
    different levels) "worse" wins.
    """
    import numpy as np

    pw, pn = np.asarray(p_worse, dtype=float), np.asarray(p_not_worse, dtype=float)
    n_looks = pw.shape[-1]
    decision = np.zeros(pw.shape[:-1], dtype=np.int64)
    look = np.full(pw.shape[:-1], max(n_looks - 1, 0), dtype=np.int64)
    for j in range(n_looks):
        worse, _ = holm_levels(pw[..., j], alpha)
        better, _ = holm_levels(pn[..., j], alpha)
        now = np.where(worse, WORSE, np.where(better, NOT_WORSE, NOT_DECIDED))
        fresh = (decision == NOT_DECIDED) & (now != NOT_DECIDED)
        decision = np.where(fresh, now, decision)
        look = np.where(fresh, j, look)
    return decision, look


class Track:
    """One check's sequence: its oriented paired differences in run order and what each look had seen.

    Args:
        g: the differences (positive: better), in ``[-span, span]``, in the order the cases ran.
        seen: per look (batch end), how many of ``g`` had been seen (non-decreasing, the last ``len(g)``).
        span: the width of the check's scale.
        threshold: the difference the decision is about, ``-margin`` (in the check's units, oriented).
    """

    def __init__(self, g: Any, seen: Any, *, span: float, threshold: float) -> None:
        import numpy as np

        self.g = np.asarray(g, dtype=float)
        self.seen = np.asarray(seen, dtype=np.int64)
        self.span = float(span)
        self.threshold = float(threshold)

    @property
    def y(self) -> np.ndarray:
        return to_unit(self.g, self.span)

    @property
    def m(self) -> float:
        return float(to_unit(self.threshold, self.span))

    def p(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """``(p_worse, p_not_worse)`` at every look (1 at a look that had seen no case)."""
        import numpy as np

        pw, pn = np.ones(len(self.seen)), np.ones(len(self.seen))
        some = self.seen > 0
        if some.any():
            looks = np.clip(self.seen[some], 1, len(self.g)) - 1
            a, b = p_values(self.y, looks, self.m, level=level)
            # p_values takes the running maximum over the looks given: the looks before any case are all 1
            pw[some], pn[some] = a, b
        return pw, pn

    def bounds_at(
        self, look: int, *, level: float, alpha_low: float, alpha_high: float
    ) -> tuple[float, float]:
        """One-sided ``(lower, upper)`` bounds in the check's units, over the looks up to ``look``."""
        import numpy as np

        seen = self.seen[: look + 1]
        seen = seen[seen > 0]
        if not len(seen):
            return -self.span, self.span
        n = int(seen[-1])
        looks = np.clip(seen, 1, n) - 1
        y = self.y[:n]
        low, _ = bounds(y, looks, level=level, alpha=alpha_low)
        _, high = bounds(y, looks, level=level, alpha=alpha_high)
        return float((2 * low - 1) * self.span), float((2 * high - 1) * self.span)


class TrackVerdict:
    """The decision of one check of a family, and the numbers its words quote."""

    def __init__(self, decision: int, look: int, lower: float, upper: float, level: float, p: float) -> None:
        self.decision = decision
        self.look = look
        self.lower = lower
        self.upper = upper
        self.level = level
        self.p = p

    def __repr__(self) -> str:
        return f"TrackVerdict({self.decision}, look {self.look}, [{self.lower:.3g}, {self.upper:.3g}])"


def decide_tracks(tracks: list[Track], *, alpha: float) -> list[TrackVerdict]:
    """The decisions of a family of checks sharing one error rate ``alpha`` (Holm at every look).

    Every track must have the same number of looks. The bets are tuned for ``alpha / len(tracks)``, the level
    a check gets when every check counts (fixed before any data: the sequence stays valid). The bounds are at
    each check's Holm level: the level it was decided at, or the one it would need next.
    """
    import numpy as np

    if not tracks:
        return []
    level = alpha / len(tracks)
    ps = [t.p(level) for t in tracks]
    pw = np.stack([p[0] for p in ps])
    pn = np.stack([p[1] for p in ps])
    decision, look = decide_family(pw, pn, alpha)
    out = []
    for k, track in enumerate(tracks):
        j = int(look[k])
        _, lw = holm_levels(pw[:, j], alpha)
        _, ln = holm_levels(pn[:, j], alpha)
        lower, upper = track.bounds_at(j, level=level, alpha_low=float(ln[k]), alpha_high=float(lw[k]))
        d = int(decision[k])
        # the bounds and the decision come from the same capital: clamp the last bisection step's rounding
        if d == WORSE:
            upper = min(upper, track.threshold)
        elif d == NOT_WORSE:
            lower = max(lower, track.threshold)
        level_k = float(lw[k] if d == WORSE else ln[k] if d == NOT_WORSE else min(lw[k], ln[k]))
        p_k = float(pw[k, j] if d != NOT_WORSE else pn[k, j])
        out.append(TrackVerdict(d, j, lower, upper, level_k, p_k))
    return out
