"""Reading a store writes nothing where there is no store, and a stored run that no longer validates is a
StoreError naming it: the reading commands say so on one line and exit 2."""

from __future__ import annotations

import gc
import json
import sqlite3
import zlib
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import StoreError
from evalnb.store import Store
from tests.support.cli import evalnb_cli

SUITE = {
    "schemaVersion": "1.1.0",
    "metadata": {"name": "stored"},
    "default_evaluators": {"ExactMatch": {}},
    "items": [{"prompt": f"p{i}", "expected_response": "yes"} for i in range(3)],
}

READING = [
    ("report", "v1"),
    ("compare", "v1", "v2"),
    ("trend", "stored"),
    ("history",),
    ("delete", "v1"),
    ("run", "suite.json", "--agent", "agents.py:agent", "--baseline", "v1"),
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text("def agent(prompt):\n    return 'yes'\n")
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    return tmp_path


@pytest.mark.parametrize("command", READING, ids=[c[0] for c in READING])
def test_a_reading_command_never_creates_a_store(folder: Path, command: tuple[str, ...]) -> None:
    before = sorted(p.name for p in folder.iterdir())
    out = evalnb_cli(*command, "--store", "typo/s.db", cwd=folder)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no store at ") and "typo/s.db" in lines[0], (
        out.stderr
    )
    assert "the file does not exist" in lines[0]
    assert sorted(p.name for p in folder.iterdir()) == before  # no typo/, no s.db
    # the default store, when there is none: the same, and no .evals/ folder appears
    out = evalnb_cli(*command, cwd=folder)
    assert out.returncode == 2 and "no store at " in out.stderr and ".evals" in out.stderr, out.stderr
    assert not (folder / ".evals").exists()


def test_an_existing_database_without_a_store_is_not_made_one(folder: Path) -> None:
    other = folder / "other.db"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE mine (x INTEGER)")
    con.close()
    before = other.read_bytes()
    out = evalnb_cli("history", "--store", "other.db", cwd=folder)
    assert out.returncode == 2 and "holds no evalnb tables" in out.stderr, out.stderr
    assert other.read_bytes() == before
    with pytest.raises(StoreError) as err:
        Store(other, create=False)
    assert err.value.code == "STORE_NOT_FOUND"
    # a store that is there is read as before; a run saved with a label creates one
    out = evalnb_cli(
        "run",
        "suite.json",
        "--agent",
        "agents.py:agent",
        "--store",
        "new/s.db",
        "--version",
        "v1",
        cwd=folder,
    )
    assert out.returncode == 0, out.stderr
    out = evalnb_cli("history", "--store", "new/s.db", cwd=folder)
    assert out.returncode == 0 and "1 run in " in out.stdout, out.stderr


def _tamper(db: Path, change: str) -> None:
    with sqlite3.connect(db) as con:
        if change == "meta":
            con.execute("UPDATE runs SET meta = '{\"options\": '")
        else:
            doc = json.loads(zlib.decompress(con.execute("SELECT packed FROM suites").fetchone()[0]))
            if change == "a check type another version wrote":
                doc["cases"][1]["turns"][0]["checks"][0]["type"] = "FutureCheck"
            elif change == "a field edited by hand":
                doc["cases"][0]["runs"] = "three"
                doc["cases"][2]["turns"][0]["prompt"] = None
            con.execute("UPDATE suites SET definition = ?", (json.dumps(doc),))
    con.close()


@pytest.mark.parametrize("change", ["a check type another version wrote", "a field edited by hand", "meta"])
def test_a_stored_run_that_no_longer_validates_is_a_store_error_naming_it(folder: Path, change: str) -> None:
    db = folder / "s.db"
    store = Store(db)
    suite = evalnb.load(json.dumps(SUITE), format="dataset-json")
    run_id = store.save(evalnb.run(suite, lambda p: "yes", progress=False), version="v1")
    store.save(evalnb.run(suite, lambda p: "yes", progress=False), version="v2")
    store.engine.dispose()
    _tamper(db, change)
    with pytest.raises(StoreError) as err:
        Store(db).load("v1")
    assert gc.isenabled()  # paused while the run was read back (evalnb/_gc.py), resumed on the way out
    message = err.value.message
    assert err.value.code == "STORED_RUN_INVALID"
    assert f"the stored run {run_id} (suite 'stored', version 'v1') does not read back" in message
    if change == "meta":
        assert "its meta is not JSON" in message
    elif change == "a field edited by hand":
        assert (
            "cases[0].runs: Input should be a valid integer" in message
            and "cases[2].turns[0].prompt: must be a string" in message
        )
    else:
        assert "cases[1].turns[0].checks[0]" in message and "'FutureCheck'" in message
    assert "ValidationError" not in message and "pydantic" not in message
    for command in (("report", "v1"), ("compare", "v1", "v2")):
        out = evalnb_cli(*command, "--store", "s.db", cwd=folder)
        assert out.returncode == 2, out.stdout + out.stderr
        assert out.stderr.splitlines() == [f"error: {message}"] and out.stdout == ""


def test_an_empty_postgresql_database_is_not_made_a_store(folder: Path, pg_url: str) -> None:
    from sqlalchemy import create_engine, inspect

    for command in (("history",), ("report", "v1"), ("trend", "stored")):
        out = evalnb_cli(*command, "--store", pg_url, cwd=folder)
        assert out.returncode == 2, out.stdout + out.stderr
        assert out.stderr.splitlines() == [
            f"error: no store at {pg_url}: the database holds no evalnb tables; check the path (--store), or "
            "save a run there first (evalnb run --version LABEL, store.save)"
        ], out.stderr
    engine = create_engine(pg_url)
    try:
        assert inspect(engine).get_table_names() == []  # nothing was created
    finally:
        engine.dispose()
