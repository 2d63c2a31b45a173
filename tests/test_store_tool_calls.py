"""The store keeps tool calls (schema 5): saved with a result and as case runs finish, a migration from schema 3
on a real SQLite file, and runs saved before it read back with an empty tool_calls frame."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd

import evalnb
from evalnb.results._frames import TOOL_CALLS_COLUMNS
from evalnb.store import Store
from evalnb.store._schema import SCHEMA_VERSION, migrate
from evalnb.suite import Case, Suite, Turn

CALLS = [
    {"tool": "claims_get-claim", "arguments": {"claim": "C-1"}, "status": "succeeded", "http_status": 200},
    {"tool": "claims_pay-claim", "arguments": "not json", "status": "failed", "output": "HTTP 500"},
]


def suite() -> Suite:
    turns = [Turn(prompt="q1", allowed_tools=["claims_get-claim", "claims_pay-claim"]), Turn(prompt="q2")]
    return Suite(name="tools", format="dataset-json", cases=[Case(id="c1", name="c1", turns=turns)])


def agent(request: evalnb.Request) -> dict:
    return {"text": "ok", "tool_calls": CALLS if request.turn == 0 else [{"tool": "x_y"}]}


def test_tool_calls_saved_and_loaded_both_ways(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    assert store.schema_version == SCHEMA_VERSION == 10
    saved = evalnb.run(suite(), agent, progress=False)
    assert saved.tool_calls["allowed"].astype(object).where(
        saved.tool_calls["allowed"].notna(), None
    ).tolist() == [
        True,
        True,
        None,  # the second turn declares no allowlist
    ]
    store.save(saved, version="v1")
    streamed = evalnb.run(suite(), agent, store=store, version="v2", progress=False)  # written as it finishes
    for version, result in (("v1", saved), ("v2", streamed)):
        loaded = store.load(version)
        pd.testing.assert_frame_equal(loaded.tool_calls, result.tool_calls)
        assert loaded.response_for("c1", 0, 0).tool_calls[1].arguments == "not json"
    store.delete(streamed.meta["run_id"])
    with sqlite3.connect(tmp_path / "runs.db") as con:
        query = "SELECT SUM(n) FROM segments WHERE frame = 'tool_calls'"
        assert con.execute(query).fetchone() == (3,)  # v1's rows only


def test_migration_from_schema_3_adds_the_tool_calls_table(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    db = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{db}")
    assert migrate(engine, target=3) == 3
    engine.dispose()
    with sqlite3.connect(db) as con:
        assert "tool_calls" not in {
            r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    # a run saved by an evalnb of schema 3 (no tool calls stored, no frame dtypes for them)
    s = suite()
    with sqlite3.connect(db) as con:
        con.execute(
            "INSERT INTO suites (id, name, format, content_hash, definition) VALUES (1, ?, ?, ?, ?)",
            (s.name, s.format, s.content_hash(), s.model_dump_json()),
        )
        con.execute(
            "INSERT INTO runs (id, run_id, suite_id, suite, version, status, meta) "
            "VALUES (1, 'old1', 1, ?, 'v0', 'complete', '{}')",
            (s.name,),
        )
        con.execute(
            "INSERT INTO run_rows (run_pk, seq, case_id, case_name, run, turn, prompt, response, status) "
            "VALUES (1, 0, 'c1', 'c1', 0, 0, 'q1', 'ok', 'passed')"
        )
    store = Store(db)  # opening migrates 3 -> SCHEMA_VERSION
    assert store.schema_version == SCHEMA_VERSION
    with sqlite3.connect(db) as con:
        cols = [r[1] for r in con.execute("PRAGMA table_info(tool_calls)")]
    assert cols == ["run_pk", "seq", *[c for c in TOOL_CALLS_COLUMNS if c != "suite"], "extra"]
    before = store.load("v0")
    assert before.tool_calls.empty and list(before.tool_calls.columns) == list(TOOL_CALLS_COLUMNS)
    assert {c: str(d) for c, d in before.tool_calls.dtypes.items()} == TOOL_CALLS_COLUMNS
    after = evalnb.run(suite(), agent, progress=False)
    store.save(after, version="v1")
    pd.testing.assert_frame_equal(store.load("v1").tool_calls, after.tool_calls)
