"""The sign-flip test of many cases draws its random subsets block by block (comparison/_stats.py): the
distribution it builds must be the one the held subsets give, so a gate's verdict does not depend on the
suite's size crossing the threshold between the two ways."""

from __future__ import annotations

import numpy as np
import pytest

from evalnb.comparison import _stats


@pytest.mark.parametrize(("n", "draws"), [(401, 9999), (1_000, 5_000), (4_099, 1_500), (20_001, 300)])
def test_blocks_give_the_distribution_of_the_held_subsets(
    n: int, draws: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(n)
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=n) + rng.normal(0, 0.01, size=n)
    _normal_off(monkeypatch)
    streamed = _stats.SignFlip(d, draws=draws, seed=3)
    assert draws * n > _stats._HELD_BITS  # each case is past the held size
    monkeypatch.setattr(_stats, "_HELD_BITS", 10**12)
    _stats._subsets.cache_clear()
    held = _stats.SignFlip(d, draws=draws, seed=3)
    _stats._subsets.cache_clear()
    # the same subsets: the same number of patterns and the same means (summed in the same blocks)
    assert streamed.total == held.total
    np.testing.assert_allclose(streamed.means, held.means, rtol=0, atol=1e-12)
    for x in (-0.05, 0.0, 0.05):
        assert streamed.p_above(x) == pytest.approx(held.p_above(x), abs=1e-12)


@pytest.mark.parametrize(("rows", "width"), [(16, 12_501), (3, 7), (16, 1), (1, 1_025)])
def test_random_bytes_are_the_bytes_of_a_uint8_draw(rows: int, width: int) -> None:
    # drawn as 32-bit words for speed, the sign bits must be the ones a uint8 draw gives, call after call
    words, uint8 = np.random.default_rng([3, rows, width]), np.random.default_rng([3, rows, width])
    for _ in range(3):
        np.testing.assert_array_equal(
            _stats._random_bytes(words, rows, width),
            uint8.integers(0, 256, size=(rows, width), dtype=np.uint8),
        )


def test_blocks_are_smaller_than_the_held_subsets() -> None:
    # what the blocks are for: 100,000 cases x 9,999 draws held as floats would be 8 GB
    d = np.zeros(100_000)
    d[:10] = 1.0
    test = _stats.SignFlip(d, draws=999, seed=0)
    assert test.total <= 1_000 and np.all(test.means >= 0)


def _grouped_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stats, "_GROUPED_SHARE", 10**12)


def _normal_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stats, "near_normal", lambda d, draws: False)


@pytest.mark.parametrize("values", [(-1.0, 0.0, 1.0), (-1.0, -0.5, 0.0, 0.5, 1.0)])
def test_few_values_are_flipped_value_by_value_with_the_distribution_of_every_sign(
    values: tuple[float, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # pass/fail differences of many cases take a handful of values: drawing how many of each value flip
    # gives the subsets' means the distribution that drawing each case's sign gives
    n, draws = 20_001, 4_000
    rng = np.random.default_rng(7)
    weights = np.linspace(1.0, 2.0, len(values))
    d = rng.choice(values, size=n, p=weights / weights.sum())
    assert len(values) * _stats._GROUPED_SHARE <= n and draws * n > _stats._HELD_BITS
    grouped = _stats.SignFlip(d, draws=draws, seed=1)
    _grouped_off(monkeypatch)
    _normal_off(monkeypatch)
    streamed = _stats.SignFlip(d, draws=draws, seed=1)
    assert not np.array_equal(grouped.means, streamed.means)  # the two ways were taken
    assert grouped.total == pytest.approx(streamed.total, abs=2)
    for q in (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99):
        x = float(np.quantile(streamed.means, q))
        # within four standard errors of two independent estimates of the same tail
        se = np.sqrt(2 * q * (1 - q) / draws)
        assert abs(grouped.p_above(x) - streamed.p_above(x)) <= 4 * se + 2 / draws


def test_few_values_match_the_exact_distribution_of_a_subset_mean() -> None:
    # values 0 and 1: a subset's mean is X / (X + Y) with X ~ Bin(ones, 1/2) and Y ~ Bin(zeros, 1/2)
    from scipy import stats

    ones, zeros, draws = 30, 9_970, 20_000
    d = np.array([1.0] * ones + [0.0] * zeros)
    test = _stats.SignFlip(d, draws=draws, seed=5)
    x = np.arange(ones + 1)
    px = stats.binom.pmf(x, ones, 0.5)
    for cut in (0.00251, 0.00301, 0.00351):
        # P(X / (X + Y) <= cut) summed over X exactly, Y's tail from the binomial survival function
        exact = sum(px[k] * (stats.binom.sf(np.ceil(k / cut - k) - 1, zeros, 0.5) if k else 1.0) for k in x)
        drawn = test.p_above(cut)
        assert abs(drawn - exact) <= 4 * np.sqrt(exact * (1 - exact) / draws) + 2 / draws, (cut, drawn, exact)


def test_few_values_keep_the_false_alarm_rate_and_find_a_known_drop() -> None:
    # 20,001 pass/fail cases, the values-drawn path: identical agents reject "no worse" at most 5% of the time
    # (plus the noise of 400 trials), a 1.5-point drop (3.7 standard errors) is found nearly always
    trials, n, alpha = 400, 20_001, 0.05
    rng = np.random.default_rng(11)
    fired = {0.0: 0, 0.015: 0}
    for t in range(trials):
        for drop in fired:
            a = rng.random(n) < 0.8
            b = rng.random(n) < 0.8 - drop
            d = b.astype(float) - a.astype(float)
            test = _stats.SignFlip(d, draws=999, seed=t)
            fired[drop] += test.p_below(0.0) <= alpha
    false_alarms, power = fired[0.0] / trials, fired[0.015] / trials
    print(f"\n20,001 pass/fail cases: false alarms {false_alarms:.3f}, power on a 1.5-point drop {power:.3f}")
    assert false_alarms <= alpha + 2.33 * np.sqrt(alpha * (1 - alpha) / trials), false_alarms
    assert power >= 0.9, power


# -- the normal limit of many cases' differences (docs/comparison.md, comparing stored versions) -------------


def _scores(rng: np.random.Generator, n: int, drop: float = 0.0) -> np.ndarray:
    """Per-case differences of a 0-1 score between two flaky agents (two runs each), b lower by ``drop``."""
    level = rng.uniform(0.3, 0.9, n)
    a = np.clip(level[:, None] + rng.normal(0, 0.15, (n, 2)), 0, 1).mean(axis=1)
    b = np.clip(level[:, None] - drop + rng.normal(0, 0.15, (n, 2)), 0, 1).mean(axis=1)
    return b - a


def test_the_normal_limit_stands_in_only_where_it_is_as_close_as_the_draws() -> None:
    rng = np.random.default_rng(2)
    many = _scores(rng, 200_000)
    assert _stats.near_normal(many, 9999)
    # 100,000 cases: the bound (0.0028) is above the draws' error at 0.05 (0.0022), so the draws are kept
    assert not _stats.near_normal(many[:100_000], 9999)
    # a few huge differences among small ones: the sum is theirs, far from normal, and the draws are kept
    skewed = many.copy()
    skewed[:20] = 500.0
    assert _stats.berry_esseen(skewed) > 0.05 and not _stats.near_normal(skewed, 9999)
    assert not _stats.near_normal(np.zeros(200_000), 9999)  # nothing varies: no normal limit
    # fewer draws are coarser, so the limit stands in for fewer cases
    assert _stats.near_normal(many[:20_000], 300) and not _stats.near_normal(many[:20_000], 9999)


def test_the_normal_limit_gives_the_drawn_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    # 200,000 cases of score differences: the limit and 9,999 drawn subsets agree within the draws' own noise
    n, draws = 200_000, 9999
    d = _scores(np.random.default_rng(4), n, drop=0.001)
    assert len(np.unique(d)) * _stats._GROUPED_SHARE > n and _stats.near_normal(d, draws)
    limit = _stats.SignFlip(d, draws=draws, seed=1)
    _normal_off(monkeypatch)
    drawn = _stats.SignFlip(d, draws=draws, seed=1)
    assert not np.array_equal(limit.means, drawn.means)  # the two ways were taken
    assert limit.total == pytest.approx(drawn.total, abs=2)
    for q in (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99):
        x = float(np.quantile(drawn.means, q))
        se = np.sqrt(q * (1 - q) / draws)
        assert abs(limit.p_above(x) - drawn.p_above(x)) <= 4 * se + 2 / draws, q
    for alpha in (0.01, 0.05):
        se = float(np.std(drawn.means))
        assert abs(limit.upper(alpha) - drawn.upper(alpha)) <= 0.1 * se
        assert abs(limit.lower(alpha) - drawn.lower(alpha)) <= 0.1 * se


def test_the_normal_limit_keeps_the_false_alarm_rate_coverage_and_power() -> None:
    # 200,000 cases of score differences, the normal limit's path: identical flaky agents reject "no worse"
    # at most 5% of the time, the one-sided 95% bounds hold the true difference 95% of the time, and a drop
    # sized for 80% power is found about 80% of the time
    trials, n, alpha = 300, 200_000, 0.05
    rng = np.random.default_rng(13)
    sd = float(np.std(_scores(rng, n)))
    drop = (_stats.norm_isf(alpha) + _stats.norm_isf(0.2)) * sd / np.sqrt(n)
    fired = {0.0: 0, drop: 0}
    covered = 0
    for t in range(trials):
        for shift in fired:
            d = _scores(rng, n, drop=shift)
            assert _stats.near_normal(d, 9999)
            test = _stats.SignFlip(d, seed=t)
            fired[shift] += test.p_below(0.0) <= alpha
            if shift == 0.0:
                covered += test.lower(alpha) <= 0.0 <= test.upper(alpha)
    false_alarms, power, coverage = fired[0.0] / trials, fired[drop] / trials, covered / trials
    print(
        f"\n200,000 cases, normal limit: false alarms {false_alarms:.3f}, power {power:.3f} (promised 0.80), "
        f"two one-sided 95% bounds both hold {coverage:.3f} (promised 0.90)"
    )
    band = 2.58 * np.sqrt(alpha * (1 - alpha) / trials)
    assert false_alarms <= alpha + band, false_alarms
    assert abs(power - 0.8) <= 2.58 * np.sqrt(0.8 * 0.2 / trials), power
    assert abs(coverage - 0.9) <= 2.58 * np.sqrt(0.9 * 0.1 / trials), coverage
