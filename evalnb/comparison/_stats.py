"""Statistics helpers of the comparison: the normal and Student-t distributions, Holm, exact tests, intervals.

Only the standard library and numpy (no scipy): ``statistics.NormalDist`` for the normal; Student's t through
the regularised incomplete beta function, so a tail probability of ``1e-30`` is computed as such and not as
``1 - 0.999...``; the quantile searches as far as the tail needs. The tests cross-check every helper with scipy.

The exact tests:

* :class:`SignFlip`, the paired randomisation test of the gate. Under "the candidate is the baseline again"
  each case's difference is as likely to be ``+d`` as ``-d``, so the mean difference is compared with its
  values under every sign pattern (all of them up to ``EXACT_CASES`` cases, else ``draws`` random ones). The
  confidence bounds that invert it are order statistics of the means of subsets of the differences (Hartigan
  1969), so the bound, the p-value and the verdict always agree, and a handful of discordant pass/fail cases
  gives the exact (sign test) answer instead of an anti-conservative t.
* :func:`fisher_exact`, two-sided, computed on exact integers (the per-case test of pass/fail runs).
* :func:`permutation_p`, the exact two-sample permutation test of runs (the per-case test of scores).
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "EXACT_CASES",
    "SignFlip",
    "bounded_interval",
    "cluster_mean",
    "fisher_exact",
    "holm",
    "norm_isf",
    "norm_ppf",
    "norm_sf",
    "permutation_p",
    "t_cdf",
    "t_isf",
    "t_ppf",
    "t_sf",
]

_NORMAL = NormalDist()
#: Up to this many cases the sign-flip test enumerates every sign pattern (2**n of them).
EXACT_CASES = 16
#: Up to this many ways to split the runs the permutation test enumerates them all.
_EXACT_SPLITS = 20_000
_TIE = 1e-12


# --------------------------------------------------------------------------------------------------
# Normal and Student's t
# --------------------------------------------------------------------------------------------------


def norm_ppf(p: float) -> float:
    """Quantile of the standard normal.

    Example::

        round(norm_ppf(0.975), 4)
        # 1.96
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    return _NORMAL.inv_cdf(p)


def norm_sf(x: float) -> float:
    """Upper tail ``P(Z > x)``, computed directly (``erfc``), so far tails keep their digits."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def norm_isf(p: float) -> float:
    """``x`` with ``P(Z > x) = p`` (the upper-tail quantile), for any ``p`` in (0, 1)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    return -_NORMAL.inv_cdf(p) if p < 0.5 else _NORMAL.inv_cdf(1.0 - p)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    # converges in O(sqrt(max(a, b))) terms; generous for any df the comparison meets
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """Upper tail ``P(T > t)`` of Student's t with ``df`` degrees of freedom (any real ``df > 0``).

    Tails are computed directly from the incomplete beta function: ``t_sf(40, 3)`` is about ``1.7e-5``
    exactly, not a rounded ``1 - 0.99998``.

    Example::

        round(t_sf(2.228139, 10), 6)
        # 0.025
    """
    if df <= 0:
        raise ValueError(f"df must be > 0, got {df}")
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if df > 1e7:  # indistinguishable from the normal at double precision
        return norm_sf(t)
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return tail if t > 0 else 1.0 - tail


def t_cdf(t: float, df: float) -> float:
    """``P(T <= t)`` of Student's t; the lower tail is computed directly too."""
    return t_sf(-t, df)


def t_isf(p: float, df: float) -> float:
    """``t`` with ``P(T > t) = p``: the upper-tail quantile, for any ``p`` in (0, 1) and ``df > 0``.

    The search brackets the answer by doubling (no fixed upper limit: ``t_isf(1e-12, 1)`` is about
    ``3.2e11``) and then bisects.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    if p == 0.5:
        return 0.0
    if p > 0.5:
        return -t_isf(1.0 - p, df)
    lo, hi = 0.0, max(1.0, norm_isf(p))
    while t_sf(hi, df) > p:
        lo, hi = hi, hi * 2.0
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if t_sf(mid, df) > p:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t (``t_ppf(0.975, 10)`` is 2.228)."""
    return t_isf(1.0 - q, df) if q > 0.5 else -t_isf(q, df)


# --------------------------------------------------------------------------------------------------
# Multiplicity
# --------------------------------------------------------------------------------------------------


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error control, no independence assumption)."""
    import numpy as np

    p = np.asarray(p, dtype=float)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out


# --------------------------------------------------------------------------------------------------
# Per-case exact tests
# --------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def fisher_exact(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Two-sided Fisher exact test of ``k_a`` passes in ``n_a`` runs against ``k_b`` in ``n_b``.

    The p-value sums the hypergeometric probabilities of every table at most as likely as the observed
    one, on exact integers (so 0/10 against 10/10 gives ``1.08e-05`` with all its digits).

    Example::

        round(fisher_exact(3, 3, 0, 3), 3)
        # 0.1
    """
    total, size = k_a + k_b, n_a + n_b
    lo, hi = max(0, total - n_b), min(total, n_a)
    weights = {x: math.comb(total, x) * math.comb(size - total, n_a - x) for x in range(lo, hi + 1)}
    observed = weights[k_a]
    extreme = sum(w for w in weights.values() if w <= observed)
    return min(1.0, extreme / math.comb(size, n_a))


@functools.lru_cache(maxsize=64)
def _splits(size: int, k: int) -> np.ndarray:
    import numpy as np

    return np.array(list(itertools.combinations(range(size), k)), dtype=np.intp)


def permutation_p(
    a: np.ndarray, b: np.ndarray, *, draws: int = 9999, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Two-sided permutation p-values of ``|mean(b) - mean(a)|`` for many cells at once.

    ``a`` is ``cells x runs_a`` and ``b`` is ``cells x runs_b`` (every cell with the same run counts). All
    ways to split a cell's runs are enumerated up to 20,000 of them (3 runs against 3 have 20, so the
    smallest two-sided p-value is 0.1); beyond that ``draws`` random splits give ``(1 + hits) / (draws + 1)``.
    """
    import numpy as np

    a, b = np.atleast_2d(a).astype(float), np.atleast_2d(b).astype(float)
    ra, rb = a.shape[1], b.shape[1]
    z = np.concatenate([a, b], axis=1)
    size = ra + rb
    total = z.sum(axis=1, keepdims=True)
    observed = np.abs(b.mean(axis=1) - a.mean(axis=1))[:, None]
    # the tie margin is relative to the values' size, so equal splits count as at least as extreme
    tol = _TIE * (1.0 + np.abs(z).max(axis=1, keepdims=True))
    if math.comb(size, rb) <= _EXACT_SPLITS:
        sums = z[:, _splits(size, rb)].sum(axis=2)
        stat = np.abs(sums / rb - (total - sums) / ra)
        return np.asarray((stat >= observed - tol).mean(axis=1))
    rng = rng or np.random.default_rng(0)
    hits = np.zeros(len(z))
    for i in range(len(z)):
        perm = rng.permuted(np.broadcast_to(z[i], (draws, size)), axis=1)
        sb = perm[:, ra:].sum(axis=1)
        stat = np.abs(sb / rb - (total[i, 0] - sb) / ra)
        hits[i] = (stat >= observed[i, 0] - tol[i, 0]).sum()
    return np.asarray((1.0 + hits) / (draws + 1.0))


# --------------------------------------------------------------------------------------------------
# The paired sign-flip test of the gate
# --------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=EXACT_CASES + 1)
def _all_subsets(n: int) -> np.ndarray:
    import numpy as np

    codes = np.arange(1, 2**n, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n)) & 1).astype(np.uint8)


@functools.lru_cache(maxsize=8)
def _random_subsets(n: int, draws: int, seed: int) -> np.ndarray:
    import numpy as np

    rng = np.random.default_rng([seed, n, draws])
    bits = np.unpackbits(rng.integers(0, 256, size=(draws, (n + 7) // 8), dtype=np.uint8), axis=1)[:, :n]
    # the empty subset is "no flip" (the observed data): it always counts and is added as the +1 below
    return bits[bits.any(axis=1)]


_HELD_BITS = 4_000_000
"""Up to this many sign bits (draws x cases) a test's subsets are made at once, as floats, and kept for the next
test of as many cases; beyond it they are drawn in blocks of ``_BLOCK_ROWS`` and let go (100,000 cases: 1 GB of
bits, and a float copy of 3 GB per 4,096 of them, before)."""

_BLOCK_ROWS = 16
"""Random subsets drawn and multiplied at once when they are not held: a float buffer this many rows high is
filled again for each block, so no block allocates (a fresh 800 MB buffer per block cost more in page faults
than the product), and the product is the float kernel's (numpy's mixed uint8 x float product is not BLAS's)."""

_GROUPED_SHARE = 256
"""Differences with at most one distinct value per this many cases are flipped value by value (see
``_grouped_sums``): a binomial draw costs about as much as 140 cases' share of the signs' product (100,000
cases at 9,999 draws: 1,562 values took 1.85 s that way, the signs 0.82 s), so the values must be fewer."""


@functools.lru_cache(maxsize=16)
def _subsets(n: int, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The subsets (rows of 0/1, as floats: fast products) and their sizes, for at most ``_HELD_BITS`` bits."""
    import numpy as np

    bits = _all_subsets(n) if n <= EXACT_CASES else _random_subsets(n, draws, seed)
    return bits.astype(np.float64), bits.sum(axis=1).astype(float)


@functools.lru_cache(maxsize=1)
def _byte_ones() -> np.ndarray:
    import numpy as np

    return np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1)


def _set_bits(raw: np.ndarray) -> np.ndarray:
    """The number of bits set in each row of bytes."""
    import numpy as np

    count = getattr(np, "bitwise_count", None)  # numpy 2.0 and later
    if count is not None:
        return count(raw).sum(axis=1, dtype=np.int64)
    return _byte_ones()[raw].sum(axis=1)


def _random_bytes(rng: np.random.Generator, rows: int, width: int) -> np.ndarray:
    """``rng.integers(0, 256, size=(rows, width), dtype=uint8)``, the same bytes, drawn four at a time.

    A call for uint8 takes each 32-bit output of the generator apart into four bytes, lowest first, and drops
    what is left at its end; a call for full-range uint32 returns those outputs whole, which read as bytes on a
    little-endian machine are the same bytes, at a fifth less of the time.
    """
    import numpy as np

    count = rows * width
    if sys.byteorder != "little":
        return rng.integers(0, 256, size=(rows, width), dtype=np.uint8)
    words = rng.integers(0, 1 << 32, size=(count + 3) // 4, dtype=np.uint32)
    return words.view(np.uint8)[:count].reshape(rows, width)


_TILE_BYTES = 1024
"""Bytes of sign bits (8,192 cases) unpacked and multiplied at a time: the float block of a tile (16 rows x
8,192 cases, 1 MB) stays in the processor's cache between its copy and its product, where a block of every case
went to memory and back (a million cases: 128 MB per block, a quarter of the time more)."""


def _streamed_sums(d: np.ndarray, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The sums of ``d`` over the random subsets and the subsets' sizes, the subsets drawn block by block.

    The subsets of ``_random_subsets(n, draws, seed)``, as they were when those bits were held whole: the
    generator gives the same bytes drawn in parts of a multiple of 4 bytes (it draws 4 at a time and drops
    the rest at the end of a call). The sums are the same up to the rounding of the product's order.
    """
    import numpy as np

    n = len(d)
    width = (n + 7) // 8
    rng = np.random.default_rng([seed, n, draws])
    padded = np.zeros(width * 8)
    padded[:n] = d  # the last byte's bits beyond n are masked off, so what they multiply is never read
    buffer = np.empty((_BLOCK_ROWS, _TILE_BYTES * 8))
    sums: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    tail = (0xFF << (8 * width - n)) & 0xFF
    for start in range(0, draws, _BLOCK_ROWS):
        raw = _random_bytes(rng, min(_BLOCK_ROWS, draws - start), width)
        raw[:, -1] &= tail
        size = _set_bits(raw)
        # the empty subset is left out (it is the observed data: the +1 of the p-value)
        if not size.all():
            raw, size = raw[size > 0], size[size > 0]
        total = np.zeros(len(raw))
        for at in range(0, width, _TILE_BYTES):
            bits = np.unpackbits(raw[:, at : at + _TILE_BYTES], axis=1)
            block = buffer[: len(raw), : bits.shape[1]]
            np.copyto(block, bits)
            total += block @ padded[at * 8 : at * 8 + bits.shape[1]]
        sums.append(total)
        sizes.append(size.astype(float))
    if not sums:
        return np.empty(0), np.empty(0)
    return np.concatenate(sums), np.concatenate(sizes)


def _grouped_sums(
    values: np.ndarray, counts: np.ndarray, draws: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The sums and sizes of ``draws`` random subsets of differences that take few distinct values.

    A subset's sum and size depend only on how many cases of each value it holds, and with fair independent
    signs that number is binomial (count, 1/2), independently per value: drawing those numbers gives the
    subsets' sums and sizes the same distribution as drawing every case's sign, in draws x values steps
    instead of draws x cases (pass/fail differences of a million cases take five values; docs/comparison.md,
    Comparing stored versions).
    """
    import numpy as np

    rng = np.random.default_rng([seed, int(counts.sum()), draws, len(values)])
    rows = max(1, _HELD_BITS // len(values))
    sums: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    for start in range(0, draws, rows):
        flipped = rng.binomial(counts, 0.5, size=(min(rows, draws - start), len(values))).astype(float)
        size = flipped.sum(axis=1)
        flipped = flipped[size > 0]  # the empty subset is the observed data (the +1 of the p-value)
        sums.append(flipped @ values)
        sizes.append(size[size > 0])
    return np.concatenate(sums), np.concatenate(sizes)


def berry_esseen(d: np.ndarray) -> float:
    """The Berry-Esseen bound of the subset means of ``d``: how far their distribution's CDF can be from the
    normal one, at most ``0.56 * sum |c|^3 / (sum c^2)^1.5`` with ``c = d - mean(d)`` (Shevtsova's constant for
    independent terms; a subset mean is ``mean(d) + sum (b_i - 1/2) c_i / (n / 2)`` to first order, with fair
    independent ``b_i``). ``inf`` when nothing varies."""
    import numpy as np

    c = d - d.mean()
    sq = float(np.dot(c, c))
    if not sq > 0.0:
        return math.inf
    return 0.56 * float(np.abs(c).dot(c * c)) / sq**1.5


def near_normal(d: np.ndarray, draws: int) -> bool:
    """Whether the normal limit of the subset means is at least as close to their distribution as ``draws``
    random subsets would be: its Berry-Esseen bound is at most the draws' standard error at a p-value of 0.05
    (0.0022 at 9,999 draws; about 66,000 cases of similar differences reach it; docs/comparison.md, comparing
    stored versions)."""
    return berry_esseen(d) <= math.sqrt(0.05 * 0.95 / draws)


@functools.lru_cache(maxsize=4)
def _normal_grid(draws: int) -> np.ndarray:
    """``draws`` standard normal quantiles at ``k / (draws + 1)``: the grid the random subsets' ranks fall on."""
    import numpy as np

    return np.array([_NORMAL.inv_cdf(k / (draws + 1)) for k in range(1, draws + 1)])


def _normal_means(d: np.ndarray, draws: int) -> np.ndarray:
    """The subset means of ``d`` as the normal limit gives them, at ``draws`` quantiles, sorted: centred on
    ``mean(d)`` (a random subset's mean is unbiased) with the spread ``sqrt(sum c^2) / n`` of the first-order
    term, so p-values and bounds read from them as from drawn means, on the same grid of ``1 / (draws + 1)``."""
    import numpy as np

    c = d - d.mean()
    spread = math.sqrt(float(np.dot(c, c))) / len(d)
    return float(d.mean()) + spread * _normal_grid(draws)


def _drawn_means(d: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """The means of ``d`` over random subsets, sorted, for a test past the held size: drawn value by value
    when the differences take few values, the normal limit when it is as close as the draws would be, else
    drawn case by case."""
    import numpy as np

    values, counts = np.unique(d, return_counts=True)
    if len(values) * _GROUPED_SHARE <= len(d):
        sums, sizes = _grouped_sums(values, counts, draws, seed)
    elif near_normal(d, draws):
        return _normal_means(d, draws)
    else:
        sums, sizes = _streamed_sums(d, draws, seed)
    return np.sort(sums / sizes)


class SignFlip:
    """The paired sign-flip (randomisation) test of a mean difference, with the bounds that invert it.

    Args:
        d: one difference per case (candidate minus baseline).
        draws: random sign patterns when there are more than ``EXACT_CASES`` cases.
        seed: seed of those patterns (the same data give the same answer).

    Example::

        sf = SignFlip(np.array([-1.0, -1.0, -1.0, 0.0, 0.0]))
        sf.p_below(0.0)   # three discordant cases, all worse: the exact sign test, 1/8
        # 0.125
    """

    def __init__(self, d: np.ndarray, *, draws: int = 9999, seed: int = 0) -> None:
        import numpy as np

        d = np.asarray(d, dtype=float)
        self.n = len(d)
        self.exact = self.n <= EXACT_CASES
        if self.n == 0:
            self.means = np.empty(0)
        elif self.n > EXACT_CASES and draws * self.n > _HELD_BITS:
            self.means = _drawn_means(d, draws, seed)
        else:
            subsets, sizes = _subsets(self.n, draws, seed)
            self.means = np.sort((subsets @ d) / sizes)
        self.total = len(self.means) + 1  # every pattern, the observed one included
        self._tol = _TIE * (1.0 + float(np.abs(d).max(initial=0.0)))
        self._d = d

    def p_below(self, delta: float) -> float:
        """One-sided p-value against "the mean difference is at least ``delta``" (small: it is below)."""
        import numpy as np

        count = len(self.means) - int(np.searchsorted(self.means, delta - self._tol, side="left"))
        return (1 + count) / self.total

    def p_above(self, delta: float) -> float:
        """One-sided p-value against "the mean difference is at most ``delta``" (small: it is above)."""
        import numpy as np

        count = int(np.searchsorted(self.means, delta + self._tol, side="right"))
        return (1 + count) / self.total

    def min_p(self, delta: float) -> float:
        """The smallest p-value any signs of these differences could give against ``delta``.

        Only the cases whose difference is not ``delta`` carry a sign, so ``k`` of them give at best
        ``2**-k``. A test that cannot reach the level at all is left out of the family (Tarone's rule: it
        could never be rejected, so it must not dilute the others).
        """
        import numpy as np

        k = int((np.abs(self._d - delta) > self._tol).sum())
        share = 2.0**-k
        return share if self.exact else (1 + (self.total - 1) * share) / self.total

    def _rank(self, alpha: float) -> int:
        # a value is rejected when at most c = alpha * total - 1 patterns are at least as extreme
        return math.floor(alpha * self.total - 1 + 1e-9)

    def can_reject(self, alpha: float) -> bool:
        """Whether any data could reach ``alpha`` with this many cases (5 cases are needed at 0.05)."""
        return self._rank(alpha) >= 0

    def upper(self, alpha: float) -> float:
        """One-sided upper confidence bound of the mean difference at ``1 - alpha`` (``inf`` if none)."""
        c = self._rank(alpha)
        return float(self.means[len(self.means) - 1 - c]) if 0 <= c < len(self.means) else math.inf

    def lower(self, alpha: float) -> float:
        """One-sided lower confidence bound of the mean difference at ``1 - alpha`` (``-inf`` if none)."""
        c = self._rank(alpha)
        return float(self.means[c]) if 0 <= c < len(self.means) else -math.inf


# --------------------------------------------------------------------------------------------------
# Intervals of a mean inside its range (trends)
# --------------------------------------------------------------------------------------------------


def cluster_mean(
    n: Any, clusters: Any, total: Any, sq: Any, cross: Any, nsq: Any
) -> tuple[np.ndarray, np.ndarray]:
    """A mean over clusters from their sums, and its cluster-robust variance.

    Per cluster ``i`` (a case: its runs and turns) with ``n_i`` values summing to ``s_i``, the sufficient
    statistics are ``n = sum n_i``, ``total = sum s_i``, ``sq = sum s_i^2``, ``cross = sum s_i n_i`` and
    ``nsq = sum n_i^2`` (what the store keeps per run and check). The mean is ``total / n`` and its variance
    ``g / (g - 1) * sum (s_i - m n_i)^2 / n^2`` over ``g`` clusters (NaN with fewer than two).
    """
    import numpy as np

    n, g = np.asarray(n, dtype=float), np.asarray(clusters, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.asarray(total, dtype=float) / n
        resid = (
            np.asarray(sq, dtype=float)
            - 2 * m * np.asarray(cross, dtype=float)
            + m * m * np.asarray(nsq, dtype=float)
        )
        var = (g / (g - 1)) * np.clip(resid, 0.0, None) / (n * n)
    return m, np.where(g > 1, var, np.nan)


def bounded_interval(
    mean: Any, var: Any, clusters: Any, *, low: float, high: float, confidence: float, proportion: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided interval of a mean that stays inside ``[low, high]``, from its (cluster-robust) variance.

    A bounded mean is put on [0, 1]. A ``proportion`` (a pass rate: values 0 or 1) gets the Wilson score
    interval with the effective sample size ``u (1 - u) / var`` (the design-effect form of Wilson: a pass
    rate of 0.75 over 4 cases cannot reach 1.24); other bounded values (scores, F1) get the interval of the
    logit of their mean. Where the mean sits at an end of the range, or nothing varies, Wilson with the
    number of clusters stands in. With only a lower end (a count) the interval is built on the log of
    ``mean - low``; with no known range it is the normal interval. The quantile is Student's t with ``clusters - 1`` degrees of
    freedom (a variance estimated from ten cases is itself uncertain). Vectorised over numpy arrays.
    """
    import numpy as np

    m = np.asarray(mean, dtype=float)
    v = np.asarray(var, dtype=float)
    g = np.asarray(clusters, dtype=float)
    tail = (1.0 - confidence) / 2.0
    quantiles = {k: t_isf(tail, k - 1) for k in np.unique(g[np.isfinite(g) & (g > 1)]).tolist()}
    z = np.array([quantiles.get(k, np.nan) for k in np.atleast_1d(g).tolist()]).reshape(g.shape)
    se = np.sqrt(np.clip(v, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        if math.isfinite(low) and math.isfinite(high):
            span = high - low
            u = np.clip((m - low) / span, 0.0, 1.0)
            vu = v / span**2
            inside = (u > 0) & (u < 1) & (vu > 0)
            n_eff = np.where(inside, u * (1 - u) / vu, g)
            denom = 1.0 + z * z / n_eff
            centre = (u + z * z / (2 * n_eff)) / denom
            half = z * np.sqrt(u * (1 - u) / n_eff + z * z / (4 * n_eff**2)) / denom
            u_lo, u_hi = centre - half, centre + half
            if not proportion:
                # a mean of values spread inside the range (a score, an F1): the interval of its logit,
                # which Wilson's shrinkage toward 1/2 (right for pass/fail counts) would make too narrow
                logit = np.log(u / (1 - u))
                se_logit = np.sqrt(vu) / (u * (1 - u))
                u_lo = np.where(inside, 1 / (1 + np.exp(-(logit - z * se_logit))), u_lo)
                u_hi = np.where(inside, 1 / (1 + np.exp(-(logit + z * se_logit))), u_hi)
            lo = low + span * np.clip(u_lo, 0.0, 1.0)
            hi = low + span * np.clip(u_hi, 0.0, 1.0)
        elif math.isfinite(low):
            excess = m - low
            factor = np.exp(z * se / excess)
            lo = np.where(excess > 0, low + excess / factor, low)
            hi = np.where(excess > 0, low + excess * factor, low)
        else:
            lo, hi = m - z * se, m + z * se
    bad = ~np.isfinite(m) | ~np.isfinite(v) | (g <= 1)
    return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)
