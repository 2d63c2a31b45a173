"""A stored suite's definition is its canonical JSON (the document its content hash is taken over), so a load
can tell it is what evalnb wrote and build the suite without validating it again; anything else (a
definition edited by hand, one an earlier evalnb wrote) is validated as before. And the streamed save never
holds the run for the writer's linger."""

from __future__ import annotations

import json
import sqlite3
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb import _canonical
from evalnb._canonical import packed
from evalnb.store import Store
from evalnb.store import _recorder as recorder
from evalnb.store._trusted import trusted_suite
from evalnb.suite import (
    Case,
    CustomCheck,
    ExactMatchCheck,
    Message,
    PartialMatchCheck,
    Suite,
    TextMatchCheck,
    Turn,
)


def _unusual() -> Suite:
    """Every field a case and a turn have, with values of every kind a definition holds."""
    match = TextMatchCheck(how="any", values=["yes", "oui"])  # an option that is a list
    custom = CustomCheck(check="my_check", settings={"depth": {"a": [1, 2]}}, threshold=0.5)
    cases = [
        Case(
            id=f"c{i}",
            name=f"case é {i}",
            category="billing" if i % 2 else None,
            runs=2,
            agent="helper" if i == 1 else None,
            notes='a note "quoted", with ,"path": inside' if i == 2 else None,
            meta={"owner": "ana", "path": "x", "n": i} if i else {},
            turns=[
                Turn(
                    prompt=f"question {i} \u2013 ünïcode",
                    expected="yes" if i % 3 else None,
                    history=[Message(role="user", content="earlier"), Message(role="assistant", content="ok")]
                    if i == 3
                    else [],
                    context="ctx" if i == 4 else None,
                    checks=[match, custom]
                    if i % 2
                    else [ExactMatchCheck(), PartialMatchCheck(threshold=0.7)],
                    allowed_tools=["search", "lookup"] if i == 5 else None,
                    meta={"tags": ["a", "b"]} if i == 6 else {},
                ),
                Turn(prompt="and then?", checks=[ExactMatchCheck()]),
            ],
        )
        for i in range(8)
    ]
    return Suite(
        name="unusual",
        description="a suite of everything",
        format="dataset-json",
        cases=cases,
        path="somewhere/suite.json",
        meta={"schemaVersion": "1.1.0"},
        warnings=["one warning"],
    )


def _suites() -> list[Suite]:
    shipped = [
        evalnb.load(evalnb.examples.path(name)) for name in ("tasks", "foodmart-sales", "knowledge-base")
    ]
    return [*shipped, _unusual()]


def _row(db: Path) -> tuple[str, str]:
    with sqlite3.connect(db) as con:
        definition, packed, digest = con.execute(
            "SELECT definition, packed, content_hash FROM suites"
        ).fetchone()
    con.close()
    assert definition is None  # stored compressed
    return zlib.decompress(packed).decode("ascii"), digest


@pytest.mark.parametrize("suite", _suites(), ids=lambda s: s.name)
def test_a_stored_suite_reads_back_as_it_was_without_a_second_validation(
    tmp_path: Path, suite: Suite
) -> None:
    db = tmp_path / "s.db"
    store = Store(db)
    data = evalnb.examples.foodmart_db() if suite.format == "cube-yaml" else None
    store.save(evalnb.run(suite, lambda p: "yes", data=data, progress=False), version="v1")
    store.engine.dispose()
    definition, digest = _row(db)
    assert digest == suite.content_hash()
    built = trusted_suite(definition, digest)
    assert built is not None  # what evalnb wrote is recognised as such
    loaded = Store(db).load("v1").suite
    for again in (built, loaded):
        assert again.model_dump() == suite.model_dump()
        assert again.content_hash() == suite.content_hash()
        assert json.loads(definition)["cases"] == json.loads(suite.model_dump_json())["cases"]


def test_a_suite_of_no_cases_reads_back() -> None:
    empty = Suite(name="empty", format="tasks-toml", cases=[], warnings=["nothing to run"])
    digest, data = packed(empty)
    built = trusted_suite(zlib.decompress(data).decode("ascii"), digest)
    assert digest == empty.content_hash()
    assert built is not None and built.model_dump() == empty.model_dump()


@pytest.mark.parametrize("piece", [1, 64, 5_000])
def test_a_suite_packed_in_many_pieces_hashes_and_reads_back_the_same(
    monkeypatch: pytest.MonkeyPatch, piece: int
) -> None:
    # pieces of a few characters: every case (and the last part, whose tail is not hashed) crosses a hand-over
    suite = _unusual()
    whole = packed(suite)
    monkeypatch.setattr(_canonical, "_PIECE", piece)
    digest, data = packed(suite)
    assert digest == suite.content_hash() == whole[0]
    assert zlib.decompress(data) == zlib.decompress(whole[1])
    built = trusted_suite(zlib.decompress(data).decode("ascii"), digest)
    assert built is not None and built.model_dump() == suite.model_dump()


def test_equal_checks_and_labels_are_one_object_each_after_the_read(tmp_path: Path) -> None:
    items = [
        {
            "prompt": f"q{i}",
            "expected_response": "yes",
            "category": "billing",
            "evaluators": {"ExactMatch": {}, "PartialMatch": {}},
            "evaluators_mode": "replace",
        }
        for i in range(300)
    ]
    doc = {"schemaVersion": "1.1.0", "metadata": {"name": "per-item"}, "items": items}
    suite = evalnb.load(json.dumps(doc), format="dataset-json")
    db = tmp_path / "s.db"
    Store(db).save(evalnb.run(suite, lambda p: "yes", progress=False), version="v1")
    loaded = Store(db).load("v1").suite
    checks = {id(spec) for case in loaded.cases for turn in case.turns for spec in turn.checks}
    categories = {id(case.category) for case in loaded.cases}
    assert len(checks) == 2 and len(categories) == 1


@pytest.mark.parametrize("how", ["edited by hand", "edited by hand in UTF-8", "written by an earlier evalnb"])
def test_any_other_definition_is_validated(tmp_path: Path, how: str) -> None:
    suite = _unusual()
    db = tmp_path / "s.db"
    store = Store(db)
    store.save(evalnb.run(suite, lambda p: "yes", progress=False), version="v1")
    store.engine.dispose()
    definition, digest = _row(db)
    if how.startswith("edited by hand"):
        doc = json.loads(definition)
        doc["cases"][0]["turns"][0]["prompt"] = "a prompt edited by hand é"
        # compact, as evalnb writes it: only the hash (and, in UTF-8, the raw text) tells the edit apart
        changed = json.dumps(doc, ensure_ascii=how == "edited by hand", separators=(",", ":"))
    else:  # the model's own JSON, as evalnb wrote definitions before they were canonical
        changed = suite.model_dump_json()
    with sqlite3.connect(db) as con:
        con.execute("UPDATE suites SET definition = ?", (changed,))
    con.close()
    assert trusted_suite(changed, digest) is None
    loaded = Store(db).load("v1").suite
    first = "a prompt edited by hand é" if how.startswith("edited") else suite.cases[0].turns[0].prompt
    assert loaded.cases[0].turns[0].prompt == first
    assert [c.model_dump() for c in loaded.cases[1:]] == [c.model_dump() for c in suite.cases[1:]]
    one = {id(t.checks[0]) for c in loaded.cases if not int(c.id[1:]) % 2 for t in c.turns[:1]}
    assert len(one) == 1  # equal checks are shared on this path too


def test_a_run_never_waits_for_the_writers_linger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A linger far longer than the run: the rows wait in the collector (no timer holds the run), and what is
    # pending at the end is written by finish, whose wait is the writes alone
    monkeypatch.setattr(recorder, "LINGER", 60.0)
    monkeypatch.setattr(recorder, "MAX_PENDING", 50)
    cases = [
        Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"q{i}", checks=[ExactMatchCheck()])])
        for i in range(600)
    ]
    suite = Suite(name="many", format="dataset-json", cases=cases)

    async def agent(prompt: str) -> Any:
        return prompt

    store = Store(tmp_path / "s.db")
    start = time.monotonic()
    result = evalnb.run(suite, agent, store=store, version="v1", progress=False, concurrency=8)
    took = time.monotonic() - start
    assert took < 30, took
    assert len(Store(tmp_path / "s.db").load("v1").runs) == 600 == len(result.runs)


def test_a_suite_is_stored_packed_and_a_damaged_pack_is_named(tmp_path: Path) -> None:
    from evalnb.errors import StoreError

    suite = _unusual()
    db = tmp_path / "s.db"
    Store(db).save(evalnb.run(suite, lambda p: "yes", progress=False), version="v1")
    with sqlite3.connect(db) as con:
        definition, stored = con.execute("SELECT definition, packed FROM suites").fetchone()
        text = zlib.decompress(stored).decode("ascii")
        assert definition is None and len(stored) < len(text) / 2
        assert json.loads(text)["cases"] == json.loads(suite.model_dump_json())["cases"]
        con.execute("UPDATE suites SET packed = ?", (stored[: len(stored) // 2],))
    con.close()
    with pytest.raises(StoreError) as err:
        Store(db).load("v1").suite  # noqa: B018 (the property builds it)
    assert err.value.code == "STORED_RUN_INVALID" and "does not decompress" in err.value.message
