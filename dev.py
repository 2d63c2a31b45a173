#!/usr/bin/env python3
"""The project's two commands, runnable on a fresh machine with only Python 3.10+ installed.

    python3 dev.py demo     # set up .venv with the offline judge, then run the demo on the embedded defaults
    python3 dev.py test     # set up .venv with the dev extras, then ruff, mypy and pytest

Each creates ``.venv`` next to this file when it is missing and installs the package into it (editable), so
running either twice is cheap. Extra arguments after the command go to ``evalnb demo`` or ``pytest``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def sh(*argv: str | Path) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    rc = subprocess.call([str(a) for a in argv], cwd=ROOT)
    if rc:
        sys.exit(rc)


def setup(extras: str) -> None:
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
        sh(BIN / "python", "-m", "pip", "install", "-q", "--upgrade", "pip")
    stamp = VENV / f".installed-{extras or 'base'}"
    pyproject = ROOT / "pyproject.toml"
    if not stamp.exists() or stamp.stat().st_mtime < pyproject.stat().st_mtime:
        target = f".[{extras}]" if extras else "."
        sh(BIN / "python", "-m", "pip", "install", "-q", "-e", target)
        stamp.touch()


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("demo", "test"):
        print(__doc__)
        sys.exit(2)
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "demo":
        # The demo's judged checks are scored by the offline embedding judge (wordllama, the offline-judge
        # extra); without it the demo says so and falls back to word statistics.
        setup("offline-judge")
        sh(BIN / "evalnb", "demo", *rest)
    else:
        setup("dev")
        sh(BIN / "ruff", "check", "evalnb", "tests", "benchmarks")
        sh(BIN / "ruff", "format", "--check", "evalnb", "tests", "benchmarks")
        sh(BIN / "mypy")
        sh(BIN / "python", "-m", "pytest", "-q", *rest)


if __name__ == "__main__":
    main()
