"""Seeded simulations of the gate: false alarms on identical flaky agents, power on a known drop, interval
coverage, and power() delivering the power it promises. Score frames are built directly with numpy.

Run with ``-s`` to see the measured rates.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalnb.comparison import compare, power

TRIALS = 200
MEAN_P = 0.4 + 0.4 * 0.55  # population mean pass probability of the mix below


def population(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Per-case parameters of a realistic suite: 40% always pass, 20% always fail, 40% flaky."""
    u = rng.random(n)
    p = np.where(u < 0.4, 1.0, np.where(u < 0.6, 0.0, rng.uniform(0.2, 0.9, n)))
    return {
        "regex": p,
        "ExactMatch": np.clip(p + rng.normal(0, 0.1, n), 0, 1),
        "intent": np.where(rng.random(n) < 0.8, 1.0, rng.uniform(0, 1, n)),
        "PartialMatch": rng.beta(2, 2, n),
        "Relevance": rng.uniform(2, 5, n),
        "Citations": rng.uniform(0, 3, n),
    }


def frame(
    params: dict[str, np.ndarray], runs: int, rng: np.random.Generator, checks: list[str]
) -> pd.DataFrame:
    """A scores frame with one row per case x run x check, values drawn from the case's parameters."""
    n = len(params["regex"])
    case, run = np.repeat(np.arange(n), runs), np.tile(np.arange(runs), n)
    parts = []
    for check in checks:
        q = np.repeat(params[check], runs)
        if check in ("regex", "ExactMatch", "intent"):
            value = (rng.random(len(q)) < q).astype(float)
            passed = value > 0
        elif check == "PartialMatch":  # a token F1 in [0, 1]
            value = rng.beta(q * 8 + 1e-9, (1 - q) * 8 + 1e-9)
            passed = value >= 0.5
        elif check == "Relevance":  # a 1-5 judge score
            value = np.clip(np.round(q + rng.normal(0, 0.7, len(q))), 1, 5)
            passed = value >= 3
        else:  # a count
            value = rng.poisson(q).astype(float)
            passed = value >= 1
        parts.append(pd.DataFrame({"case_id": case, "run": run, "turn": 0, "check": check, "check_id": check,
                                   "value": value, "passed": passed}))  # fmt: skip
    out = pd.concat(parts, ignore_index=True)
    out["case_id"] = "c" + out["case_id"].astype(str)
    return out


def dropped(params: dict[str, np.ndarray], drop: float, affected: float, rng: np.random.Generator) -> dict:
    """The candidate: the regex pass probability falls by ``drop`` on average, carried by ``affected`` cases."""
    p = params["regex"]
    hit = rng.random(len(p)) < affected if affected < 1 else np.ones(len(p), dtype=bool)
    return {**params, "regex": np.where(hit, p * (1 - drop / (affected * MEAN_P)), p)}


ONE = ["regex"]
SIX = ["regex", "ExactMatch", "intent", "PartialMatch", "Relevance", "Citations"]


def trials(
    runs: int, checks: list[str], *, drop: float = 0.0, cases: int = 100, seed: int = 0
) -> pd.DataFrame:
    """TRIALS comparisons: per trial whether the gate fired and the regex row of the check table."""
    out = []
    for t in range(TRIALS):
        rng = np.random.default_rng([seed, runs, len(checks), cases, t])
        params = population(rng, cases)
        a = frame(params, runs, rng, checks)
        b = frame(dropped(params, drop, 1.0, rng) if drop else params, runs, rng, checks)
        cmp = compare(a, b)
        row = cmp.checks.set_index("check_id").loc["regex"]
        out.append({"fired": cmp.regressed, **row[["ci_low", "ci_high", "upper_bound", "lower_bound"]]})
    return pd.DataFrame(out)


def _limit(rate: float) -> float:
    """The rate plus the binomial noise of TRIALS trials (one-sided 99%)."""
    return rate + 2.33 * math.sqrt(rate * (1 - rate) / TRIALS)


@pytest.mark.parametrize("runs", [1, 3])
@pytest.mark.parametrize("checks", [ONE, SIX], ids=["one check", "six checks"])
def test_identical_flaky_agents_fire_the_gate_at_most_alpha(runs: int, checks: list[str]) -> None:
    result = trials(runs, checks, seed=1)
    rate = float(result["fired"].mean())
    coverage = float(((result["ci_low"] <= 0) & (result["ci_high"] >= 0)).mean())
    print(f"\nidentical agents, 100 cases x {runs} run(s), {len(checks)} check(s): gate fired {rate:.3f}; "
          f"95% interval of the regex difference covered 0 in {coverage:.3f}")  # fmt: skip
    assert rate <= _limit(0.05)
    assert coverage >= 0.95 - 2.33 * math.sqrt(0.05 * 0.95 / TRIALS)


@pytest.mark.parametrize(("cases", "runs"), [(8, 1), (12, 3), (25, 3)])
def test_small_suites_keep_the_false_alarm_rate(cases: int, runs: int) -> None:
    result = trials(runs, SIX, cases=cases, seed=2)
    rate = float(result["fired"].mean())
    print(
        f"\nidentical agents, small suite of {cases} cases x {runs} run(s), 6 checks: gate fired {rate:.3f}"
    )
    assert rate <= _limit(0.05)


@pytest.mark.parametrize("checks", [ONE, SIX], ids=["one check", "six checks"])
def test_a_ten_point_drop_at_100_cases_by_3_runs_fires_the_gate(checks: list[str]) -> None:
    result = trials(3, checks, drop=0.1, seed=3)
    rate = float(result["fired"].mean())
    # the true difference of the population is -0.1: the one-sided bounds and the two-sided interval cover it
    two = float(((result["ci_low"] <= -0.1) & (result["ci_high"] >= -0.1)).mean())
    upper = float((result["upper_bound"] >= -0.1).mean())
    lower = float((result["lower_bound"] <= -0.1).mean())
    print(f"\n10-point drop spread over cases, 100 cases x 3 runs, {len(checks)} check(s): gate fired {rate:.3f}; "
          f"coverage of -0.1: 95% two-sided {two:.3f}, one-sided upper bound {upper:.3f}, lower {lower:.3f}")  # fmt: skip
    assert rate >= 0.80
    noise = 2.33 * math.sqrt(0.05 * 0.95 / TRIALS)
    assert two >= 0.95 - noise and upper >= 0.95 - noise and lower >= 0.95 - noise
    assert two <= 0.99  # not uselessly wide


@pytest.mark.parametrize(("affected", "drop"), [(1.0, 0.1), (0.3, 0.1), (0.25, 0.15)])
@pytest.mark.parametrize("runs", [3, 1])
def test_power_plans_deliver_the_power_they_promise(affected: float, drop: float, runs: int) -> None:
    rng = np.random.default_rng(7)
    baseline = frame(population(rng, 400), 3, rng, ONE)
    plan = power(baseline, drop=drop, affected=affected, runs=3)
    row = plan.table.iloc[0]
    cases = int(row["cases_needed"] if runs == 3 else row["cases_needed_one_run"])
    promised = float(plan.power_at(cases, runs).iloc[0])
    fired = 0
    for t in range(TRIALS):
        r = np.random.default_rng([90, runs, int(affected * 100), t])
        params = population(r, cases)
        a = frame(params, runs, r, ONE)
        b = frame(dropped(params, drop, affected, r), runs, r, ONE)
        fired += compare(a, b).regressed
    delivered = fired / TRIALS
    print(f"\npower(): a drop of {drop} carried by {affected:.0%} of the cases, {cases} cases x {runs} run(s): "
          f"promised {promised:.3f}, delivered {delivered:.3f}")  # fmt: skip
    assert promised >= 0.80
    # delivered: at least the promise (within noise), and not so far above it that the plan wastes cases
    noise = 2.58 * math.sqrt(0.8 * 0.2 / TRIALS)
    assert promised - noise <= delivered <= promised + 0.12


def test_power_says_one_run_per_case_needs_several_times_the_cases() -> None:
    rng = np.random.default_rng(8)
    baseline = frame(population(rng, 300), 3, rng, ONE)
    plan = power(baseline, drop=0.1)
    row = plan.table.iloc[0]
    assert 2.5 <= row["one_run_factor"] <= 4.0
    assert "one run per case needs" in plan.report() and "x the cases" in plan.report()
    # the drop concentrated in a few cases needs more cases at 3 runs than the same drop spread out
    concentrated = power(baseline, drop=0.1, affected=0.2).table.iloc[0]
    assert concentrated["cases_needed"] > row["cases_needed"]
    # a drop even the best 5% cannot carry is not planned, and the plan says why (it does not raise)
    few = power(baseline, drop=0.1, affected=0.05)
    assert few.unplanned["regex"].startswith("a drop of 0.10 cannot sit in 5% of the cases")


@pytest.mark.parametrize("cases", [10, 30, 100])
def test_trend_intervals_cover_the_mean_and_stay_in_range(cases: int) -> None:
    """Store.trend's interval (from the per-case sums it stores) covers the population mean near 95%."""
    from evalnb.comparison._stats import bounded_interval, cluster_mean

    covered = {"regex": 0, "Relevance": 0}
    truth = {"regex": MEAN_P}
    rng0 = np.random.default_rng(99)
    big = frame(population(rng0, 200_000), 1, rng0, ["Relevance"])
    truth["Relevance"] = float(big["value"].mean())
    trials_n = 1000  # cheap: no comparison, only sums
    for t in range(trials_n):
        rng = np.random.default_rng([4, cases, t])
        f = frame(population(rng, cases), 3, rng, ["regex", "Relevance"])
        for check, (low, high) in {"regex": (0.0, 1.0), "Relevance": (1.0, 5.0)}.items():
            per_case = f[f["check"] == check].groupby("case_id")["value"].agg(["sum", "count"])
            s, k = per_case["sum"].to_numpy(), per_case["count"].to_numpy(dtype=float)
            m, var = cluster_mean(k.sum(), len(s), s.sum(), (s * s).sum(), (s * k).sum(), (k * k).sum())
            proportion = check == "regex"
            lo, hi = bounded_interval(
                m, var, len(s), low=low, high=high, confidence=0.95, proportion=proportion
            )
            assert low <= float(lo) <= float(hi) <= high
            covered[check] += bool(lo <= truth[check] <= hi)
    rates = {c: n / trials_n for c, n in covered.items()}
    print(f"\ntrend interval, {cases} cases x 3 runs: coverage of the mean {rates}")
    assert all(0.92 <= r <= 0.985 for r in rates.values()), rates


# --------------------------------------------------------------------------------------------------
# A judged check whose judge gives its score distribution (probability-weighted scores)
# --------------------------------------------------------------------------------------------------

LEVELS = np.arange(1, 6, dtype=float)


def judged(
    quality: np.ndarray, runs: int, rng: np.random.Generator, *, logprobs: bool = True
) -> pd.DataFrame:
    """Relevance rows of a model judge: per run, its belief is a discretised normal around the case's
    quality (SD 0.8 on the 1-5 scale) whose logits move a little from call to call (SD 0.3); it writes a
    score drawn from that belief and, with ``logprobs``, reports the belief (``weighted``, ``spread``)."""
    n = len(quality)
    q = np.repeat(quality, runs)
    logits = -((LEVELS[None, :] - q[:, None]) ** 2) / (2 * 0.8**2) + rng.normal(0, 0.3, (len(q), 5))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    written = 1 + (rng.random(len(q))[:, None] > probs.cumsum(axis=1)).sum(axis=1).astype(float)
    weighted = probs @ LEVELS
    spread = np.sqrt((probs * (LEVELS[None, :] - weighted[:, None]) ** 2).sum(axis=1))
    out = pd.DataFrame({
        "case_id": "c" + pd.Series(np.repeat(np.arange(n), runs)).astype(str), "run": np.tile(np.arange(runs), n),
        "turn": 0, "check": "Relevance", "check_id": "Relevance", "value": written,
        "weighted": weighted if logprobs else np.nan, "spread": spread if logprobs else np.nan,
    })  # fmt: skip
    out["passed"] = np.where(np.isnan(out["weighted"]), out["value"], out["weighted"]) >= 3
    return out


def judged_trials(
    runs: int,
    *,
    drop: float = 0.0,
    logprobs: bool = True,
    cases: int = 100,
    trials: int = TRIALS,
    seed: int = 0,
) -> pd.DataFrame:
    """Comparisons of a suite with five rule checks and a judged Relevance. Each version writes its own
    answers, whose quality varies around the case's (SD 0.3); the candidate's lose ``drop`` on average."""
    out = []
    rules = ["regex", "ExactMatch", "intent", "PartialMatch", "Citations"]
    for t in range(trials):
        rng = np.random.default_rng([seed, runs, cases, t, int(logprobs)])
        params = population(rng, cases)
        quality = params["Relevance"]
        qa = quality + rng.normal(0, 0.3, cases)
        qb = quality - drop + rng.normal(0, 0.3, cases)
        a = pd.concat([frame(params, runs, rng, rules), judged(qa, runs, rng, logprobs=logprobs)])
        b = pd.concat([frame(params, runs, rng, rules), judged(qb, runs, rng, logprobs=logprobs)])
        cmp = compare(a, b)
        row = cmp.checks.set_index("check_id").loc["Relevance"]
        out.append({"fired": cmp.regressed, "relevance_gates": bool(row["gates"]), "weighted": row["weighted"],
                    "ci_low": row["ci_low"], "ci_high": row["ci_high"]})  # fmt: skip
    return pd.DataFrame(out)


@pytest.mark.parametrize("runs", [1, 3])
def test_identical_agents_with_a_weighted_judged_check_fire_the_gate_at_most_alpha(runs: int) -> None:
    result = judged_trials(runs, seed=5)
    assert result["weighted"].all()  # the judged check is compared on its weighted scores
    rate = float(result["fired"].mean())
    coverage = float(((result["ci_low"] <= 0) & (result["ci_high"] >= 0)).mean())
    print(f"\nidentical agents, 100 cases x {runs} run(s), 5 rule checks + weighted Relevance: gate fired "
          f"{rate:.3f}; the Relevance interval covered 0 in {coverage:.3f}")  # fmt: skip
    assert rate <= _limit(0.05)
    assert coverage >= 0.95 - 2.33 * math.sqrt(0.05 * 0.95 / TRIALS)


def test_weighted_scores_give_the_gate_more_power_on_a_judged_drop() -> None:
    # A 0.3 drop of Relevance quality, 40 cases x 1 run: the judge's sampling noise hides it in the written
    # scores far more often than in the weighted ones.
    weighted = judged_trials(1, drop=0.3, cases=40, trials=100, seed=6)
    plain = judged_trials(1, drop=0.3, cases=40, trials=100, seed=6, logprobs=False)
    assert not plain["weighted"].any()
    power_w, power_p = float(weighted["relevance_gates"].mean()), float(plain["relevance_gates"].mean())
    print(f"\na 0.3 Relevance drop, 40 cases x 1 run: the gate fired {power_w:.2f} on weighted scores, "
          f"{power_p:.2f} on the written ones")  # fmt: skip
    assert power_w >= 0.8 and power_w >= power_p + 0.3


# --------------------------------------------------------------------------------------------------
# The comparison's edges: a few cases break, judge outages, lower-is-better checks
# --------------------------------------------------------------------------------------------------

EDGE_TRIALS = 120  # a few seconds per test on two shared cores; the limits below use this count


def _edge_limit(rate: float) -> float:
    return rate + 2.33 * math.sqrt(rate * (1 - rate) / EDGE_TRIALS)


def broken(params: dict[str, np.ndarray], drop: float, affected: float, rng: np.random.Generator) -> dict:
    """The candidate of "a few cases break", on the population's true pass probabilities: ``affected`` of the
    cases, drawn from the best ones (the smallest top share whose cases can carry the drop), lose their share
    ``c`` of it (all of it, ``c = 1``, when only the best cases can carry it) so the mean falls by ``drop``."""
    p = params["regex"]
    n = len(p)
    order = np.argsort(-p, kind="stable")
    k = max(1, round(affected * n))
    # the largest top share whose mean still lets `affected` of all cases carry the drop
    for top in range(n, k - 1, -1):
        if affected * float(np.mean(p[order[:top]])) >= drop - 1e-12:
            break
    hit = rng.choice(order[:top], size=k, replace=False)
    c = min(1.0, drop / (affected * float(np.mean(p[order[:top]]))))
    q = p.copy()
    q[hit] = p[hit] * (1 - c)
    return {**params, "regex": q}


@pytest.mark.parametrize(("affected", "drop", "runs"), [(0.1, 0.1, 3), (0.1, 0.1, 1), (0.2, 0.15, 3)])
def test_power_plans_for_a_few_cases_that_break_deliver_their_promise(
    affected: float, drop: float, runs: int
) -> None:
    # a tenth of the cases carrying 10 points is more than a random tenth can lose (the mean headroom is ~0.6):
    # the plan takes them from the cases with the most to lose, as a suite where a few cases break does
    rng = np.random.default_rng(7)
    baseline = frame(population(rng, 400), 3, rng, ONE)
    plan = power(baseline, drop=drop, affected=affected, runs=3)
    row = plan.table.iloc[0]
    assert row["plannable"] and row["from_top"] < 1
    cases = int(row["cases_needed"] if runs == 3 else row["cases_needed_one_run"])
    promised = float(plan.power_at(cases, runs).iloc[0])
    fired = 0
    for t in range(EDGE_TRIALS):
        r = np.random.default_rng([93, runs, int(affected * 100), t])
        params = population(r, cases)
        fired += compare(
            frame(params, runs, r, ONE), frame(broken(params, drop, affected, r), runs, r, ONE)
        ).regressed
    delivered = fired / EDGE_TRIALS
    print(f"\npower(): {affected:.0%} of the cases break carrying a drop of {drop} (from the best "
          f"{row['from_top']:.0%}), {cases} cases x {runs} run(s): promised {promised:.3f}, delivered {delivered:.3f}")  # fmt: skip
    assert promised >= 0.80
    noise = 2.58 * math.sqrt(0.8 * 0.2 / EDGE_TRIALS)
    assert promised - noise <= delivered <= promised + 0.15


def _with_relevance(
    params: dict[str, np.ndarray], runs: int, rng: np.random.Generator, outage: float
) -> pd.DataFrame:
    """regex and Relevance rows; ``outage`` of the cases had the judge fail on every run (degraded)."""
    f = frame(params, runs, rng, ["regex", "Relevance"])
    f["status"] = np.where(f["passed"], "passed", "failed")
    f["reason"] = "scored"
    down = rng.random(len(params["regex"])) < outage
    cases = {f"c{i}" for i in np.flatnonzero(down)}
    hit = (f["check"] == "Relevance") & f["case_id"].isin(cases)
    f.loc[hit, ["value", "status", "reason"]] = [np.nan, "degraded", "judge openai:gpt-4o failed: HTTP 503"]
    f.loc[hit, "passed"] = False
    return f


def test_a_judge_outage_on_identical_agents_rarely_fires_the_gate() -> None:
    fired, degraded = 0, 0
    for t in range(EDGE_TRIALS):
        rng = np.random.default_rng([94, t])
        params = population(rng, 60)
        cmp = compare(_with_relevance(params, 2, rng, 0.0), _with_relevance(params, 2, rng, 0.15))
        fired += cmp.regressed
        degraded += int(cmp.checks.set_index("check_id").loc["Relevance", "not_compared"])
    rate = fired / EDGE_TRIALS
    print(f"\nidentical agents, 60 cases x 2 runs, the candidate's judge down on 15% of the cases "
          f"({degraded / EDGE_TRIALS:.1f} cases a trial): gate fired {rate:.3f}")  # fmt: skip
    assert degraded > 0
    assert rate <= _edge_limit(0.05)


def _counts(lam: np.ndarray, runs: int, rng: np.random.Generator) -> pd.DataFrame:
    n = len(lam)
    v = rng.poisson(np.repeat(lam, runs)).astype(float)
    return pd.DataFrame({"case_id": "c" + pd.Series(np.repeat(np.arange(n), runs)).astype(str),
                         "run": np.tile(np.arange(runs), n), "turn": 0, "check": "ToolCalls",
                         "check_id": "ToolCalls", "value": v, "passed": v <= 3})  # fmt: skip


@pytest.mark.parametrize("rise", [0.0, 0.5])
def test_a_lower_is_better_count_keeps_the_false_alarm_rate_and_catches_a_rise(rise: float) -> None:
    from evalnb.checks.scales import _SCALES, declare

    declare("ToolCalls", low=0.0, high=math.inf, kind="count", higher_is_better=False)
    try:
        fired, better = 0, 0
        for t in range(EDGE_TRIALS):
            rng = np.random.default_rng([95, int(rise * 10), t])
            lam = rng.uniform(0.5, 4.0, 80)
            cmp = compare(_counts(lam, 2, rng), _counts(lam + rise, 2, rng))
            fired += cmp.regressed
            better += cmp.checks["verdict"].iloc[0] == "better"
    finally:
        _SCALES.pop("ToolCalls", None)
    rate = fired / EDGE_TRIALS
    print(f"\na lower-is-better count, 80 cases x 2 runs, a rise of {rise}: gate fired {rate:.3f}, "
          f"'better' {better / EDGE_TRIALS:.3f}")  # fmt: skip
    if rise == 0:
        assert rate <= _edge_limit(0.05) and better / EDGE_TRIALS <= _edge_limit(0.05)
    else:
        assert rate >= 0.8 and better == 0  # a rise is a regression here, never an improvement
