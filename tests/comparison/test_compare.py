"""Comparisons on constructed data where the truth is known: the gate, the triage list, the frame, the words."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.comparison import Comparison, compare, gate


def scores(pass_prob: np.ndarray, runs: int, rng: np.random.Generator, *, turns: int = 1,
           check: str = "regex", prefix: str = "c") -> pd.DataFrame:  # fmt: skip
    """A scores frame: case i passes each run x turn with probability pass_prob[i]."""
    n = len(pass_prob)
    v = (rng.random((n, runs, turns)) < pass_prob[:, None, None]).astype(float)
    case, run, turn = np.meshgrid(np.arange(n), np.arange(runs), np.arange(turns), indexing="ij")
    return pd.DataFrame(
        {
            "case_id": [f"{prefix}{i}" for i in case.ravel()],
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


def rows(
    values: dict[str, list[float]], *, check: str = "ExactMatch", threshold: float = 0.5
) -> pd.DataFrame:
    """One row per case x run from explicit per-run values."""
    return pd.DataFrame(
        [
            {"case_id": c, "case_name": c, "category": "k", "run": r, "turn": 0, "check": check,
             "check_id": check, "value": v, "passed": v >= threshold, "status": "ok"}
            for c, vals in values.items() for r, v in enumerate(vals)
        ]
    )  # fmt: skip


def test_a_real_regression_gates_and_its_cases_are_flagged() -> None:
    rng = np.random.default_rng(1)
    p = rng.uniform(0.3, 1.0, 40)
    p[:12] = 1.0
    a = scores(p, 10, rng)
    p_b = p.copy()
    p_b[:12] = 0.0  # twelve cases break completely
    b = scores(p_b, 10, rng)
    cmp = compare(a, b, seed=3)
    row = cmp.checks.iloc[0]
    assert row["verdict"] == "worse" and bool(row["gates"])
    assert row["upper_bound"] < 0 and row["words"].startswith("worse by ")
    assert row["diff"] == pytest.approx(b["value"].mean() - a["value"].mean())
    assert cmp.regressed and cmp.exit_code == 1
    # with 10 runs a side a break is beyond the case's own noise, even after Holm over 40 cases
    flagged = set(cmp.cases.loc[cmp.cases["significant"].fillna(False).astype(bool), "case_id"])
    assert flagged == {f"c{i}" for i in range(12)}
    assert cmp.regressions["case_id"].head(12).tolist() == [f"c{i}" for i in range(12)]  # surest first
    text = cmp.report()
    assert (
        "Gate: FAIL: regex worse by" in text and "c0 [regex]: 1.000 -> 0.000 (regressed; significant" in text
    )
    assert "<table" in cmp._repr_html_()
    with pytest.warns(FutureWarning, match="use Comparison.regressed"):
        assert cmp.has_regressions


def test_a_flaky_case_within_its_noise_is_regressed_but_not_significant() -> None:
    cmp = compare(rows({"k": [1, 1, 0, 1, 0, 1]}), rows({"k": [1, 0, 0, 1, 0, 1]}))
    r = cmp.cases.iloc[0]
    # change describes; significance tests: 4/6 against 3/6 passes is well within the noise
    assert r["change"] == "regressed" and not r["significant"]
    assert r["p_value"] == pytest.approx(1.0)
    assert not cmp.regressed


def test_changes_new_gone_changed_and_untested_at_one_run() -> None:
    a = rows({"x": [1.0], "y": [1.0], "z": [0.0], "gone": [1.0]})
    b = rows({"x": [1.0], "y": [0.0], "z": [1.0], "new": [1.0]})
    cmp = compare(a, b, labels=("v1", "v2"))
    change = dict(zip(cmp.cases["case_id"], cmp.cases["change"], strict=True))
    assert change == {"x": "same", "y": "regressed", "z": "improved", "gone": "gone", "new": "new"}
    # one run per case: no noise to test against, so the flag is missing (never True)
    assert cmp.cases["significant"].isna().all()
    assert list(cmp.cases.columns[:7]) == ["case_id", "case_name", "category", "check_id", "a", "b", "delta"]
    assert str(cmp.cases["change"].dtype) == "string" and str(cmp.cases["significant"].dtype) == "boolean"
    assert "v1 -> v2" in cmp.report()
    # a 1-5 score whose mean fell while more runs passed its threshold: no single direction applies
    judged = compare(
        rows({"q": [5.0, 5.0, 1.0]}, check="Relevance", threshold=3),
        rows({"q": [3.0, 3.0, 3.0]}, check="Relevance", threshold=3),
    )
    assert judged.cases["change"].tolist() == ["changed"]


def test_missing_checks_and_cases_are_named_and_gate_only_when_asked() -> None:
    a = pd.concat([rows({f"c{i}": [1.0] for i in range(8)}), rows({"c0": [1.0]}, check="Citations")])
    b = rows({f"c{i}": [1.0] for i in range(6)})  # the candidate lost two cases and the Citations check
    cmp = compare(a, b)
    assert cmp.missing == {"checks gone": ["Citations"], "checks new": [], "cases gone": ["c6", "c7"],
                           "cases new": []}  # fmt: skip
    assert not cmp.regressed
    summary = cmp.headline()
    assert "checks gone: Citations" in summary and "cases gone: c6, c7" in summary
    assert "does not gate without --fail-on-missing" in summary
    strict = compare(a, b, fail_on_missing=True)
    assert strict.regressed and strict.exit_code == 1
    assert strict.checks.set_index("check_id").loc["Citations", "gates"]
    assert "check Citations gone" in strict.headline()


def test_suite_order_from_the_result_and_first_appearance_from_frames() -> None:
    suite = evalnb.Suite(
        name="order",
        format="tasks-toml",
        cases=[
            evalnb.Case(id=cid, name=cid, runs=1, turns=[evalnb.Turn(prompt=cid, checks=[
                {"type": "regex", "on": "result", "pattern": "ok"}, {"type": "exit_code", "equals": 0}])])
            for cid in ("zeta", "alpha", "mu")
        ],
    )  # fmt: skip
    a = evalnb.run(suite, lambda p: "ok", progress=False)
    b = evalnb.run(suite, lambda p: "ok" if p != "alpha" else "no", progress=False)
    cmp = evalnb.compare(a, b)
    assert list(dict.fromkeys(cmp.cases["case_id"])) == ["zeta", "alpha", "mu"]
    assert cmp.checks["check_id"].tolist() == ["regex", "exit_code"]
    frames = compare(rows({"b2": [1.0], "a1": [1.0]}), rows({"a1": [1.0], "c3": [1.0]}))
    assert frames.cases["case_id"].tolist() == ["b2", "a1", "c3"]


def test_a_comparison_behaves_like_its_case_frame() -> None:
    cmp = compare(rows({"x": [1.0], "y": [1.0]}), rows({"x": [1.0], "y": [0.0]}))
    assert isinstance(cmp, Comparison)
    assert cmp[cmp["change"] == "regressed"]["case_id"].tolist() == ["y"]
    assert len(cmp) == 2 and list(cmp.columns) == list(cmp.cases.columns) and list(cmp) == list(cmp.cases)
    frame = cmp.to_frame()
    frame.loc[0, "change"] = "edited"
    assert cmp.cases.loc[0, "change"] == "same"  # a copy
    assert cmp.head(1)["case_id"].tolist() == ["x"] and cmp.shape == cmp.cases.shape
    assert cmp.loc[cmp["delta"] < 0, "case_id"].tolist() == ["y"]
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        cmp.nonsense  # noqa: B018


def test_clustered_turns_do_not_shrink_the_interval() -> None:
    """Ten turns of one conversation are one sample, not ten: the interval must not shrink like 1/sqrt(10)."""
    rng = np.random.default_rng(5)
    n = 30
    f_a = scores((rng.random(n) > 0.5).astype(float), 1, rng, turns=10)
    f_b = scores((rng.random(n) > 0.5).astype(float), 1, rng, turns=10)
    wide = compare(f_a, f_b).checks.iloc[0]
    narrow = compare(f_a[f_a["turn"] == 0], f_b[f_b["turn"] == 0]).checks.iloc[0]
    assert wide["ci_high"] - wide["ci_low"] == pytest.approx(narrow["ci_high"] - narrow["ci_low"])


def test_three_discordant_cases_are_the_exact_sign_test_not_a_t() -> None:
    # 100 cases, 3 of which fail in the candidate: a paired t on the per-case means gives p ~ 0.04 here;
    # the exact answer is 1/8, so no signs of three cases can be significant at 5%
    a = rows({f"c{i}": [1.0] for i in range(100)})
    b = rows({f"c{i}": [0.0 if i < 3 else 1.0] for i in range(100)})
    row = compare(a, b).checks.iloc[0]
    assert row["p_value"] == pytest.approx(1 / 8, abs=0.01)
    assert row["verdict"] == "too few cases to tell"
    assert row["words"].startswith(
        "too few cases to tell (only 3 of the 100 paired cases changed; could hide"
    )
    # two cases: the words say so, and nothing gates
    two = compare(rows({"x": [1.0], "y": [1.0]}), rows({"x": [0.0], "y": [0.0]})).checks.iloc[0]
    assert two["words"] == "too few cases to tell (2 paired cases)" and not two["gates"]
    assert math.isnan(two["upper_bound"])


def test_words_for_worse_margin_better_and_no_difference() -> None:
    rng = np.random.default_rng(11)
    p = rng.uniform(0.4, 0.9, 200)
    a, b = scores(p, 3, rng), scores(np.clip(p - 0.2, 0, 1), 3, rng)
    worse = compare(a, b).checks.iloc[0]
    assert worse["words"] == (
        f"worse by {-worse['diff']:.2f} (95% one-sided bound {-worse['upper_bound']:.2f})"
    )
    within = compare(a, b, margin=0.3).checks.iloc[0]
    assert within["verdict"] == "within margin" and not within["gates"]
    assert within["words"].endswith("not shown to exceed the margin 0.30 (30 points of pass rate)")
    beyond = compare(a, b, margin={"regex": 0.05}).checks.iloc[0]
    assert beyond["gates"] and beyond["words"].endswith(", beyond the margin 0.05 (5 points of pass rate)")
    better = compare(b, a).checks.iloc[0]
    assert better["verdict"] == "better" and better["words"].startswith("better by ")
    same = compare(a, scores(p, 3, np.random.default_rng(12))).checks.iloc[0]
    assert same["verdict"] == "no detectable difference"
    assert (
        same["words"] == f"no detectable difference (could hide a drop of up to {-same['lower_bound']:.2f})"
    )
    with pytest.raises(evalnb.ConfigError, match="confidence must be in") as err:
        compare(a, b, confidence=1.0)
    assert err.value.code == "INVALID_VALUE"
    with pytest.raises(evalnb.ConfigError, match="margin must be >= 0"):
        compare(a, b, margin={"regex": -0.1})


def test_several_suites_gate_as_one_family() -> None:
    # suite s1: five cases all break (exact one-sided p = 1/32 = 0.031): it gates alone at 5%
    s1_a = rows({f"a{i}": [1.0] for i in range(5)}).assign(suite="s1")
    s1_b = rows({f"a{i}": [0.0] for i in range(5)}).assign(suite="s1")
    # suite s2: as many cases better as worse
    s2_a = rows({f"b{i}": [float(i % 2)] for i in range(10)}).assign(suite="s2")
    s2_b = rows({f"b{i}": [float(1 - i % 2)] for i in range(10)}).assign(suite="s2")
    alone = compare(s1_a, s1_b)
    assert alone.regressed and alone.checks["p_value"].iloc[0] == pytest.approx(1 / 32)
    both = gate([alone, compare(s2_a, s2_b)])
    assert list(both) == ["s1", "s2"] and len(both) == 2
    # Holm over the two checks: 2 x 1/32 > 0.05, so the family does not fire
    assert not both.regressed and both.exit_code == 0
    words = both["s1"].checks["words"].iloc[0]
    assert words.endswith("for this check alone; not significant over the 2 checks of 2 suites compared)")
    text = both.report()
    assert text.startswith("Gate over 2 suites: pass") and "=== s1 ===" in text and "=== s2 ===" in text
    assert both.checks["suite"].tolist() == ["s1", "s2"] and set(both.cases["suite"]) == {"s1", "s2"}
    assert gate({"only": alone}).exit_code == 1
    with pytest.raises(ValueError, match="one confidence"):
        gate([alone, compare(s2_a, s2_b, confidence=0.9)])
    gone = gate({"s2": compare(s2_a, s2_b, fail_on_missing=True)}, missing_suites={"s1": "baseline only"})
    assert gone.regressed and "s1: compared on one side only (baseline only) (gates" in gone.headline()


def test_compare_results_from_runs() -> None:
    suite = evalnb.Suite(
        name="s",
        format="tasks-toml",
        cases=[
            evalnb.Case(id=f"c{i}", name=f"c{i}", runs=2, turns=[
                evalnb.Turn(prompt=f"{i}", checks=[{"type": "regex", "on": "result", "pattern": "ok"}])])
            for i in range(6)
        ],
    )  # fmt: skip
    a = evalnb.run(suite, lambda p: "ok", progress=False)
    b = evalnb.run(suite, lambda p: "ok" if p != "0" else "bad", progress=False)
    cmp = evalnb.compare(a, b)
    assert cmp.regressions["case_id"].tolist() == ["c0"]
    assert cmp.checks["pass_rate_diff"].iloc[0] == pytest.approx(-1 / 6)
    assert not cmp.regressed  # one case of six: triage, not a gate


def frame(rows: list[dict]) -> pd.DataFrame:
    f = pd.DataFrame(rows)
    f["value"] = f["value"].astype("float64")
    f["passed"] = f["passed"].astype("boolean")
    return f


def pass_only(passed: bool, *, cases: int = 10, runs: int = 3) -> pd.DataFrame:
    """A user check that only says pass or fail (no value), several runs per case."""
    return frame(
        [
            {"case_id": f"c{i}", "case_name": f"case {i}", "category": "k", "run": r, "turn": 0,
             "check": "mine", "check_id": "mine", "value": None, "passed": passed,
             "status": "passed" if passed else "failed"}
            for i in range(cases) for r in range(runs)
        ]
    )  # fmt: skip


def test_a_pass_only_check_that_breaks_is_a_regression() -> None:
    cmp = compare(pass_only(True), pass_only(False))
    assert cmp.regressed and cmp.exit_code == 1
    assert cmp.cases["change"].eq("regressed").all()
    # three runs a side cannot reach significance (3/3 against 0/3: Fisher p = 0.1)
    assert not cmp.cases["significant"].any()
    row = cmp.checks.iloc[0]
    assert row["verdict"] == "worse" and row["diff"] == -1.0
    assert compare(pass_only(False), pass_only(True)).cases["change"].eq("improved").all()


def test_agent_errors_count_as_the_worst_score_so_the_verdict_is_not_better() -> None:
    n = 20
    a = frame(
        [{"case_id": f"c{i}", "case_name": "x", "category": "k", "run": 0, "turn": 0, "check": "Relevance",
          "check_id": "Relevance", "value": 4.0, "passed": True, "status": "passed", "reason": "4/5"}
         for i in range(n)]
    )  # fmt: skip
    # the candidate scores a little higher where it answers, and errors on every other case
    b = frame(
        [{"case_id": f"c{i}", "case_name": "x", "category": "k", "run": 0, "turn": 0, "check": "Relevance",
          "check_id": "Relevance", "value": 4.5 if i % 2 else None, "passed": bool(i % 2),
          "status": "passed" if i % 2 else "degraded",
          "reason": "4/5" if i % 2 else "not checked: the agent failed (TimeoutError: no answer within 120s)"}
         for i in range(n)]
    )  # fmt: skip
    cmp = compare(a, b)
    row = cmp.checks.iloc[0]
    # a turn without an answer is the bottom of the 1-5 scale (1), not 0: the mean stays on the scale
    assert row["mean_b"] == pytest.approx((10 * 4.5 + 10 * 1.0) / 20)
    assert row["scale"] == "1-5 score" and row["paired"] == 20 and row["not_compared"] == 0
    assert row["verdict"] == "worse" and row["degraded_b"] == 10
    assert "10 cases without an answer on the candidate side: counted as the worst value" in row["words"]
    assert cmp.degraded["candidate"] == [f"c{i}" for i in range(0, n, 2)]


def test_checks_on_one_side_only_are_new_or_gone_and_other_suites_are_noted() -> None:
    a = pass_only(True).assign(check="old", check_id="old", suite="s1")
    b = pass_only(True).assign(check="fresh", check_id="fresh", suite="s2")
    cmp = compare(a, b)
    assert cmp.checks.set_index("check_id")["verdict"].to_dict() == {"fresh": "new", "old": "gone"}
    assert "suite 's1'" in cmp.report() and "suite 's2'" in cmp.report()


def _judged_frame(
    values: list[float], weighted: list[float] | None, spread: list[float] | None
) -> pd.DataFrame:
    n = len(values)
    return pd.DataFrame(
        {
            "case_id": [f"c{i}" for i in range(n)],
            "run": 0,
            "turn": 0,
            "check": "Relevance",
            "check_id": "Relevance",
            "value": values,
            "passed": [v >= 3 for v in values],
            "weighted": weighted if weighted is not None else [float("nan")] * n,
            "spread": spread if spread is not None else [float("nan")] * n,
        }
    )


def test_a_judged_check_with_weighted_scores_is_compared_on_them() -> None:
    a = _judged_frame([3, 4, 2, 5, 3, 4], [3.1, 3.9, 2.4, 4.6, 3.2, 3.8], [0.5, 0.4, 0.6, 0.3, 0.5, 0.1])
    b = _judged_frame([4, 3, 2, 5, 2, 4], [3.2, 3.7, 2.4, 4.5, 2.9, 3.2], [0.5, 0.5, 0.5, 0.3, 0.6, 0.2])
    cmp = compare(a, b)
    row = cmp.checks.set_index("check_id").loc["Relevance"]
    assert bool(row["weighted"]) and row["mean_a"] == pytest.approx(np.mean([3.1, 3.9, 2.4, 4.6, 3.2, 3.8]))
    report = cmp.report()
    assert "Relevance (1-5 score, weighted): mean per case 3.500 -> 3.317 over 6 paired cases" in report
    assert "c5 [Relevance]: 3.800 -> 3.200 (regressed; untested; beyond the judge's sd 0.20)" in report
    assert "c1 [Relevance]: 3.900 -> 3.700 (regressed; untested; within the judge's sd 0.50)" in report
    cases = cmp.cases.set_index("case_id")
    # the written score of c0 went up (3 -> 4) but the judge's weighted score barely moved: the weighted one
    assert cases.loc["c0", "delta"] == pytest.approx(0.1) and cases.loc["c0", "judge_sd_a"] == 0.5
    assert str(cmp.cases["judge_sd_b"].dtype) == "float64"
    # triage: c5's drop (0.6) is beyond the judge's spread (0.2), c1's (0.2) within it (0.5): c5 first
    order = cmp.triage["case_id"].tolist()
    assert order.index("c5") < order.index("c1")
    # one side without distributions: both are compared on the written scores, like with like
    plain = compare(a, _judged_frame([4, 3, 2, 5, 2, 4], None, None))
    prow = plain.checks.set_index("check_id").loc["Relevance"]
    assert not bool(prow["weighted"]) and prow["mean_a"] == pytest.approx(np.mean([3, 4, 2, 5, 3, 4]))
    assert plain.cases["judge_sd_b"].isna().all()
