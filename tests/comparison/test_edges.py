"""The comparison's own edges: paired means, degraded scores, margins in each check's units, the direction of
a check, power plans that never raise for a check they cannot plan, and words that do not contradict
themselves on small suites. Constructed data where the truth is known; the simulations are in
test_simulation.py."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.checks import _registry as registry
from evalnb.checks import scales
from evalnb.comparison import compare, gate, power


def rows(values: dict[str, list[float | None]], *, check: str = "ExactMatch", threshold: float = 0.5,
         degraded: str = "judge openai:gpt-4o failed: HTTP 503") -> pd.DataFrame:  # fmt: skip
    """One row per case x run; a ``None`` value is a degraded score with the reason ``degraded``."""
    out = pd.DataFrame(
        [
            {"case_id": c, "case_name": c, "category": "k", "run": r, "turn": 0, "check": check,
             "check_id": check, "value": v, "passed": v is not None and v >= threshold,
             "status": "degraded" if v is None else ("passed" if v >= threshold else "failed"),
             "reason": degraded if v is None else f"value {v}"}
            for c, vals in values.items() for r, v in enumerate(vals)
        ]
    )  # fmt: skip
    out["value"] = out["value"].astype("float64")
    out["passed"] = out["passed"].astype("boolean")
    return out


# -- the printed means are the paired ones ---------------------------------------------------------


def test_printed_means_are_the_paired_ones_and_the_others_are_said_apart() -> None:
    a = rows({**{f"c{i}": [1.0] for i in range(8)}, "old1": [0.0], "old2": [0.0]})
    b = rows({**{f"c{i}": [0.0 if i == 0 else 1.0] for i in range(8)}, "new1": [1.0]})
    cmp = compare(a, b)
    row = cmp.checks.iloc[0]
    # the difference and the test use the 8 paired cases: so do the means printed beside them
    assert row["paired"] == 8 and row["mean_a"] == 1.0 and row["mean_b"] == pytest.approx(7 / 8)
    assert row["diff"] == pytest.approx(row["mean_b"] - row["mean_a"])
    assert row["pass_rate_a"] == 1.0 and row["pass_rate_b"] == pytest.approx(7 / 8)
    # every case of each side, said apart: 8 of 10 and 8 of 9 (here they even move the other way)
    assert row["mean_a_all"] == pytest.approx(0.8) and row["mean_b_all"] == pytest.approx(8 / 9)
    assert (
        "ExactMatch (pass rate): mean per case 1.000 -> 0.875 over 8 paired cases (every case of each side: "
        "0.800 -> 0.889; 3 cases on one side only or not compared)" in cmp.report()
    )
    # nothing added or removed: one mean, nothing said apart
    same = compare(rows({"x": [1.0], "y": [0.0]}), rows({"x": [1.0], "y": [1.0]}))
    assert "every case of each side" not in same.report()


# -- degraded scores -------------------------------------------------------------------------------


def _judged(outage: set[str], partly: set[str] = frozenset(), *, cases: int = 20) -> pd.DataFrame:  # type: ignore[assignment]
    values: dict[str, list[float | None]] = {}
    for i in range(cases):
        cid = f"c{i}"
        values[cid] = (
            [None, None, None] if cid in outage else ([None, 4.0, 4.0] if cid in partly else [4.0] * 3)
        )
    return rows(values, check="Relevance", threshold=3)


def test_a_judge_outage_on_the_candidate_is_left_out_and_named_not_a_regression() -> None:
    outage = {f"c{i}" for i in range(12)}
    a, b = _judged(set()), _judged(outage, {"c12", "c13"})
    cmp = compare(a, b, fail_on_missing=True)
    row = cmp.checks.iloc[0]
    # counted as the bottom of the scale, twelve judge failures would read as an agent worse by 1.8 points
    assert row["verdict"] != "worse" and not row["gates"] and not cmp.regressed and cmp.exit_code == 0
    assert (
        row["paired"] == 8
        and row["not_compared"] == 12
        and row["degraded_b"] == 14
        and row["degraded_a"] == 0
    )
    assert row["mean_b"] == pytest.approx(4.0)
    assert "; 12 cases degraded on the candidate side: not compared" in row["words"]
    assert "2 cases partly degraded on the candidate side: compared on their other runs" in row["words"]
    changes = cmp.cases.set_index("case_id")["change"]
    assert (changes[sorted(outage)] == "degraded").all() and changes["c12"] == "same"
    # a degraded case is there, not gone (so --fail-on-missing does not fire for it)
    assert cmp.missing["cases gone"] == []
    assert cmp.degraded == {"baseline": [], "candidate": [f"c{i}" for i in range(14)]}
    assert "Degraded: 14 cases on the candidate side (c0, c1" in cmp.headline()
    # --fail-on-degraded: they gate
    strict = compare(a, b, fail_on_degraded=True)
    assert strict.regressed and strict.exit_code == 1 and bool(strict.checks["gates"].iloc[0])
    assert strict.checks["words"].iloc[0].endswith("; gates (fail on degraded)")
    assert "Gate: FAIL: Relevance: 14 cases degraded on the candidate side" in strict.headline()
    assert "14 cases degraded on the candidate side" in gate([strict]).headline()
    # an outage of the baseline's judge is named and never gates
    back = compare(b, a, fail_on_degraded=True)
    assert (
        not back.regressed
        and "12 cases degraded on the baseline side: not compared" in back.checks["words"][0]
    )


def test_a_turn_without_an_answer_still_counts_as_the_worst_value() -> None:
    a = rows({f"c{i}": [4.0] for i in range(10)}, check="Relevance", threshold=3)
    b = rows({f"c{i}": [None if i < 6 else 4.0] for i in range(10)}, check="Relevance", threshold=3,
             degraded="not checked: the agent failed (TimeoutError: no answer within 120s)")  # fmt: skip
    row = compare(a, b).checks.iloc[0]
    assert row["verdict"] == "worse" and row["paired"] == 10 and row["not_compared"] == 0
    assert row["mean_b"] == pytest.approx((6 * 1.0 + 4 * 4.0) / 10)
    assert "6 cases without an answer on the candidate side: counted as the worst value" in row["words"]


# -- margins ---------------------------------------------------------------------------------------


def _drop(check: str, low: float, high: float, share: float, threshold: float, n: int = 60) -> tuple:
    """Baseline and candidate where every case of ``check`` falls by ``share`` of the check's range."""
    rng = np.random.default_rng(4)
    base = rng.uniform(low + 0.3 * (high - low), high, n)
    a = rows({f"c{i}": [v] for i, v in enumerate(base)}, check=check, threshold=threshold)
    b = rows(
        {f"c{i}": [v - share * (high - low)] for i, v in enumerate(base)}, check=check, threshold=threshold
    )
    return a, b


def test_a_margin_is_in_each_checks_units_or_a_share_of_its_range() -> None:
    pm = _drop("PartialMatch", 0.0, 1.0, 0.04, 0.5)
    rel = _drop("Relevance", 1.0, 5.0, 0.04, 3.0)
    a, b = pd.concat([pm[0], rel[0]]), pd.concat([pm[1], rel[1]])
    # the default is no margin, on every scale: any drop the data show gates
    assert compare(a, b).checks["margin"].tolist() == [0.0, 0.0]
    # one number is the same amount in each check's units: 0.05 allows PartialMatch's 0.04 drop but not
    # Relevance's 0.16 (4% of its 1-5 range)
    one = compare(a, b, margin=0.05).checks.set_index("check_id")
    assert (
        one.loc["PartialMatch", "verdict"] == "within margin" and one.loc["Relevance", "verdict"] == "worse"
    )
    assert one.loc["Relevance", "words"].endswith("beyond the margin 0.05 (on the 1-5 score)")
    # a share of each range is the same share everywhere: 5% is 0.05 on 0-1 and 0.2 on 1-5
    share = compare(a, b, margin="5%")
    sh = share.checks.set_index("check_id")
    assert sh["margin"].to_dict() == pytest.approx({"PartialMatch": 0.05, "Relevance": 0.2})
    assert set(sh["verdict"]) == {"within margin"} and not share.regressed
    assert "margin 5% of each check's range" in share.report()
    assert "margin 0.20 (on the 1-5 score)" in share.report()
    # a mapping by check, with "*" for the others
    mixed = compare(a, b, margin={"*": 0.05, "Relevance": 0.2}).checks.set_index("check_id")
    assert mixed["margin"].to_dict() == pytest.approx({"PartialMatch": 0.05, "Relevance": 0.2})
    # a pass rate's margin is said in points
    regex = _drop("regex", 0.0, 1.0, 0.0, 0.5)[0]
    assert compare(regex, regex, margin=0.02).report().count("margin 0.02 (2 points of pass rate)") == 1


def test_a_share_margin_of_a_count_is_a_share_of_its_baseline_mean() -> None:
    a = rows({f"c{i}": [4.0] for i in range(10)}, check="Citations", threshold=1)
    b = rows({f"c{i}": [3.8] for i in range(10)}, check="Citations", threshold=1)
    row = compare(a, b, margin="10%").checks.iloc[0]
    assert row["margin"] == pytest.approx(0.4) and row["verdict"] == "within margin"
    assert row["words"].endswith("not shown to exceed the margin 0.40 (a count)")


def test_margin_options_are_parsed_and_checked() -> None:
    from evalnb.comparison._verdicts import parse_margins

    assert parse_margins(None) == 0.0 and parse_margins(["0.02"]) == 0.02 and parse_margins(["5%"]) == "5%"
    assert parse_margins(["0.02", "Relevance=0.2", "rows#2=10%"]) == {
        "*": 0.02,
        "Relevance": 0.2,
        "rows#2": "10%",
    }
    for bad in (
        ["x"],
        ["-0.1"],
        ["nan"],
        ["inf"],
        ["Relevance=-1%"],
        ["=0.1"],
        ["0.1", "0.2"],
        ["a=1", "a=2"],
    ):
        with pytest.raises(evalnb.ConfigError) as err:
            parse_margins(bad)
        assert err.value.code == "INVALID_VALUE" and "--margin" in str(err.value)
    a, b = rows({"x": [1.0]}), rows({"x": [1.0]})
    with pytest.raises(evalnb.ConfigError, match="--margin must be >= 0 and finite"):
        compare(a, b, margin=float("nan"))
    # a check name that matches nothing: noted by compare, refused by the gate (naming the checks there are)
    typo = compare(a, b, margin={"Relevanse": 0.2})
    assert "Note: the margin for 'Relevanse' names no check compared here." in typo.report()
    with pytest.raises(
        evalnb.ConfigError, match="--margin names no check compared: 'Relevanse'; the checks are ExactMatch"
    ):
        gate([typo])


# -- direction -------------------------------------------------------------------------------------


@pytest.fixture()
def retries() -> object:
    registry.register("Retries", lambda turn, response: (0.0, True, "no retries"), higher_is_better=False)
    scales.declare("Latency", low=0.0, high=math.inf, kind="count", higher_is_better=False)
    yield
    registry.unregister("Retries")
    scales._SCALES.pop("Latency", None)


def test_a_lower_is_better_check_gates_when_it_rises(retries: object) -> None:
    up_is_good = scales.higher_is_better
    assert not up_is_good("Retries") and not up_is_good("Latency#2") and up_is_good("regex")
    for check in ("Retries", "Latency"):
        a = rows({f"c{i}": [1.0, 1.0] for i in range(12)}, check=check, threshold=0)
        b = rows({f"c{i}": [3.0, 2.0] for i in range(12)}, check=check, threshold=0)
        up = compare(a, b)
        row = up.checks.iloc[0]
        assert not row["higher_is_better"] and row["diff"] == pytest.approx(1.5)
        assert row["verdict"] == "worse" and row["gates"] and row["words"].startswith("worse by 1.50")
        # the bounds stay in the check's units: the rise is at least the lower bound
        assert 0 < row["lower_bound"] <= 1.5 <= row["upper_bound"]
        assert up.cases["change"].eq("regressed").all()
        assert "lower is better" in up.report()
        down = compare(b, a)
        assert down.checks["verdict"].iloc[0] == "better" and not down.regressed
        assert down.cases["change"].eq("improved").all()
    # every built-in check is higher-is-better and says so
    assert compare(rows({"x": [1.0]}), rows({"x": [1.0]})).checks["higher_is_better"].tolist() == [True]


def test_a_direction_said_in_the_spec_or_registration_travels_with_the_run() -> None:
    registry.register("Hops", lambda turn, response: (float(len(response.text or "")), True, "hops"))
    registry.register("Waits", lambda turn, response: (float(len(response.text or "")), True, "w"),
                      higher_is_better=False)  # fmt: skip
    try:
        suite = evalnb.Suite(name="dir", format="dataset-json", cases=[
            evalnb.Case(id=f"c{i}", name=f"c{i}", runs=1, turns=[evalnb.Turn(prompt=f"{i}", checks=[
                {"type": "custom", "check": "Hops", "higher_is_better": False},
                {"type": "custom", "check": "Waits"}, {"type": "custom", "check": "Hops"}])])
            for i in range(8)
        ])  # fmt: skip
        a = evalnb.run(suite, lambda p: "x", progress=False).scores
        b = evalnb.run(suite, lambda p: "xxx", progress=False).scores
        options = dict(zip(a["check_id"], a["options"], strict=False))
        assert json.loads(options["Hops"])["higher_is_better"] is False
        assert json.loads(options["Waits"])["higher_is_better"] is False
        assert "higher_is_better" not in json.loads(options["Hops#2"])  # said only when said
    finally:
        registry.unregister("Hops")
        registry.unregister("Waits")
    # compared where the checks are not registered (another process, `evalnb compare`): the runs say it
    verdicts = compare(a, b).checks.set_index("check_id")
    assert verdicts["higher_is_better"].to_dict() == {"Hops": False, "Waits": False, "Hops#2": True}
    assert verdicts["verdict"].to_dict() == {"Hops": "worse", "Waits": "worse", "Hops#2": "better"}


def test_a_spec_that_says_no_direction_keeps_its_content_hash() -> None:
    from evalnb.suite import CustomCheck

    plain = CustomCheck(check="Mine")
    assert (
        "higher_is_better" not in plain.model_dump(mode="json") and "higher_is_better" not in plain.options()
    )
    assert CustomCheck(check="Mine", higher_is_better=False).options()["higher_is_better"] is False
    with pytest.raises(TypeError, match="higher_is_better must be True, False or None"):
        registry.register("Bad", lambda t, r: True, higher_is_better="no")  # type: ignore[arg-type]


# -- power plans -----------------------------------------------------------------------------------


def _baseline(cases: int = 30, runs: int = 3, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.3, 1.0, cases)
    frames = []
    for check, prob in (("regex", p), ("ExactMatch", np.ones(cases)), ("intent", np.zeros(cases))):
        vals = {f"c{i}": [float(rng.random() < prob[i]) for _ in range(runs)] for i in range(cases)}
        frames.append(rows(vals, check=check))  # type: ignore[arg-type]
    return pd.concat(frames, ignore_index=True)


def test_power_plans_the_checks_it_can_and_names_the_others() -> None:
    base = _baseline()
    plan = power(base, drop=0.05)  # the README's call, on a suite with a check at 0% and one at 100%
    t = plan.table.set_index("check_id")
    assert t["plannable"].to_dict() == {"regex": True, "ExactMatch": True, "intent": False}
    assert plan.unplanned == {
        "intent": "every case fails in the baseline (pass rate 0%), so it cannot get worse"
    }
    assert t.loc["regex", "cases_needed"] > 0 and pd.isna(t.loc["intent", "cases_needed"])
    text = plan.report()
    assert "intent (pass rate, mean 0.00), a drop of 0.05: cannot be planned: every case fails" in text
    assert plan.power_at(100, 3).isna().to_dict() == {"regex": False, "ExactMatch": False, "intent": True}
    # no check can be planned: a plan that says so for each, never an exception
    none = power(base[base["check"] == "intent"], drop=0.05)
    assert none.table["plannable"].tolist() == [False]
    assert "no check can be planned (1 listed)" in none.report()
    # a drop that cannot sit in so few cases is a reason, naming the smallest share that can carry it
    few = power(base, drop=0.3, affected=0.05)
    assert few.unplanned["regex"].startswith("a drop of 0.30 cannot sit in 5% of the cases")
    assert "the smallest share is" in few.unplanned["regex"]


def test_power_plans_a_few_cases_that_break() -> None:
    # 40% of the cases always pass, 20% always fail, 40% are flaky: the mean headroom is about 0.6, so a random
    # tenth of the cases cannot lose 10 points; a tenth of the always-passing ones breaking completely can
    rng = np.random.default_rng(7)
    u = rng.random(300)
    p = np.where(u < 0.4, 1.0, np.where(u < 0.6, 0.0, rng.uniform(0.2, 0.9, 300)))
    base = rows({f"c{i}": [float(rng.random() < p[i]) for _ in range(3)] for i in range(300)}, check="regex")  # type: ignore[misc]
    plan = power(base, drop=0.1, affected=0.1)
    row = plan.table.iloc[0]
    assert row["plannable"] and 0.3 < row["from_top"] < 0.7 and 20 < row["cases_needed"] < 1000
    assert "the cases that break are among the" in plan.report()
    # the same drop spread over every case is planned as before (any case, each losing a little)
    assert power(base, drop=0.1).table["from_top"].iloc[0] == 1.0


def test_power_of_a_lower_is_better_check(retries: object) -> None:
    rng = np.random.default_rng(2)
    base = rows(
        {f"c{i}": [float(rng.poisson(2)) for _ in range(3)] for i in range(40)}, check="Latency", threshold=0
    )
    plan = power(base, drop=0.5)
    row = plan.table.iloc[0]
    assert not row["higher_is_better"] and row["plannable"] and row["cases_needed"] > 5
    assert "lower is better" in plan.report()


# -- words on small suites -------------------------------------------------------------------------


def test_small_suites_get_words_that_do_not_contradict_themselves() -> None:
    # one case of eight changed, for the better: not "could hide a drop of up to 0.00"
    a = rows({f"c{i}": [0.0 if i == 0 else 1.0] for i in range(8)})
    b = rows({f"c{i}": [1.0] for i in range(8)})
    words = compare(a, b).checks["words"].iloc[0]
    assert words == "too few cases to tell (only 1 of the 8 paired cases changed, for the better)"
    b = rows({f"c{i}": [1.0] for i in range(8)})
    a = rows({f"c{i}": [0.0 if i < 2 else 1.0] for i in range(8)})
    assert (
        compare(a, b)
        .checks["words"]
        .iloc[0]
        .endswith("only 2 of the 8 paired cases changed, all for the better)")
    )
    # a one-sided bound of exactly 0 rules a drop out; it is not a drop "of up to 0.00"
    a = rows({f"c{i}": [0.0, 0.0, 0.0, 0.0, 1.0, 1.0][i : i + 1] for i in range(6)})
    b = rows({f"c{i}": [1.0, 1.0, 1.0, 1.0, 0.0, 1.0][i : i + 1] for i in range(6)})
    row = compare(a, b).checks.iloc[0]
    assert (
        row["lower_bound"] == 0
        and row["words"] == "no detectable difference (the 95% one-sided bound rules out a drop)"
    )
    # Holm over the checks that could reach the level is said as such, beside the checks compared
    suites = []
    for s in range(3):
        a_s = pd.concat(
            [rows({f"c{i}": [1.0] for i in range(3)}, check=c) for c in ("regex", "rows")]
        ).assign(suite=f"s{s}")
        b_s = a_s.copy()
        if s == 0:
            a_s = pd.concat(
                [a_s, rows({f"d{i}": [1.0] for i in range(6)}, check="intent").assign(suite="s0")]
            )
            b_s = pd.concat(
                [b_s, rows({f"d{i}": [0.0] for i in range(6)}, check="intent").assign(suite="s0")]
            )
        suites.append(compare(a_s, b_s))
    g = gate(suites)
    head = g["s0"].report().splitlines()[0]
    assert "Holm over the 1 check that could reach the level, of the 7 checks of 3 suites compared" in head
    assert "Holm over the 2 checks compared" in compare(*_two_checks()).report()


def _two_checks() -> tuple[pd.DataFrame, pd.DataFrame]:
    a = pd.concat([rows({f"c{i}": [1.0] for i in range(8)}, check=c) for c in ("regex", "rows")])
    b = pd.concat([rows({f"c{i}": [0.0] for i in range(8)}, check=c) for c in ("regex", "rows")])
    return a, b


def test_what_trend_and_compare_average_is_said(tmp_path: object) -> None:
    from typer.testing import CliRunner

    from evalnb.cli import app

    suite = evalnb.Suite(name="avg", format="tasks-toml", cases=[
        evalnb.Case(id=f"c{i}", name=f"c{i}", runs=1 + (i == 0) * 3, turns=[evalnb.Turn(prompt=str(i), checks=[
            {"type": "regex", "on": "result", "pattern": "ok"}])]) for i in range(4)])  # fmt: skip
    store = evalnb.Store(f"{tmp_path}/t.db")
    r1 = evalnb.run(suite, lambda p: "ok" if p != "0" else "no", progress=False)
    store.save(r1, version="v1")
    store.save(evalnb.run(suite, lambda p: "ok", progress=False), version="v2")
    trend = store.trend("avg")
    # c0 has four runs: over rows the mean is 3/7, per case 3/4
    assert trend.loc[trend["version"] == "v1", "mean"].iloc[0] == pytest.approx(3 / 7)
    assert store.compare("v1", "v2").checks["mean_a"].iloc[0] == pytest.approx(3 / 4)
    assert trend.attrs["mean"].startswith("mean: over every scored row")
    out = CliRunner().invoke(app, ["trend", "avg", "--store", f"{tmp_path}/t.db"]).output
    assert "mean: over every scored row (each case x run x turn with a value)" in out
    assert "`evalnb compare` averages per case instead" in out
    out = CliRunner().invoke(app, ["compare", "v1", "v2", "--store", f"{tmp_path}/t.db"]).output
    assert "regex (pass rate): mean per case 0.750 -> 1.000 over 4 paired cases" in out
    assert "a mean is per case: each case's runs and turns averaged first" in out
