"""``evalnb run`` with named agents from evalnb.toml, --record, --replay and --replay-strict."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalnb.cli import app
from tests.agents.test_end_to_end import SPEC_EXAMPLE

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evalnb.toml").write_text(
        "[agents.summarizer]\n"
        'type = "command"\n'
        f"argv = [{sys.executable!r}, {str(SCRIPTS / 'summarize_agent.py')!r}]\n"
        'result = "last_line"\n',
        encoding="utf-8",
    )
    (tmp_path / "suite.toml").write_text(SPEC_EXAMPLE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scores_of(output: str) -> list[tuple[str, int, str, bool]]:
    data = json.loads(output)
    suites = data if isinstance(data, list) else [data]
    rows = [r for s in suites for r in s["scores"]]
    return sorted((r["case_id"], r["run"], r["check_id"], r["passed"]) for r in rows)


def test_record_then_replay_from_the_command_line(project: Path) -> None:
    cli = CliRunner()
    live = cli.invoke(
        app, ["run", "suite.toml", "--agent", "summarizer", "--record", "c.jsonl", "-f", "json"]
    )
    assert live.exit_code == 1, live.output  # llm_judge fails without a judge (tasks spec rule 4)
    assert len((project / "c.jsonl").read_text(encoding="utf-8").splitlines()) == 3
    replayed = cli.invoke(app, ["run", "suite.toml", "--replay", "c.jsonl", "-f", "json"])
    assert replayed.exit_code == 1, replayed.output
    assert scores_of(replayed.stdout) == scores_of(live.stdout)
    passed = {(c, p) for _, _, c, p in scores_of(replayed.stdout)}
    assert passed == {("exit_code", True), ("file_exists", True), ("regex", True), ("llm_judge", False)}


def test_replay_missing_entry_degraded_or_strict(project: Path) -> None:
    cli = CliRunner()
    cli.invoke(app, ["run", "suite.toml", "--agent", "summarizer", "--record", "c.jsonl"])
    lines = (project / "c.jsonl").read_text(encoding="utf-8").splitlines()
    (project / "c.jsonl").write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")  # one run lost
    loose = cli.invoke(app, ["run", "suite.toml", "--replay", "c.jsonl", "-f", "json"])
    assert loose.exit_code == 1
    runs = json.loads(loose.stdout)["runs"]
    degraded = [r for r in runs if r["status"] == "degraded"]
    assert len(degraded) == 1 and "no recorded answer in c.jsonl" in degraded[0]["error"]
    assert "case='summarize-text'" in degraded[0]["error"]
    strict = cli.invoke(app, ["run", "suite.toml", "--replay", "c.jsonl", "--replay-strict"])
    assert strict.exit_code == 2
    assert "no recorded answer in c.jsonl" in strict.stderr and "case='summarize-text'" in strict.stderr


def test_no_agent_option_uses_the_configured_agents(project: Path) -> None:
    result = CliRunner().invoke(app, ["run", "suite.toml", "-f", "json"])
    assert result.exit_code == 1, result.output
    runs = json.loads(result.stdout)["runs"]
    assert [r["exit_code"] for r in runs] == [0, 0, 0]
    assert {r["agent"] for r in runs} == {"summarizer"} or {r["agent"] for r in runs} == {"default"}


def test_unknown_agent_name_exits_2(project: Path) -> None:
    result = CliRunner().invoke(app, ["run", "suite.toml", "--agent", "sumarizer"])
    assert result.exit_code == 2
    assert "no agent named 'sumarizer'" in result.stderr and "did you mean 'summarizer'" in result.stderr


def test_judge_from_the_configuration(project: Path) -> None:
    with (project / "evalnb.toml").open("a", encoding="utf-8") as f:
        f.write('\n[judge]\ntype = "python"\nspec = "judge.py:always_pass"\n')
    (project / "judge.py").write_text(
        'def always_pass(prompt):\n    return \'{"verdict": "pass", "reason": "fine"}\'\n', encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["run", "suite.toml", "--agent", "summarizer", "-f", "json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)["scores"]
    judged = [s for s in scores if s["check"] == "llm_judge"]
    assert len(judged) == 3 and all(s["passed"] for s in judged)
