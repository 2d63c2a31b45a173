"""Comparisons on constructed data where the truth is known."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.compare import _holm, _norm_ppf, _t_ppf, _t_two_sided_p, compare, power


def scores(pass_prob: np.ndarray, runs: int, rng: np.random.Generator, *, turns: int = 1,
           check: str = "regex") -> pd.DataFrame:  # fmt: skip
    """A scores frame: case i passes each run x turn with probability pass_prob[i]."""
    n = len(pass_prob)
    v = (rng.random((n, runs, turns)) < pass_prob[:, None, None]).astype(float)
    case, run, turn = np.meshgrid(np.arange(n), np.arange(runs), np.arange(turns), indexing="ij")
    return pd.DataFrame(
        {
            "case_id": [f"c{i}" for i in case.ravel()],
            "case_name": [f"case {i}" for i in case.ravel()],
            "category": "x",
            "run": run.ravel(),
            "turn": turn.ravel(),
            "check": check,
            "check_id": check,
            "value": v.ravel(),
            "passed": v.ravel().astype(bool),
            "status": np.where(v.ravel() > 0, "passed", "failed"),
        }
    )


def test_statistics_helpers_match_tables() -> None:
    assert _norm_ppf(0.975) == pytest.approx(1.959964, abs=1e-6)
    assert _norm_ppf(0.001) == pytest.approx(-3.090232, abs=1e-6)
    assert _t_two_sided_p(2.776445, 4) == pytest.approx(0.05, abs=1e-6)
    assert _t_two_sided_p(2.570582, 5) == pytest.approx(0.05, abs=1e-6)
    assert _t_two_sided_p(12.7062, 1) == pytest.approx(0.05, abs=1e-5)
    assert _t_ppf(0.975, 10) == pytest.approx(2.228139, abs=1e-5)
    assert _holm(np.array([0.01, 0.04, 0.03])).tolist() == pytest.approx([0.03, 0.06, 0.06])


def test_real_regression_is_flagged() -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(0.3, 1.0, 40)
    p[:12] = 1.0
    a = scores(p, 5, rng)
    p_b = p.copy()
    p_b[:12] = 0.0  # twelve cases break completely
    b = scores(p_b, 5, rng)
    cmp = compare(a, b, seed=3)
    reg = cmp.regressions
    assert set(reg["case_id"]) == {f"c{i}" for i in range(12)}
    row = cmp.checks.iloc[0]
    assert row["verdict"] == "worse"
    assert row["ci_high"] < 0 < row["mean_a"]
    assert row["diff"] == pytest.approx(b["value"].mean() - a["value"].mean())
    assert cmp.has_regressions
    text = cmp.report()
    assert "worse" in text and "c0 [regex]" in text
    assert "<table" in cmp._repr_html_()


def test_noise_between_identical_flaky_agents_is_not_flagged() -> None:
    """False alarms over 200 seeds: the verdict and the regression list stay at or below about alpha."""
    verdicts = regressions = 0
    seeds = 200
    for seed in range(seeds):
        rng = np.random.default_rng(10_000 + seed)
        p = rng.uniform(0.3, 1.0, 25)
        a, b = scores(p, 4, rng), scores(p, 4, rng)
        cmp = compare(a, b, n_boot=500, seed=seed)
        verdicts += cmp.checks["verdict"].iloc[0] != "no detectable difference"
        regressions += cmp.has_regressions
    # alpha = 0.05; binomial(200, 0.05) exceeds 18 with probability < 0.5%
    assert verdicts / seeds <= 0.09
    assert regressions / seeds <= 0.09


def test_single_flaky_case_within_its_variation_is_same() -> None:
    rows = []
    for side, vals in (("a", [1, 1, 0, 1, 0, 1]), ("b", [1, 0, 0, 1, 0, 1])):
        for r, v in enumerate(vals):
            rows.append({"side": side, "case_id": "k", "case_name": "k", "category": None, "run": r, "turn": 0,
                         "check": "x", "check_id": "x", "value": float(v), "passed": bool(v), "status": "ok"})  # fmt: skip
    f = pd.DataFrame(rows)
    cmp = compare(f[f.side == "a"], f[f.side == "b"])
    assert cmp.cases["change"].tolist() == ["same"]


def test_new_gone_and_deterministic_changes() -> None:
    def frame(values: dict[str, float]) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"case_id": c, "case_name": c, "category": "k", "run": 0, "turn": 0, "check": "ExactMatch",
                 "check_id": "ExactMatch", "value": v, "passed": v > 0, "status": "passed"}
                for c, v in values.items()
            ]
        )  # fmt: skip

    a = frame({"x": 1.0, "y": 1.0, "z": 0.0, "gone": 1.0})
    b = frame({"x": 1.0, "y": 0.0, "z": 1.0, "new": 1.0})
    cmp = compare(a, b, labels=("v1", "v2"))
    change = dict(zip(cmp.cases["case_id"], cmp.cases["change"], strict=True))
    # one run per case: nothing measures run-to-run variation, so any change counts
    assert change == {"x": "same", "y": "regressed", "z": "improved", "gone": "gone", "new": "new"}
    assert list(cmp.cases.columns[:7]) == ["case_id", "case_name", "category", "check_id", "a", "b", "delta"]
    assert str(cmp.cases["change"].dtype) == "string"
    assert "v1 -> v2" in cmp.report()


def test_clustered_turns_widen_the_interval() -> None:
    """Ten turns of one conversation are one sample, not ten: the interval must not shrink like 1/sqrt(10)."""
    rng = np.random.default_rng(5)
    n = 30
    base = rng.random(n)
    # every turn of a case gives the same value: perfectly clustered
    f_a = scores((base > 0.5).astype(float), 1, rng, turns=10)
    f_b = scores((rng.random(n) > 0.5).astype(float), 1, rng, turns=10)
    one_a = f_a[f_a["turn"] == 0]
    one_b = f_b[f_b["turn"] == 0]
    wide = compare(f_a, f_b).checks.iloc[0]
    narrow = compare(one_a, one_b).checks.iloc[0]
    assert wide["ci_high"] - wide["ci_low"] == pytest.approx(narrow["ci_high"] - narrow["ci_low"], rel=0.05)


def test_compare_results_from_runs() -> None:
    suite = evalnb.Suite(
        name="s",
        format="tasks-toml",
        cases=[
            evalnb.Case(
                id=f"c{i}",
                name=f"c{i}",
                runs=2,
                turns=[
                    evalnb.Turn(prompt=f"{i}", checks=[{"type": "regex", "on": "result", "pattern": "ok"}])
                ],
            )
            for i in range(6)
        ],
    )
    a = evalnb.run(suite, lambda p: "ok", progress=False)
    b = evalnb.run(suite, lambda p: "ok" if p != "0" else "bad", progress=False)
    cmp = evalnb.compare(a, b)
    assert cmp.regressions["case_id"].tolist() == ["c0"]
    assert cmp.checks["pass_rate_diff"].iloc[0] == pytest.approx(-1 / 6)


def test_power_planning() -> None:
    rng = np.random.default_rng(2)
    p = rng.uniform(0.2, 0.9, 50)
    f = scores(p, 4, rng)
    pw = power(f)
    row = pw.table.iloc[0]
    sd_w = row["value_within"]
    expected = (_norm_ppf(0.975) + _norm_ppf(0.8)) * math.sqrt(2 * sd_w**2 / (4 * 50))
    assert row["mdd"] == pytest.approx(expected)
    # halving the difference needs four times the cases (or runs)
    n1 = int(pw.cases_needed(0.2).iloc[0])
    n2 = int(pw.cases_needed(0.1).iloc[0])
    assert n2 == pytest.approx(4 * n1, rel=0.05)
    assert int(pw.runs_needed(row["mdd"]).iloc[0]) == 4
    assert "Power" in pw._repr_html_()


def test_small_sample_intervals_stay_within_what_the_data_can_have() -> None:
    """The small-sample widening never gives a pass-rate difference outside [-1, 1]."""
    rng = np.random.default_rng(7)
    a = scores(np.array([0.0, 1.0, 0.0]), 1, rng)
    b = scores(np.array([1.0, 1.0, 1.0]), 1, rng)
    row = compare(a, b, seed=0).checks.iloc[0]
    assert -1.0 <= row["pass_ci_low"] <= row["pass_rate_diff"] <= row["pass_ci_high"] <= 1.0
    assert -1.0 <= row["ci_low"] <= row["ci_high"] <= 1.0


def test_one_case_gives_no_interval_and_no_verdict() -> None:
    rng = np.random.default_rng(3)
    a, b = scores(np.array([0.0]), 1, rng), scores(np.array([1.0]), 1, rng)
    cmp = compare(a, b, seed=0)
    row = cmp.checks.iloc[0]
    assert row["diff"] == 1.0 and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
    assert row["verdict"] == "no detectable difference"
    assert cmp.cases["change"].tolist() == ["improved"]
