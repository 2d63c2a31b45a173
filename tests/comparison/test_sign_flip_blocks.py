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


def test_blocks_are_smaller_than_the_held_subsets() -> None:
    # what the blocks are for: 100,000 cases x 9,999 draws held as floats would be 8 GB
    d = np.zeros(100_000)
    d[:10] = 1.0
    test = _stats.SignFlip(d, draws=999, seed=0)
    assert test.total <= 1_000 and np.all(test.means >= 0)
