"""Lone surrogates (a YAML "\\ud83d\\ude00" escape PyYAML does not join, a JSON "\\ud800", an agent's, an HTTP
service's or a judge's text holding one) are kept as U+FFFD in every frame, export, the store and JSON: the run
is never lost to a UnicodeEncodeError after it has finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb._unicode import clean, clean_data
from evalnb.agents import HTTP
from evalnb.judges import OpenAIJudge
from evalnb.results._frames import RUNS_COLUMNS
from tests.support.openai_server import OpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[1]

CUBE = r"""
name: "surrogates \ud83d\ude00"
cube: {connectionName: c, catalog: c, schema: s, cubeName: Sales}
cases:
  - name: "lone \ud800 high"
    question: "what about \udc00 this?"
    expectedRefusalContains: "no"
  - name: pair
    question: "\ud83d\ude00 joined"
    expectedInsightContains: ["ok"]
"""


def test_clean_joins_pairs_and_replaces_lone_ones() -> None:
    assert clean("a\ud83d\ude00b") == "a😀b"
    assert clean("\ud800x\udc00") == "\ufffdx\ufffd"
    plain = "plain text é"
    assert clean(plain) is plain
    shared = ["v\ud800"]
    data = {"k\ud800": shared, "again": shared}
    out = clean_data(data)
    assert out == {"k\ufffd": ["v\ufffd"], "again": ["v\ufffd"]} and out["k\ufffd"] is out["again"]
    same = {"a": ["b"]}
    assert clean_data(same) is same


def test_flat_data_is_cleaned_alike_and_kept_as_it_is_when_clean() -> None:
    # Flat containers of text and numbers (an answer's meta, a usage object) are read without the general walk.
    for same in ({"attempts": 1, "ok": True, "x": None, "f": 0.5}, ["a", 1], ("a", 2.0), {}, []):
        assert clean_data(same) is same
    assert clean_data({"note": "é \ud800"}) == {"note": "é \ufffd"}
    assert clean_data({"k\ud800": 1}) == {"k\ufffd": 1}
    assert clean_data(("\ud83d\ude00", 3)) == ("😀", 3)
    assert clean_data(["plain", "\udfff"]) == ["plain", "\ufffd"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_a_yaml_suite_with_surrogate_escapes_validates_loads_and_runs_from_the_cli(tmp_path: Path) -> None:
    (tmp_path / "suite.eval.yaml").write_text(CUBE, encoding="utf-8")
    (tmp_path / "agents.py").write_text(
        "def agent(prompt):\n    return {'text': 'ok \\ud800', 'refusal': 'no \\udfff', 'insight': 'ok', "
        "'intent': 'REFUSED'}\n"
    )
    validate = subprocess.run(
        [sys.executable, "-m", "evalnb", "validate", "suite.eval.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert validate.returncode == 0, validate.stdout + validate.stderr
    suite = evalnb.load(tmp_path / "suite.eval.yaml")
    assert suite.name == "surrogates 😀"
    assert suite.cases[0].id == "lone \ufffd high" and suite.cases[1].turns[0].prompt == "😀 joined"
    assert suite.to_frame()["case_id"].tolist() == ["lone \ufffd high", "pair"]
    outputs = ["--output", "out.html"]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalnb",
            "run",
            "suite.eval.yaml",
            "--agent",
            "agents.py:agent",
            "--store",
            "runs.db",
            "--version",
            "v1",
            *outputs,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "UnicodeEncodeError" not in run.stderr
    assert "PASS: lone \ufffd high" in run.stdout
    assert "lone \ufffd high" in (tmp_path / "out.html").read_text(encoding="utf-8")
    stored = evalnb.Store(tmp_path / "runs.db").load("v1")
    assert stored.runs["response"].tolist() == ["ok \ufffd", "ok \ufffd"]
    assert stored.runs["refusal"].tolist() == ["no \ufffd", "no \ufffd"]
    report = subprocess.run(
        [sys.executable, "-m", "evalnb", "report", "v1", "--store", "runs.db", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["runs"][0]["case_id"] == "lone \ufffd high"


def test_json_escapes_an_agent_an_http_service_and_a_judge(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    dataset = (
        '{"schemaVersion": "1.6.0", "items": [{"prompt": "p \\ud800", "expected_response": "e \\udc00"}]}'
    )
    suite = evalnb.load(dataset, format="dataset-json")
    assert suite.cases[0].turns[0].prompt == "p \ufffd" and suite.cases[0].turns[0].expected == "e \ufffd"
    # The judge's JSON answer holds an escaped lone surrogate in its reason (json.loads gives it back raw).
    judge = OpenAIJudge("m", base_url=openai_server.base_url, cache=False)
    openai_server.default = '{"score": 4, "reason": "fine \\ud800 reason"}'
    callable_result = evalnb.run(suite, lambda prompt: "answer \udc01", judge=judge, progress=False)
    with OpenAIServer(default=Reply(body='{"text": "from http \\ud800"}')) as service:
        http_result = evalnb.run(suite, HTTP(f"{service.url}/chat/completions"), judge=judge, progress=False)
    for result, answer in [(callable_result, "answer \ufffd"), (http_result, "from http \ufffd")]:
        assert result.runs["response"].tolist() == [answer]
        assert set(result.scores["reason"]) == {"4/5 (threshold 3): fine \ufffd reason"}
        folder = tmp_path / answer.split()[0]
        result.to_csv(folder / "csv")
        result.to_excel(folder / "card.xlsx")
        result.to_html(folder / "card.html")
        text = result.to_json(folder / "result.json")
        assert answer in text and json.loads(text)["runs"][0]["prompt"] == "p \ufffd"
        assert pd.read_csv(folder / "csv" / "runs.csv")["response"].tolist() == [answer]
        assert pd.read_excel(folder / "card.xlsx", sheet_name="cases")["response"].tolist() == [answer]
        store = evalnb.Store(folder / "runs.db")
        store.save(result, version="v1")
        assert store.load("v1").scores["reason"].tolist() == result.scores["reason"].tolist()
        assert evalnb.read_results(folder / "result.json").runs["response"].tolist() == [answer]
        evalnb.export.to_document(result, folder / "document.json")
        assert result.report().startswith("Suite: dataset")


def test_a_caller_s_frames_and_suites_are_kept_encodable() -> None:
    suite = evalnb.Suite(
        name="built \ud800",
        format="tasks-toml",
        cases=[evalnb.Case(id="c\udfff", name="c", turns=[evalnb.Turn(prompt="p\ud83d\ude00")])],
    )
    assert suite.name == "built \ufffd" and suite.cases[0].id == "c\ufffd"
    assert suite.cases[0].turns[0].prompt == "p😀"
    # object cells: with pyarrow installed, pandas would otherwise refuse the surrogate itself
    runs = pd.DataFrame(
        [{"suite": "s", "case_id": "c\ufffd", "run": 0, "turn": 0, "response": "r\ud800"}], dtype=object
    )
    result = evalnb.Result.from_frames(suite=suite, runs=runs, scores=pd.DataFrame(columns=["case_id"]))
    assert result.runs["response"].tolist() == ["r\ufffd"]
    assert list(result.runs.columns[: len(RUNS_COLUMNS)]) == list(RUNS_COLUMNS)
    result.to_json()  # no UnicodeEncodeError


@pytest.mark.parametrize("text", ['"\\ud800": 1', '"\\ud800\\udc00x": 1'])
def test_a_yaml_key_of_surrogates_is_named_in_its_error(text: str) -> None:
    doc = (
        "name: s\ncube: {connectionName: c, catalog: c, schema: s, cubeName: x}\n"
        f"cases:\n  - name: a\n    question: q\n    {text}\n"
    )
    with pytest.raises(evalnb.SuiteError) as err:
        evalnb.load(doc, format="cube-yaml")
    assert err.value.code == "UNKNOWN_FIELD"
    key = clean(json.loads(text.split(":")[0]))
    assert err.value.location == f"cases[0][{key!r}]" and repr(key) in err.value.message


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ('{"a": "plain \\u00e9 text"}', False),  # an escape of a character that is not a surrogate
        ('{"a": "\\ud83d\\ude00"}', True),  # a JSON (or TOML) surrogate escape
        ('a: "\\U0000D800"', True),  # YAML's long escape
        ("a: \ud800", True),  # a surrogate in the text itself
        ('{"a": "\\\\ud800 written as text"}', True),  # an escaped backslash: cleaned anyway, to be safe
    ],
)
def test_the_walk_that_cleans_a_document_is_skipped_only_when_no_surrogate_can_come_of_it(
    text: str, may: bool
) -> None:
    from evalnb._unicode import may_hold_surrogates

    assert may_hold_surrogates(text) is may
