"""dev.py on an interpreter it cannot use, and with a .venv another interpreter made."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the fake interpreters are shell scripts")

# A small script posing as python3.9: the real interpreter, reporting 3.9.18 as its version, running a file.
FAKE_PYTHON39 = """#!/bin/sh
exec {real} -c 'import runpy, sys
sys.version_info = (3, 9, 18, "final", 0)
path = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(path, run_name="__main__")' "$@"
"""


def _dev_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("evalnb_dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_python39(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "python3.9"
    fake.write_text(FAKE_PYTHON39.format(real=sys.executable))
    fake.chmod(0o755)
    return fake


def test_python_3_9_is_refused_before_a_venv_is_created(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "dev.py", project / "dev.py")
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    python39 = _fake_python39(tmp_path / "bin")
    out = subprocess.run(
        [str(python39), "dev.py", "test"], cwd=project, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert "evalnb needs Python 3.10 or later; this is Python 3.9.18" in out.stderr
    assert not (project / ".venv").exists()  # nothing to fail the same way next time
    assert "+ " not in out.stdout  # no command was run


def test_a_venv_made_by_python_3_9_is_made_again(tmp_path: Path) -> None:
    dev = _dev_module()
    folder = tmp_path / ".venv"
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text(
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.9.18\n"
    )
    shutil.copy(_fake_python39(tmp_path / "fake"), folder / "bin" / "python")
    (folder / ".installed-dev").touch()  # the stamp of the failed install: it goes with the old .venv
    here = tuple(sys.version_info)
    assert dev.stale(folder, here) == f".venv was made by Python 3.9, this is Python {here[0]}.{here[1]}"
    assert dev.make_venv(folder, here) is True
    assert dev.venv_version(folder) == here[:2]
    assert not (folder / ".installed-dev").exists()
    out = subprocess.run(
        [str(folder / "bin" / "python"), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == str(here[:2])
    assert dev.stale(folder, here) is None and dev.make_venv(folder, here) is False  # now it is kept


def test_an_interrupted_venv_is_made_again_and_the_rules_read_pyproject(tmp_path: Path) -> None:
    dev = _dev_module()
    (tmp_path / ".venv").mkdir()
    assert dev.stale(tmp_path / ".venv", (3, 11, 7)) == ".venv is incomplete (an interrupted setup?)"
    assert dev.stale(tmp_path / "absent", (3, 11, 7)) is None
    assert dev.required_python() == (3, 10)
    assert dev.unsupported((3, 10, 0), (3, 10)) is None
    assert dev.stale(ROOT / ".venv", tuple(sys.version_info)) is None  # the venv running these tests
