"""Running the ``evalnb`` command line as users do: a real subprocess, from a folder of the test's, with the
checkout importable; optionally with a pseudo-terminal as stdin (for the questions it asks on a terminal)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "cli_env", "evalnb_cli", "on_a_terminal"]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: this one's, with the checkout on the path and a wide terminal."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "200", **extra}


def evalnb_cli(
    *args: str, cwd: Path, stdin: str | int | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m evalnb ARGS`` in ``cwd``; ``stdin`` is typed text, a file descriptor, or nothing."""
    kw: dict[str, object] = {"stdin": subprocess.DEVNULL}
    if isinstance(stdin, str):
        kw = {"input": stdin}
    elif isinstance(stdin, int):
        kw = {"stdin": stdin}
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=cli_env(),
        **kw,  # type: ignore[arg-type]
    )


def on_a_terminal(*args: str, cwd: Path, typed: bytes) -> subprocess.CompletedProcess[str]:
    """Run the CLI with a pseudo-terminal as stdin, the keys ``typed`` already waiting in it."""
    import pty

    master, slave = pty.openpty()
    try:
        os.write(master, typed)
        return evalnb_cli(*args, cwd=cwd, stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
