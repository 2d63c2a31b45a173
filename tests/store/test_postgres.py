"""The run store on a real PostgreSQL server: a private throwaway cluster started for the test session.

"Any SQLAlchemy URL works (PostgreSQL for a team)" is tested here: round trip with frames equal, the per-case
writes of a stored run, trend, compare, two processes saving at once, and the migration from schema 1.
The server binaries come from the system's PostgreSQL package (CI installs it); without them the tests fail
with a message saying so rather than being skipped.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

import evalnb
from evalnb.store import Store
from evalnb.store._schema import SCHEMA_VERSION
from evalnb.store._schema import migrate as _migrate
from evalnb.store._schema import tables as _tables
from evalnb.suite import Case, RowsCheck, Suite, Turn
from tests.store.test_store import (
    WRITER_SCRIPT,
    _agent,
    _assert_same,
    _env,
    make_suite,
    rows_agent,
    trend_and_compare,
)


@contextlib.contextmanager
def _store(url: str) -> Iterator[Store]:
    store = Store(url)
    try:
        yield store
    finally:
        store.engine.dispose()  # so the per-test database can be dropped


def _long_suite() -> Suite:
    """Rows checks (mismatches) and names, answers and labels beyond the old 500-character columns."""
    long_name = "case " + "x" * 700
    return Suite(
        name="pg-rows " + "y" * 600,
        format="cube-yaml",
        cases=[
            Case(
                id=f"c{i}",
                name=f"{long_name} {i} it's",
                category="z" * 520,
                turns=[
                    Turn(prompt=f"q{i}", expected="e" * 900, checks=[RowsCheck(expected=[{"k": i, "v": 1}])])
                ],
            )
            for i in range(6)
        ],
    )


def test_round_trip_on_postgres_with_long_text_and_mismatches(pg_url: str) -> None:
    with _store(pg_url) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert not store.is_sqlite and "postgresql" in repr(store)
        result = evalnb.run(make_suite(), _agent, progress=False)
        result.scores["note"] = pd.array(["n"] * len(result.scores), dtype="string")  # goes to ``extra``
        run_id = store.save(result, version="v1")
        loaded = store.load(run_id)
        _assert_same(result, loaded)
        assert loaded.suite == result.suite
        assert loaded.meta["version"] == "v1" and loaded.meta["model"] == "m-1"
        pd.testing.assert_frame_equal(loaded.cases, result.cases)

        # a stored run: cases written as they finish (with their mismatches), then completed
        suite = _long_suite()
        stored = evalnb.run(suite, rows_agent, store=store, version="v" * 600, progress=False)
        assert stored.mismatches["case_id"].tolist() == ["c1", "c3", "c5"]
        again = store.load(stored.meta["run_id"])
        _assert_same(stored, again)
        assert again.suite == suite
        assert store.history()["status"].tolist() == ["complete", "complete"]

        store.delete(run_id)
        assert store.history()["run_id"].tolist() == [stored.meta["run_id"]]


def test_trend_and_compare_on_postgres(pg_url: str) -> None:
    with _store(pg_url) as store:
        trend_and_compare(store)


def test_two_processes_saving_at_once_on_postgres(pg_url: str, tmp_path: Path) -> None:
    # No store is opened first: both processes create the schema (serialised by an advisory lock), insert
    # the same suite (ON CONFLICT DO NOTHING) and save four versions each at the same moment.
    script = tmp_path / "writer.py"
    script.write_text(WRITER_SCRIPT)
    start = time.time() + 4.0
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), pg_url, str(start), name],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    with _store(pg_url) as store:
        runs = store.history()
        assert sorted(runs["version"]) == sorted(f"{n}-{i}" for n in "ab" for i in range(4))
        assert runs["suite_hash"].nunique() == 1  # one suites row, whoever inserted it
        assert len(store.load("a-3").scores) == 150 * 2 * 2
        assert len(store.trend("store-suite")) == 8 * 2


def test_migration_from_schema_version_1_on_postgres(pg_url: str) -> None:
    from sqlalchemy import create_engine, inspect

    engine = create_engine(pg_url)
    assert _migrate(engine, target=1) == 1
    suite = make_suite(2, 1)
    t = _tables(1)[1]
    with engine.begin() as conn:
        sid = conn.execute(
            t["suites"]
            .insert()
            .values(
                name=suite.name,
                format=suite.format,
                content_hash=suite.content_hash(),
                definition=suite.model_dump_json(),
            )
        ).inserted_primary_key[0]
        pk = conn.execute(
            t["runs"]
            .insert()
            .values(run_id="old1", suite_id=sid, suite=suite.name, version="v0", status="complete", meta="{}")
        ).inserted_primary_key[0]
        for i, (v, ok) in enumerate([(1.0, True), (0.0, False)]):
            common = {
                "run_pk": pk,
                "seq": i,
                "case_id": f"c{i}",
                "case_name": f"case {i}",
                "run": 0,
                "turn": 0,
            }
            conn.execute(
                t["run_rows"]
                .insert()
                .values(**common, prompt=f"q{i}", response="yes", status="passed", latency_ms=10.0)
            )
            conn.execute(
                t["scores"]
                .insert()
                .values(
                    **common, check="regex", check_id="regex", value=v, passed=ok, status="ok", reason="r"
                )
            )
    cols = {c["name"]: c["type"] for c in inspect(engine).get_columns("scores")}
    assert "cost" not in cols and getattr(cols["case_name"], "length", None) == 500
    engine.dispose()

    with _store(pg_url) as store:  # opening migrates 1 -> 7 and backfills the per-check statistics
        assert store.schema_version == SCHEMA_VERSION == 10
        insp = inspect(store.engine)
        assert "tool_calls" in insp.get_table_names()  # schema 5
        cols = {c["name"]: c["type"] for c in insp.get_columns("scores")}
        assert "cost" in cols and getattr(cols["case_name"], "length", None) is None  # TEXT now
        assert "ix_scores_run" not in {ix["name"] for ix in insp.get_indexes("scores")}
        loaded = store.load("v0")
        assert loaded.scores["value"].tolist() == [1.0, 0.0]
        assert loaded.scores["passed"].tolist() == [True, False]
        assert loaded.scores["cost"].isna().all() and str(loaded.scores["cost"].dtype) == "float64"
        trend = store.trend(suite.name)
        assert trend[["version", "check_id", "mean", "pass_rate", "latency_ms"]].iloc[0].tolist() == [
            "v0",
            "regex",
            0.5,
            0.5,
            10.0,
        ]
        # and the migrated store keeps working, with values the old columns could not hold
        long = make_suite(2, 1).model_copy(update={"name": suite.name})
        result = evalnb.run(long, lambda p: "yes " + "w" * 800, progress=False)
        store.save(result, version="v1")
        assert store.trend(suite.name)["version"].drop_duplicates().tolist() == ["v0", "v1"]
        _assert_same(result, store.load("v1"))


def test_nul_characters_in_answers_are_kept(pg_url: str) -> None:
    with _store(pg_url) as store:
        result = evalnb.run(make_suite(), lambda p: "bin\x00ary", progress=False)
        loaded = store.load(store.save(result, version="v1"))
        assert set(loaded.runs["response"]) == {"bin\x00ary"}  # kept exactly: segments are bytes
        assert len(loaded.scores) == len(result.scores)


def test_tool_calls_on_postgres(pg_url: str) -> None:
    from evalnb.results._frames import TOOL_CALLS_COLUMNS

    def agent(request: evalnb.Request) -> dict:
        calls = [
            {
                "tool": "claims_get-claim",
                "arguments": {"claim": "C'1"},
                "status": "succeeded",
                "http_status": 200,
            }
        ]
        return {"text": "ok", "tool_calls": [*calls, {"tool": "claims_pay-claim", "output": "x" * 2000}]}

    suite = Suite(
        name="pg-tools",
        format="dataset-json",
        cases=[
            Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"q{i}", allowed_tools=["claims_get-claim"])])
            for i in range(3)
        ],
    )
    with _store(pg_url) as store:
        assert store.schema_version == SCHEMA_VERSION
        saved = evalnb.run(suite, agent, progress=False)
        store.save(saved, version="v1")
        streamed = evalnb.run(suite, agent, store=store, version="v2", progress=False)
        for version, result in (("v1", saved), ("v2", streamed)):
            loaded = store.load(version)
            assert {c: str(d) for c, d in loaded.tool_calls.dtypes.items()} == TOOL_CALLS_COLUMNS
            pd.testing.assert_frame_equal(loaded.tool_calls, result.tool_calls)
        assert saved.runs["status"].tolist() == ["degraded"] * 3  # claims_pay-claim is not allowed
