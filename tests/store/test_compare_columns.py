"""``store.compare`` loads only the columns the comparison reads, and says exactly what comparing the whole
stored Results says (docs/comparison.md, comparing stored versions).

The stored runs here have what a comparison reads in every form: runs repeated, two turns, categories,
an agent error (a turn without an answer) and a judge outage (degraded scores of both kinds), a judged 1-5
check with probability-weighted scores and the judge's spread, one judged by another judge on one side, a pass-only check, a lower-is-better check
its options declare, a case and a check on one side only, prices (one call unpriced) and latencies.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.comparison._frames import COMPARED_COLUMNS
from evalnb.results import Result
from evalnb.results._frames import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, make_frame
from evalnb.store import Store
from evalnb.suite import Case, Suite, Turn

CASES = 24
RUNS = 3


def _result(seed: int, *, lost_case: bool = False, new_check: bool = False) -> Result:
    rng = np.random.default_rng(seed)
    ids = [f"c{i:02d}" for i in range(CASES)]
    suite = Suite(
        name="shapes",
        format="tasks-toml",
        cases=[
            Case(
                id=c,
                name=f"case {c}",
                category=f"k{i % 3}",
                runs=RUNS,
                turns=[Turn(prompt="p"), Turn(prompt="q")],
            )
            for i, c in enumerate(ids)
        ],
    )
    run_rows, score_rows = [], []
    for i, cid in enumerate(ids):
        if lost_case and i == 0:
            continue
        for r in range(RUNS):
            for t in range(2):
                base = {"suite": "shapes", "case_id": cid, "case_name": f"case {cid}", "category": f"k{i % 3}",
                        "run": r, "turn": t}  # fmt: skip
                error = seed == 1 and i == 5 and r == 0 and t == 1
                run_rows.append(
                    {**base, "prompt": f"prompt {cid} {t}", "response": None if error else f"answer {rng.random()}",
                     "stdout": "out" * 20, "status": "error" if error else "passed",
                     "error": "timeout" if error else None, "latency_ms": float(rng.gamma(2.0, 100.0 + 30 * seed)),
                     "model": "m", "agent": "a", "prompt_tokens": 10, "completion_tokens": 20,
                     "cost": None if (i == 7 and r == 1) else 0.001 * (1 + seed) + 0.0001 * i}
                )  # fmt: skip
                level = int(rng.integers(1, 6))
                outage = seed == 1 and i == 9 and t == 0
                checks = [
                    ("regex", "regex#1", None, bool(rng.random() < 0.8 - 0.2 * seed), "{}", None, None, None),
                    ("Relevance", "Relevance", float(level), level >= 3, "{}", level + rng.normal(0, 0.3),
                     float(rng.uniform(0.1, 0.9)), "judge-model"),
                    # another judge on the candidate side: compared on the levels the judges wrote
                    ("Coherence", "Coherence", float(level), level >= 3, "{}", level + 0.25,
                     0.5, "judge-model" if seed == 0 else "other-judge"),
                    ("mine", "mine", None, bool(rng.random() < 0.7), "{}", None, None, None),
                    ("steps", "steps", float(rng.integers(1, 9)), True, json.dumps({"higher_is_better": False}),
                     None, None, None),
                ]  # fmt: skip
                if new_check:
                    checks.append(
                        ("PartialMatch", "PartialMatch", float(rng.random()), True, "{}", None, None, None)
                    )
                for name, check_id, value, ok, options, weighted, spread, judge in checks:
                    status, reason = ("passed" if ok else "failed"), "fine"
                    if error:
                        value, ok, status, reason = None, False, "degraded", "not checked: the agent raised"
                    elif outage and name == "Relevance":
                        value, ok, status, reason = None, None, "degraded", "judge unavailable: 503"
                        weighted = spread = None
                    score_rows.append(
                        {**base, "check": name, "check_id": check_id, "value": value, "passed": ok,
                         "status": status, "reason": reason, "judge": judge, "options": options,
                         "prompt_tokens": 5 if judge else None, "completion_tokens": 3 if judge else None,
                         "cost": 0.0002 if judge else None, "weighted": weighted, "spread": spread,
                         "judge_model": judge}
                    )  # fmt: skip
    return Result(
        suite=suite,
        runs=make_frame(run_rows, RUNS_COLUMNS),
        scores=make_frame(score_rows, SCORES_COLUMNS),
        mismatches=make_frame([], MISMATCH_COLUMNS),
        meta={"agent": "a", "model": "m", "started_at": "2026-01-01T00:00:00+00:00"},
    )


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cmp") / "runs.db"
    store = Store(path)
    store.save(_result(0), version="v1")
    store.save(_result(1, lost_case=True, new_check=True), version="v2")
    store.engine.dispose()
    return path


def _same(lean: evalnb.comparison.Comparison, whole: evalnb.comparison.Comparison) -> None:
    pd.testing.assert_frame_equal(lean.checks, whole.checks, check_exact=True)
    pd.testing.assert_frame_equal(lean.cases, whole.cases, check_exact=True)
    assert lean.report() == whole.report() and lean.exit_code == whole.exit_code


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"margin": "5%", "cost_margin": 0.1, "latency_margin": "20%"},
        {"margin": {"*": 0.02, "Relevance": 0.2}, "fail_on_missing": True, "fail_on_degraded": True,
         "confidence": 0.9},
    ],
)  # fmt: skip
def test_store_compare_says_what_comparing_the_whole_runs_says(stored: Path, options: dict) -> None:
    store = Store(stored, create=False)
    lean = store.compare("v1", "v2", **options)
    whole = evalnb.compare(store.load("v1"), store.load("v2"), labels=("v1", "v2"), **options)
    _same(lean, whole)
    # what the runs hold is all there: both degraded kinds, the unpriced call, the sides' lost and new parts
    checks = lean.checks.set_index("check_id")
    assert checks.loc["Relevance", "degraded_b"] == 2 and bool(checks.loc["Relevance", "weighted"])
    assert not bool(checks.loc["Coherence", "weighted"])
    assert (
        not bool(checks.loc["steps", "higher_is_better"]) and checks.loc["PartialMatch", "verdict"] == "new"
    )
    assert lean.missing["cases gone"] == ["c00"] and lean.degraded["candidate"] == ["c05", "c09"]
    assert "cost" in checks.index and checks.loc["cost", "paired"] == CASES - 2  # c07's unpriced call: NA
    gate = store.compare_all("v1", "v2", **options)
    pd.testing.assert_frame_equal(
        gate.checks, evalnb.comparison.gate({"shapes": whole}).checks, check_exact=True
    )


def test_the_comparison_reads_no_column_beyond_the_ones_it_names() -> None:
    a, b = _result(0), _result(1, lost_case=True, new_check=True)

    def blanked(r: Result) -> Result:
        frames = {}
        for name in ("runs", "scores"):
            frame = getattr(r, name).copy()
            for col in frame.columns:
                if col not in COMPARED_COLUMNS and col != "suite":
                    frame[col] = frame[col].where(pd.Series(False, index=frame.index))  # all NA
            frames[name] = frame
        return Result.from_frames(suite=r.suite, meta=r.meta, mismatches=r.mismatches, **frames)

    options = {"cost_margin": 0.1, "latency_margin": 0.2, "fail_on_degraded": True}
    _same(evalnb.compare(blanked(a), blanked(b), **options), evalnb.compare(a, b, **options))


def test_store_compare_reads_the_lean_columns_and_explore_gets_the_answers(stored: Path) -> None:
    store = Store(stored, create=False)
    cmp = store.compare("v1", "v2")
    a, b = cmp._results()  # what explore() shows: the whole runs, read when it opens
    assert a.runs["response"].notna().all() and b.runs["stdout"].eq("out" * 20).all()
    assert a.meta.get("run_id") == store.load("v1").meta.get("run_id")


def test_the_three_suite_shapes_compare_alike_lean_and_whole(tmp_path: Path) -> None:
    # the example suites (tasks, cube, dataset with a judge) as the demo runs and stores them
    from evalnb.demo._main import run_demo

    store = run_demo(out=tmp_path, echo=lambda s: None).store
    assert len(store.suites()) == 3
    for name in store.suites():
        options = {"margin": "5%", "latency_margin": 0.2}
        whole = evalnb.compare(
            store.load("previous", suite=name), store.load("current", suite=name),
            labels=("previous", "current"), **options,
        )  # fmt: skip
        _same(store.compare("previous", "current", suite=name, **options), whole)
