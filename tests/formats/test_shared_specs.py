"""Equal evaluator entries across items resolve to one check spec: a suite that repeats an ``evaluators`` block
on every item costs what one with ``default_evaluators`` does."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.errors import SuiteError

N = 2000


def _write(folder: Path, shape: str, n: int = N) -> Path:
    items: list[dict[str, Any]] = []
    for i in range(n):
        item: dict[str, Any] = {
            "testId": f"c{i:05d}",
            "prompt": f"What is {i} plus one?",
            "expected_response": str(i + 1),
        }
        if shape == "per-item":
            item["evaluators"] = {"ExactMatch": {}, "PartialMatch": {"threshold": 0.5}}
            item["evaluators_mode"] = "replace"
        items.append(item)
    doc: dict[str, Any] = {"schemaVersion": "1.6.0", "metadata": {"name": shape}, "items": items}
    if shape == "default":
        doc["default_evaluators"] = {"ExactMatch": {}, "PartialMatch": {"threshold": 0.5}}
    path = folder / f"{shape}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _held(path: Path) -> tuple[Any, int]:
    gc.collect()
    tracemalloc.start()
    try:
        suite = evalnb.load(path)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return suite, held


def test_items_that_repeat_an_evaluator_block_share_its_check_objects(tmp_path: Path) -> None:
    suite = evalnb.load(_write(tmp_path, "per-item"))
    first = suite.cases[0].turns[0].checks
    assert [c.type for c in first] == ["ExactMatch", "PartialMatch"]
    for case in suite.cases[1:]:
        assert all(a is b for a, b in zip(case.turns[0].checks, first, strict=True))
        assert case.turns[0].checks is not first  # each turn has its own list (a user may change one)


def test_the_load_does_not_grow_with_the_number_of_equal_evaluator_blocks(tmp_path: Path) -> None:
    evalnb.load(_write(tmp_path, "default", 10))  # imports and registries loaded before measuring
    _, default = _held(_write(tmp_path, "default"))
    _, per_item = _held(_write(tmp_path, "per-item"))
    # The same cases; the per-item suite may hold a little more (each turn's list), not a spec per item.
    assert per_item <= default * 1.15, (per_item, default)


def test_different_options_stay_different_and_equal_ones_in_turns_are_shared(tmp_path: Path) -> None:
    doc = {
        "schemaVersion": "1.6.0",
        "items": [
            {"prompt": "a", "expected_response": "x", "evaluators": {"PartialMatch": {"threshold": 0.5}}},
            {"prompt": "b", "expected_response": "y", "evaluators": {"PartialMatch": {"threshold": 0.7}}},
            {
                "turns": [
                    {
                        "prompt": "c",
                        "expected_response": "z",
                        "evaluators": {"PartialMatch": {"threshold": 0.5}},
                    },
                    {
                        "prompt": "d",
                        "expected_response": "w",
                        "evaluators": {"PartialMatch": {"threshold": 0.5}},
                    },
                ]
            },
        ],
    }
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    cases = evalnb.load(path).cases

    def partial(case: Any, turn: int = 0) -> Any:
        return next(c for c in case.turns[turn].checks if c.type == "PartialMatch")

    assert partial(cases[0]).threshold == 0.5 and partial(cases[1]).threshold == 0.7
    assert partial(cases[0]) is not partial(cases[1])
    assert partial(cases[0]) is partial(cases[2], 0) is partial(cases[2], 1)


def test_a_bad_evaluator_block_is_reported_at_every_item_that_repeats_it(tmp_path: Path) -> None:
    bad = {"PartialMatch": {"threshold": "high"}}
    items = [{"prompt": f"q{i}", "expected_response": "a", "evaluators": bad} for i in range(3)]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"schemaVersion": "1.6.0", "items": items}), encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        evalnb.load(path)
    places = [e.location for e in info.value.errors]
    assert len(places) == 3, places
    assert all("threshold" in str(p) for p in places), places


def _tagged(folder: Path, n: int = N) -> Path:
    items = [
        {
            "testId": f"c{i:05d}",
            "prompt": f"What is {i} plus one?",
            "expected_response": str(i + 1),
            "category": ["arithmetic", "counting"][i % 2],
            "tags": ["smoke", f"batch-{i % 3}"],
            "evaluators": {"ExactMatch": {}},
            "evaluators_mode": "replace",
        }
        for i in range(n)
    ]
    path = folder / "tagged.json"
    path.write_text(json.dumps({"schemaVersion": "1.6.0", "items": items}), encoding="utf-8")
    return path


def test_repeated_categories_and_tags_are_one_object_each(tmp_path: Path) -> None:
    cases = evalnb.load(_tagged(tmp_path)).cases
    assert len({id(c.category) for c in cases}) == 2
    assert {c.category for c in cases} == {"arithmetic", "counting"}
    tags = [t for c in cases for t in c.meta["tags"]]
    assert len({id(t) for t in tags}) == 4 and set(tags) == {"smoke", "batch-0", "batch-1", "batch-2"}
    # equal tags are one meta, shared and frozen: changing it under one case would change it under all
    assert cases[0].meta is cases[6].meta and cases[0].meta is not cases[1].meta
    assert cases[0].meta == {"tags": ["smoke", "batch-0"]} and len({id(c.meta) for c in cases}) == 3
    with pytest.raises(TypeError, match="shared by every case with the same tags"):
        cases[0].meta["reviewed"] = True
    with pytest.raises(TypeError, match="give the case one of its own"):
        cases[0].meta["tags"].append("new")
    cases[0].meta = {**cases[0].meta, "reviewed": True}  # the way the message gives
    assert cases[6].meta == {"tags": ["smoke", "batch-0"]} and cases[0].meta["reviewed"] is True


def test_shared_tags_survive_pickling_copying_dumping_and_hashing(tmp_path: Path) -> None:
    import copy
    import pickle

    from evalnb._canonical import canonical

    suite = evalnb.load(_tagged(tmp_path))
    again = pickle.loads(pickle.dumps(suite))
    assert again.cases[0].meta is again.cases[6].meta  # shared as it went
    assert again.content_hash() == suite.content_hash()
    with pytest.raises(TypeError):
        again.cases[0].meta["x"] = 1
    # the hash is pydantic's own dump's, and a dump or a copy is the caller's to change
    dumped = suite.model_dump(mode="json", exclude={"path", "warnings"})
    import hashlib

    assert hashlib.sha256(canonical(dumped).encode()).hexdigest()[:16] == suite.content_hash()
    assert type(dumped["cases"][0]["meta"]) is dict and dumped["cases"][0]["meta"] == {
        "tags": ["smoke", "batch-0"]
    }
    mine = copy.deepcopy(suite.cases[0])
    mine.meta["reviewed"] = True
    mine.meta["tags"].append("new")
    assert suite.cases[6].meta == {"tags": ["smoke", "batch-0"]}


def test_cases_built_without_a_second_validation_are_the_models_own(tmp_path: Path) -> None:
    from evalnb.suite import Case

    suite = evalnb.load(_tagged(tmp_path, 3))
    for case in suite.cases:
        again = Case.model_validate(case.model_dump())
        assert again == case and again.model_dump() == case.model_dump()
    first, second = (c.turns[0] for c in suite.cases[:2])
    # the defaults are new objects per turn, as the model's own constructor gives
    assert first.history == [] and first.history is not second.history
    assert first.meta is not second.meta and first.allowed_tools is None


def _build_peak(path: Path, *, consume: bool) -> tuple[int, int]:
    """The memory a build takes at its peak above the parsed document, and the parse's own size."""
    from evalnb._unicode import cleaned_already
    from evalnb.formats._dataset_json import load_data, parse

    gc.collect()
    tracemalloc.start()
    try:
        data = parse(path.read_text(encoding="utf-8"))
        parsed, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        with cleaned_already():
            suite = load_data(data, consume=consume)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(suite.cases) == 5 * N
    return peak - parsed, parsed


def test_the_parsed_items_are_let_go_as_their_cases_are_built(tmp_path: Path) -> None:
    # The peak of a load is not the parsed document's plus the suite's: each item goes once built.
    path = _write(tmp_path, "per-item", 5 * N)
    _build_peak(path, consume=True)  # imports and registries loaded before measuring
    kept, parsed = _build_peak(path, consume=False)
    let_go, _ = _build_peak(path, consume=True)
    assert let_go < kept - parsed / 2, (let_go, kept, parsed)


def test_load_data_leaves_a_callers_document_as_it_was() -> None:
    from evalnb.formats._dataset_json import load_data

    doc = {"schemaVersion": "1.6.0", "items": [{"prompt": "a"}, {"prompt": "b"}]}
    before = json.dumps(doc)
    assert len(load_data(doc).cases) == 2
    assert json.dumps(doc) == before


def test_cube_cases_that_repeat_a_check_share_it_and_the_row_keys(tmp_path: Path) -> None:
    head = "name: s\ncube: {connectionName: local, catalog: FoodMart, schema: FoodMart, cubeName: Sales}\ncases:\n"
    cases = "".join(
        f"  - name: c{i}\n    question: sales by country {i}\n    expectedIntent: query\n"
        f"    expectedRows: [{{country: USA, storeSales: {i % 2}}}]\n    tolerance: {{absolute: 0.01}}\n"
        for i in range(6)
    )
    path = tmp_path / "cube.eval.yaml"
    path.write_text(head + cases, encoding="utf-8")
    checks = [case.turns[0].checks for case in evalnb.load(path).cases]
    intents = {id(c[0]) for c in checks}
    rows = [c[1] for c in checks]
    assert len(intents) == 1 and checks[0][0].expected == "QUERY"
    assert rows[0] is rows[2] is rows[4] and rows[1] is rows[3] and rows[0] is not rows[1]
    assert [r.expected[0]["storeSales"] for r in rows[:2]] == [0, 1]
    keys = [next(iter(r.expected[0])) for r in rows[:2]]  # "country" in two different checks: one string
    assert keys[0] == "country" and keys[0] is keys[1]
    assert rows[0].expected[0]["country"] is rows[1].expected[0]["country"]


def test_tasks_and_table_rows_that_repeat_a_check_share_it() -> None:
    toml = 'name = "s"\n' + "".join(
        f'[[tasks]]\nid = "t{i}"\nprompt = "p{i}"\nagent = "{"ab"[i % 2]}"\n'
        f'assertions = [{{type = "regex", on = "stdout", pattern = "{"xy"[i % 2]}"}}]\n'
        for i in range(4)
    )
    cases = evalnb.load(toml, format="tasks-toml").cases
    checks = [c.turns[0].checks[0] for c in cases]
    assert checks[0] is checks[2] and checks[1] is checks[3] and checks[0] is not checks[1]
    assert [c.pattern for c in checks] == ["x", "y", "x", "y"]  # type: ignore[attr-defined]
    assert cases[0].agent is cases[2].agent and cases[0].agent == "a"

    import pandas as pd

    frame = pd.DataFrame({"prompt": [f"q{i}" for i in range(4)], "category": ["".join(["bil", "ling"])] * 4})
    rows = evalnb.from_frame(frame).cases
    assert all(r.category == "billing" for r in rows)
    assert len({id(r.category) for r in rows}) == 1
