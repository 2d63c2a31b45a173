"""``evalnb.rank``: Bradley-Terry strengths with Davidson's ties from pairwise verdicts, bootstrap intervals."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.errors import ConfigError
from evalnb.preference._stats import davidson


def three(n: int = 30) -> list[Any]:
    suite = evalnb.from_frame(pd.DataFrame({"prompt": [f"question {i}" for i in range(n)]}), checks=())
    return [evalnb.run(suite, lambda p, s=s: f"{s} says {p}", progress=False) for s in ("low", "mid", "top")]


LEVEL = {"low": 0.0, "mid": 0.7, "top": 1.4}


async def by_level(prompt: str, first: str, second: str) -> str:
    """Prefers the higher level, through noise (seeded by the texts) and a lean to the first answer."""

    def q(answer: str) -> float:
        return LEVEL[answer.split()[0]] + random.Random(answer).gauss(0, 1)

    d = q(first) - q(second) + 0.3 + random.Random(first + "|" + second).gauss(0, 0.7)
    return "first" if d > 0.4 else "second" if d < -0.4 else "tie"


def test_rank_orders_three_versions_with_intervals() -> None:
    results = three()
    ranking = evalnb.rank(results, judge=by_level, bootstrap=300)
    t = ranking.table
    assert list(t.columns) == [
        "version", "strength", "low", "high", "rank", "wins", "ties", "losses", "win_rate", "cases",
    ]  # fmt: skip
    # no version labels: the versions are named by their position
    assert t["version"].tolist() == ["2", "1", "0"] and t["rank"].tolist() == [1, 2, 3]
    assert (t["low"] <= t["strength"]).all() and (t["strength"] <= t["high"]).all()
    assert t["strength"].sum() == pytest.approx(0.0, abs=1e-9)
    assert t.loc[0, "low"] > t.loc[2, "high"]  # the best and the worst are told apart on 30 cases
    assert (t["cases"] == 30).all() and (t["wins"] + t["ties"] + t["losses"] == 60).all()
    assert len(ranking.pairs) == 3 and ranking.pairs[("0", "2")].better
    assert 0 < ranking.tie_parameter < 5
    # frame-like
    assert ranking["version"].tolist() == t["version"].tolist() and len(ranking) == 3
    assert ranking.columns.tolist() == t.columns.tolist()
    assert repr(ranking) == "Ranking(2 > 1 > 0)"
    assert "1. 2: strength" in ranking.report() and "<b>Ranking</b>" in ranking._repr_html_()
    # the same seed, the same intervals
    again = evalnb.rank(results, judge=by_level, bootstrap=300)
    pd.testing.assert_frame_equal(again.table, t)


def test_version_labels_a_stated_design_and_errors() -> None:
    results = three(12)
    ranking = evalnb.rank(
        results, judge=by_level, labels=["v1", "v2", "v3"], pairs=[("v1", "v2"), (1, 2)], bootstrap=50
    )
    assert set(ranking.pairs) == {("v1", "v2"), ("v2", "v3")}
    assert set(ranking["version"]) == {"v1", "v2", "v3"}
    with pytest.raises(ConfigError, match="do not connect every version"):
        evalnb.rank(results, judge=by_level, pairs=[(0, 1)])
    with pytest.raises(ConfigError, match="not one of the versions"):
        evalnb.rank(results, judge=by_level, pairs=[(0, "nope")])
    with pytest.raises(ConfigError, match="two Results or more"):
        evalnb.rank(results[:1], judge=by_level)
    with pytest.raises(ConfigError, match="both named 'x'"):
        evalnb.rank(results, judge=by_level, labels=["x", "x", "y"])


def test_an_always_first_judge_ranks_nobody_above_anybody() -> None:
    ranking = evalnb.rank(three(10), judge=lambda p, first, second: "first", bootstrap=100)
    t = ranking.table
    assert np.allclose(t["strength"], 0.0, atol=1e-6) and (t["ties"] == 20).all()
    assert ((t["low"] <= 0) & (t["high"] >= 0)).all()


def test_davidson_recovers_known_strengths_and_the_tie_parameter() -> None:
    theta = np.array([-0.8, 0.0, 0.8])
    nu = 0.5
    pi = np.exp(theta)
    wins, ties = np.zeros((3, 3)), np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            if i != j:
                d = pi[i] + pi[j] + nu * math.sqrt(pi[i] * pi[j])
                wins[i, j] = 10_000 * pi[i] / d
                ties[i, j] = 10_000 * nu * math.sqrt(pi[i] * pi[j]) / d
    fitted, fitted_nu = davidson(wins, ties)
    assert np.allclose(fitted, theta, atol=0.01) and fitted_nu == pytest.approx(nu, abs=0.01)
    # a version that won everything stays finite (the weak prior)
    sweep, _ = davidson(np.array([[0, 10], [0, 0]]), np.zeros((2, 2)))
    assert np.isfinite(sweep).all() and sweep[0] > 1
