"""The run store on real SQLite files: round trip, incremental writes and resume after SIGKILL, two writing
processes, and a migration from the first schema version."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import evalnb
from evalnb.cli import app
from evalnb.comparison import Comparison
from evalnb.errors import StoreError
from evalnb.store import Store
from evalnb.store._schema import SCHEMA_VERSION
from evalnb.store._schema import migrate as _migrate
from evalnb.suite import Case, RegexCheck, RowsCheck, Suite, Turn

ROOT = Path(__file__).resolve().parents[2]

SUITE_CODE = textwrap.dedent(
    """
    from evalnb.suite import Case, ExactMatchCheck, RegexCheck, RowsCheck, Suite, Turn

    def make_suite(n=12, runs=2):
        cases = [
            Case(id=f"c{i}", name=f"case {i}", category="even" if i % 2 == 0 else "odd", runs=runs,
                 turns=[Turn(prompt=f"q{i}", expected="yes",
                             checks=[RegexCheck(on="result", pattern="y"), ExactMatchCheck()])])
            for i in range(n)
        ]
        return Suite(name="store-suite", format="tasks-toml", cases=cases)

    def rows_suite(n=40):
        # A cube-style suite: each case expects one row; rows_agent gets the odd cases' value wrong.
        cases = [
            Case(id=f"c{i}", name=f"case {i}", runs=1,
                 turns=[Turn(prompt=f"q{i}", checks=[RowsCheck(expected=[{"k": i, "v": 1}])])])
            for i in range(n)
        ]
        return Suite(name="rows-crash", format="cube-yaml", cases=cases)

    def rows_agent(prompt):
        i = int(prompt[1:])
        return {"text": "rows", "rows": [{"k": i, "v": 1 if i % 2 == 0 else 2}]}
    """
)
_ns: dict = {}
exec(SUITE_CODE, _ns)
make_suite = _ns["make_suite"]
rows_agent = _ns["rows_agent"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _agent(prompt: str) -> dict:
    i = int(prompt[1:])
    text = "yes" if i % 3 else "no <script>window.pwned = 1</script>"
    return {"text": text, "model": "m-1", "usage": {"prompt_tokens": 3, "completion_tokens": 5}}


def _assert_same(a: evalnb.Result, b: evalnb.Result) -> None:
    for name in ("runs", "scores", "mismatches"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
        assert list(getattr(a, name).dtypes) == list(getattr(b, name).dtypes)


def test_round_trip_frames_equal_with_dtypes(tmp_path: Path) -> None:
    store = Store(tmp_path / "deep" / "evals.db")
    assert (tmp_path / "deep" / "evals.db").exists()
    assert store.schema_version == SCHEMA_VERSION
    result = evalnb.run(make_suite(), _agent, progress=False)
    run_id = store.save(result, version="v1")
    loaded = store.load(run_id)
    _assert_same(result, loaded)
    assert loaded.suite == result.suite
    assert loaded.meta["version"] == "v1" and loaded.meta["model"] == "m-1"
    pd.testing.assert_frame_equal(loaded.cases, result.cases)
    # by version label, too
    _assert_same(result, store.load("v1"))
    runs = store.history()
    assert runs[["run_id", "suite", "version", "status", "model"]].iloc[0].tolist() == [
        run_id,
        "store-suite",
        "v1",
        "complete",
        "m-1",
    ]
    assert json.loads(runs["checks"].iloc[0])["regex"]["options"] == {"on": "result", "pattern": "y"}
    assert runs["git_commit"].iloc[0] is pd.NA or len(runs["git_commit"].iloc[0]) == 40
    store.delete(run_id)
    assert store.history().empty
    with pytest.raises(StoreError) as err:
        store.load(run_id)
    assert err.value.code == "RUN_NOT_FOUND"


def test_round_trip_keeps_mismatches_and_extra_columns(tmp_path: Path) -> None:
    suite = Suite(
        name="rows-suite",
        format="cube-yaml",
        cases=[
            Case(
                id="r1",
                name="r1",
                turns=[Turn(prompt="p", checks=[RowsCheck(expected=[{"a": 1}, {"a": 2}])])],
            )
        ],
    )
    result = evalnb.run(suite, lambda p: {"text": "x", "rows": [{"a": 1}, {"a": 3}]}, progress=False)
    assert len(result.mismatches) >= 1
    result.scores["note"] = pd.array(["n"] * len(result.scores), dtype="string")
    store = Store(tmp_path / "s.db")
    loaded = store.load(store.save(result, version="x"))
    _assert_same(result, loaded)


def trend_and_compare(store: Store) -> tuple[evalnb.Result, evalnb.Result, pd.DataFrame, Comparison]:
    """Two stored versions of make_suite(); trend checked against summary(); (r1, r2, trend, comparison).

    Shared with the PostgreSQL tests, so both dialects are held to the same figures.
    """
    r1 = evalnb.run(make_suite(), _agent, store=store, version="v1", progress=False)
    r2 = evalnb.run(make_suite(), lambda p: "yes", store=store, version="v2", progress=False)
    trend = store.trend("store-suite")
    assert trend["version"].tolist() == ["v1", "v1", "v2", "v2"]
    assert trend["order"].tolist() == [1, 1, 2, 2]
    summ = r1.summary().set_index("check_id")
    t1 = trend[trend["version"] == "v1"].set_index("check_id")
    for cid in ("regex", "ExactMatch"):
        assert t1.loc[cid, "mean"] == pytest.approx(summ.loc[cid, "mean"])
        assert t1.loc[cid, "pass_rate"] == pytest.approx(summ.loc[cid, "pass_rate"])
        assert t1.loc[cid, "ci_low"] < t1.loc[cid, "mean"] < t1.loc[cid, "ci_high"]
        assert t1.loc[cid, "cases"] == 12
    assert (trend[trend["version"] == "v2"]["pass_rate"] == 1.0).all()
    assert trend["prompt_tokens"].iloc[0] == 3 * 24
    assert str(trend["mean"].dtype) == "float64" and str(trend["n"].dtype) == "Int64"
    cmp = store.compare("v1", "v2")
    assert set(cmp.cases["change"]) == {"improved", "same"}
    improved = cmp.cases[cmp.cases["change"] == "improved"]["case_id"]
    assert set(improved) == {f"c{i}" for i in range(0, 12, 3)}  # the cases _agent answered "no"
    return r1, r2, trend, cmp


def test_run_with_store_writes_and_trend_aggregates(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'url.db'}")
    r1, r2, _trend, _cmp = trend_and_compare(store)
    _assert_same(r1, store.load(r1.meta["run_id"]))
    assert r2.meta["run_id"] in store.history()["run_id"].tolist()


CRASH_SCRIPT = SUITE_CODE + textwrap.dedent(
    """
    import sys, time
    import evalnb

    log = open(sys.argv[2], "a")
    calls = []

    def agent(prompt):
        calls.append(prompt)
        if len(calls) > 12:
            time.sleep(3600)  # the run stalls here, with twelve case runs stored: it is killed meanwhile
        log.write(prompt + "\\n"); log.flush()
        return rows_agent(prompt)

    evalnb.run(rows_suite(40), agent, store=evalnb.Store(sys.argv[1]), version="v-crash",
               concurrency=2, progress=False)
    """
)


def test_crash_then_resume_keeps_finished_and_repeats_none(tmp_path: Path) -> None:
    db, log = tmp_path / "crash.db", tmp_path / "calls.log"
    script = tmp_path / "crash.py"
    script.write_text(CRASH_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(db), str(log)], env=_env())
    stored = 0
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and stored < 6:
            time.sleep(0.05)
            if db.exists():
                try:  # the run rows committed so far (one per case run: single-turn cases)
                    with sqlite3.connect(db, timeout=5) as con:
                        query = "SELECT COALESCE(SUM(n), 0) FROM segments WHERE frame = 'runs'"
                        stored = int(con.execute(query).fetchone()[0])
                except sqlite3.OperationalError:
                    pass
        assert proc.poll() is None, "the run finished before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = Store(db)
    runs = store.history()
    assert runs["status"].tolist() == ["interrupted"]
    run_id = runs["run_id"].iloc[0]
    before = store.load(run_id)
    kept = set(before.runs["case_id"])
    assert len(kept) >= 6 and len(kept) < 40  # everything finished is there, nothing more
    status = before.runs.set_index("case_id")["status"]
    assert all(status[c] == ("passed" if int(c[1:]) % 2 == 0 else "failed") for c in kept)
    # the finished cases' row mismatches were written with them: one per odd case, on the value column
    odd_kept = sorted((c for c in kept if int(c[1:]) % 2), key=lambda c: int(c[1:]))
    assert len(odd_kept) >= 3
    m = before.mismatches
    assert sorted(m["case_id"], key=lambda c: int(c[1:])) == odd_kept
    assert set(m["key"]) == {"v"}
    assert (m["expected"].astype(float) == 1).all() and (m["actual"].astype(float) == 2).all()

    called: list[str] = []

    def agent(prompt: str) -> dict:
        called.append(prompt)
        return rows_agent(prompt)

    result = evalnb.run(None, agent, store=store, resume=run_id, progress=False)
    assert not {f"q{c[1:]}" for c in kept} & set(called)  # none repeated
    assert len(called) == 40 - len(kept)
    assert result.runs["case_id"].tolist() == [f"c{i}" for i in range(40)]  # each case exactly once, in order
    assert result.mismatches["case_id"].tolist() == [f"c{i}" for i in range(1, 40, 2)]  # kept and new, once
    assert result.meta["run_id"] == run_id
    assert store.history()["status"].tolist() == ["complete"]
    _assert_same(result, store.load(run_id))
    assert result.exit_code == 1  # the odd cases fail their rows check
    # the resumed run's end wrote the summary row of the whole run, the crashed part included
    assert (
        store.summary(run_id).counts
        == result.counts()
        == {"passed": 20, "failed": 20, "degraded": 0, "skipped": 0}
    )


WRITER_SCRIPT = SUITE_CODE + textwrap.dedent(
    """
    import sys, time
    import evalnb

    result = evalnb.run(make_suite(150, 2), lambda p: "yes", progress=False)
    store = evalnb.Store(sys.argv[1])
    while time.time() < float(sys.argv[2]):
        time.sleep(0.005)
    for i in range(4):
        store.save(result, version=f"{sys.argv[3]}-{i}")
    print("ok")
    """
)


def test_two_processes_saving_at_once_both_succeed(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    Store(db)  # schema exists before the race (creating it concurrently is also serialised)
    script = tmp_path / "writer.py"
    script.write_text(WRITER_SCRIPT)
    start = time.time() + 3.0
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), str(start), name],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=False):
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    runs = Store(db).history()
    assert sorted(runs["version"]) == sorted([f"{n}-{i}" for n in "ab" for i in range(4)])
    assert len(Store(db).load("a-3").scores) == 150 * 2 * 2


def test_migration_from_schema_version_1(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    db = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{db}")
    assert _migrate(engine, target=1) == 1
    engine.dispose()
    suite = make_suite(2, 1)
    with sqlite3.connect(db) as con:
        con.execute(
            "INSERT INTO suites (id, name, format, content_hash, definition) VALUES (1, ?, ?, ?, ?)",
            (suite.name, suite.format, suite.content_hash(), suite.model_dump_json()),
        )
        con.execute(
            "INSERT INTO runs (id, run_id, suite_id, suite, version, status, meta) VALUES (1, 'old1', 1, ?, 'v0', "
            "'complete', '{}')",
            (suite.name,),
        )
        for i, (v, ok) in enumerate([(1.0, 1), (0.0, 0)]):
            con.execute(
                "INSERT INTO run_rows (run_pk, seq, case_id, case_name, run, turn, prompt, response, status, "
                "latency_ms) VALUES (1, ?, ?, ?, 0, 0, ?, 'yes', 'passed', 10.0)",
                (i, f"c{i}", f"case {i}", f"q{i}"),
            )
            con.execute(
                'INSERT INTO scores (run_pk, seq, case_id, case_name, run, turn, "check", check_id, value, passed, '
                "status, reason) VALUES (1, ?, ?, ?, 0, 0, 'regex', 'regex', ?, ?, 'ok', 'r')",
                (i, f"c{i}", f"case {i}", v, ok),
            )
        cols = {r[1] for r in con.execute("PRAGMA table_info(scores)")}
        assert "cost" not in cols
        assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("1",)

    store = Store(db)  # opening migrates 1 -> 7 and backfills the per-check statistics
    assert store.schema_version == SCHEMA_VERSION == 10
    with sqlite3.connect(db) as con:
        assert {"cost", "weighted", "spread", "judge_model"} <= {
            r[1] for r in con.execute("PRAGMA table_info(scores)")
        }
        assert {"cached_tokens", "reasoning_tokens", "cost"} <= {
            r[1] for r in con.execute("PRAGMA table_info(run_rows)")
        }
    loaded = store.load("v0")
    assert loaded.scores["value"].tolist() == [1.0, 0.0]
    assert loaded.scores["passed"].tolist() == [True, False]
    assert loaded.scores["cost"].isna().all() and str(loaded.scores["cost"].dtype) == "float64"
    assert loaded.scores["weighted"].isna().all() and str(loaded.scores["weighted"].dtype) == "float64"
    # saved before evalnb priced agent calls: their cost is unknown (NA), never 0
    assert loaded.runs["cost"].isna().all() and str(loaded.runs["cached_tokens"].dtype) == "Int64"
    trend = store.trend(suite.name)
    assert trend[["version", "check_id", "mean", "pass_rate", "latency_ms"]].iloc[0].tolist() == [
        "v0",
        "regex",
        0.5,
        0.5,
        10.0,
    ]
    # and the migrated store keeps working
    store.save(evalnb.run(suite, lambda p: "yes", progress=False), version="v1")
    assert store.trend(suite.name)["version"].drop_duplicates().tolist() == ["v0", "v1"]


def test_store_accepts_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = Store()
    assert (tmp_path / ".evals" / "evalnb.db").exists()
    assert "evalnb.db" in repr(store)


def test_trend_intervals_stay_inside_each_checks_scale(tmp_path: Path) -> None:
    """ExactMatch 0.75 over four cases once gave [0.26, 1.24] and PartialMatch 0.50 gave [-0.48, 1.48]."""
    from evalnb.results import Result
    from evalnb.results._frames import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, make_frame

    values = {
        "ExactMatch": [1.0, 1.0, 1.0, 0.0],
        "PartialMatch": [1.0, 0.0, 1.0, 0.0],
        "Relevance": [5.0, 5.0, 5.0, 1.0],
        "Citations": [0.0, 0.0, 3.0, 0.0],
        "Groundedness": [5.0, 5.0, 5.0, 5.0],
    }
    suite = Suite(name="bounded", format="dataset-json",
                  cases=[Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt="q")]) for i in range(4)])  # fmt: skip
    base = {"suite": "bounded", "run": 0, "turn": 0}
    runs = [{**base, "case_id": f"c{i}", "case_name": f"c{i}", "status": "passed"} for i in range(4)]
    scores = [
        {**base, "case_id": f"c{i}", "case_name": f"c{i}", "check": check, "check_id": check, "value": v[i],
         "passed": v[i] >= (3 if check in ("Relevance", "Groundedness") else 1), "status": "passed"}
        for check, v in values.items() for i in range(4)
    ]  # fmt: skip
    result = Result(
        suite=suite,
        runs=make_frame(runs, RUNS_COLUMNS),
        scores=make_frame(scores, SCORES_COLUMNS),
        mismatches=make_frame([], MISMATCH_COLUMNS),
        meta={"agent": "a"},
    )
    store = Store(tmp_path / "t.db")
    store.save(result, version="v1")
    trend = store.trend("bounded").set_index("check_id")
    for check, (low, high) in {"ExactMatch": (0, 1), "PartialMatch": (0, 1), "Relevance": (1, 5),
                               "Groundedness": (1, 5), "Citations": (0, math.inf)}.items():  # fmt: skip
        row = trend.loc[check]
        assert low <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= high, (check, row)
        assert 0 <= row["pass_ci_low"] <= row["pass_rate"] <= row["pass_ci_high"] <= 1
    assert trend.loc["ExactMatch", "mean"] == 0.75 and trend.loc["ExactMatch", "ci_high"] < 1
    # Wilson with the design-effect sample size (3 here: the cluster-robust variance of 4 cases) and t[3]
    assert trend.loc["ExactMatch", ["ci_low", "ci_high"]].tolist() == pytest.approx([0.131, 0.984], abs=1e-3)
    # every case at the top of the scale: the interval still has width, on the inside
    assert trend.loc["Groundedness", "ci_high"] == 5 and trend.loc["Groundedness", "ci_low"] < 5


def mk(name: str) -> Suite:
    return Suite(
        name=name,
        format="tasks-toml",
        cases=[
            Case(id=f"c{i}", name=f"case {i}", runs=1,
                 turns=[Turn(prompt=f"q{i}", expected="yes", checks=[RegexCheck(on="result", pattern="^yes$")])])
            for i in range(3)
        ],
    )  # fmt: skip


def test_a_version_label_shared_by_suites_is_ambiguous(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = evalnb.Store(db)
    answers = {"A": "yes", "B": "no"}
    ids = {s: store.save(evalnb.run(mk(s), lambda p, s=s: answers[s], progress=False), version="v1")
           for s in ("A", "B")}  # fmt: skip
    with pytest.raises(StoreError) as err:
        store.load("v1")
    assert err.value.code == "AMBIGUOUS_VERSION" and f"'A' (latest run {ids['A']})" in str(err.value)
    with pytest.raises(StoreError, match="several suites"):
        store.compare("v1", "v1")
    assert store.load("v1", suite="A").meta["run_id"] == ids["A"]
    # three cases support no verdict on a check: the gate says so instead of "no detectable difference"
    assert store.compare("v1", "v1", suite="B").checks["words"].tolist() == [
        "too few cases to tell (3 paired cases)"
    ]
    # compare_all compares every suite the label names
    both = store.compare_all("v1", "v1")
    assert list(both) == ["A", "B"] and both.exit_code == 0
    # delete() of a label shared by suites needs the suite (or all_suites): it names the suites
    with pytest.raises(StoreError, match="several suites: A, B") as err:
        store.delete("v1")
    assert err.value.code == "AMBIGUOUS_VERSION"
    assert len(store.history()) == 2

    runner = CliRunner()
    # `evalnb report` of a label shared by suites reports each suite's run (B's failures: exit 1)
    out = runner.invoke(app, ["report", "v1", "--store", str(db)])
    assert out.exit_code == 1 and "Suite: A" in out.output and "Suite: B" in out.output, out.output
    out = runner.invoke(app, ["report", ids["A"], "--store", str(db)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["compare", "v1", "v1", "--store", str(db), "--suite", "A"])
    assert out.exit_code == 0 and "too few cases to tell" in out.output
    out = runner.invoke(app, ["compare", "v1", "v1", "--store", str(db)])
    assert out.exit_code == 0 and "=== A ===" in out.output and "=== B ===" in out.output


def test_compare_all_names_a_suite_only_one_version_has(tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / "runs.db")
    for name in ("A", "B"):
        store.save(evalnb.run(mk(name), lambda p: "yes", progress=False), version="v1")
    store.save(evalnb.run(mk("A"), lambda p: "yes", progress=False), version="v2")
    both = store.compare_all("v1", "v2")
    assert list(both) == ["A"] and both.missing_suites == {"B": "baseline only"}
    assert both.exit_code == 0 and "B: compared on one side only (baseline only)" in both.report()
    assert store.compare_all("v1", "v2", fail_on_missing=True).exit_code == 1
    with pytest.raises(StoreError) as err:
        store.compare_all("v1", "nope")
    assert err.value.code == "RUN_NOT_FOUND"
    store.save(evalnb.run(mk("C"), lambda p: "yes", progress=False), version="v3")
    with pytest.raises(StoreError, match="share no suite") as err:
        store.compare_all("v2", "v3")
    assert err.value.code == "NO_SHARED_SUITE"
    runner = CliRunner()
    out = runner.invoke(
        app, ["compare", "v1", "v2", "--store", str(tmp_path / "runs.db"), "--fail-on-missing"]
    )
    assert out.exit_code == 1 and "(gates: fail on missing)" in out.output, out.output
