"""Loop plumbing (evalnb/running/_loops.py): Ctrl-C while run() waits inside a running event loop returns the
partial result."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env)


INTERRUPT_IN_LOOP = """
    import asyncio, os, signal, time
    import evalnb
    from evalnb.suite import Case, Suite, Turn, RegexCheck

    def agent(prompt):
        if prompt == "c3":
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)
        return "ok"

    cases = [Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"c{i}",
             checks=[RegexCheck(on="result", pattern="ok")])]) for i in range(8)]

    async def cell():
        {setup}
        return evalnb.run(Suite(name="s", format="tasks-toml", cases=cases), agent,
                          concurrency=1, progress=False)

    result = asyncio.run(cell())
    print(result.cases["status"].tolist(), result.meta["interrupted"])
"""


@pytest.mark.parametrize(
    "setup",
    [
        # ipykernel runs a cell with Python's default SIGINT handler: Ctrl-C raises in the waiting thread.
        "signal.signal(signal.SIGINT, signal.default_int_handler)",
        # asyncio.run's own handler only cancels the main task, which is blocked in run().
        "pass",
    ],
    ids=["jupyter-like", "asyncio-run"],
)
def test_ctrl_c_while_run_waits_in_a_running_loop_returns_a_partial_result(
    tmp_path: Path, setup: str
) -> None:
    out = run_script(tmp_path, INTERRUPT_IN_LOOP.replace("{setup}", setup))
    assert out.returncode == 0, out.stderr
    statuses, interrupted = out.stdout.strip().rsplit(" ", 1)
    got = eval(statuses)
    assert got[:3] == ["passed"] * 3
    assert got[-3:] == ["skipped"] * 3
    assert interrupted == "True"
