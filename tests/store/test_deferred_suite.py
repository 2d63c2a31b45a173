"""A stored run reads back without building its suite: the frames' views come from its case index, and the
suite is built, once, when something asks for it (docs/results.md, the store)."""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import StoreError
from evalnb.results._deferred import DeferredSuite
from evalnb.store import Store
from evalnb.store._segments import next_seq

ITEMS = [
    {
        "testId": f"q{i}",
        "prompt": f"What is item {i}?",
        "expected_response": f"answer {i}",
        # categories on some items only: the index keeps missing ones (a column of text and nulls)
        **({"category": ["billing", "shipping"][i % 2]} if i % 3 else {}),
        "evaluators": {"ExactMatch": {}},
        "evaluators_mode": "replace",
    }
    for i in range(30)
]


def _suite() -> evalnb.Suite:
    import json

    return evalnb.load(json.dumps({"schemaVersion": "1.1.0", "items": ITEMS}), format="dataset-json")


async def _agent(prompt: str) -> str:
    i = int(prompt[13:-1])
    return f"answer {i}" if i % 4 else "something else"


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Store, evalnb.Result]:
    store = Store(tmp_path / "s.db")
    # concurrency: case runs finish out of suite order, so the load orders them by the index's ids
    result = evalnb.run(_suite(), _agent, concurrency=8, progress=False, store=store, version="v1")
    return store, result


def _assert_views_equal(loaded: evalnb.Result, ran: evalnb.Result) -> None:
    import pandas as pd

    pd.testing.assert_frame_equal(loaded.cases, ran.cases)
    pd.testing.assert_frame_equal(loaded.runs[ran.runs.columns], ran.runs, check_dtype=False)
    pd.testing.assert_frame_equal(loaded.failures(), ran.failures())
    assert loaded.counts() == ran.counts() and loaded.passed == ran.passed is False
    assert repr(loaded) == repr(ran)


def test_a_streamed_run_loads_without_building_its_suite(stored: tuple[Store, evalnb.Result]) -> None:
    store, ran = stored
    loaded = store.load("v1")
    _assert_views_equal(loaded, ran)
    assert loaded.suite_name == ran.suite.name
    assert isinstance(loaded._suite, DeferredSuite) and loaded._suite.built is None  # nothing asked for it
    # a comparison orders and names cases from the index too
    comparison = store.compare("v1", "v1")
    assert comparison.cases["case_id"].drop_duplicates().tolist() == [c.id for c in ran.suite.cases]
    assert loaded._suite.built is None
    # asked for, it is the suite that ran, built once and shared by the runs of that suite
    assert loaded.suite.content_hash() == ran.suite.content_hash()
    assert loaded.suite is store.load("v1").suite
    assert [c.category for c in loaded.suite.cases] == [c.category for c in ran.suite.cases]


def test_a_saved_result_and_a_narrowed_load_defer_it_too(stored: tuple[Store, evalnb.Result]) -> None:
    store, ran = stored
    store.save(ran, version="v2")
    again = store.load("v2")
    assert isinstance(again._suite, DeferredSuite)
    _assert_views_equal(again, ran)
    failed = store.load("v1", where={"passed": False})
    assert isinstance(failed._suite, DeferredSuite) and failed._suite.built is None
    assert failed.scores["case_id"].tolist() == [f"q{i}" for i in range(0, 30, 4)]  # in suite order
    assert failed.suite.content_hash() == ran.suite.content_hash()


def test_a_loaded_result_pickles_with_its_suite(stored: tuple[Store, evalnb.Result]) -> None:
    store, ran = stored
    back = pickle.loads(pickle.dumps(store.load("v1")))
    assert not isinstance(back._suite, DeferredSuite)
    assert back.suite.content_hash() == ran.suite.content_hash()
    _assert_views_equal(back, ran)


def test_a_run_without_an_index_builds_its_suite_at_load(stored: tuple[Store, evalnb.Result]) -> None:
    store, ran = stored
    db = Path(str(store.engine.url.database))
    store.engine.dispose()
    with sqlite3.connect(db) as con:  # as a run stored by an earlier evalnb, or one whose process died
        con.execute("DELETE FROM segments WHERE frame = 'cases'")
    con.close()
    loaded = Store(db).load("v1")
    assert not isinstance(loaded._suite, DeferredSuite)
    _assert_views_equal(loaded, ran)


def test_a_definition_gone_before_the_suite_is_built_is_named(stored: tuple[Store, evalnb.Result]) -> None:
    store, _ = stored
    loaded = store.load("v1")
    db = Path(str(store.engine.url.database))
    with sqlite3.connect(db) as con:
        con.execute("UPDATE suites SET definition = NULL, packed = NULL")
    con.close()
    store._suites_read.clear()
    with pytest.raises(StoreError) as err:
        loaded.suite  # noqa: B018 (the property builds it)
    assert err.value.code == "STORED_RUN_INVALID" and "its suite definition is missing" in err.value.message
    assert len(loaded.cases) == 30  # the views still read from the index


def test_the_index_does_not_move_where_a_resumed_run_numbers_its_rows(
    stored: tuple[Store, evalnb.Result],
) -> None:
    store, ran = stored
    # rows of 5 of the 30 cases: an index of 30 counted as rows would number the next ones from 30
    part = evalnb.Result.from_frames(
        suite=ran.suite, runs=ran.runs.iloc[:5], scores=ran.scores.iloc[:5], meta=ran.meta
    )
    store.save(part, version="v2")
    pk = int(store._resolve("v2")["id"])
    with store.engine.connect() as conn:
        assert next_seq(conn, store._t["segments"], pk) == 5  # numbered per frame from 0: 5 run rows
        count = f"SELECT COUNT(*), MAX(n) FROM segments WHERE frame = 'cases' AND run_pk = {pk}"
        assert tuple(conn.exec_driver_sql(count).one()) == (1, 30)


def test_without_arrow_text_the_suite_is_deferred_too(tmp_path: Path) -> None:
    """pandas keeping text as python strings (no pyarrow): the index is read as python lists, the rows share
    its ids and names, and the suite is still built only when asked for."""
    import pandas as pd

    with pd.option_context("mode.string_storage", "python"):
        from evalnb.results._columns import arrow_text

        assert not arrow_text()
        store = Store(tmp_path / "s.db")
        ran = evalnb.run(_suite(), _agent, concurrency=8, progress=False, store=store, version="v1")
        loaded = store.load("v1")
        assert isinstance(loaded._suite, DeferredSuite) and loaded._suite.built is None
        assert isinstance(loaded._suite.ids, list)
        _assert_views_equal(loaded, ran)
        # one string per case id: a row's id is the index's own object
        first = {id(x) for x in loaded.runs["case_id"].tolist()[:5]}
        assert first <= {id(x) for x in loaded._suite.ids}
        assert loaded.suite.content_hash() == ran.suite.content_hash()
