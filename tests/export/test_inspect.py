"""Inspect AI logs read as Results (docs/results.md, Inspect AI logs): logs from Inspect's repository and logs made
with inspect-ai's mockllm, in both file formats; values as Inspect's value_to_float reads them; errors as degraded
runs; the Result compares, plots, saves to a Store and loads back like evalnb's own."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb.errors import StoreError
from evalnb.export._inspect import value_to_float

LOGS = Path(__file__).parents[1] / "fixtures" / "inspect"
GEN = LOGS / "generated"


def log(kind: str, suffix: str) -> Path:
    (hit,) = GEN.glob(f"*_{kind}_*{suffix}")
    return hit


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_match_log_one_case_per_sample_and_a_check_per_scorer(suffix: str) -> None:
    result = evalnb.read_inspect_log(log("qa-match", suffix))
    assert result.suite.name == "qa_match" and result.suite.format == "inspect-log"
    assert [c.id for c in result.suite.cases] == ["q1", "q2", "q3", "q4"]
    assert result.suite.cases[3].turns[0].expected == "blue | Blue"
    runs = result.runs.set_index("case_id")
    assert runs.loc["q3", "response"] == "Saturn" and runs.loc["q3", "model"] == "mockllm/model"
    assert runs.loc["q1", "prompt"] == "What is 2 + 2? Answer with a number."
    assert (runs.loc["q1", "prompt_tokens"], runs.loc["q1", "completion_tokens"]) == (20, 1)
    summary = result.summary().set_index("check")
    # the mean value is Inspect's accuracy, as the log's own metrics say
    assert summary.loc["match", "mean"] == result.meta["inspect"]["metrics"]["match/accuracy"] == 0.5
    assert summary.loc["includes", "mean"] == 0.5
    scores = result.scores.set_index(["case_id", "check"])
    assert scores.loc[("q1", "match"), "passed"] is False or not scores.loc[("q1", "match"), "passed"]
    assert bool(scores.loc[("q2", "match"), "passed"])
    assert result.meta["model"] == "mockllm/model"
    assert (
        str(result.runs["prompt_tokens"].dtype) == "Int64" and str(result.scores["passed"].dtype) == "boolean"
    )


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_letter_grades_map_as_value_to_float_does(suffix: str) -> None:
    result = evalnb.read_inspect_log(log("qa-graded", suffix))
    s = result.scores.set_index(["case_id", "check"])["value"]
    assert [s[(c, "letter_grade")] for c in ("q1", "q2", "q3", "q4")] == [1.0, 0.5, 0.0, 0.0]  # C P I N
    assert [s[(c, "model_graded_qa")] for c in ("q1", "q2", "q3", "q4")] == [1.0, 0.5, 0.0, 1.0]
    summary = result.summary().set_index("check")
    metrics = result.meta["inspect"]["metrics"]
    assert summary.loc["model_graded_qa", "mean"] == metrics["model_graded_qa/accuracy"] == 0.625
    assert summary.loc["letter_grade", "mean"] == metrics["letter_grade/accuracy"] == 0.375
    # a partial credit is no pass
    assert summary.loc["letter_grade", "pass_rate"] == 0.25
    reasons = result.scores.set_index(["case_id", "check"])["reason"]
    assert "target inside a longer answer" in reasons[("q2", "letter_grade")]


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_a_sample_that_errored_is_a_degraded_run(suffix: str) -> None:
    result = evalnb.read_inspect_log(log("qa-errors", suffix))
    cases = result.cases.set_index("case_id")["status"]
    assert cases.to_dict() == {"q1": "passed", "q2": "passed", "q3": "degraded", "q4": "passed"}
    q3 = result.runs.set_index("case_id").loc["q3"]
    assert q3["error"] == "RuntimeError('tool backend unavailable')" and pd.isna(q3["response"])
    assert result.exit_code == 1


def test_epochs_are_runs() -> None:
    result = evalnb.read_inspect_log(log("qa-epochs", ".json"))
    assert [c.runs for c in result.suite.cases] == [2, 2]
    q2 = result.scores[result.scores["case_id"] == "q2"].sort_values("run")
    assert q2["run"].tolist() == [0, 1] and q2["passed"].tolist() == [False, True]
    assert result.cases.set_index("case_id").loc["q2", "pass_rate"] == 0.5
    assert result.summary().set_index("check").loc["match", "mean"] == 0.75


def test_upstream_logs_of_older_layouts() -> None:
    old = evalnb.read_inspect_log(LOGS / "upstream" / "log_formats.json")
    assert old.suite.name == "popularity" and old.runs["response"].tolist() == ["No"]
    assert old.scores["value"].tolist() == [0.0]
    assert (old.runs["prompt_tokens"].iloc[0], old.runs["completion_tokens"].iloc[0]) == (66, 2)
    header = evalnb.read_inspect_log(LOGS / "upstream" / "log_version_2.txt")
    assert len(header.suite.cases) == 0 and "no samples" in header.suite.warnings[0]
    assert header.meta["inspect"]["metrics"] == {
        "model_graded_fact/accuracy": 1.0,
        "model_graded_fact/bootstrap_std": 0.0,
    }


@pytest.mark.parametrize(
    ("value", "number"),
    [
        ("C", 1.0),
        ("P", 0.5),
        ("I", 0.0),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        (3, 3.0),
        (0.25, 0.25),
        ("yes", 1.0),
        ("TRUE", 1.0),
        ("no", 0.0),
        ("false", 0.0),
        ("0.7", 0.7),
        ("maybe", 0.0),
        ([1], 0.0),
    ],
)
def test_value_to_float(value: object, number: float) -> None:
    assert value_to_float(value)[0] == number


def test_nan_and_dict_scores(tmp_path: Path) -> None:
    data = json.loads(log("qa-match", ".json").read_text(encoding="utf-8"))
    data["samples"][0]["scores"] = {
        "match": {"value": float("nan")},
        "rubric": {"value": {"clarity": 4, "tone": "C"}},
    }
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = evalnb.read_inspect_log(path)
    rows = result.scores[result.scores["case_id"] == "q1"].set_index("check")
    assert rows.loc["match", "status"] == "skipped" and math.isnan(rows.loc["match", "value"])
    assert (rows.loc["rubric.clarity", "value"], rows.loc["rubric.tone", "value"]) == (4.0, 1.0)


def test_unknown_versions_and_files_are_clear_errors(tmp_path: Path) -> None:
    data = json.loads(log("qa-match", ".json").read_text(encoding="utf-8"))
    data["version"] = 9
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StoreError) as info:
        evalnb.read_inspect_log(newer)
    assert info.value.code == "UNSUPPORTED_LOG_VERSION" and "version 9" in str(info.value)
    with pytest.raises(StoreError) as info:
        evalnb.read_inspect_log(tmp_path / "missing.eval")
    assert info.value.code == "RESULTS_NOT_FOUND"
    other = tmp_path / "other.json"
    other.write_text('{"items": []}', encoding="utf-8")
    with pytest.raises(StoreError) as info:
        evalnb.read_inspect_log(other)
    assert info.value.code == "UNKNOWN_RESULTS"
    # an .eval archive compressed with deflate (as older Inspect releases wrote) reads the same
    deflated = tmp_path / "deflated.eval"
    src = json.loads(log("qa-match", ".json").read_text(encoding="utf-8"))
    samples = src.pop("samples")
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", json.dumps(src))
        for s in samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    assert evalnb.read_inspect_log(deflated).summary()["mean"].tolist() == [0.5, 0.5]


def test_it_never_imports_inspect_ai() -> None:
    code = (
        "import sys, evalnb; evalnb.read_inspect_log(sys.argv[1]); "
        "print(any(m.startswith('inspect_ai') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(log("qa-match", ".eval"))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "False"


def test_compares_plots_saves_and_loads_back(tmp_path: Path) -> None:
    a = evalnb.read_inspect_log(log("qa-match", ".eval"))
    b = evalnb.read_inspect_log(log("qa-match", ".json"))
    cmp = evalnb.compare(a, b)
    assert set(cmp.checks["check_id"]) == {"match", "includes"}
    assert (cmp.cases["change"] == "same").all()
    fig = evalnb.plots.scorecard(a)
    assert fig.data
    store = evalnb.Store(tmp_path / "team.db")
    store.save(a, version="inspect-v1")
    again = store.load("inspect-v1")
    assert again.suite.format == "inspect-log"
    pd.testing.assert_frame_equal(
        again.scores[["case_id", "run", "check", "value", "passed", "status"]].reset_index(drop=True),
        a.scores[["case_id", "run", "check", "value", "passed", "status"]].reset_index(drop=True),
    )
    assert again.summary()[["check", "mean"]].equals(a.summary()[["check", "mean"]])
    graded = evalnb.read_inspect_log(log("qa-graded", ".eval"))
    assert evalnb.compare(graded, graded).exit_code == 0
