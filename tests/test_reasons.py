"""Reasons that show what was compared: the text a regex searched, PartialMatch's threshold, an unordered rows
mismatch named by its key values, and a judged check without a judge keeping the spec's exact reason, with how
to give a judge said once beside it (text report, notebook scorecard, command line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb.checks._judged import NO_JUDGE_HINT, NO_JUDGE_REASON
from evalnb.cli import app
from evalnb.suite import (
    Case,
    JudgedMetricCheck,
    LLMJudgeCheck,
    PartialMatchCheck,
    RegexCheck,
    RowsCheck,
    Suite,
    Turn,
)


def one_case(*checks: Any, expected: str | None = None, fmt: str = "tasks-toml") -> Suite:
    return Suite(
        name="reasons",
        format=fmt,
        cases=[
            Case(id="c", name="c", runs=1, turns=[Turn(prompt="q", expected=expected, checks=list(checks))])
        ],
    )


def reason(suite: Suite, answer: object) -> str:
    result = evalnb.run(suite, lambda prompt: answer, progress=False)
    return str(result.scores["reason"].iloc[0])


def test_the_spec_reason_for_a_missing_judge_is_byte_for_byte() -> None:
    assert NO_JUDGE_REASON.encode() == b"llm judge not evaluated: this runner has no judge router"


def test_a_regex_failure_quotes_the_text_it_searched() -> None:
    text = "The office opens at nine. " * 12 + "Ask reception for a badge."
    got = reason(one_case(RegexCheck(on="result", pattern=r"\bsummary\b")), text)
    assert got.startswith(
        # the pattern as the suite wrote it (one backslash), the text searched quoted
        f"pattern '\\bsummary\\b' not found in result ({len(text)} chars): 'The office opens"
    )
    assert got.endswith("Ask reception for a badge.'") and " … " in got and len(got) < 200
    assert reason(one_case(RegexCheck(on="result", pattern="x")), "short answer").endswith(": 'short answer'")
    assert reason(one_case(RegexCheck(on="result", pattern="x")), "  ").endswith("(2 chars) (blank)")


def test_partial_match_says_its_threshold() -> None:
    suite = one_case(PartialMatchCheck(threshold=0.8), expected="red green blue", fmt="dataset-json")
    result = evalnb.run(suite, lambda prompt: "red green yellow", progress=False)
    row = result.scores.iloc[0]
    assert row["reason"] == "Match score: 0.667 (threshold 0.8)" and not row["passed"]


def test_an_unordered_rows_mismatch_names_the_row_by_its_keys() -> None:
    expected = [{"country": "USA", "storeSales": 5.0}, {"country": "Canada", "storeSales": 7.0}]
    suite = one_case(RowsCheck(expected=expected, order_matters=False), fmt="cube-yaml")
    answer = {
        "text": "t",
        "rows": [{"country": "USA", "storeSales": 5.0}, {"country": "Canada", "storeSales": 9.0}],
    }
    result = evalnb.run(suite, lambda prompt: answer, progress=False)
    line = 'rows[country="Canada"].storeSales: expected 7 ± (abs 0, rel 0), got 9'
    assert result.mismatches["reason"].tolist() == [line] and result.mismatches["row"].tolist() == [1]
    assert f"  {line}" in result.report()


def judged_suite() -> Suite:
    cases = [
        Case(
            id=f"t{i}",
            name=f"t{i}",
            runs=2,
            turns=[Turn(prompt=f"q{i}", checks=[LLMJudgeCheck(rubric="ok?")])],
        )
        for i in range(3)
    ]
    cases.append(
        Case(id="m", name="m", turns=[Turn(prompt="q", checks=[JudgedMetricCheck(type="Relevance")])])
    )
    return Suite(name="judged", format="tasks-toml", cases=cases)


def test_no_judge_keeps_the_reason_and_says_once_how_to_give_one() -> None:
    result = evalnb.run(judged_suite(), lambda prompt: "an answer", progress=False)
    assert set(result.scores["reason"]) == {NO_JUDGE_REASON} and not result.scores["passed"].any()
    report = result.report()
    assert report.count(NO_JUDGE_REASON) == 4 and report.count(NO_JUDGE_HINT) == 1
    lines = report.splitlines()
    first = next(i for i, line in enumerate(lines) if line.endswith(NO_JUDGE_REASON))
    assert lines[first + 1] == f"  {NO_JUDGE_HINT}"  # beside the first such line
    for words in ("--judge heuristic", "--judge openai:MODEL", 'judge="heuristic"', "evalnb.rescore"):
        assert words in NO_JUDGE_HINT
    page = result._repr_html_()
    assert page.count("How to give a judge") == 1 and "Judged checks llm_judge, Relevance failed" in page
    assert "&lt;NA&gt;" not in page
    # with a judge, no hint
    judged = evalnb.run(judged_suite(), lambda prompt: "an answer", judge="heuristic", progress=False)
    assert NO_JUDGE_HINT not in judged.report() and "How to give a judge" not in judged._repr_html_()


def test_the_command_line_says_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text("def answer(prompt):\n    return 'an answer'\n")
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "cli-judged"},
        "default_evaluators": {"Relevance": {}},
        "items": [{"prompt": f"p{i}", "testId": f"T-{i}"} for i in range(3)],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    out = CliRunner().invoke(app, ["run", "suite.json", "--agent", "agent.py:answer"])
    assert out.exit_code == 1, out.output
    assert out.output.count(NO_JUDGE_REASON) == 3 and out.output.count(NO_JUDGE_HINT) == 1
    out = CliRunner().invoke(app, ["run", "suite.json", "--agent", "agent.py:answer", "--judge", "heuristic"])
    assert NO_JUDGE_HINT not in out.output
