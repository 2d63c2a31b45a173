"""Plain dataset items (single-turn, texts only, an evaluator map seen valid) take the load's fast path: their
cases equal those of the validating path, and a bad item among plain ones gets the validation's own error."""

from __future__ import annotations

import json
from typing import Any

import pytest

import evalnb
from evalnb.errors import SuiteError

EVALUATORS = {"ExactMatch": {}, "PartialMatch": {"threshold": 0.5}}


def _items(n: int, *, per_item: bool, validated: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i in range(n):
        item: dict[str, Any] = {"prompt": f"What is {i} plus one?", "expected_response": str(i + 1)}
        if i % 3 == 0:
            item["testId"] = f"t{i}"
        if i % 3 == 1:
            item["name"] = f"Item {i}"
        if i % 4 == 0:
            item["category"] = "math" if i % 8 else "arithmetic"
            item["notes"] = "note"
            item["context"] = "numbers"
        if i % 5 == 0:
            item["expected_response"] = None
        if per_item:
            item["evaluators"] = json.loads(json.dumps(EVALUATORS))  # a dict of its own, as parsed
            item["evaluators_mode"] = "replace" if i % 2 else "extend"
        if validated:
            # an output key given as null changes nothing in the case, and takes the item off the fast path
            item["response"] = None
        items.append(item)
    return items


def _doc(items: list[dict[str, Any]], *, defaults: bool = True) -> str:
    doc: dict[str, Any] = {"schemaVersion": "1.6.0", "metadata": {"name": "plain"}, "items": items}
    if defaults:
        doc["default_evaluators"] = {"Relevance": {}, "ExactMatch": {}}
    return json.dumps(doc)


@pytest.mark.parametrize("per_item", [False, True])
def test_a_plain_item_and_a_validated_one_give_equal_cases(per_item: bool) -> None:
    plain = evalnb.load(_doc(_items(300, per_item=per_item, validated=False)), format="dataset-json")
    validated = evalnb.load(_doc(_items(300, per_item=per_item, validated=True)), format="dataset-json")
    assert [c.model_dump() for c in plain.cases] == [c.model_dump() for c in validated.cases]
    assert [[type(s) for s in c.turns[0].checks] for c in plain.cases] == [
        [type(s) for s in c.turns[0].checks] for c in validated.cases
    ]
    # the shapes asked for: ids, names, categories, the modes' checks
    assert plain.cases[0].id == "t0" and plain.cases[1].id == "Item 1" and plain.cases[2].id == "item-003"
    assert plain.cases[1].name == "Item 1" and plain.cases[4].category == "math"
    assert plain.cases[0].turns[0].expected is None and plain.cases[1].turns[0].expected == "2"
    if per_item:
        assert [s.type for s in plain.cases[1].turns[0].checks] == ["ExactMatch", "PartialMatch"]
        assert [s.type for s in plain.cases[2].turns[0].checks] == [
            "Relevance",
            "ExactMatch",
            "PartialMatch",
        ]
    # equal specs and categories are one object across the fast path's cases too
    firsts = {id(c.turns[0].checks[-1]) for c in plain.cases[2::2]}
    assert len(firsts) == 1
    assert len({id(c.category) for c in plain.cases if c.category == "math"}) == 1


def test_a_plain_item_has_lists_of_its_own() -> None:
    suite = evalnb.load(_doc(_items(5, per_item=False, validated=False)), format="dataset-json")
    a, b = suite.cases[0].turns[0], suite.cases[1].turns[0]
    assert a.checks == b.checks and a.checks is not b.checks
    assert a.meta == {} and a.meta is not b.meta and suite.cases[0].meta is not suite.cases[1].meta


def _error(items: list[dict[str, Any]]) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        evalnb.load(_doc(items), format="dataset-json")
    return info.value


BAD: list[tuple[dict[str, Any], str, str]] = [
    ({"prompt": "   "}, "BLANK_FIELD", "items[500].prompt"),
    ({"prompt": "q", "testId": 7}, "TYPE_MISMATCH", "items[500].testId"),
    ({"prompt": "q", "name": ""}, "BLANK_FIELD", "items[500].name"),
    ({"prompt": "q", "category": " "}, "BLANK_FIELD", "items[500].category"),
    ({"prompt": "q", "notes": ["x"]}, "TYPE_MISMATCH", "items[500].notes"),
    ({"prompt": "q", "expected_respons": "a"}, "UNKNOWN_FIELD", "items[500].expected_respons"),
    ({"prompt": "q", "evaluators_mode": "merge"}, "INVALID_VALUE", "items[500].evaluators_mode"),
    ({"prompt": "q", "evaluators": {"ExactMatch": {"case_sensitive": "yes"}}}, "TYPE_MISMATCH", ""),
    ({"prompt": "q", "evaluators": {"ExactMatch": {}, "Bogus": {}}}, "UNKNOWN_FIELD", ""),
    ({"prompt": "q", "evaluators": ["ExactMatch"]}, "TYPE_MISMATCH", "items[500].evaluators"),
    ({"prompt": None}, "", "items[500].prompt"),
    ({"prompt": "q", "testId": "t3"}, "INVALID_VALUE", "items[500].testId"),  # t3 is items[3]'s id
]


@pytest.mark.parametrize(("bad", "code", "where"), BAD)
def test_a_bad_item_among_plain_ones_gets_its_exact_error(bad: dict[str, Any], code: str, where: str) -> None:
    items = _items(1000, per_item=True, validated=False)
    for item in items:
        item["testId"] = item.get("testId") or f"id{id(item)}"
    items[3]["testId"] = "t3"
    items[500] = {**bad, "evaluators_mode": bad.get("evaluators_mode", "replace")}
    if "evaluators" not in bad:
        items[500]["evaluators"] = json.loads(json.dumps(EVALUATORS))
    fast = _error(items)
    # the same document with every item off the fast path: what the validating load reports
    slow = _error([{**item, "response": None} if i != 500 else item for i, item in enumerate(items)])
    assert (fast.code, fast.location, str(fast)) == (slow.code, slow.location, str(slow))
    assert [(e.code, e.location) for e in fast.errors] == [(e.code, e.location) for e in slow.errors]
    if code:
        assert fast.code == code
    if where:
        assert fast.location == where
    assert fast.location.startswith("items[500]")


def _tagged_and_threads(n: int, *, validated: bool) -> list[dict[str, Any]]:
    """Items with tags and categories, every third a conversation (turns with tags and evaluators of their own)."""
    items: list[dict[str, Any]] = []
    for i in range(n):
        item: dict[str, Any]
        if i % 3 == 2:
            turns: list[dict[str, Any]] = [
                {"prompt": f"What is {i}.{t}?", "expected_response": f"{i}.{t}"} for t in (1, 2)
            ]
            if i % 2:
                turns[1]["tags"] = ["second"]
                turns[1]["evaluators"] = {"PartialMatch": {"threshold": 0.25}}
                turns[1]["evaluators_mode"] = "replace"
            item = {"testId": f"c{i}", "turns": turns}
            if i % 4 == 1:
                item["evaluators"] = {"ExactMatch": {"case_sensitive": True}}
            if validated:
                item["conversation_id"] = None  # null changes nothing, and takes the item off the fast path
        else:
            item = {"testId": f"s{i}", "prompt": f"What is {i}?", "expected_response": str(i)}
            if validated:
                item["response"] = None
        item["category"] = ("billing", "search")[i % 2]
        item["tags"] = [] if i % 5 == 0 else ["smoke" if i % 2 else "regression", f"batch-{i % 7}"]
        items.append(item)
    return items


def test_tagged_items_and_conversations_take_the_fast_path_with_equal_cases() -> None:
    plain = evalnb.load(_doc(_tagged_and_threads(300, validated=False)), format="dataset-json")
    validated = evalnb.load(_doc(_tagged_and_threads(300, validated=True)), format="dataset-json")
    assert [c.model_dump() for c in plain.cases] == [c.model_dump() for c in validated.cases]
    assert plain.cases[0].meta == {"tags": []} and plain.cases[1].meta == {"tags": ["smoke", "batch-1"]}
    thread = plain.cases[5]
    assert [t.prompt for t in thread.turns] == ["What is 5.1?", "What is 5.2?"]
    assert thread.turns[1].meta == {"tags": ["second"]} and thread.turns[0].meta == {}
    assert [s.type for s in thread.turns[1].checks] == ["PartialMatch"]
    assert [s.type for s in thread.turns[0].checks] == ["Relevance", "ExactMatch"]
    # equal tags are one object across items; each case has its own list and dicts
    assert plain.cases[1].meta["tags"][0] is plain.cases[3].meta["tags"][0]
    assert plain.cases[1].meta["tags"] is not plain.cases[3].meta["tags"]
    assert thread.turns[0].checks is not plain.cases[2].turns[0].checks


THREAD_BAD: list[tuple[dict[str, Any], str]] = [
    ({"turns": []}, "items[500].turns"),
    ({"turns": [{"prompt": " "}]}, "items[500].turns[0].prompt"),
    ({"turns": [{"prompt": "q", "tags": [1]}]}, "items[500].turns[0].tags[0]"),
    ({"turns": [{"prompt": "q"}], "tags": "smoke"}, "items[500].tags"),
    ({"turns": [{"prompt": "q"}], "expected_response": "a"}, "items[500].expected_response"),
    ({"turns": [{"prompt": "q", "evaluators": {"Bogus": {}}}]}, "items[500].turns[0].evaluators.Bogus"),
    ({"turns": [{"prompt": "q"}] * 21}, "items[500].turns"),
]


@pytest.mark.parametrize(("bad", "where"), THREAD_BAD)
def test_a_bad_conversation_among_plain_ones_gets_its_exact_error(bad: dict[str, Any], where: str) -> None:
    items = _tagged_and_threads(1000, validated=False)
    items[500] = {"testId": "bad", **bad}
    fast = _error(items)
    slow = _error(_tagged_and_threads(500, validated=True) + items[500:501])
    assert (fast.code, fast.location, str(fast)) == (slow.code, slow.location, str(slow))
    assert fast.location == where
