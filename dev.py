#!/usr/bin/env python3
"""The project's two commands, runnable on a fresh machine with only Python 3.10+ installed.

    python3 dev.py demo     # set up .venv with the offline judge, then run the demo on the embedded defaults
    python3 dev.py test     # set up .venv with the dev extras, then ruff, mypy, lint-imports and pytest

Each creates ``.venv`` next to this file when it is missing and installs the package into it (editable), so
running either twice is cheap. Extra arguments after the command go to ``evalnb demo`` or ``pytest``.

An interpreter older than ``requires-python`` of pyproject.toml is refused before anything is created, and a
``.venv`` made by another Python version (an earlier attempt with python3.9, an upgrade) is made again.
This file itself runs on old interpreters (3.7+), so that it can say so.
"""

from __future__ import annotations

import os
import re
import shutil
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


def required_python(pyproject: Path = ROOT / "pyproject.toml") -> tuple[int, int]:
    """The lowest Python ``requires-python = ">=X.Y"`` of pyproject.toml allows (its one home)."""
    text = pyproject.read_text(encoding="utf-8")
    m = re.search(r'^requires-python\s*=\s*"\s*>=\s*(\d+)\.(\d+)', text, re.M)
    if m is None:
        raise SystemExit(f'dev.py: no requires-python = ">=X.Y" in {pyproject}')
    return int(m.group(1)), int(m.group(2))


def unsupported(version: tuple[int, ...], required: tuple[int, int]) -> str | None:
    """Why this interpreter cannot build the project (None when it can)."""
    if tuple(version[:2]) >= required:
        return None
    have = ".".join(str(v) for v in version[:3])
    need = ".".join(str(v) for v in required)
    return (
        f"dev.py: evalnb needs Python {need} or later; this is Python {have} ({sys.executable}). "
        f"Run it with a newer interpreter, e.g. python{need} dev.py test (nothing was created)"
    )


def venv_version(folder: Path) -> tuple[int, int] | None:
    """The Python version a virtual environment was made with (``pyvenv.cfg``), or None when it has none."""
    try:
        text = (folder / "pyvenv.cfg").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+)\.(\d+)", text, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def stale(folder: Path, version: tuple[int, ...]) -> str | None:
    """Why an existing environment must be made again (None when it is fine or absent)."""
    if not folder.exists():
        return None
    python = (
        folder / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")
    )
    made = venv_version(folder)
    here = (version[0], version[1])
    if made is None or not python.exists():
        return f"{folder.name} is incomplete (an interrupted setup?)"
    if made != here:
        return f"{folder.name} was made by Python {made[0]}.{made[1]}, this is Python {here[0]}.{here[1]}"
    return None


def make_venv(folder: Path = VENV, version: tuple[int, ...] = tuple(sys.version_info)) -> bool:
    """Create ``folder`` as a virtual environment of this interpreter, first removing one made by another;
    True when it was (re)created."""
    why = stale(folder, version)
    if why is not None:
        print(f"dev.py: {why}; making it again", flush=True)
        shutil.rmtree(folder)
    if folder.exists():
        return False
    venv.EnvBuilder(with_pip=True).create(folder)
    return True


def setup(extras: str) -> None:
    problem = unsupported(tuple(sys.version_info), required_python())
    if problem:
        print(problem, file=sys.stderr)
        sys.exit(2)
    if make_venv():
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
        sh(BIN / "lint-imports")  # the layers of [tool.importlinter] in pyproject.toml (docs/architecture.md)
        sh(BIN / "python", "-m", "pytest", "-q", *rest)


if __name__ == "__main__":
    main()
