"""Cases and turns are slotted objects that still answer the model methods users call, and a run leaves the
garbage collector as it found it."""

from __future__ import annotations

import copy
import gc
import json
import pickle

import pytest
from pydantic import ValidationError

import evalnb
from evalnb import _gc
from evalnb.running._case_run import Plans
from evalnb.suite import Case, ExactMatchCheck, Message, Suite, Turn


def make_case(**extra: object) -> Case:
    return Case(
        id="a", name="A", turns=[Turn(prompt="p \ud800", expected="x", checks=[ExactMatchCheck()])], **extra
    )


def test_a_case_holds_no_instance_dict_and_validates_as_a_model() -> None:
    case = make_case()
    assert not hasattr(case, "__dict__") and not hasattr(case.turns[0], "__dict__")
    assert case.turns[0].prompt == "p \ufffd"  # built in Python: lone surrogates still cleaned
    with pytest.raises(ValidationError, match="runs"):
        make_case(runs=-1)
    with pytest.raises(ValidationError, match="unexpected"):
        make_case(colour="red")
    with pytest.raises(ValidationError, match="turns"):
        Case(id="a", name="A", turns=[])
    assert Case(id="a", name="A", turns=[{"prompt": "p", "checks": [{"type": "ExactMatch"}]}]).turns[
        0
    ].checks == [ExactMatchCheck()]


def test_the_model_methods_still_work() -> None:
    case = make_case(meta={"k": [1]})
    dumped = case.model_dump(mode="json")
    assert dumped["turns"][0]["checks"] == [{"type": "ExactMatch", "case_sensitive": False}]
    assert "allowed_tools" not in dumped["turns"][0]  # no allowlist is no key, as before
    assert Case.model_validate(dumped) == case
    assert Case.model_validate(json.loads(case.model_dump_json())) == case
    other = case.model_copy(update={"id": "b"})
    assert (other.id, case.id) == ("b", "a") and other.turns is case.turns
    deep = case.model_copy(deep=True)
    assert deep == case and deep.turns is not case.turns
    assert pickle.loads(pickle.dumps(case)) == case and copy.deepcopy(case) == case
    suite = Suite(name="s", format="tasks-toml", cases=[case])
    assert Suite.model_validate_json(suite.model_dump_json()) == suite


def test_turns_sharing_their_checks_share_one_plan() -> None:
    checks = [ExactMatchCheck()]
    plans = Plans()
    a, b = Turn(prompt="1", checks=checks), Turn(prompt="2", checks=list(checks))
    with_history = Turn(prompt="3", checks=checks, history=[Message(role="user", content="hi")])
    assert plans.plan(a) is plans.plan(b)
    assert plans.plan(with_history) is not plans.plan(a)
    assert plans.plan(with_history).history == [{"role": "user", "content": "hi"}]
    assert plans.plan(Turn(prompt="4", checks=[ExactMatchCheck()])) is not plans.plan(a)


def test_a_run_freezes_the_heap_while_it_lasts_and_leaves_a_caller_s_own_freeze() -> None:
    seen: list[int] = []
    young: list[int] = []
    before = gc.get_threshold()

    def agent(prompt: str) -> str:
        seen.append(gc.get_freeze_count())
        young.append(gc.get_threshold()[0])
        return "x"

    suite = Suite(name="s", format="tasks-toml", cases=[make_case()])
    assert gc.get_freeze_count() == 0
    evalnb.run(suite, agent, progress=False)
    assert seen and seen[0] > 0 and gc.get_freeze_count() == 0
    assert young == [_gc.YOUNG] and gc.get_threshold() == before  # fewer young collections, then as it was
    gc.freeze()
    try:
        evalnb.run(suite, agent, progress=False)
        # a process that froze objects keeps its freeze (the count only drops by what was freed)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_cases_and_turns_do_not_claim_to_know_which_fields_were_given() -> None:
    # A slotted dataclass records no fields set; answering with every field would mislead (evalnb/suite.py).
    turn = evalnb.Turn(prompt="hi")
    case = evalnb.Case(id="c", name="c", turns=[turn])
    for obj in (turn, case):
        assert not hasattr(obj, "model_fields_set")
        assert obj.model_dump()["id" if obj is case else "prompt"] in ("c", "hi")
