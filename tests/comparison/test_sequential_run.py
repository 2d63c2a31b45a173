"""The sequential gate end to end: ``evalnb.run(..., baseline=, stop="decided")`` stops once every gating check
is decided, the cases not run are skipped with the reason, and ``compare`` gives the sequential verdict, also of
a stored run read back in a fresh Result."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.errors import ConfigError

CASES = 200
P = np.random.default_rng(0).beta(0.5, 0.5, CASES)  # each case's pass probability: most pass or fail always


def suite(cases: int = CASES, checks: tuple[str, ...] = ("ExactMatch",)) -> evalnb.Suite:
    df = pd.DataFrame(
        {"id": [f"c{i}" for i in range(cases)], "prompt": [f"q{i}" for i in range(cases)], "expected": "yes"}
    )
    return evalnb.from_frame(df, prompt="prompt", expected="expected", id="id", checks=checks, name="seq")


def agent(drop: float, tag: str, calls: list[str] | None = None) -> Callable[[evalnb.Request], str]:
    """Answers right with the case's probability, scaled down by ``drop``; the same (tag, case, run) the same."""

    def answer(request: evalnb.Request) -> str:
        if calls is not None:
            calls.append(request.case)
        i = int(request.case[1:])
        r = random.Random(zlib.crc32(f"{tag}-{request.case}-{request.run}".encode()))
        return "yes" if r.random() < P[i] * (1 - drop) else "no"

    return answer


@pytest.fixture(scope="module")
def baseline() -> evalnb.Result:
    return evalnb.run(suite(), agent(0.0, "base"), runs=1, progress=False)


def test_a_clear_drop_stops_early_and_compare_says_worse(baseline: evalnb.Result) -> None:
    calls: list[str] = []
    result = evalnb.run(
        suite(), agent(0.6, "cand", calls), runs=1, progress=False, baseline=baseline, stop="decided", seed=3
    )
    assert result.stopped_early
    ran = result.meta["sequential"]["cases_run"]
    assert ran % 10 == 0 and ran < CASES  # batches of 5% of 200 cases
    assert result.calls_saved == CASES - ran == CASES - len(calls)
    skipped = result.scores[result.scores["status"] == "skipped"]
    assert skipped["case_id"].nunique() == CASES - ran
    assert set(skipped["reason"]) == {
        f"skipped: the sequential gate decided every check after {ran} of {CASES} cases"
    }
    assert set(calls).isdisjoint(skipped["case_id"])
    cmp = evalnb.compare(baseline, result)
    row = cmp.checks.set_index("check_id").loc["ExactMatch"]
    assert row["verdict"] == "worse" and bool(row["gates"]) and row["decided_after"] == ran
    assert row["upper_bound"] < 0 and row["paired"] == ran
    assert (
        row["words"].startswith("worse by at least ")
        and f"decided after {ran} of {CASES} cases" in row["words"]
    )
    assert cmp.exit_code == 1
    assert not cmp.missing["cases gone"]  # the cases not run are not "gone"
    report = cmp.report()
    assert "sequential gate: one-sided 95% anytime-valid" in report
    assert f"Stopped after {ran} of {CASES} cases" in report
    assert f"{CASES - ran} case runs not run" in report


def test_the_order_is_seeded(baseline: evalnb.Result) -> None:
    def first(seed: int) -> list[str]:
        calls: list[str] = []
        evalnb.run(
            suite(), agent(0.6, "cand", calls), runs=1, progress=False, concurrency=1, baseline=baseline,
            stop="decided", seed=seed,
        )  # fmt: skip
        return calls[:10]

    assert first(5) == first(5)
    assert first(5) != first(6)
    assert first(5) != [f"c{i}" for i in range(10)]


def test_identical_agents_with_a_margin_stop_at_not_worse(baseline: evalnb.Result) -> None:
    result = evalnb.run(
        suite(), agent(0.0, "again"), runs=1, progress=False, baseline=baseline, stop="decided", margin=0.2
    )
    assert result.stopped_early and result.calls_saved > 0
    cmp = evalnb.compare(baseline, result)
    row = cmp.checks.set_index("check_id").loc["ExactMatch"]
    assert row["verdict"] == "not worse" and not row["gates"] and row["lower_bound"] > -0.2
    assert row["words"].startswith("not worse")
    assert cmp.exit_code == 0
    # the comparison replays the run's own margin; another margin may be asked of the same data
    assert cmp.margin == 0.2
    tighter = evalnb.compare(baseline, result, margin=0.0)
    assert tighter.checks["verdict"].iloc[0] == "not decided"


def test_undecided_when_the_cases_run_out(baseline: evalnb.Result) -> None:
    result = evalnb.run(
        suite(), agent(0.0, "again"), runs=1, progress=False, baseline=baseline, stop="decided"
    )
    assert not result.stopped_early and result.calls_saved == 0
    assert (result.scores["status"] != "skipped").all()
    cmp = evalnb.compare(baseline, result)
    row = cmp.checks.iloc[0]
    assert row["verdict"] == "not decided" and not row["gates"]
    assert row["words"].startswith(f"not decided after all {CASES} cases (between ")
    assert cmp.exit_code == 0
    assert "not decided: ExactMatch" in cmp.headline()


def test_several_checks_each_decided_and_repeats_count_case_runs(baseline: evalnb.Result) -> None:
    checks = ("ExactMatch", "PartialMatch")
    base = evalnb.run(suite(checks=checks), agent(0.0, "base"), runs=2, progress=False)
    result = evalnb.run(
        suite(checks=checks), agent(0.7, "cand"), runs=2, progress=False, baseline=base, stop="decided"
    )
    ran = result.meta["sequential"]["cases_run"]
    assert result.stopped_early and result.calls_saved == 2 * (CASES - ran)
    cmp = evalnb.compare(base, result)
    assert set(cmp.checks["verdict"]) == {"worse"}
    assert cmp.family == "the 2 gating checks"
    decided = cmp.checks["decided_after"].max()
    assert decided == ran  # the run stopped at the look that decided its last check


def test_a_stored_run_gives_the_same_verdict(tmp_path, baseline: evalnb.Result) -> None:
    store = evalnb.Store(tmp_path / "e.db")
    store.save(baseline, version="v1")
    result = evalnb.run(
        suite(), agent(0.6, "cand"), runs=1, progress=False, baseline="v1", stop="decided", store=store,
        version="v2", margin=0.05,
    )  # fmt: skip
    assert result.stopped_early
    loaded = store.load("v2")
    assert loaded.stopped_early and loaded.calls_saved == result.calls_saved
    assert (loaded.scores["status"] == "skipped").sum() == result.calls_saved
    live = evalnb.compare(baseline, result).checks[["verdict", "words", "decided_after", "margin"]]
    # read back in a fresh Result, at the margin the run recorded (no margin given)
    again = store.compare("v1", "v2").checks[["verdict", "words", "decided_after", "margin"]]
    assert live["margin"].tolist() == [0.05]
    pd.testing.assert_frame_equal(live, again)


def test_options_that_make_no_sense_are_refused(baseline: evalnb.Result) -> None:
    with pytest.raises(ConfigError, match="needs baseline="):
        evalnb.run(suite(), agent(0, "x"), stop="decided", progress=False)
    with pytest.raises(ConfigError, match='goes with stop="decided"'):
        evalnb.run(suite(), agent(0, "x"), baseline=baseline, progress=False)
    with pytest.raises(ConfigError, match="stop must be"):
        evalnb.run(suite(), agent(0, "x"), baseline=baseline, stop="early", progress=False)
    with pytest.raises(ConfigError, match="store="):
        evalnb.run(suite(), agent(0, "x"), baseline="v1", stop="decided", progress=False)
    with pytest.raises(ConfigError, match="--confidence"):
        evalnb.run(suite(), agent(0, "x"), baseline=baseline, stop="decided", confidence=1.5, progress=False)


def test_a_check_only_a_few_cases_have_is_waited_for() -> None:
    # three cases of 200 have a regex check: the run cannot stop before it has seen them (and then it cannot
    # decide on three cases, so every case runs); the clear drop of ExactMatch is decided early all the same
    from evalnb.suite import Case, ExactMatchCheck, RegexCheck, Suite, Turn

    cases = [
        Case(
            id=f"c{i}",
            name=f"case {i}",
            turns=[
                Turn(
                    prompt=f"q{i}",
                    expected="yes",
                    checks=[
                        ExactMatchCheck(),
                        *([RegexCheck(on="result", pattern="^y")] if i in (150, 170, 190) else []),
                    ],
                )
            ],
        )
        for i in range(CASES)
    ]
    few = Suite(name="few", format="dataset-json", cases=cases)
    base = evalnb.run(few, agent(0.0, "base"), runs=1, progress=False)
    result = evalnb.run(
        few, agent(0.6, "cand"), runs=1, progress=False, baseline=base, stop="decided", seed=1
    )
    assert not result.stopped_early
    checks = evalnb.compare(base, result).checks.set_index("check_id")
    assert (
        checks.loc["ExactMatch", "verdict"] == "worse" and checks.loc["ExactMatch", "decided_after"] < CASES
    )
    assert checks.loc["regex", "verdict"] == "not decided"


def test_a_budget_and_the_sequential_gate_stop_one_run_together(baseline: evalnb.Result) -> None:
    # No real difference: the gate would go on for many batches; a token budget of 30 calls stops it first.
    plain = agent(0.0, "cand")

    def priced(request: evalnb.Request) -> evalnb.Response:
        return evalnb.Response(
            text=plain(request), model="m", usage={"prompt_tokens": 10, "completion_tokens": 0}
        )

    result = evalnb.run(
        suite(), priced, runs=1, concurrency=1, progress=False, baseline=baseline, stop="decided", seed=3,
        budget=evalnb.Budget(tokens=300),
    )  # fmt: skip
    runs = result.runs
    assert len(runs) == CASES and runs["case_id"].is_unique  # every case once: run or skipped, never twice
    ran = runs[runs["status"] != "skipped"]
    assert 0 < len(ran) <= 30
    assert result.budget_exhausted
    assert runs.loc[runs["status"] == "skipped", "error"].str.startswith("skipped: ").all()


def test_cost_and_latency_margins_are_refused_for_a_sequential_candidate(baseline: evalnb.Result) -> None:
    # docs/comparison.md, deciding with fewer cases: its verdict covers its checks; a spend margin is not ignored
    result = evalnb.run(
        suite(), agent(0.6, "cand"), runs=1, progress=False, baseline=baseline, stop="decided", seed=3
    )
    for margins in (
        {"cost_margin": 0.1},
        {"latency_margin": "10%"},
        {"cost_margin": 0, "latency_margin": 0.2},
    ):
        with pytest.raises(ConfigError) as err:
            evalnb.compare(baseline, result, **margins)  # type: ignore[arg-type]
        assert err.value.code == "INVALID_VALUE"
        assert " and ".join(margins) in str(err.value) and "a run of every case" in str(err.value)
    assert evalnb.compare(baseline, result).exit_code == 1  # without them, the sequential verdict as before
    fixed = evalnb.run(suite(), agent(0.6, "cand"), runs=1, progress=False)
    assert (
        evalnb.compare(baseline, fixed, cost_margin=0.1, latency_margin=0.2).exit_code == 1
    )  # a fixed run takes them
