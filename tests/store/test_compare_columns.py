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
from evalnb.store._segments import Segment
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


def test_store_compare_reads_the_runs_sums_not_their_rows(
    stored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the sums kept when each run was saved are all it reads: a load of rows would fail here
    from evalnb.store import _loading

    store = Store(stored, create=False)
    whole = evalnb.compare(store.load("v1"), store.load("v2"), labels=("v1", "v2"), cost_margin=0.1)

    def no_rows(*args: object, **kwargs: object) -> None:
        raise AssertionError("store.compare read a run's rows")

    monkeypatch.setattr(_loading, "load", no_rows)
    _same(Store(stored, create=False).compare("v1", "v2", cost_margin=0.1), whole)


def _without_sums(path: Path, version: str) -> None:
    import sqlite3

    with sqlite3.connect(path) as con:
        con.execute(
            "DELETE FROM segments WHERE frame LIKE 'agg1:%' AND run_pk = (SELECT id FROM runs WHERE version = ?)",
            (version,),
        )
    con.close()


def test_a_run_saved_without_sums_is_compared_from_its_columns(stored: Path, tmp_path: Path) -> None:
    # a run an evalnb before the sums saved (schema 8): its sums are made from its compared columns
    import shutil

    path = tmp_path / "older.db"
    shutil.copy(stored, path)
    _without_sums(path, "v1")
    store = Store(path, create=False)
    whole = evalnb.compare(store.load("v1"), store.load("v2"), labels=("v1", "v2"), margin="5%")
    _same(store.compare("v1", "v2", margin="5%"), whole)
    _without_sums(path, "v2")
    _same(Store(path, create=False).compare("v1", "v2", margin="5%"), whole)


def test_sums_of_many_runs_split_only_between_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # segments of 7 entries and cells of 3 runs: each segment ends where a case x check ends, so every cell is
    # summed within one (as the whole array sums it) and the numbers are the whole comparison's to the bit
    import sqlite3

    from evalnb.store import _aggregates

    monkeypatch.setattr(_aggregates, "SEGMENT_ROWS", 7)
    store = Store(tmp_path / "s.db")
    store.save(_result(0), version="v1")
    store.save(_result(1, lost_case=True, new_check=True), version="v2")
    with sqlite3.connect(tmp_path / "s.db") as con:
        stored_rows = con.execute(
            "SELECT n, data FROM segments WHERE frame = 'agg1:entries' ORDER BY seq0"
        ).fetchall()
    con.close()
    sizes = [n for n, _ in stored_rows]
    assert len(sizes) > 10 and all(n % RUNS == 0 for n in sizes)
    # a segment's column of numbers or flags with one value throughout is that value once; others are packed
    kinds = {(name, kind) for _, data in stored_rows for name, (kind, *_) in Segment(data).spans.items()}
    assert {("degraded", "c"), ("v_n", "c"), ("v_sum", "d"), ("case", "q"), ("degraded", "b")} <= kinds
    whole = evalnb.compare(store.load("v1"), store.load("v2"), labels=("v1", "v2"))
    _same(store.compare("v1", "v2"), whole)


def test_damaged_sums_are_a_stored_run_that_does_not_read_back(stored: Path, tmp_path: Path) -> None:
    import shutil
    import sqlite3

    from evalnb.errors import StoreError

    path = tmp_path / "damaged.db"
    shutil.copy(stored, path)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE segments SET data = X'657673310000' WHERE frame = 'agg1:entries'")
    con.close()
    with pytest.raises(StoreError) as err:
        Store(path, create=False).compare("v1", "v2")
    assert err.value.code == "STORED_RUN_INVALID" and "does not read back" in err.value.message


async def test_a_resumed_run_keeps_one_set_of_sums(tmp_path: Path) -> None:
    import asyncio
    import sqlite3

    suite = evalnb.load(
        json.dumps(
            {
                "schemaVersion": "1.1.0",
                "default_evaluators": {"ExactMatch": {}},
                "items": [{"prompt": f"p{i}", "expected_response": "yes"} for i in range(40)],
            }
        ),
        format="dataset-json",
    )
    store = Store(tmp_path / "r.db")
    started = asyncio.Event()
    calls = {"n": 0}

    async def agent(prompt: str) -> str:
        calls["n"] += 1
        if calls["n"] >= 20:
            started.set()
            await asyncio.sleep(60)  # the run is cancelled meanwhile: interrupted, its finished ones saved
        return "yes" if int(prompt[1:]) % 3 else "no"

    task = asyncio.create_task(
        evalnb.run_async(suite, agent, store=store, version="v1", progress=False, concurrency=1)
    )
    await started.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    run_id = store.history()["run_id"].iloc[0]
    assert store.history()["status"].tolist() == ["interrupted"]

    async def quick(prompt: str) -> str:
        return "yes" if int(prompt[1:]) % 3 else "no"

    await evalnb.run_async(suite, quick, store=store, resume=run_id, progress=False)
    await evalnb.run_async(suite, lambda p: "yes", store=store, version="v2", progress=False)
    with sqlite3.connect(tmp_path / "r.db") as con:
        query = "SELECT COUNT(*) FROM segments WHERE frame = 'agg1:checks' GROUP BY run_pk"
        heads = con.execute(query).fetchall()
    con.close()
    assert heads == [(2,), (2,)]  # the resumed run's sums were made again, of all its case runs, once
    _same(store.compare("v1", "v2"), evalnb.compare(store.load("v1"), store.load("v2"), labels=("v1", "v2")))
    assert store.compare("v1", "v2").checks.set_index("check_id").loc["ExactMatch", "cases"] == 40
