"""Running and results under demanding use: interrupts inside a running loop, odd agent answers, user checks,
saved results that are not what they claim, report details and data sources a run is given."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.checks import registry
from evalnb.errors import StoreError
from evalnb.suite import Case, CustomCheck, ExitCodeCheck, RegexCheck, Suite, Turn

ROOT = Path(__file__).resolve().parents[1]


def suite_of(*cases: Case) -> Suite:
    return Suite(name="t", format="tasks-toml", cases=list(cases))


def task(cid: str, *, runs: int = 1, checks: Any = None) -> Case:
    checks = checks if checks is not None else [RegexCheck(on="result", pattern="ok")]
    return Case(id=cid, name=cid, runs=runs, turns=[Turn(prompt=cid, checks=checks)])


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)


# --- Ctrl-C while run() waits inside a running event loop ------------------------------------------------

INTERRUPT_IN_LOOP = """
    import asyncio, os, signal, time
    import evalnb
    from evalnb.suite import Case, Suite, Turn, RegexCheck

    def agent(prompt):
        if prompt == "c3":
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)
        return "ok"

    cases = [Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"c{i}",
             checks=[RegexCheck(on="result", pattern="ok")])]) for i in range(8)]

    async def cell():
        {setup}
        return evalnb.run(Suite(name="s", format="tasks-toml", cases=cases), agent,
                          concurrency=1, progress=False)

    result = asyncio.run(cell())
    print(result.cases["status"].tolist(), result.meta["interrupted"])
"""


@pytest.mark.parametrize(
    "setup",
    [
        # ipykernel runs a cell with Python's default SIGINT handler: Ctrl-C raises in the waiting thread.
        "signal.signal(signal.SIGINT, signal.default_int_handler)",
        # asyncio.run's own handler only cancels the main task, which is blocked in run().
        "pass",
    ],
    ids=["jupyter-like", "asyncio-run"],
)
def test_ctrl_c_while_run_waits_in_a_running_loop_returns_a_partial_result(
    tmp_path: Path, setup: str
) -> None:
    out = run_script(tmp_path, INTERRUPT_IN_LOOP.replace("{setup}", setup))
    assert out.returncode == 0, out.stderr
    statuses, interrupted = out.stdout.strip().rsplit(" ", 1)
    got = eval(statuses)
    assert got[:3] == ["passed"] * 3
    assert got[-3:] == ["skipped"] * 3
    assert interrupted == "True"


# --- odd answers from callable agents ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"text": "ok", "exit_code": "0"}, "exit_code='0' (str); exit_code must be an int or None"),
        ({"text": 4}, "text=4 (int); text must be a str or None"),
        (evalnb.Response(text="ok", exit_code=True), "exit_code=True (bool)"),
        (evalnb.Response(text="ok", latency_ms="fast"), "latency_ms='fast' (str)"),
    ],
)
def test_an_answer_field_of_the_wrong_type_degrades_the_run_naming_the_field(
    answer: Any, message: str
) -> None:
    s = suite_of(task("a", checks=[ExitCodeCheck(equals=0), RegexCheck(on="result", pattern="ok")]))
    result = evalnb.run(s, lambda prompt: answer, progress=False)
    assert result.cases["status"].tolist() == ["degraded"]
    error = result.runs["error"].iloc[0]
    assert message in error
    assert message in result.report()


def test_numpy_integers_are_exit_codes() -> None:
    np = pytest.importorskip("numpy")
    s = suite_of(task("a", checks=[ExitCodeCheck(equals=0)]))
    result = evalnb.run(s, lambda prompt: {"text": "ok", "exit_code": np.int64(0)}, progress=False)
    assert result.passed
    assert result.runs["exit_code"].tolist() == [0]


# --- user checks ---------------------------------------------------------------------------------------


@pytest.fixture
def user_checks() -> Any:
    names: list[str] = []

    def add(name: str, fn: Any) -> None:
        registry.register(name, fn)
        names.append(name)

    yield add
    for n in names:
        registry.unregister(n)


def test_a_user_check_may_answer_with_a_numpy_bool(user_checks: Any) -> None:
    np = pytest.importorskip("numpy")
    user_checks("LongEnough", lambda turn, response: np.mean([len(response.text or "")]) > 1)
    s = suite_of(task("a", checks=[CustomCheck(check="LongEnough")]))
    assert evalnb.run(s, lambda p: "ok", progress=False).passed
    failing = evalnb.run(s, lambda p: "x", progress=False)
    assert failing.scores[["passed", "status"]].values.tolist() == [[False, "failed"]]


def test_a_user_check_returning_a_wrong_type_names_it(user_checks: Any) -> None:
    user_checks("Loose", lambda turn, response: 0.7)
    result = evalnb.run(
        suite_of(task("a", checks=[CustomCheck(check="Loose")])), lambda p: "ok", progress=False
    )
    assert result.scores["status"].tolist() == ["degraded"]
    assert "a check returned float" in result.scores["reason"].iloc[0]


@pytest.mark.parametrize(
    "answer", [(0.5, None, "cannot tell"), registry.Score(value=0.5, passed=None, reason="cannot tell")]
)
def test_a_user_check_without_a_verdict_is_degraded_and_reported(user_checks: Any, answer: Any) -> None:
    # Before: status "failed" with passed NA, and the report printed "FAIL: a" with no line saying why.
    user_checks("Undecided", lambda turn, response: answer)
    result = evalnb.run(
        suite_of(task("a", checks=[CustomCheck(check="Undecided")])), lambda p: "ok", progress=False
    )
    assert result.cases["status"].tolist() == ["degraded"]
    assert result.scores["status"].tolist() == ["degraded"]
    assert not result.passed
    report = result.report()
    assert "DEGRADED: a" in report
    assert "Undecided:" in report and "cannot tell" in report
    assert result.summary().set_index("check_id").loc["Undecided", "degraded"] == 1


# --- saved results -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '[{"prompt": "a", "expected_response": "b"}]',
            "a JSON list, not a result written by Result.to_json",
        ),
        ("{bad", "not valid JSON"),
        ('{"schema_version": 1}', "no suite 'definition'"),
        ('{"schema_version": 1, "definition": {"name": 3}}', "suite 'definition' is not valid"),
    ],
)
def test_reading_a_file_that_is_not_a_result_is_a_store_error(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(StoreError, match=r"results\.json") as info:
        evalnb.read_results(path)
    assert message in str(info.value)


def test_to_json_round_trip_keeps_every_frame_with_awkward_values(tmp_path: Path) -> None:
    import pandas as pd

    cases = [
        task("uni-é", runs=2),
        Case(
            id="talk",
            name="<b>talk</b>",
            category="cat & dog",
            turns=[Turn(prompt="one", checks=[RegexCheck(on="result", pattern="ok")]), Turn(prompt="two")],
        ),
    ]

    def agent(request: evalnb.Request) -> Any:
        if request.turn == 1:
            raise RuntimeError("boom <script>")
        return {"text": "ok ✓", "latency_ms": float("nan"), "usage": {"prompt_tokens": 3}}

    result = evalnb.run(suite_of(*cases), agent, progress=False)
    result.to_json(tmp_path / "r.json")
    again = evalnb.read_results(tmp_path / "r.json")
    for name in ("runs", "scores", "mismatches", "cases"):
        pd.testing.assert_frame_equal(getattr(result, name), getattr(again, name))
    assert again.report().split("\n", 2)[2] == result.report().split("\n", 2)[2]
    html = result._repr_html_()
    assert "<script>" not in html and "<b>talk</b>" not in html


# --- report --------------------------------------------------------------------------------------------


def test_report_names_runs_only_when_a_case_ran_more_than_once() -> None:
    s = suite_of(task("a", runs=3))  # a task's own count is 3; runs=1 overrides it
    one = evalnb.run(s, lambda p: "no", progress=False, runs=1).report()
    assert "  regex: pattern 'ok' not found" in one
    assert "[run" not in one
    three = evalnb.run(s, lambda p: "no", progress=False).report()
    assert "FAIL: a (" in three and "0/3 runs passed" in three
    assert "  [runs 1, 2, 3] regex: pattern 'ok' not found" in three


def test_report_and_summary_agree_with_hand_counts_for_runs_and_turns() -> None:
    talk = Case(
        id="talk",
        name="talk",
        category="chat",
        runs=2,
        turns=[
            Turn(prompt="first", checks=[RegexCheck(on="result", pattern="ok")]),
            Turn(prompt="second", checks=[RegexCheck(on="result", pattern="ok")]),
        ],
    )
    s = suite_of(task("solo", runs=3), talk)

    def agent(request: evalnb.Request) -> str:
        if request.case == "talk" and request.run == 1 and request.turn == 0:
            raise ValueError("flaky")
        if request.case == "solo" and request.run == 2:
            return "nope"
        return "ok"

    result = evalnb.run(s, agent, progress=False)
    cases = result.cases.set_index("case_id")
    assert cases.loc["solo", ["status", "runs", "passed_runs"]].tolist() == ["failed", 3, 2]
    assert cases.loc["talk", ["status", "runs", "passed_runs"]].tolist() == ["degraded", 2, 1]
    # regex rows: solo 3 (2 pass) + talk run 1 two turns (pass) + talk run 2 turn 1 degraded; turn 2 skipped.
    summary = result.summary().set_index("check_id")
    assert summary.loc["regex", ["n", "pass_rate", "degraded"]].tolist() == [6, 4 / 6, 1]
    by_cat = result.by_category()
    assert by_cat.loc["chat", "regex"] == pytest.approx(2 / 3)
    assert by_cat.loc["(none)", "regex"] == pytest.approx(2 / 3)
    report = result.report()
    assert "0/2 passed, 1 failed, 1 degraded, 0 skipped" in report
    assert "  [run 3] regex: pattern 'ok' not found" in report
    assert "  [run 2, turn 1] error: ValueError: flaky" in report


# --- data sources --------------------------------------------------------------------------------------


def test_dataframes_with_a_cube_model_reach_structured_reference_queries(tmp_path: Path) -> None:
    import sqlite3

    import pandas as pd

    from evalnb.data import connect
    from evalnb.demo import foodmart_db
    from evalnb.demo.analytics import FoodMartAgent

    db = foodmart_db()
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        frames = {t: pd.read_sql_query(f'SELECT * FROM "{t}"', con) for t in tables}
    con.close()
    suite = evalnb.load(ROOT / "data" / "suites" / "foodmart-sales.eval.yaml")
    with pytest.raises(evalnb.ConfigError, match=r"data=evalnb\.data\.connect\(data, cube='cube\.yaml'\)"):
        evalnb.run(suite, FoodMartAgent(db), data=frames, progress=False)
    source = connect(frames, cube=ROOT / "data" / "foodmart" / "cube.yaml")
    result = evalnb.run(suite, FoodMartAgent(db), data=source, progress=False)
    assert result.passed, result.report()
    # the caller's source is still open after the run
    assert source.query("SELECT COUNT(*) AS n FROM store")["n"].iloc[0] > 0
    source.close()


def test_a_callers_sqlite_connection_stays_open_after_a_run(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "t.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (k TEXT, v REAL)")
    con.execute("INSERT INTO t VALUES ('a', 1.5)")
    con.commit()
    text = """
name: s
cube: {connectionName: c, catalog: c, schema: c, cubeName: c}
cases:
  - name: one
    question: q
    referenceQuery: {sql: "SELECT k, v FROM t"}
"""
    suite = evalnb.load(text, format="cube-yaml")
    result = evalnb.run(suite, lambda p: {"rows": [{"k": "a", "v": 1.5}]}, data=con, progress=False)
    assert result.passed, result.report()
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (1,)
    con.close()
