"""The comparison's statistics helpers against scipy (a test-only dependency: the package has no scipy)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as ss

from evalnb.comparison._stats import (
    SignFlip,
    bounded_interval,
    fisher_exact,
    holm,
    norm_isf,
    norm_ppf,
    norm_sf,
    permutation_p,
    t_cdf,
    t_isf,
    t_ppf,
    t_sf,
)


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 7, 30, 250, 1e4])
def test_student_t_matches_scipy_including_far_tails(df: float) -> None:
    for t in (0.0, 0.3, 1.0, 2.5, 6.0, 40.0, 1e3, 1e6):
        want = ss.t.sf(t, df)
        assert t_sf(t, df) == pytest.approx(want, rel=1e-8, abs=1e-300)
        assert t_cdf(-t, df) == pytest.approx(want, rel=1e-8, abs=1e-300)
    for q in (0.6, 0.9, 0.95, 0.975, 0.999, 1 - 1e-6, 1 - 1e-10):
        assert t_ppf(q, df) == pytest.approx(ss.t.ppf(q, df), rel=1e-7)
        assert t_ppf(1 - q, df) == pytest.approx(ss.t.ppf(1 - q, df), rel=1e-7)
    # quantiles far beyond the old search limit of 1000, from the tail probability itself
    for p in (1e-12, 1e-30, 1e-100):
        assert t_isf(p, df) == pytest.approx(ss.t.isf(p, df), rel=1e-7)


def test_tiny_tails_are_computed_not_subtracted() -> None:
    # 1 - cdf would round to 0 here; the direct tail keeps its digits
    assert t_sf(1e5, 3) == pytest.approx(ss.t.sf(1e5, 3), rel=1e-9) and t_sf(1e5, 3) > 0
    assert norm_sf(30.0) == pytest.approx(ss.norm.sf(30.0), rel=1e-12) and norm_sf(30.0) > 0
    assert norm_isf(1e-200) == pytest.approx(ss.norm.isf(1e-200), rel=1e-9)
    assert norm_ppf(0.975) == pytest.approx(ss.norm.ppf(0.975), rel=1e-12)
    with pytest.raises(ValueError):
        norm_ppf(1.0)
    with pytest.raises(ValueError):
        t_sf(1.0, 0)


def test_holm_adjusts_step_down() -> None:
    assert holm(np.array([0.01, 0.04, 0.03])).tolist() == pytest.approx([0.03, 0.06, 0.06])
    assert holm(np.array([])).tolist() == []
    assert holm(np.array([0.5, 0.9])).tolist() == pytest.approx([1.0, 1.0])


def test_fisher_exact_matches_scipy() -> None:
    for n_a, n_b in ((1, 1), (3, 3), (5, 4), (8, 8), (10, 3)):
        for k_a, k_b in itertools.product(range(n_a + 1), range(n_b + 1)):
            want = ss.fisher_exact([[k_a, n_a - k_a], [k_b, n_b - k_b]]).pvalue
            assert fisher_exact(k_a, n_a, k_b, n_b) == pytest.approx(want, rel=1e-9), (k_a, n_a, k_b, n_b)


def test_the_smallest_per_case_p_values_by_runs() -> None:
    """What the docs promise: 3 runs a side cannot go below 0.1, and p < 0.001 needs 7 runs a side."""
    smallest = {r: fisher_exact(r, r, 0, r) for r in range(2, 11)}
    assert smallest[3] == pytest.approx(0.1)
    assert smallest[5] == pytest.approx(0.0079, abs=1e-4)
    assert smallest[6] > 0.001 > smallest[7]
    assert all(smallest[r] == pytest.approx(2 / math.comb(2 * r, r)) for r in smallest)


def test_permutation_test_of_runs_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    for ra, rb in ((2, 2), (3, 3), (3, 5), (6, 6)):
        a, b = rng.random((5, ra)).round(1), rng.random((5, rb)).round(1)
        got = permutation_p(a, b)
        for i in range(5):
            # two-sided as |difference of means| at least as large as observed
            want = ss.permutation_test(
                (a[i], b[i]), lambda x, y: abs(np.mean(y) - np.mean(x)), permutation_type="independent",
                alternative="greater", n_resamples=np.inf,
            ).pvalue  # fmt: skip
            assert got[i] == pytest.approx(want, abs=1e-9), (ra, rb, i)
    # many splits: random ones, still a valid p-value
    big = permutation_p(rng.random((1, 12)), rng.random((1, 12)) + 0.5, draws=999, rng=rng)
    assert 1 / 1000 <= big[0] < 0.01


def test_sign_flip_is_the_exact_randomisation_test() -> None:
    rng = np.random.default_rng(1)
    for n in (3, 6, 10):
        d = rng.normal(-0.3, 1, n).round(2)
        patterns = np.array(list(itertools.product((1, -1), repeat=n)))
        flipped = (patterns * d).mean(axis=1)
        sf = SignFlip(d)
        assert sf.exact
        assert sf.p_below(0.0) == pytest.approx(np.mean(flipped <= d.mean() + 1e-12))
        assert sf.p_above(0.0) == pytest.approx(np.mean(flipped >= d.mean() - 1e-12))
        want = ss.permutation_test(
            (d,), np.mean, permutation_type="samples", alternative="less", n_resamples=np.inf
        ).pvalue
        assert sf.p_below(0.0) == pytest.approx(want, abs=1e-9)
    # three discordant pass/fail cases among many: the sign test, 1/8
    d = np.zeros(40)
    d[:3] = -1.0
    sf = SignFlip(d, draws=20_000)
    assert not sf.exact and sf.p_below(0.0) == pytest.approx(1 / 8, abs=0.01)
    assert sf.min_p(0.0) == pytest.approx(1 / 8, abs=1e-3)


def test_sign_flip_bounds_invert_the_test() -> None:
    rng = np.random.default_rng(2)
    for n in (8, 40):
        d = rng.normal(-0.2, 0.5, n)
        sf = SignFlip(d)
        alpha = 0.05
        hi, lo = sf.upper(alpha), sf.lower(alpha)
        assert lo < d.mean() < hi
        # just above the upper bound the test rejects "mean >= delta"; at the bound it does not
        assert sf.p_below(hi + 1e-9) <= alpha < sf.p_below(hi)
        assert sf.p_above(lo - 1e-9) <= alpha < sf.p_above(lo)
        assert sf.can_reject(alpha)
    four = SignFlip(np.array([-1.0, -1.0, -1.0, -1.0]))
    assert not four.can_reject(0.05) and math.isinf(four.upper(0.05))  # 1/16 > 0.05: 4 cases cannot tell


def test_bounded_interval_is_wilson_and_stays_in_range() -> None:
    def interval(m: float, v: float, g: int, low: float = 0.0, high: float = 1.0) -> tuple[float, float]:
        lo, hi = bounded_interval(
            np.array([m]), np.array([v]), np.array([g]), low=low, high=high, confidence=0.95
        )
        return float(lo[0]), float(hi[0])

    # independent pass/fail values (one per cluster): Wilson's interval, with Student's t quantile (n - 1 df)
    for k, n in ((3, 4), (0, 10), (10, 10), (37, 50)):
        p = k / n
        level = 2 * ss.norm.cdf(ss.t.ppf(0.975, n - 1)) - 1
        want = ss.binomtest(k, n).proportion_ci(level, method="wilson")
        assert interval(p, p * (1 - p) / n, n) == pytest.approx((want.low, want.high), abs=1e-9)
        # on a 1-5 scale the same shares give the same interval, stretched
        five = interval(1 + 4 * p, 16 * p * (1 - p) / n, n, 1.0, 5.0)
        assert five == pytest.approx((1 + 4 * want.low, 1 + 4 * want.high), abs=1e-9)
    # clustered: a larger variance than binomial gives a wider interval, still inside [0, 1]
    lo, hi = interval(0.75, 0.1, 4)
    assert 0.0 <= lo < 0.26 and 0.9 < hi <= 1.0
    # a 1-5 score, a count, and no interval without two clusters
    lo, hi = interval(4.9, 0.09, 4, 1.0, 5.0)
    assert 1.0 <= lo < 4.9 < hi <= 5.0
    lo, hi = interval(0.2, 0.04, 5, 0.0, math.inf)
    assert 0.0 < lo < 0.2 < hi
    assert all(math.isnan(x) for x in interval(0.5, math.nan, 1))


def test_distinct_rows_of_counts_are_those_of_unique_over_rows() -> None:
    # packed into one integer per row where they fit, as records where they do not: the same rows and places
    import numpy as np

    from evalnb.comparison._triage import _distinct_rows

    rng = np.random.default_rng(3)
    for rows in (
        rng.integers(0, 6, size=(5000, 4)),
        rng.integers(-3, 3, size=(200, 2)),
        np.array([[2**40, 1], [0, 2**40], [2**40, 1]], dtype=np.int64),  # too wide to pack
        np.zeros((0, 4), dtype=np.int64),
    ):
        uniq, which = _distinct_rows(rows)
        want, place = np.unique(rows, axis=0, return_inverse=True) if len(rows) else (rows, np.zeros(0))
        assert np.array_equal(uniq, want) and np.array_equal(which, np.asarray(place).reshape(-1))
