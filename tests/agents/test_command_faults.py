"""Command faults, each reproduced with real processes: a program a signal killed after printing its answer, and
a program that leaves a ``setsid`` daemon behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

import evalnb
from evalnb.agents._command import Command
from evalnb.suite import Case, RegexCheck, Suite, Turn
from tests.agents.test_command import pid_gone

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

pytestmark = pytest.mark.skipif(os.name == "nt", reason="signals, sessions and /proc are POSIX")


def _suite(n: int = 1) -> Suite:
    check = RegexCheck(on="stdout", pattern="summary")
    return Suite(
        name="faults",
        format="tasks-toml",
        cases=[Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt="p", checks=[check])]) for i in range(n)],
    )


@pytest.mark.parametrize(("signal_name", "code"), [("SEGV", -11), ("KILL", -9), ("ABRT", -6)])
def test_a_program_killed_by_a_signal_is_degraded_naming_the_signal(signal_name: str, code: int) -> None:
    # It prints what the regex looks for, then dies: before, the run passed with exit_code -11.
    agent = Command(["sh", "-c", f"echo 'summary: done'; echo 'core dumped' >&2; kill -{signal_name} $$"])
    result = evalnb.run(_suite(), agent, retries=0, progress=False)
    run = result.runs.iloc[0]
    assert run["status"] == "degraded"
    assert (
        run["error"]
        == f"AgentError: sh was killed by SIG{signal_name} (exit code {code}); stderr ends: core dumped"
    )
    assert result.scores.iloc[0]["status"] == "degraded" and not result.passed


def test_an_exit_code_is_still_the_exit_code_check_s_to_judge() -> None:
    result = evalnb.run(_suite(), Command(["sh", "-c", "echo summary; exit 3"]), progress=False)
    assert result.runs.iloc[0]["exit_code"] == 3 and result.runs.iloc[0]["status"] == "passed"


def _wait_gone(pids: list[int], seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if not pid_gone(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if not pid_gone(p)]


def test_a_setsid_daemon_does_not_outlive_the_run(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon-{case}.pid"
    agent = Command([sys.executable, str(SCRIPTS / "daemonize.py"), str(pidfile)], timeout=60)
    started = time.monotonic()
    result = evalnb.run(_suite(3), agent, concurrency=3, retries=0, progress=False)
    assert result.cases["status"].tolist() == ["passed"] * 3, result.report()
    daemons = [int((tmp_path / f"daemon-c{i}.pid").read_text()) for i in range(3)]
    assert _wait_gone(daemons) == [], "a setsid daemon outlived the run"
    assert time.monotonic() - started < 30


def test_a_setsid_grandchild_from_a_shell_is_ended_too(tmp_path: Path) -> None:
    pidfile = tmp_path / "sleep.pid"
    script = f"setsid sleep 600 & echo $! > {pidfile}; echo summary"
    result = evalnb.run(_suite(), Command(["sh", "-c", script]), retries=0, progress=False)
    assert result.passed, result.report()
    assert _wait_gone([int(pidfile.read_text())]) == []


def test_a_timeout_ends_the_daemon_too(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    # The program hangs after starting its daemon: the call's timeout ends both.
    script = (
        f"import subprocess, sys, time; subprocess.run([sys.executable, {str(SCRIPTS / 'daemonize.py')!r}, "
        f"{str(pidfile)!r}]); time.sleep(600)"
    )
    result = evalnb.run(
        _suite(), Command([sys.executable, "-c", script], timeout=3), retries=0, progress=False
    )
    assert result.runs.iloc[0]["status"] == "degraded"
    assert "timed out after 3s" in result.runs.iloc[0]["error"]
    assert _wait_gone([int(pidfile.read_text())]) == []
