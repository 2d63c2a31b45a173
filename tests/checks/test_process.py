"""exit_code and file_exists (tasks spec)."""

from __future__ import annotations

from pathlib import Path

from evalnb.suite import ExitCodeCheck, FileExistsCheck
from tests.checks._ctx import score


def test_exit_code_equals() -> None:
    assert score(ExitCodeCheck(equals=0), exit_code=0).passed is True
    s = score(ExitCodeCheck(equals=0), exit_code=3)
    assert s.passed is False and s.reason == "exit code 3, expected 0"


def test_exit_code_missing_is_not_a_pass() -> None:
    s = score(ExitCodeCheck(equals=0), text="hi")
    assert s.passed is False and "no exit code" in s.reason


def test_file_exists_relative_to_workdir(tmp_path: Path) -> None:
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / "summary.txt").write_text("x")
    assert score(FileExistsCheck(path="output/summary.txt"), workdir=tmp_path).passed is True
    s = score(FileExistsCheck(path="output/other.txt"), workdir=tmp_path)
    assert s.passed is False and "does not exist" in s.reason
    assert score(FileExistsCheck(path="output"), workdir=tmp_path).passed is False  # a directory


def test_file_exists_path_escaping_the_workdir_is_an_error(tmp_path: Path) -> None:
    inner = tmp_path / "run"
    inner.mkdir()
    (tmp_path / "secret.txt").write_text("x")
    s = score(FileExistsCheck(path="../secret.txt"), workdir=inner)
    assert s.status == "degraded" and "escapes" in s.reason


def test_file_exists_checks_an_absolute_path_as_written(tmp_path: Path) -> None:
    # suites written for one repository check absolute paths: those are checked where they say, run dir or not
    inner = tmp_path / "run"
    inner.mkdir()
    (tmp_path / "built.txt").write_text("x")
    for workdir in (inner, None):
        s = score(FileExistsCheck(path=str(tmp_path / "built.txt")), workdir=workdir)
        assert (s.status, s.passed, s.reason) == ("ok", True, f"{tmp_path / 'built.txt'} exists")
        s = score(FileExistsCheck(path=str(tmp_path / "missing.txt")), workdir=workdir)
        assert (s.status, s.passed) == ("ok", False) and "does not exist" in s.reason
    s = score(FileExistsCheck(path=str(inner)), workdir=None)
    assert s.passed is False and "not a file" in s.reason


def test_file_exists_without_workdir_is_degraded() -> None:
    assert score(FileExistsCheck(path="a"), workdir=None).status == "degraded"
