"""Working directories are made only when used: a run whose agent never reads ``Request.workdir`` and whose
checks look at no files leaves nothing in the temporary folder, passing or failing, however many runs; the
directories of failed runs that used one are kept, at most KEEP_FAILED a run and the folders of the KEEP_RUNS
latest runs, and the report says where."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.agents import Command
from evalnb.running._workdirs import KEEP_FAILED, KEEP_RUNS, MARKER
from evalnb.suite import Case, ExitCodeCheck, FileExistsCheck, RegexCheck, Suite, Turn


@pytest.fixture
def tmp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The system's temporary folder, for this test alone (what evalnb leaves there is all there is)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder


def suite(n: int = 4, *, checks: Any = None) -> Suite:
    made = checks if checks is not None else [RegexCheck(on="result", pattern="ok")]
    return Suite(
        name="w",
        format="tasks-toml",
        cases=[
            Case(id=f"c{i}", name=f"c{i}", runs=1, turns=[Turn(prompt=f"p{i}", checks=made)])
            for i in range(n)
        ],
    )


def half(prompt: str) -> str:
    return "ok" if prompt in ("p0", "p1") else "no"


def half_request(request: evalnb.Request) -> str:  # takes the Request, never reads its workdir
    return "ok" if request.prompt in ("p0", "p1") and request.case else "no"


def test_a_thousand_runs_that_use_no_workdir_leave_nothing(tmp_folder: Path) -> None:
    s = suite()
    for i in range(1_000):
        result = evalnb.run(s, half if i % 2 else half_request, progress=False)
    assert result.counts() == {"passed": 2, "failed": 2, "degraded": 0, "skipped": 0}
    assert list(tmp_folder.iterdir()) == []
    assert result.runs["workdir"].isna().all() and "Kept for inspection" not in result.report()
    # the exit_code check reads the answer, not the folder
    result = evalnb.run(
        suite(checks=[ExitCodeCheck(equals=0)]), lambda p: {"text": "x", "exit_code": 1}, progress=False
    )
    assert not result.passed and list(tmp_folder.iterdir()) == []


def test_a_workdir_is_made_when_the_agent_reads_it_and_kept_when_the_run_fails(tmp_folder: Path) -> None:
    seen: list[Path] = []

    def writes(request: evalnb.Request) -> str:
        assert request.workdir is not None and request.workdir.is_dir()
        assert list(request.workdir.iterdir()) == []  # a fresh one
        seen.append(request.workdir)
        (request.workdir / "notes.txt").write_text(request.prompt)
        return half(request.prompt)

    result = evalnb.run(suite(), writes, progress=False)
    assert len(seen) == 4
    kept = result.runs.set_index("case_id")["workdir"]
    assert kept[["c0", "c1"]].isna().all()  # passed: removed
    for cid in ("c2", "c3"):
        path = Path(kept[cid])
        assert path.name == f"{cid}-run1" and (path / "notes.txt").read_text() == f"p{cid[1:]}"
    (folder,) = tmp_folder.iterdir()
    assert sorted(p.name for p in folder.iterdir()) == [MARKER, "c2-run1", "c3-run1"]
    report = result.report()
    assert (
        f"Kept for inspection: the working directories of 2 failed case runs, in {folder} "
        f"(at most {KEEP_FAILED} a run; the folders of the {KEEP_RUNS} latest runs that kept some stay)"
    ) in report


def test_checks_and_agents_that_use_files_get_their_workdir(tmp_folder: Path) -> None:
    # file_exists looks in the folder though the agent never sees it; a Command runs in it
    result = evalnb.run(suite(2, checks=[FileExistsCheck(path="out.txt")]), lambda p: "ok", progress=False)
    assert result.counts()["failed"] == 2 and result.runs["workdir"].notna().all()
    assert all(Path(w).is_dir() for w in result.runs["workdir"])
    echo = Command(
        [sys.executable, "-c", "import os; open('out.txt', 'w').write(os.getcwd())"], result="stdout"
    )
    result = evalnb.run(suite(2, checks=[FileExistsCheck(path="out.txt")]), echo, progress=False)
    assert result.passed and result.runs["workdir"].isna().all()


def test_kept_folders_are_bounded_per_run_and_across_runs(tmp_folder: Path) -> None:
    def writes(request: evalnb.Request) -> str:
        (request.workdir / "f").write_text("x")  # type: ignore[operator]
        return "no"

    result = evalnb.run(suite(KEEP_FAILED + 7), writes, concurrency=1, progress=False)
    kept = result.runs["workdir"]
    assert kept.notna().sum() == KEEP_FAILED and kept.isna().sum() == 7  # the first that failed are kept
    assert kept.iloc[:KEEP_FAILED].notna().all()
    assert f"working directories of {KEEP_FAILED} failed case runs" in result.report()
    (folder,) = tmp_folder.iterdir()
    assert len([p for p in folder.iterdir() if p.name != MARKER]) == KEEP_FAILED

    # a folder of a run still going (no marker yet) and someone else's folder are never touched
    going = tmp_folder / "evalnb-going"
    going.mkdir()
    (going / "run-1").mkdir()
    other = tmp_folder / "not-evalnb"
    other.mkdir()
    folders = []
    for _ in range(KEEP_RUNS + 5):
        again = evalnb.run(suite(2), writes, progress=False)
        folders.append(Path(again.runs["workdir"].iloc[0]).parent)
    left = {p for p in tmp_folder.iterdir()}
    assert left == {*folders[-KEEP_RUNS:], going, other}
    assert all(not f.exists() for f in folders[:-KEEP_RUNS]) and not folder.exists()


def test_a_workdir_given_is_used_as_it_is(tmp_folder: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "out.txt").write_text("x")
    result = evalnb.run(
        suite(2, checks=[FileExistsCheck(path="out.txt")]), half_request, workdir=repo, progress=False
    )
    assert result.passed and set(result.runs["workdir"]) == {str(repo)}
    assert list(tmp_folder.iterdir()) == [] and sorted(os.listdir(repo)) == ["out.txt"]
    assert "Kept for inspection" not in result.report()
