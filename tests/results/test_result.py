"""Result: frame shapes and dtypes, case status, summary views, report, JSON, HTML, rebuild from frames."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb import read_results
from evalnb.errors import FailuresError, StoreError
from evalnb.results import Result
from evalnb.results._frames import CASES_COLUMNS, MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS
from evalnb.suite import Case, ExactMatchCheck, PartialMatchCheck, RegexCheck, Suite, Turn
from tests.support.examples import EXAMPLES
from tests.support.suites import suite_of, task


def make_suite() -> Suite:
    checks = [ExactMatchCheck(), PartialMatchCheck(), RegexCheck(on="result", pattern="[A-Z]")]
    return Suite(
        name="kb",
        description="Knowledge <b>base</b>",
        format="dataset-json",
        cases=[
            Case(
                id="paris",
                name="paris",
                category="knowledge",
                runs=2,
                turns=[Turn(prompt="capital?", expected="Paris", checks=checks)],
            ),
            Case(
                id="four",
                name="four",
                category="math",
                turns=[Turn(prompt="2+2?", expected="4", checks=checks)],
            ),
            Case(
                id="boom",
                name="boom",
                category="math",
                turns=[Turn(prompt="explode", expected="x", checks=checks)],
            ),
        ],
    )


def agent(prompt: str) -> dict[str, Any]:
    if prompt == "explode":
        raise RuntimeError("<script>alert(1)</script>")
    answer = {"capital?": "Paris", "2+2?": "five"}[prompt]
    return {"text": answer, "model": "m-1", "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


@pytest.fixture(scope="module")
def result() -> Result:
    return evalnb.run(make_suite(), agent, progress=False)


def test_frames_have_the_documented_columns_and_dtypes(result: Result) -> None:
    for frame, schema in (
        (result.runs, RUNS_COLUMNS),
        (result.scores, SCORES_COLUMNS),
        (result.cases, CASES_COLUMNS),
        (result.mismatches, MISMATCH_COLUMNS),
    ):
        assert list(frame.columns) == list(schema)
        assert {c: str(frame[c].dtype) for c in frame.columns} == {
            c: ("string" if d == "string" else d) for c, d in schema.items()
        }
    assert len(result.runs) == 4 and len(result.scores) == 12
    assert result.runs["prompt_tokens"].dropna().tolist() == [3, 3, 3]
    assert result.scores["passed"].dtype == "boolean"


def test_case_status_and_pass_rate(result: Result) -> None:
    cases = result.cases.set_index("case_id")
    assert cases["status"].to_dict() == {"paris": "passed", "four": "failed", "boom": "degraded"}
    assert cases.loc["paris", "runs"] == 2 and cases.loc["paris", "pass_rate"] == 1.0
    assert result.counts() == {"passed": 1, "failed": 1, "degraded": 1, "skipped": 0}
    assert not result.passed and result.exit_code == 1


def test_views_follow_the_frames_when_they_are_filtered_or_reassigned(result: Result) -> None:
    result = Result(suite=result.suite, runs=result.runs, scores=result.scores, meta=result.meta)
    assert not result.passed
    result.scores = result.scores.assign(passed=True, status="passed")
    result.runs = result.runs.assign(status="passed")
    assert result.passed and result.exit_code == 0
    assert set(result.cases["status"]) == {"passed"}
    # and the other way: every check failing makes every case fail, whatever was computed before
    result.scores = result.scores.assign(passed=False, status="failed")
    assert set(result.cases["status"]) == {"failed"} and result.exit_code == 1
    # a filter keeps only what it keeps: the cases it dropped have no runs left (skipped, not passed)
    result.runs = result.runs[result.runs["case_id"] == "paris"]
    result.scores = result.scores[result.scores["case_id"] == "paris"].assign(passed=True, status="passed")
    cases = result.cases.set_index("case_id")
    assert cases["status"].to_dict() == {"paris": "passed", "four": "skipped", "boom": "skipped"}
    assert cases.loc["four", "runs"] == 0


def test_read_results_names_what_it_reads(result: Result, tmp_path: Path) -> None:

    folder = result.to_csv(tmp_path / "csv")
    csv = next(folder.glob("*.csv"))
    with pytest.raises(StoreError, match=r"read_results reads the JSON that Result\.to_json"):
        read_results(csv)


def test_summary_and_by_category(result: Result) -> None:
    summary = result.summary().set_index("check_id")
    assert list(summary.index) == ["ExactMatch", "PartialMatch", "regex"]
    assert summary.loc["ExactMatch", "n"] == 4  # 2 + 1 + 1 (the degraded run counts as not passed)
    assert summary.loc["ExactMatch", "pass_rate"] == pytest.approx(0.5)
    assert summary.loc["ExactMatch", "degraded"] == 1
    assert "cost" not in summary.columns  # no judge, no cost columns
    wide = result.by_category()
    assert wide.loc["knowledge", "ExactMatch"] == 1.0 and wide.loc["math", "ExactMatch"] == 0.0
    assert result.by_category("mean").loc["knowledge", "PartialMatch"] == 1.0


def test_raise_for_failures(result: Result) -> None:
    with pytest.raises(FailuresError, match="1 failed, 1 degraded") as info:
        result.raise_for_failures()
    assert info.value.code == "CHECKS_FAILED"
    ok = evalnb.run(make_suite().model_copy(update={"cases": make_suite().cases[:1]}), agent, progress=False)
    assert ok.raise_for_failures() is ok


def test_report_format(result: Result) -> None:
    text = result.report()
    lines = text.splitlines()
    assert lines[0] == "Suite: kb"
    assert lines[1] == "Description: Knowledge <b>base</b>"
    assert lines[2].startswith("1/3 passed, 1 failed, 1 degraded, 0 skipped (elapsed ")
    assert lines[2].endswith("ms)")
    assert lines[3] == ""
    assert lines[4].startswith("PASS: paris (") and "2/2 runs passed" in lines[4] and "model=m-1" in lines[4]
    assert lines[5].startswith("FAIL: four (")
    assert "  ExactMatch: response does not contain the expected text '4' (case-insensitive)" in lines
    assert any(line.startswith("DEGRADED: boom") for line in lines)
    assert "  error: RuntimeError: <script>alert(1)</script>" in lines


def test_report_mismatch_lines_follow_the_cube_spec() -> None:
    suite = Suite(
        name="foodmart-sales-evals",
        format="cube-yaml",
        cases=[Case(id="top-3-product-families", name="top-3-product-families", turns=[Turn(prompt="q")])],
    )
    runs = pd.DataFrame(
        [
            {
                "case_id": "top-3-product-families",
                "case_name": "top-3-product-families",
                "run": 0,
                "turn": 0,
                "status": "failed",
                "latency_ms": 1024.0,
                "intent": "QUERY",
                "model": "claude-sonnet-4-6",
            }
        ]
    )
    scores = pd.DataFrame(
        [
            {
                "case_id": "top-3-product-families",
                "run": 0,
                "turn": 0,
                "check": "rows",
                "check_id": "rows",
                "value": 0.0,
                "passed": False,
                "status": "failed",
                "reason": "3 mismatches",
            }
        ]
    )
    mismatches = pd.DataFrame(
        [
            {
                "case_id": "top-3-product-families",
                "run": 0,
                "turn": 0,
                "row": i,
                "key": "productFamily",
                "expected": json.dumps(e),
                "actual": json.dumps(a),
            }
            for i, (e, a) in enumerate(
                [("Food", "Drink"), ("Non-Consumable", "Food"), ("Drink", "Non-Consumable")]
            )
        ]
    )
    r = Result.from_frames(
        suite=suite, runs=runs, scores=scores, mismatches=mismatches, meta={"elapsed_ms": 12483}
    )
    assert r.report() == (
        "Suite: foodmart-sales-evals\n"
        "0/1 passed, 1 failed, 0 degraded, 0 skipped (elapsed 12483ms)\n"
        "\n"
        "FAIL: top-3-product-families (1024ms, intent=QUERY, model=claude-sonnet-4-6)\n"
        '  rows[0].productFamily: expected "Food", got "Drink"\n'
        '  rows[1].productFamily: expected "Non-Consumable", got "Food"\n'
        '  rows[2].productFamily: expected "Drink", got "Non-Consumable"\n'
    )


def test_to_json_is_pretty_versioned_and_reads_back(result: Result, tmp_path: Path) -> None:
    text = result.to_json()
    data = json.loads(text)
    assert text.startswith("{\n  ")
    assert data["schema_version"] == 1
    assert data["counts"] == {"passed": 1, "failed": 1, "degraded": 1, "skipped": 0}
    assert len(data["scores"]) == 12 and data["scores"][0]["passed"] in (True, False)
    path = tmp_path / "r.json"
    result.to_json(path)
    again = read_results(path)
    pd.testing.assert_frame_equal(again.cases, result.cases)
    pd.testing.assert_frame_equal(again.scores, result.scores)
    assert again.report() == result.report()


def test_from_frames_conforms_and_rebuilds_responses(result: Result) -> None:
    partial = result.runs.drop(columns=["context"]).astype(object)
    again = Result.from_frames(suite=result.suite, runs=partial, scores=result.scores, meta=result.meta)
    assert list(again.runs.columns) == list(RUNS_COLUMNS)
    assert str(again.runs["run"].dtype) == "Int64"
    pd.testing.assert_frame_equal(again.cases, result.cases)
    resp = again.response_for("paris", 1, 0)
    assert (
        resp.text == "Paris"
        and resp.model == "m-1"
        and resp.usage == {"prompt_tokens": 3, "completion_tokens": 1}
    )
    # A plain answer is not held in memory: it is rebuilt from its runs row, as it was.
    assert ("paris", 0, 0) not in result.responses
    assert result.response_for("paris", 0, 0).text == "Paris"
    with pytest.raises(KeyError):
        again.response_for("nope", 0, 0)


def test_responses_with_more_than_the_runs_row_stay_in_memory() -> None:
    def rich(prompt: str) -> dict[str, Any]:
        if "capital" in prompt:
            return {"text": "Paris", "citations": [{"url": "u"}], "meta": {"trace": 1}}
        return {"text": "no idea", "usage": {"prompt_tokens": 3, "total_tokens": 9}}

    out = evalnb.run(make_suite(), rich, progress=False)
    kept = out.responses[("paris", 0, 0)]
    assert kept.citations == [{"url": "u"}] and kept.meta == {"trace": 1}
    assert out.response_for("paris", 0, 0) is kept
    others = [k for k in out.responses if k[0] != "paris"]
    assert others and all(out.responses[k].usage == {"prompt_tokens": 3, "total_tokens": 9} for k in others)


def test_html_scorecard_escapes_everything(result: Result) -> None:
    html = result._repr_html_()
    assert "<script>" not in html
    assert "ExactMatch" in html and "kb" in html and "boom" in html
    assert repr(result) == "Result(suite='kb', cases=3, passed=1, failed=1, degraded=1, skipped=0)"


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


ROOT = Path(__file__).resolve().parents[2]


def _doc_tables() -> dict[str, list[tuple[str, str]]]:
    """``{frame: [(column, dtype), ...]}`` from the tables of docs/results.md."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    tables: dict[str, list[tuple[str, str]]] = {}
    for name, body in re.findall(r"^## `(\w+)`[^\n]*\n(.*?)(?=^## |\Z)", text, re.S | re.M):
        cols: list[tuple[str, str]] = []
        for row in re.findall(r"^\| ([^|]+) \| (\w+) \|", body, re.M):
            if row[0].strip() == "column":
                continue
            cols += [(c.strip(), row[1]) for c in row[0].split(",")]
        tables[name] = cols
    return tables


def test_results_doc_lists_every_column_with_its_dtype_in_order() -> None:
    from evalnb.demo import FoodMartAgent, foodmart_db

    db = foodmart_db()
    result = evalnb.run(
        EXAMPLES / "suites" / "foodmart-sales.eval.yaml",
        FoodMartAgent(db, flaw="cost-for-sales"),
        data=db,
        progress=False,
    )
    tables = _doc_tables()
    for frame in ("runs", "scores", "cases", "mismatches"):
        df = getattr(result, frame)
        assert tables[frame] == [(c, str(t)) for c, t in df.dtypes.items()], frame
    # The documented example of the tolerance column is what a mismatch of this suite carries.
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| tolerance |"))
    example = re.search(r"`([^`]+)`", row)
    assert example and example.group(1) in set(result.mismatches["tolerance"].dropna())


def test_response_for_sees_rows_added_to_the_runs_frame_in_place() -> None:
    result = evalnb.run(make_suite(), agent, progress=False)  # its own: the frame is changed in place
    runs = result.runs
    assert result.response_for("paris", 0, 0).text == "Paris"  # the frame is indexed now
    extra = runs.iloc[[0]].copy()
    extra["run"] = pd.array([7], dtype="Int64")
    extra["response"] = pd.array(["Lyon"], dtype="string")
    runs.loc[len(runs)] = extra.iloc[0]
    assert result.response_for("paris", 7, 0).text == "Lyon"


def test_a_large_suite_s_report_lists_its_failures_and_counts_its_passes() -> None:
    from evalnb.results._report import PASS_LINES

    n = PASS_LINES + 5
    big = Suite(
        name="big",
        format="dataset-json",
        cases=[
            Case(
                id=f"q{i}",
                name=f"q{i}",
                turns=[Turn(prompt=str(i), expected="yes", checks=[ExactMatchCheck()])],
            )
            for i in range(n)
        ],
    )
    out = evalnb.run(big, lambda prompt: "no" if prompt in ("7", "1000") else "yes", progress=False)
    lines = out.report().splitlines()
    assert [x.split(" (")[0] for x in lines if x.startswith(("PASS", "FAIL"))] == ["FAIL: q7", "FAIL: q1000"]
    assert (
        lines[-1]
        == f"({n - 2:,} passing cases not listed; report(passes=True), or evalnb run --list-passes, lists them)"
    )
    every = out.report(passes=True).splitlines()
    assert sum(x.startswith("PASS: ") for x in every) == n - 2 and not every[-1].startswith("(")
    small = evalnb.run(make_suite(), agent, progress=False)
    assert small.report() == small.report(passes=True)  # a suite of a few cases: every case has its line
    assert "PASS" not in small.report(passes=False)


@pytest.mark.parametrize("seed", range(40))
def test_counts_are_the_statuses_of_cases_whatever_the_frames_hold(seed: int) -> None:
    """counts() takes each case's worst row without building `cases`: the two agree on frames with cases
    the suite lacks, suite cases without rows, rows of scores alone, statuses that are none of the four,
    missing case ids and a suite that lists an id twice."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = [f"c{i}" for i in range(int(rng.integers(0, 8)))]
    if ids and rng.random() < 0.3:
        ids.append(ids[0])  # a suite that lists a case twice
    suite = Suite(
        name="s", format="tasks-toml", cases=[Case(id=i, name=i, turns=[Turn(prompt="p")]) for i in ids]
    )
    pool = [*ids, "extra1", "extra2", None]
    statuses = ["passed", "failed", "degraded", "skipped", "odd", None]

    def rows(n: int) -> list[dict[str, Any]]:
        return [
            {
                "suite": "s",
                "case_id": pool[int(rng.integers(0, len(pool)))],
                "run": int(rng.integers(0, 3)),
                "turn": 0,
                "status": statuses[int(rng.integers(0, len(statuses)))],
            }
            for _ in range(n)
        ]

    r = Result.from_frames(
        suite=suite,
        runs=pd.DataFrame(
            rows(int(rng.integers(0, 12))), columns=["suite", "case_id", "run", "turn", "status"]
        ),
        scores=pd.DataFrame(
            rows(int(rng.integers(0, 12))), columns=["suite", "case_id", "run", "turn", "status"]
        ),
    )
    vc = r.cases["status"].value_counts()
    assert r.counts() == {s: int(vc.get(s, 0)) for s in ("passed", "failed", "degraded", "skipped")}
