"""Large stores read what they need: lazy loads (columns, where), summary rows, the streamed writer's bulk
insert, and store files written by the evalnb before them (schema 6) opening as they were."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb.errors import StoreError
from evalnb.store import Store
from evalnb.store._schema import SCHEMA_VERSION

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store-schema6.db"


def _suite(tmp_path: Path, n: int = 24) -> evalnb.Suite:
    items = [
        {
            "testId": f"q{i}",
            "prompt": f"What is item {i}?",
            "expected_response": f"answer {i}",
            "category": f"c{i % 3}",
        }
        for i in range(n)
    ]
    doc = {
        "schemaVersion": "1.1.0",
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
        "items": items,
    }
    path = tmp_path / "large.json"
    path.write_text(json.dumps(doc))
    return evalnb.load(path)


async def _agent(prompt: str) -> str:
    i = int(prompt[13:-1])
    return f"answer {i}" if i % 4 else "something else entirely"


def _run(store: Store | str, suite: evalnb.Suite, version: str = "v1") -> evalnb.Result:
    return evalnb.run(suite, _agent, concurrency=4, progress=False, store=store, version=version)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    the_store = Store(
        tmp_path / "large.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    )
    try:
        yield the_store
    finally:
        the_store.engine.dispose()  # so the per-test database can be dropped


def test_where_reads_the_failing_case_runs_only(store: Store, tmp_path: Path) -> None:
    result = _run(store, _suite(tmp_path))
    full = store.load("v1")
    failed = store.load("v1", where={"passed": False})
    want = full.scores[full.scores["passed"] == False]  # noqa: E712 (a boolean column)
    assert len(failed.scores) == len(want) > 0
    assert set(failed.scores["case_id"]) == set(want["case_id"])
    # the run rows of those case runs and only them, with the agent's answers
    assert set(failed.runs["case_id"]) == set(want["case_id"])
    assert (failed.runs["response"] == "something else entirely").all()
    assert failed.meta["narrowed"]["where"] == repr({"passed": False})
    # a list is "one of", a mapping compares; terms on run columns narrow the run rows
    some = store.load("v1", where={"check_id": ["ExactMatch"], "category": "c0", "latency_ms": {">=": 0}})
    assert set(some.scores["check_id"]) == {"ExactMatch"}
    assert set(some.scores["category"]) == {"c0"} and len(some.runs) == (full.runs["category"] == "c0").sum()
    assert len(result.runs) == len(full.runs)


def test_columns_reads_the_named_ones_and_the_keys(store: Store, tmp_path: Path) -> None:
    _run(store, _suite(tmp_path))
    full = store.load("v1")
    part = store.load("v1", columns=["response", "reason"])
    assert list(part.runs.columns) == list(full.runs.columns)  # the documented shape, unread columns NA
    assert part.runs["prompt"].isna().all() and part.scores["options"].isna().all()
    pd.testing.assert_series_equal(part.runs["response"], full.runs["response"])
    pd.testing.assert_series_equal(part.scores["reason"], full.scores["reason"])
    pd.testing.assert_series_equal(part.scores["passed"], full.scores["passed"])
    assert part.counts() == full.counts()  # the keys are read whatever columns says


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("passed = 0; DROP TABLE runs", "SQL text is not accepted"),
        ({"passed = 0 OR 1=1 --": True}, "not a column"),
        ({"status": {"LIKE": "%"}}, "is not a comparison"),
        ({"status": {}}, "an empty comparison"),
        ({"status": [["failed"]]}, "plain values"),
        ({"status": object()}, "not a value to match"),
    ],
)
def test_where_that_is_not_a_mapping_of_columns_to_values_is_refused(
    tmp_path: Path, where: object, says: str
) -> None:
    store = Store(tmp_path / "s.db")
    _run(store, _suite(tmp_path, 4))
    with pytest.raises(StoreError, match=says) as err:
        store.load("v1", where=where)  # type: ignore[arg-type]
    assert err.value.code == "INVALID_WHERE"
    # nothing ran: the store is whole
    assert len(store.load("v1").runs) == 4


def test_injection_in_a_value_is_a_value(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    _run(store, _suite(tmp_path, 4))
    got = store.load("v1", where={"status": "passed' OR '1'='1"})
    assert len(got.scores) == 0 and len(got.runs) == 0
    assert len(store.history()) == 1


def test_unknown_columns_are_refused(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    _run(store, _suite(tmp_path, 4))
    with pytest.raises(StoreError, match="'nope'") as err:
        store.load("v1", columns=["response", "nope"])
    assert err.value.code == "INVALID_COLUMNS"
    with pytest.raises(StoreError) as err:
        store.load("v1", columns="response")  # type: ignore[arg-type]
    assert err.value.code == "INVALID_COLUMNS"


def test_summary_rows_equal_the_loaded_runs_summary(store: Store, tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    result = _run(store, suite)
    store.save(result, version="saved")
    for version in ("v1", "saved"):
        summary = store.summary(version)
        loaded = store.load(version)
        assert summary.counts == loaded.counts() == result.counts()
        pd.testing.assert_frame_equal(summary.checks, loaded.summary())
        assert summary.cases == len(suite.cases) and summary.status == "complete"
        assert summary.pass_rate == pytest.approx(summary.counts["passed"] / len(suite.cases))
        assert summary.latency_ms is not None and summary.latency_ms >= 0
        assert summary.version == version and "<b>" in summary._repr_html_()


def test_summary_reads_the_summary_row_not_the_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    _run(store, _suite(tmp_path))
    want = store.summary("v1")
    store.engine.dispose()
    with sqlite3.connect(path) as con:  # the rows gone, the summary row stays what it was
        con.execute("DELETE FROM segments")
    got = Store(path).summary("v1")
    assert got.counts == want.counts
    pd.testing.assert_frame_equal(got.checks, want.checks)


def test_summary_of_a_run_without_summary_rows_is_computed_from_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path)
    _run(store, _suite(tmp_path))
    store.engine.dispose()
    with sqlite3.connect(path) as con:
        con.execute("DELETE FROM run_summaries")
    again = Store(path)
    pd.testing.assert_frame_equal(again.summary("v1").checks, again.load("v1").summary())


def test_a_store_written_at_schema_6_opens_migrates_and_reads_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE, path)
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION == 10
    runs = store.history()
    assert list(runs["version"]) == ["streamed", "saved"] and set(runs["status"]) == {"complete"}
    streamed, saved = store.load("streamed"), store.load("saved")
    assert len(streamed.runs) == 12 and streamed.counts() == {
        "passed": 8,
        "failed": 4,
        "degraded": 0,
        "skipped": 0,
    }
    pd.testing.assert_frame_equal(streamed.scores, saved.scores)
    # no summary rows then: computed from the rows, the same answer
    pd.testing.assert_frame_equal(store.summary("streamed").checks, streamed.summary())
    assert len(store.load("saved", where={"passed": False}).runs) == 4
    # and a new run goes in beside them, with its summary row
    _run(store, _suite(tmp_path, 12), version="new")
    assert store.summary("new").counts == {"passed": 9, "failed": 3, "degraded": 0, "skipped": 0}
    assert not store.compare("streamed", "saved").checks.empty


def test_rows_json_cannot_carry_exactly_go_by_executemany(tmp_path: Path) -> None:
    """A NaN value, a NUL character in an answer: the batch is written as tuples and reads back the same."""
    from evalnb.suite import Case, ExactMatchCheck, Suite, Turn

    suite = Suite(
        name="odd",
        format="tasks-toml",
        cases=[
            Case(
                id=f"c{i}",
                name=f"c{i}",
                turns=[Turn(prompt=f"p{i}", expected="x", checks=[ExactMatchCheck()])],
            )
            for i in range(3)
        ],
    )

    def agent(prompt: str) -> str:
        return "x\x00y" if prompt == "p1" else "x"

    store = Store(tmp_path / "odd.db")
    result = evalnb.run(suite, agent, progress=False, store=store, version="v1")
    back = store.load("v1")
    assert back.runs["response"].tolist() == result.runs["response"].tolist()
    assert "x\x00y" in back.runs["response"].tolist()
    assert not any(isinstance(v, float) and math.isnan(v) for v in back.runs["latency_ms"])


def test_streamed_floats_read_back_bit_for_bit(tmp_path: Path) -> None:
    store = Store(tmp_path / "f.db")
    result = _run(store, _suite(tmp_path, 40))
    back = store.load("v1")
    assert back.runs["latency_ms"].tolist() == result.runs["latency_ms"].tolist()
    assert back.scores["value"].tolist() == result.scores["value"].tolist()


def test_a_comparison_of_runs_of_one_suite_parses_it_once_and_says_the_same(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = Store(path)
    suite = _suite(tmp_path)
    _run(store, suite, version="a")

    async def better(prompt: str) -> str:
        return f"answer {int(prompt[13:-1])}"

    evalnb.run(suite, better, progress=False, store=store, version="b")
    via_store = store.compare("a", "b")
    assert len(store._suites_read) == 1  # both runs' suite, parsed once
    fresh = evalnb.compare(Store(path).load("a"), Store(path).load("b"), labels=("a", "b"))
    pd.testing.assert_frame_equal(via_store.checks, fresh.checks)
    pd.testing.assert_frame_equal(via_store.cases, fresh.cases)
    assert via_store.exit_code == fresh.exit_code


def test_a_whole_load_reads_what_the_narrowed_reading_reads(store: Store, tmp_path: Path) -> None:
    # Rows are read with the driver's cursor from SQLAlchemy's compiled statement: a narrowing that matches
    # every row (bound parameters, subqueries) reads what the whole load reads, typed alike (flags as booleans
    # on SQLite too), equal to the run's own frames; the collector is left as it was found.
    import gc

    suite = _suite(tmp_path)
    ran = _run(store, suite)
    everything = {"run": {">=": 0}}  # matches every row, so the narrowed path reads them all
    for collecting in (True, False):
        (gc.enable if collecting else gc.disable)()
        try:
            whole, narrowed = store.load("v1"), store.load("v1", where=everything)
            assert gc.isenabled() is collecting
        finally:
            gc.enable()
        for name in ("runs", "scores", "mismatches", "tool_calls"):
            pd.testing.assert_frame_equal(getattr(whole, name), getattr(narrowed, name))
        pd.testing.assert_frame_equal(whole.scores, ran.scores)
        assert whole.suite == ran.suite


def test_a_read_only_store_of_schema_7_loads_as_it_is(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    from evalnb.store._schema import migrate
    from tests.store.test_faults import read_only

    path = tmp_path / "seven.db"
    shutil.copy(FIXTURE, path)
    engine = create_engine(f"sqlite:///{path}")
    assert migrate(engine, target=7) == 7  # the store as the evalnb before segments left it
    engine.dispose()
    with read_only(path):
        store = Store(path)
        assert store.read_only and store.schema_version == 7
        assert list(store.history()["version"]) == ["streamed", "saved"]
        loaded = store.load("saved")
        assert len(loaded.runs) == 12 and loaded.counts()["failed"] == 4
        assert len(store.load("saved", where={"passed": False}).runs) == 4
        assert not store.costs(loaded.suite.name).empty


def test_segments_decode_only_what_a_lazy_load_names(store: Store, tmp_path: Path) -> None:
    result = _run(store, _suite(tmp_path, 40))
    store.save(result, version="saved")
    for version in ("v1", "saved"):
        part = store.load(version, columns=["latency_ms"], where={"passed": False})
        failing = result.scores[result.scores["passed"] == False]  # noqa: E712
        assert sorted(part.scores["case_id"]) == sorted(failing["case_id"])
        assert part.runs["response"].isna().all() and part.runs["latency_ms"].notna().all()
        whole = store.load(version)
        assert list(whole.runs.dtypes.astype(str)) == list(result.runs.dtypes.astype(str))
        pd.testing.assert_frame_equal(whole.scores, result.scores)
        slow = store.load(version, where={"latency_ms": {">=": 0}, "case_id": ["c1", "c2", None]})
        assert set(slow.runs["case_id"]) <= {"c1", "c2"}


@pytest.mark.parametrize("keys", ["arrow", "tuples", "mixed"])
def test_case_runs_kept_across_frames_are_the_same_looked_up_any_way(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keys: str
) -> None:
    # a where across frames keeps the case runs every frame's terms match: looked up as Arrow's joined
    # strings, as python strings (text not in Arrow), or the two mixed (case ids Arrow cannot hold)
    from evalnb.store import _columnar

    result = _run(store, _suite(tmp_path, 40))
    where = {"passed": False, "latency_ms": {">=": 0}, "run": [0, 1]}
    expected = store.load("v1", where=where)
    if keys == "tuples":
        monkeypatch.setattr(_columnar, "arrow_text", lambda: False)
    elif keys == "mixed":
        made = _columnar._case_runs
        calls = iter(range(10**6))

        def every_other(seg: object, run: object, got: object) -> object:
            joined = made(seg, run, got)  # type: ignore[arg-type]
            return joined if next(calls) % 2 or isinstance(joined, list) else joined.to_pylist()

        monkeypatch.setattr(_columnar, "_case_runs", every_other)
    got = store.load("v1", where=where)
    failing = result.scores[result.scores["passed"] == False]  # noqa: E712
    assert 0 < len(got.scores) == len(failing)
    assert sorted(got.runs["case_id"]) == sorted(set(failing["case_id"]))
    for name in ("runs", "scores"):
        left, right = getattr(got, name), getattr(expected, name)
        assert left["case_id"].tolist() == right["case_id"].tolist()
        assert left["run"].tolist() == right["run"].tolist()


def test_a_where_on_one_frame_keeps_its_own_matches_and_their_case_runs_elsewhere(
    store: Store, tmp_path: Path
) -> None:
    # terms on the scores alone: the scores kept are the ones they match, the runs those of their case runs
    result = _run(store, _suite(tmp_path, 40))
    got = store.load("v1", where={"passed": False})
    failing = result.scores[result.scores["passed"] == False]  # noqa: E712
    assert got.scores["case_id"].tolist() == failing["case_id"].tolist()
    assert got.scores["check_id"].tolist() == failing["check_id"].tolist()
    kept = set(zip(failing["case_id"], failing["run"], strict=True))
    runs = result.runs[[k in kept for k in zip(result.runs["case_id"], result.runs["run"], strict=True)]]
    assert got.runs["case_id"].tolist() == runs["case_id"].tolist()
    assert got.runs["run"].tolist() == runs["run"].tolist()


def test_flags_read_as_a_boolean_array_with_their_missing_values_and_beside_json() -> None:
    # a boolean column stored as flags reads as a BooleanArray from its bytes; a part that went as JSON (an
    # older writer, a value beyond the flags) joins it with the same values; a flag beyond 2 is damage
    import zlib

    from evalnb.store._columnar import _joined, _typed
    from evalnb.store._segments import Segment, encode

    seg = Segment(encode({"passed": [True, None, False]}, 3, {"passed": "boolean"}))
    flags = seg.flags("passed")
    assert isinstance(flags, pd.arrays.BooleanArray)
    assert flags.tolist() == [True, pd.NA, False]
    assert seg.flags("absent") is None
    joined = _typed(_joined([flags, [False, None], flags]), "boolean")
    assert pd.Series(joined).tolist() == [True, pd.NA, False, False, pd.NA, True, pd.NA, False]
    assert str(pd.Series(_typed(_joined([flags, flags]), "boolean")).dtype) == "boolean"
    kind, a, b = seg.spans["passed"]
    bad = Segment(seg.data[:a] + zlib.compress(bytes([1, 3, 0])) + seg.data[b:])
    bad.spans["passed"] = (kind, a, len(bad.data) - (len(seg.data) - b))
    with pytest.raises(ValueError, match="flags"):
        bad.flags("passed")
