"""A stored suite read back: its definition as a Suite, and the strings a stored run's rows share with it.

A stored suite is JSON; parsed, every case holds check objects and strings of its own, where the suite that was
saved shared them (a dataset's defaults, a case id and its name). At a million cases that doubled the memory
of a loaded run: equal check objects become one again, and a run's rows take the suite's own strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.results._deferred import DeferredSuite

if TYPE_CHECKING:
    from evalnb.suite import Suite

__all__ = ["suite_from", "suite_texts"]


def suite_from(definition: str, content_hash: str | None = None) -> Suite:
    """A stored suite definition as a Suite; text stored clean is not cleaned again (evalnb._unicode). One
    that evalnb wrote (its hash is ``content_hash``) is built without validating it again (_trusted.py)."""
    from evalnb._unicode import cleaned_already, may_hold_surrogates
    from evalnb.store._trusted import trusted_suite
    from evalnb.suite import Suite

    # What evalnb wrote holds no lone surrogate (a suite's text is cleaned when it is made): it is not looked
    # for (a pass over the whole text), and its text is not cleaned again.
    with cleaned_already():
        trusted = trusted_suite(definition, content_hash)
    if trusted is not None:
        return trusted
    if may_hold_surrogates(definition):
        return _shared(Suite.model_validate_json(definition))
    with cleaned_already():
        return _shared(Suite.model_validate_json(definition))


def _shared(suite: Suite) -> Suite:
    # Parsed from JSON, every case has check objects of its own; equal ones become one object, as a loaded
    # suite's defaults are (a million cases held two copies of each check each).
    same: dict[Any, Any] = {}
    for case in suite.cases:
        for turn in case.turns:
            turn.checks = [_one_of(same, spec) for spec in turn.checks]
    return suite


def _one_of(same: dict[Any, Any], spec: Any) -> Any:
    try:
        key = (type(spec), tuple(spec.__dict__.items()))
        return same.setdefault(key, spec)
    except TypeError:  # an option that is a list or a mapping: kept as it is
        return spec


def suite_texts(suite: Suite | DeferredSuite) -> dict[str, dict[str, str]]:
    """The suite's own strings by column, for a stored run's rows to share (not equal copies of each); of a
    suite not built yet, its case ids and names (its prompts are not held: each row keeps its own)."""
    if isinstance(suite, DeferredSuite):
        return {
            "case_id": {i: i for i in suite.ids},
            "case_name": {n: n for n in suite.names},
        }
    ids: dict[str, str] = {}
    names: dict[str, str] = {}
    prompts: dict[str, str] = {}
    for case in suite.cases:
        ids[case.id] = case.id
        names[case.name] = case.name
        for turn in case.turns:
            prompts[turn.prompt] = turn.prompt
            if turn.expected is not None:
                prompts[turn.expected] = turn.expected
    return {"case_id": ids, "case_name": names, "prompt": prompts, "expected": prompts}
