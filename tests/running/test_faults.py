"""Faults found by trying to break the runner, each reproduced: agents that block past their timeout, exit or
raise KeyboardInterrupt; a run count of 2**32 - 1; errors raised from a plain script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalnb
from evalnb.suite import Case, RegexCheck, Suite, Turn

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _suite(ids: list[str]) -> Suite:
    check = RegexCheck(on="result", pattern="ok")
    return Suite(
        name="faults",
        format="tasks-toml",
        cases=[Case(id=i, name=i, runs=1, turns=[Turn(prompt=i, checks=[check])]) for i in ids],
    )


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event the blocked agents wait on; set when the test ends, so their threads end with it."""
    gate = threading.Event()
    yield gate
    gate.set()


@pytest.mark.parametrize("hanging", [1, 8])
def test_calls_blocked_past_their_timeout_do_not_starve_the_others(
    release: threading.Event, hanging: int
) -> None:
    blocked = [f"hang-{i}" for i in range(hanging)]
    instant = [f"fast-{i}" for i in range(20)]

    def agent(prompt: str) -> str:
        if prompt.startswith("hang"):
            release.wait()  # a sync call that never returns by itself: it cannot be stopped, only abandoned
        return "ok"

    started = time.perf_counter()
    result = evalnb.run(
        _suite(blocked + instant), agent, concurrency=8, timeout=0.5, retries=0, progress=False
    )
    status = result.cases.set_index("case_id")["status"]
    assert (status[instant] == "passed").all(), result.report()  # abandoned calls hold no slot others need
    assert (status[blocked] == "degraded").all()
    assert set(result.runs.set_index("case_id").loc[blocked, "error"]) == {
        "TimeoutError: the agent did not answer within 0.5s"
    }
    assert time.perf_counter() - started < 10


BLOCKER = textwrap.dedent(
    """
    import time

    def blocker(prompt):
        if "hang" in prompt:
            time.sleep(3600)
        return "ok"
    """
)


def test_a_script_exits_after_a_run_with_an_abandoned_call(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(BLOCKER)
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            sys.path.insert(0, sys.argv[1])
            import evalnb
            from agents import blocker
            suite = evalnb.load('name = "s"\\n[[tasks]]\\nid = "hang"\\nprompt = "hang"\\nruns = 1\\n'
                                '[[tasks.assertions]]\\ntype = "regex"\\non = "result"\\npattern = "ok"\\n',
                                format="tasks-toml")
            result = evalnb.run(suite, blocker, timeout=1, retries=0, progress=False)
            print("status", result.cases["status"].tolist())
            """
        )
    )
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=60, env=_env()
    )
    assert out.returncode == 0, out.stderr
    assert "status ['degraded']" in out.stdout
    assert time.perf_counter() - started < 30  # the interpreter does not wait for the abandoned thread


def test_the_cli_exits_within_30s_with_a_blocked_agent(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(BLOCKER)
    (tmp_path / "suite.toml").write_text(
        'name = "s"\n[[tasks]]\nid = "hang"\nprompt = "hang"\nruns = 1\n'
        '[[tasks.assertions]]\ntype = "regex"\non = "result"\npattern = "ok"\n'
        '[[tasks]]\nid = "fine"\nprompt = "fine"\nruns = 1\n'
        '[[tasks.assertions]]\ntype = "regex"\non = "result"\npattern = "ok"\n'
    )
    started = time.perf_counter()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalnb",
            "run",
            "suite.toml",
            "--agent",
            "agents.py:blocker",
            "--timeout",
            "2",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert time.perf_counter() - started < 30
    assert out.returncode == 1, out.stdout + out.stderr
    assert "DEGRADED: hang" in out.stdout and "PASS: fine" in out.stdout


def test_an_agent_that_exits_or_raises_keyboardinterrupt_fails_its_case_only() -> None:
    import argparse

    def cli_agent(prompt: str) -> str:
        if prompt == "argparse":
            argparse.ArgumentParser(prog="tool").parse_args(["--no-such-flag"])  # prints usage, sys.exit(2)
        if prompt == "exit":
            sys.exit(3)
        if prompt == "interrupt":
            raise KeyboardInterrupt
        return "ok"

    async def async_agent(prompt: str) -> str:
        if prompt == "exit":
            raise SystemExit(4)
        return "ok"

    result = evalnb.run(
        _suite(["argparse", "exit", "interrupt", "fine"]), cli_agent, retries=0, progress=False
    )
    errors = result.runs.set_index("case_id")["error"]
    assert errors["argparse"] == "AgentError: SystemExit: the agent called sys.exit(2)"
    assert errors["exit"] == "AgentError: SystemExit: the agent called sys.exit(3)"
    assert errors["interrupt"] == "AgentError: KeyboardInterrupt raised inside the agent"
    assert result.cases.set_index("case_id")["status"].to_dict() == {
        "argparse": "degraded",
        "exit": "degraded",
        "interrupt": "degraded",
        "fine": "passed",
    }
    again = evalnb.run(_suite(["exit", "fine"]), async_agent, retries=0, progress=False)
    assert again.runs.set_index("case_id")["error"]["exit"] == "SystemExit: the agent called sys.exit(4)"
    assert again.cases["status"].tolist() == ["degraded", "passed"]


def test_runs_of_2_to_the_32_minus_1_plan_lazily_and_ctrl_c_ends_them(tmp_path: Path) -> None:
    """tasks spec: `runs` is a u32. The plan is lazy: memory does not grow with it, and Ctrl-C ends the run."""
    (tmp_path / "agents.py").write_text("def fast(prompt):\n    return 'ok'\n")
    (tmp_path / "suite.toml").write_text(
        'name = "s"\n[[tasks]]\nid = "many"\nprompt = "p"\nruns = 4294967295\n'
        '[[tasks.assertions]]\ntype = "regex"\non = "result"\npattern = "ok"\n'
    )
    # 3 GB of address space for the whole process: a plan of its 4,294,967,295 runs made at once needs tens of GB.
    # Most of what is mapped is reserved, not used (pyarrow's allocator reserves 1 GB; glibc 64 MB per thread
    # arena, kept to two here so the cap means the same on every machine); the resident memory is checked too.
    limit = 3 * 1024**3

    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.Popen(
        [sys.executable, "-m", "evalnb", "run", "suite.toml", "--agent", "agents.py:fast"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_env(), "MALLOC_ARENA_MAX": "2", "OPENBLAS_NUM_THREADS": "1"},
        preexec_fn=cap,
    )
    time.sleep(4)  # long enough to be running case runs (imports take about a second)
    assert proc.poll() is None, proc.communicate()
    status = Path(f"/proc/{proc.pid}/status").read_text()
    resident = int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) // 1024
    assert resident < 512, f"{resident} MB resident after 4 s"  # the rows of the runs done, not the plan
    proc.send_signal(signal.SIGINT)
    started = time.perf_counter()
    out, err = proc.communicate(timeout=60)
    assert time.perf_counter() - started < 20, "Ctrl-C did not end the run within seconds"
    assert proc.returncode == 1, err
    assert "MemoryError" not in err
    assert "SKIPPED: many" in out  # a partial result: what finished, the rest skipped


def test_an_error_from_run_in_a_script_carries_no_event_loop_context(tmp_path: Path) -> None:
    script = tmp_path / "fail.py"
    script.write_text(
        "import evalnb\n"
        'suite = evalnb.load(\'name = "s"\\n[[tasks]]\\nid = "a"\\nprompt = "p"\\nagent = "x"\\n\', format=\'tasks-toml\')\n'
        "evalnb.run(suite, {'y': lambda p: 'ok'})\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=_env()
    )
    assert out.returncode == 1
    assert "evalnb.errors.ConfigError: no agent given for 'x'" in out.stderr
    assert "no running event loop" not in out.stderr
    assert "During handling of the above exception" not in out.stderr
