"""`evalnb validate`, `init`, `upgrade` and `schema` on the command line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb.cli import app
from tests.support.cli import evalnb_cli, on_a_terminal
from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def test_validate_in_a_real_subprocess(tmp_path):
    for name in ("tasks-valid.toml", "cube-invalid-typo.yaml", "dataset-legacy.json"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    proc = evalnb_cli(
        "validate", "tasks-valid.toml", "cube-invalid-typo.yaml", "dataset-legacy.json", cwd=tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:3] == [
        "tasks-valid.toml: OK (tasks-toml, 2 cases)",
        "cube-invalid-typo.yaml:cases[0].expectedRow: UNKNOWN_FIELD unknown key 'expectedRow' in cases[0]; "
        "did you mean 'expectedRows'?",
        "dataset-legacy.json: OK (dataset-json, 2 cases)",
    ]
    # a legacy array names no evaluators: the line after its OK says which checks it got
    assert len(lines) == 4 and lines[3].startswith("dataset-legacy.json: warning: a legacy dataset")
    assert "the dataset defaults Relevance and Coherence only" in lines[3]


def test_validate_prints_every_error_of_a_file(tmp_path):
    cube = tmp_path / "two.yaml"
    cube.write_text(
        "name: s\n"
        "cube: {connectionName: c, catalog: F, schema: F, cubeName: S}\n"
        "cases:\n"
        "  - name: a\n"
        "    question: q\n"
        "    expectedRow: [{country: USA}]\n"
        "    tolerance: {absolute: -1}\n",
        encoding="utf-8",
    )
    tasks = tmp_path / "two.toml"
    tasks.write_text(
        'name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\nruns = "3"\n'
        '[[tasks.assertions]]\ntype = "exit_code"\nequal = 0\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["validate", str(cube), str(tasks)])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"{cube}:cases[0].expectedRow: UNKNOWN_FIELD unknown key 'expectedRow' in cases[0]; "
        "did you mean 'expectedRows'?",
        f"{cube}:cases[0].tolerance.absolute: INVALID_TOLERANCE 'absolute' must not be negative, got -1.0",
        f"{tasks}:tasks[0].runs: TYPE_MISMATCH 'runs' must be an integer, got string",
        f"{tasks}:tasks[0].assertions[0].equal: UNKNOWN_FIELD unknown key 'equal' in tasks[0].assertions[0]; "
        "did you mean 'equals'?",
    ]


def test_validate_all_valid_exits_0_and_accepts_folders():
    runner = CliRunner()
    result = runner.invoke(
        app,
        [
            "validate",
            str(EXAMPLES / "suites" / "tasks.toml"),
            str(EXAMPLES / "suites" / "knowledge-base.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.count(": OK (") == 2
    folder = runner.invoke(app, ["validate", str(FIXTURES)])
    assert folder.exit_code == 2
    assert "tasks-invalid-syntax.toml:line 1, column 15: MALFORMED_TOML" in folder.output
    assert "dataset-invalid-version.json:schemaVersion: UNSUPPORTED_VERSION" in folder.output
    assert "spec-cube.yaml: OK (cube-yaml, 4 cases)" in folder.output


def test_validate_missing_file_is_an_error(tmp_path):
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert "FILE_NOT_FOUND" in result.output


def test_init_writes_the_starter_without_a_terminal(tmp_path):
    proc = evalnb_cli("init", cwd=tmp_path, stdin="")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / "evals" / "evals.json"
    assert json.loads(path.read_text(encoding="utf-8"))["schemaVersion"] == "1.11.0"
    again = evalnb_cli("init", "--yes", cwd=tmp_path)
    assert again.returncode == 0 and "already exists" in again.stdout
    check = evalnb_cli("validate", "evals/evals.json", cwd=tmp_path)
    assert check.returncode == 0, check.stdout


def test_upgrade_prints_the_backup(tmp_path):
    path = tmp_path / "legacy.json"
    shutil.copy(FIXTURES / "dataset-legacy.json", path)
    runner = CliRunner()
    result = runner.invoke(app, ["upgrade", str(path)])
    assert result.exit_code == 0, result.output
    backups = list(tmp_path.glob("legacy.json.bak.*"))
    assert len(backups) == 1 and str(backups[0]) in result.output
    again = runner.invoke(app, ["upgrade", str(path)])
    assert again.exit_code == 0 and "already versioned" in again.output
    bad = tmp_path / "bad.json"
    bad.write_text("[")
    failed = runner.invoke(app, ["upgrade", str(bad)])
    assert failed.exit_code == 2


@pytest.mark.parametrize("fmt", ["tasks-toml", "cube-yaml", "dataset-json"])
def test_schema_prints_json_schema(fmt):
    result = CliRunner().invoke(app, ["schema", fmt])
    assert result.exit_code == 0
    assert json.loads(result.output)["type"] == "object"


def test_schema_unknown_format():
    assert CliRunner().invoke(app, ["schema", "xml"]).exit_code == 2


@pytest.mark.parametrize("name", ["suite.toml", "suite.yaml"])
def test_upgrading_a_toml_or_yaml_suite_says_so_and_writes_nothing(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    source = {
        "suite.toml": EXAMPLES / "suites" / "tasks.toml",
        "suite.yaml": EXAMPLES / "suites" / "foodmart-sales.eval.yaml",
    }
    path.write_bytes(source[name].read_bytes())
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.upgrade(path)
    assert info.value.code != "MALFORMED_JSON"
    assert "only JSON datasets" in info.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_init_ctrl_d_writes_nothing_like_no(tmp_path: Path) -> None:
    out = on_a_terminal("init", cwd=tmp_path, typed=b"\x04")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "nothing written" in out.stdout and "Aborted" not in out.stderr
    assert not (tmp_path / "evals").exists()


def test_validate_an_empty_folder_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = evalnb_cli("validate", "empty", cwd=tmp_path)
    assert out.returncode == 2
    assert "empty: no suite files" in out.stdout


def test_validate_an_empty_folder_beside_a_valid_file_still_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = evalnb_cli("validate", str(EXAMPLES / "suites" / "tasks.toml"), "empty", cwd=tmp_path)
    assert out.returncode == 2
    assert "tasks.toml: OK" in out.stdout and "empty: no suite files" in out.stdout
