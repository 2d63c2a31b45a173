"""What the benchmarks that time each step in a fresh process share: the step's peak RSS, and running one step
as a child of this script (its last line of output is the step's JSON figures)."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any


def peak_mb() -> float:
    """This process's peak resident set so far, in MB.

    Linux's ``VmHWM`` where there is one: ``ru_maxrss`` is kept across ``exec``, so a child started by a parent
    that held more reports the parent's peak (a 13 MB child of a 2 GB parent says 1,920 MB).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def step(script: str, *args: Any) -> dict[str, float]:
    """Run ``script --child ARGS...`` in a fresh interpreter; its last output line, parsed as JSON."""
    cmd = [sys.executable, script, "--child", *(str(a) for a in args)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    out: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return out
