"""`evalnb run` end to end in real subprocesses: exit codes 0/1/2, JSON output, inline prompts, discovery,
legacy upgrade, the interactive loop."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import evalnb
from tests.support.cli import evalnb_cli, on_a_terminal
from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "tests" / "agents_for_cli.py"
NO_JUDGE = "llm judge not evaluated: this runner has no judge router"

PASSING_TOML = """
name = "cli-ok"

[[tasks]]
id = "summarize"
prompt = "Summarize this."
runs = 2
assertions = [
  { type = "exit_code", equals = 0 },
  { type = "file_exists", path = "output/summary.txt" },
  { type = "regex", on = "stdout", pattern = "\\\\bsummary\\\\b" },
]
"""


def run_cli(*args: str, cwd: Path, stdin: str | int | None = None) -> subprocess.CompletedProcess[str]:
    return evalnb_cli("run", *args, cwd=cwd, stdin=stdin)


def agent(name: str) -> str:
    return f"{AGENTS}:{name}"


def test_exit_0_when_everything_passes_and_json_parses(tmp_path: Path) -> None:
    suite = tmp_path / "ok.toml"
    suite.write_text(PASSING_TOML)
    out = run_cli(str(suite), "--agent", agent("oracle"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "1/1 passed, 0 failed, 0 degraded, 0 skipped" in out.stdout
    assert "PASS: summarize (" in out.stdout

    out = run_cli(
        str(suite), "--agent", agent("oracle"), "--format", "json", "--output", "r/res.json", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["schema_version"] == 1 and data["counts"]["passed"] == 1
    assert len(data["runs"]) == 2 and len(data["scores"]) == 6
    assert json.loads((tmp_path / "r" / "res.json").read_text())["suite"]["name"] == "cli-ok"


def test_no_list_passes_leaves_the_passing_cases_out_of_the_report(tmp_path: Path) -> None:
    suite = tmp_path / "ok.toml"
    suite.write_text(PASSING_TOML)
    out = run_cli(str(suite), "--agent", agent("oracle"), "--no-list-passes", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "1/1 passed" in out.stdout and "PASS: summarize" not in out.stdout
    assert (
        "(1 passing cases not listed; report(passes=True), or evalnb run --list-passes, lists them)"
        in out.stdout
    )
    out = run_cli(str(suite), "--agent", agent("oracle"), "--list-passes", cwd=tmp_path)
    assert "PASS: summarize (" in out.stdout


def test_exit_1_for_llm_judge_without_judge_and_report_only_mode(tmp_path: Path) -> None:
    suite = EXAMPLES / "suites" / "tasks.toml"
    out = run_cli(str(suite), "--agent", agent("oracle"), "--runs", "1", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert f"llm_judge: {NO_JUDGE}" in out.stdout
    assert "FAIL: summarize-text" in out.stdout

    out = run_cli(
        str(suite), "--agent", agent("oracle"), "--runs", "1", "--no-fail-on-regression", cwd=tmp_path
    )
    assert out.returncode == 0
    assert "FAIL: summarize-text" in out.stdout


def test_exit_1_when_the_agent_raises(tmp_path: Path) -> None:
    out = run_cli("--agent", agent("boom"), "--prompts", "a", "b", "--expected", "x", "y", cwd=tmp_path)
    assert out.returncode == 1
    assert "0/2 passed, 0 failed, 2 degraded" in out.stdout
    assert "error: RuntimeError: agent exploded" in out.stdout


def test_inline_prompts_pair_with_expected(tmp_path: Path) -> None:
    out = run_cli(
        "--agent",
        agent("oracle"),
        "--prompts",
        "What is the capital of France?",
        "What is 2 + 2?",
        "--expected",
        "Paris",
        "4",
        "--format",
        "json",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    assert [r["prompt"] for r in data["runs"]] == ["What is the capital of France?", "What is 2 + 2?"]
    assert {s["check"] for s in data["scores"]} == {"ExactMatch", "PartialMatch"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["SUITE_TYPO", "--agent", "AGENT:oracle"], "UNKNOWN_FIELD"),
        (["SUITE_ROUTED", "--agent", "default=AGENT:oracle"], "no agent given for 'writer'"),
        (["SUITE_OK", "--agent", "AGENT:no_such_function"], "has no attribute 'no_such_function'"),
        (["SUITE_OK", "--agent", "not_a_module_anywhere:f"], "not found"),
    ],
)
def test_exit_2_when_the_run_cannot_start(tmp_path: Path, args: list[str], message: str) -> None:
    routed = tmp_path / "routed.toml"
    routed.write_text('name = "r"\n[[tasks]]\nid = "t"\nprompt = "p"\nagent = "writer"\n')
    ok = tmp_path / "ok.toml"
    ok.write_text(PASSING_TOML)
    subst = {
        "SUITE_TYPO": str(ROOT / "tests" / "fixtures" / "tasks-invalid-typo.toml"),
        "SUITE_ROUTED": str(routed),
        "SUITE_OK": str(ok),
    }
    argv = [subst.get(a, a).replace("AGENT", str(AGENTS)) for a in args]
    out = run_cli(*argv, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert message in out.stderr
    assert out.stdout == ""


def test_discovery_without_a_terminal_exits_2_saying_where_it_looked(tmp_path: Path) -> None:
    out = run_cli("--agent", agent("oracle"), cwd=tmp_path)
    assert out.returncode == 2
    assert "current directory" in out.stderr and "./evals/" in out.stderr and "evals.json" in out.stderr


def test_discovery_on_a_terminal_offers_the_starter_file(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    try:
        os.write(master, b"y\n")
        out = run_cli("--agent", agent("oracle"), cwd=tmp_path, stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    assert "No prompts file found in current directory or ./evals/" in out.stdout
    assert "Create a starter evals file with sample prompts? (Y/n): " in out.stdout
    starter = tmp_path / "evals" / "evals.json"
    assert json.loads(starter.read_text())["items"]
    assert out.returncode == 0, out.stdout + out.stderr


def test_discovery_finds_a_dataset_and_upgrades_a_legacy_one(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    legacy = tmp_path / "evals" / "prompts.json"
    shutil.copy(ROOT / "tests" / "fixtures" / "dataset-legacy.json", legacy)
    original = legacy.read_bytes()
    out = run_cli("--agent", agent("oracle"), "--no-fail-on-regression", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Upgraded legacy dataset" in out.stderr and "backup" in out.stderr
    backups = [p for p in (tmp_path / "evals").iterdir() if p.name != "prompts.json"]
    assert len(backups) == 1 and backups[0].read_bytes() == original
    assert "schemaVersion" in json.loads(legacy.read_text())
    assert "Suite: prompts" in out.stdout


def test_interactive_loop_scores_and_saves(tmp_path: Path) -> None:
    session = "What is the capital of France?\nParis\nWhat is 2 + 2?\n\n\ny\nevals/tried.json\n"
    out = run_cli("--agent", agent("oracle"), "--interactive", cwd=tmp_path, stdin=session)
    assert out.returncode == 0, out.stderr
    assert "answer: Paris" in out.stdout
    assert "ExactMatch: PASS" in out.stdout and "Match score: 1.000" in out.stdout
    assert "answer: 4" in out.stdout
    saved = json.loads((tmp_path / "evals" / "tried.json").read_text())
    assert saved["items"] == [
        {"prompt": "What is the capital of France?", "expected_response": "Paris"},
        {"prompt": "What is 2 + 2?"},
    ]


def test_ctrl_d_at_the_starter_question_is_a_no_with_exit_2(tmp_path: Path) -> None:
    out = on_a_terminal("run", "--agent", f"{AGENTS}:oracle", cwd=tmp_path, typed=b"\x04")
    assert out.returncode == 2, out.stdout + out.stderr  # could not start; never click's "Aborted." (exit 1)
    assert "Aborted" not in out.stderr
    assert "no starter file created" in out.stderr
    assert not (tmp_path / "evals").exists()


def test_declining_the_starter_file_says_why_the_run_stops(tmp_path: Path) -> None:
    out = on_a_terminal("run", "--agent", f"{AGENTS}:oracle", cwd=tmp_path, typed=b"n\n")
    assert out.returncode == 2
    assert "error: no suite to run; no starter file created" in out.stderr
    assert not (tmp_path / "evals").exists()


def test_expected_without_prompts_is_an_error_not_ignored(tmp_path: Path) -> None:
    (tmp_path / "evals.json").write_text(
        json.dumps({"schemaVersion": "1.7.0", "items": [{"prompt": "What is 2 + 2?"}]})
    )
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--expected", "4", cwd=tmp_path)
    assert out.returncode == 2
    assert "--expected pairs with --prompts" in out.stderr
    assert "Suite:" not in out.stdout  # nothing ran


def test_a_blank_inline_prompt_is_refused(tmp_path: Path) -> None:
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--prompts", "What is 2 + 2?", "  ", cwd=tmp_path)
    assert out.returncode == 2
    assert "error: prompts[1]: BLANK_FIELD 'prompt' must not be empty or only whitespace" in out.stderr


def test_interactive_save_never_overwrites_a_file(tmp_path: Path) -> None:
    precious = tmp_path / "evals.json"
    precious.write_text('{"keep": "me"}\n')
    session = "What is 2 + 2?\n4\n\ny\nevals.json\ntried.json\n"
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--interactive", cwd=tmp_path, stdin=session)
    assert out.returncode == 0, out.stderr
    assert precious.read_text() == '{"keep": "me"}\n'
    assert "evals.json already exists" in out.stdout
    saved = json.loads((tmp_path / "tried.json").read_text())
    assert saved["items"] == [{"prompt": "What is 2 + 2?", "expected_response": "4"}]
    assert evalnb.load(tmp_path / "tried.json").cases[0].turns[0].expected == "4"


def test_interactive_save_cancelled_with_ctrl_d_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken.json").write_text("{}\n")
    session = "What is 2 + 2?\n\n\ny\ntaken.json\n"  # then end of input
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--interactive", cwd=tmp_path, stdin=session)
    assert out.returncode == 0, out.stderr
    assert "nothing saved" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.json"]


def test_run_prints_every_error_of_an_invalid_suite(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = ""\nrun = 3\n[[tasks]]\nid = "a"\nprompt = "p"\n'
    )
    out = evalnb_cli("run", "bad.toml", "--agent", f"{AGENTS}:oracle", cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines == [
        "error: bad.toml:tasks[0].prompt: BLANK_FIELD 'prompt' must not be empty or only whitespace",
        "error: bad.toml:tasks[0].run: UNKNOWN_FIELD unknown key 'run' in tasks[0]; did you mean 'runs'?",
        "error: bad.toml:tasks[1].id: INVALID_VALUE duplicate task id 'a' (first used by tasks[0])",
    ]
