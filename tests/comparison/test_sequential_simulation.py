"""Seeded simulations of the sequential gate beside the fixed one (docs/comparison.md, "Deciding with fewer
cases"): per-case pass probabilities from a U-shaped Beta, one run per case, a look after every batch of 5% of
the cases. On identical agents the gate fires at most 5% of the time; a 15-point drop over 400 cases is caught
at least 90% of the time using at most half the cases on average; identical agents with a margin of 0.10 stop
at "not worse" using at most 70% of the cases on average.

Run with ``-s`` to see the table (``benchmarks/sequential.py`` prints it with more trials).
"""

from __future__ import annotations

import math

import numpy as np

from evalnb.comparison._sequential import (
    NOT_WORSE,
    WORSE,
    Track,
    bounds,
    decide_family,
    decide_tracks,
    p_values,
    to_unit,
)
from evalnb.comparison._stats import SignFlip

CASES = 400
BATCH = CASES // 20  # 5% of the suite
ALPHA = 0.05
BETA = 0.5  # Beta(0.5, 0.5): most cases nearly always pass or nearly always fail, some are flaky


def differences(rng: np.random.Generator, trials: int, *, drop: float, runs: int = 1) -> np.ndarray:
    """Paired per-case differences (candidate minus baseline, each a mean over its runs), trials x cases.

    The candidate's pass probabilities are the baseline's scaled down so that the mean drop over the
    population is ``drop`` (a case that always fails cannot get worse). Cases come in a random order.
    """
    p = rng.beta(BETA, BETA, (trials, CASES))
    q = p * (1.0 - drop / (BETA / (2 * BETA)))
    a = (rng.random((trials, CASES, runs)) < p[..., None]).mean(axis=-1)
    b = (rng.random((trials, CASES, runs)) < q[..., None]).mean(axis=-1)
    return b - a


def sequential(d: np.ndarray, *, margin: float, checks: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The sequential gate on ``trials x cases`` differences of one check (or ``trials x checks x cases``):
    per trial, the decision of each check and the share of the cases run when the run stopped."""
    d = d if d.ndim == 3 else d[:, None, :]
    looks = np.arange(BATCH, CASES + 1, BATCH) - 1
    y = to_unit(d, 1.0)
    pw, pn = p_values(y, looks, float(to_unit(-margin, 1.0)), level=ALPHA / checks)
    decision, look = decide_family(pw, pn, ALPHA)
    # the run stops at the look where its last check was decided (or at the end)
    last = np.where((decision != 0).all(axis=-1), look.max(axis=-1), len(looks) - 1)
    return decision, (looks[last] + 1) / CASES


def fixed(d: np.ndarray, *, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The fixed gate on every case: fires (exact sign-flip test) and rules out a drop beyond the margin."""
    fires, clear = np.zeros(len(d), dtype=bool), np.zeros(len(d), dtype=bool)
    for i, row in enumerate(d):
        sf = SignFlip(row)
        fires[i] = sf.p_below(-margin) <= ALPHA
        clear[i] = sf.lower(ALPHA) > -margin
    return fires, clear


def noise(rate: float, trials: int) -> float:
    """Two binomial standard errors of a rate measured over ``trials``."""
    return 2 * math.sqrt(rate * (1 - rate) / trials)


def table(trials: int = 2000, fixed_trials: int = 400, seed: int = 2029) -> list[dict[str, object]]:
    """The simulation table: for each scenario, what the sequential and the fixed gate decide and the share of
    the cases each runs."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, drop, margin, want in (
        ("identical agents, margin 0: the gate fires", 0.0, 0.0, WORSE),
        ("15-point drop: the gate fires", 0.15, 0.0, WORSE),
        ("identical agents, margin 0.10: not worse", 0.0, 0.10, NOT_WORSE),
    ):
        d = differences(rng, trials, drop=drop)
        decision, share = sequential(d, margin=margin)
        fires, clear = fixed(d[:fixed_trials], margin=margin)
        rows.append(
            {
                "scenario": name,
                "sequential": float((decision[:, 0] == want).mean()),
                "sequential_cases": float(share.mean()),
                "fixed": float((fires if want == WORSE else clear).mean()),
                "fixed_cases": 1.0,
            }
        )
    return rows


def test_sequential_gate_false_alarms_power_and_cases_used() -> None:
    trials = 2000
    rows = {r["scenario"]: r for r in table(trials)}
    for r in rows.values():
        print(r)
    alarms = rows["identical agents, margin 0: the gate fires"]
    assert alarms["sequential"] <= ALPHA + noise(ALPHA, trials)
    assert alarms["fixed"] <= ALPHA + noise(ALPHA, 400)
    drop = rows["15-point drop: the gate fires"]
    assert drop["sequential"] >= 0.90
    assert drop["sequential_cases"] <= 0.50
    assert drop["fixed"] >= 0.90  # the fixed gate, with every case, for the record beside it
    clear = rows["identical agents, margin 0.10: not worse"]
    assert clear["sequential"] >= 0.80
    assert clear["sequential_cases"] <= 0.70


def test_family_of_checks_keeps_its_error_rate() -> None:
    # three independent checks of identical agents: Holm at every look keeps the gate's false alarms at 5%
    rng = np.random.default_rng(7)
    trials = 1500
    d = np.stack([differences(rng, trials, drop=0.0) for _ in range(3)], axis=1)
    decision, _ = sequential(d, margin=0.0, checks=3)
    rate = float((decision == WORSE).any(axis=-1).mean())
    assert rate <= ALPHA + noise(ALPHA, trials)
    # and a drop on one check of three is still caught, the others left undecided or not worse
    d[:, 0] = differences(rng, trials, drop=0.15)[:, :]
    decision, _ = sequential(d, margin=0.0, checks=3)
    assert float((decision[:, 0] == WORSE).mean()) >= 0.85
    assert float((decision[:, 1:] == WORSE).any(axis=-1).mean()) <= ALPHA + noise(ALPHA, trials)


def test_repeats_narrow_the_sequence() -> None:
    # three runs per case average the run-to-run noise away: the same drop is caught with fewer cases
    rng = np.random.default_rng(11)
    one = sequential(differences(rng, 1000, drop=0.15), margin=0.0)
    three = sequential(differences(rng, 1000, drop=0.15, runs=3), margin=0.0)
    assert float((three[0][:, 0] == WORSE).mean()) >= 0.95
    assert three[1].mean() < one[1].mean()


def test_bounds_cover_the_true_difference_where_the_run_stopped() -> None:
    # the confidence sequence holds at the stopping time: its upper bound is above the true mean drop
    rng = np.random.default_rng(5)
    trials = 1000
    d = differences(rng, trials, drop=0.15)
    looks = np.arange(BATCH, CASES + 1, BATCH) - 1
    _, share = sequential(d, margin=0.0)
    covered = 0
    for i in range(trials):
        stop = round(float(share[i]) * CASES)
        seen = looks[looks < stop]
        _, upper = bounds(to_unit(d[i, :stop], 1.0), seen, level=ALPHA, alpha=ALPHA)
        covered += float(2 * upper - 1) >= -0.15
    assert covered / trials >= 1 - ALPHA - noise(ALPHA, trials)


def test_tracks_agree_with_the_vectorised_decisions() -> None:
    # the per-check path the run uses decides as the simulation's arrays do, and its bounds say why
    rng = np.random.default_rng(3)
    d = differences(rng, 40, drop=0.15)
    seen = np.arange(BATCH, CASES + 1, BATCH)
    decision, _ = sequential(d, margin=0.0)
    for i in range(len(d)):
        (v,) = decide_tracks([Track(d[i], seen, span=1.0, threshold=0.0)], alpha=ALPHA)
        assert v.decision == decision[i, 0]
        if v.decision == WORSE:
            assert v.upper <= 0.0 and v.p <= ALPHA
        if v.decision == NOT_WORSE:
            assert v.lower >= 0.0
