"""A damaged store file and a read-only one, through the command line as a user meets them: a damaged file is
one short line naming it, exit 2, the file untouched and no agent called; a read-only store can still be read."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import StoreError

ROOT = Path(__file__).resolve().parents[2]  # the checkout: its evalnb, not an installed one
AGENT = "import pathlib\n\ndef agent(prompt):\n    pathlib.Path('called').write_text('the agent was called')\n    return 'yes'\n"
SUITE = {
    "schemaVersion": "1.1.0",
    "metadata": {"name": "stored"},
    "default_evaluators": {"ExactMatch": {}},
    "items": [{"prompt": f"p{i}", "expected_response": "yes"} for i in range(3)],
}


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store with two versions of a run, saved through the command line."""
    folder = tmp_path_factory.mktemp("stored")
    (folder / "agents.py").write_text(AGENT)
    (folder / "suite.json").write_text(json.dumps(SUITE))
    for version in ("v1", "v2"):
        out = cli(
            folder,
            "run",
            "suite.json",
            "--agent",
            "agents.py:agent",
            "--store",
            "good.db",
            "--version",
            version,
        )
        assert out.returncode == 0, out.stdout + out.stderr
    evalnb.Store(folder / "good.db").engine.dispose()
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _damaged(kind: str, good: Path, target: Path) -> None:
    data = good.read_bytes()
    if kind == "truncated":
        target.write_bytes(data[: len(data) // 2])
    elif kind == "random bytes":
        target.write_bytes(os.urandom(5000))
    elif kind == "text file":
        target.write_text("name,score\nthis is a CSV, not a store\n")
    else:  # pages overwritten in the middle: the header is fine, the tables are not
        damaged = bytearray(data)
        damaged[4096 : len(data) - 4096] = b"Z" * (len(data) - 8192)
        target.write_bytes(bytes(damaged))


COMMANDS = [
    ("report", "v1"),
    ("trend", "stored"),
    ("compare", "v1", "v2"),
    ("run", "suite.json", "--agent", "agents.py:agent", "--version", "v3"),
]


@pytest.mark.parametrize("kind", ["truncated", "random bytes", "text file"])
@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_damaged_store_is_one_line_exit_2_untouched_and_no_agent_runs(
    stored: Path, tmp_path: Path, kind: str, command: tuple[str, ...]
) -> None:
    shutil.copy(stored / "agents.py", tmp_path)
    shutil.copy(stored / "suite.json", tmp_path)
    store = tmp_path / "runs.db"
    _damaged(kind, stored / "good.db", store)
    before = _digest(store)
    out = cli(tmp_path, *command, "--store", str(store))
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: the store {store} "), out.stderr
    assert "Traceback" not in out.stderr and "sqlalchemy" not in out.stderr.lower()
    assert _digest(store) == before  # the file is left exactly as it was
    assert not (tmp_path / "called").exists()  # checked before any agent is called
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "agents.py",
        "runs.db",
        "suite.json",
    ]  # no -wal, -shm


def test_damaged_tables_behind_a_valid_header_are_a_store_error(stored: Path, tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    _damaged("pages overwritten", stored / "good.db", store)
    with pytest.raises(StoreError) as err:
        evalnb.Store(store).load("v1")
    assert err.value.code == "STORE_CORRUPT" and str(store) in err.value.message
    out = cli(tmp_path, "report", "v1", "--store", str(store))
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr


@pytest.mark.parametrize("kind", ["truncated", "random bytes", "text file"])
def test_the_api_names_the_file(stored: Path, tmp_path: Path, kind: str) -> None:
    store = tmp_path / "runs.db"
    _damaged(kind, stored / "good.db", store)
    with pytest.raises(StoreError) as err:
        evalnb.Store(store)
    assert err.value.code == "STORE_CORRUPT" and f"the store {store} " in err.value.message
    with pytest.raises(StoreError) as from_run:
        evalnb.run(
            evalnb.load(json.dumps(SUITE), format="dataset-json"),
            lambda prompt: pytest.fail("the agent was called"),
            store=store,
            version="v3",
            progress=False,
        )
    assert from_run.value.code == "STORE_CORRUPT"


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` read-only for this process: permission bits, and for root (who ignores them) the immutable flag."""
    mode = path.stat().st_mode
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = os.geteuid() == 0
    if immutable:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    try:
        assert not os.access(path, os.W_OK)
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_store_can_still_be_read(stored: Path, tmp_path: Path, what: str) -> None:
    shutil.copy(stored / "agents.py", tmp_path)
    shutil.copy(stored / "suite.json", tmp_path)
    folder = tmp_path / "shared"
    folder.mkdir()
    store = folder / "runs.db"
    shutil.copy(stored / "good.db", store)
    expected = {c[0]: cli(tmp_path, *c, "--store", str(store)) for c in COMMANDS[:3]}
    (tmp_path / "called").unlink(missing_ok=True)
    before = _digest(store)
    with read_only(store if what == "file" else folder):
        for command in COMMANDS[:3]:
            out = cli(tmp_path, *command, "--store", str(store))
            want = expected[command[0]]
            assert (out.returncode, out.stdout) == (want.returncode, want.stdout), out.stderr
            assert out.returncode in (0, 1) and out.stderr == ""
        assert evalnb.Store(store).read_only
        out = cli(tmp_path, *COMMANDS[3], "--store", str(store))
        assert out.returncode == 2 and "is read-only here" in out.stderr and len(out.stderr.splitlines()) == 1
        assert not (tmp_path / "called").exists()
        result = evalnb.Store(store).load("v1")
        with pytest.raises(StoreError) as err:
            evalnb.Store(store).save(result, version="v9")
        assert err.value.code == "STORE_READ_ONLY"
    assert _digest(store) == before
