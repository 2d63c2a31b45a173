"""The fast path of a dataset load: plain items and conversations built into their cases without revalidating
them (docs/dataset-json.md, shapes, cases and names): a million items' load.

Anything that is not plain is ``None`` here and goes through the validating path of ``loading.py``, so a bad
item's code, location and message are those of the validation.
"""

from __future__ import annotations

from typing import Any

from evalnb._unicode import is_cleaned
from evalnb.formats._common import Problems
from evalnb.formats._dataset_json.evaluators import SpecCache, apply_evaluators
from evalnb.formats._dataset_json.models import EVALUATORS_SINCE, MAX_TURNS, TURNS_SINCE
from evalnb.suite import Case, CheckSpec, Suite, Turn

__all__ = ["Plain", "makers"]


def makers() -> tuple[Any, Any, Any]:
    """What builds a turn, a case and the suite of values validated above: in a load, whose text was cleaned
    whole (see ``evalnb._unicode``), they are not validated again (a million items' load; a suite's validator,
    which holds every check type's, is not even built); else the models' own."""
    if is_cleaned():
        return Turn._trusted_maker(), Case._trusted_maker(), Suite._trusted
    return Turn, Case, Suite


# The keys of a plain single-turn item (docs/dataset-json.md, shapes, cases and names), and those of them that
# must not be blank; those of a plain conversation and of its turns.
_PLAIN_KEYS = frozenset(
    (
        "prompt",
        "expected_response",
        "context",
        "testId",
        "name",
        "category",
        "notes",
        "evaluators",
        "evaluators_mode",
        "tags",
    )
)
_PLAIN_NON_BLANK = ("prompt", "testId", "name", "category")
_PLAIN_TEXTS = ("prompt", "expected_response", "context", "testId", "name", "category", "notes")
_THREAD_KEYS = frozenset(
    ("turns", "testId", "name", "category", "notes", "evaluators", "evaluators_mode", "tags")
)
_THREAD_NON_BLANK = ("testId", "name", "category")
_THREAD_TEXTS = ("testId", "name", "category", "notes")
_TURN_KEYS = frozenset(("prompt", "expected_response", "context", "evaluators", "evaluators_mode", "tags"))
_TURN_NON_BLANK = ("prompt",)
_TURN_TEXTS = ("prompt", "expected_response", "context")


def _plain_texts(raw: dict[str, Any], texts: tuple[str, ...], non_blank: tuple[str, ...]) -> bool:
    """Whether ``texts`` of ``raw`` are strings or null, ``non_blank`` of them not blank, its tags texts."""
    get = raw.get
    for key in texts:
        value = get(key)
        if value is not None and type(value) is not str:
            return False
    for key in non_blank:
        value = get(key)
        if value is not None and not value.strip():
            return False
    tags = get("tags")
    return tags is None or (type(tags) is list and all(type(t) is str for t in tags))


class Plain:
    """The fast path of a load: a plain item (a single-turn item of only :data:`_PLAIN_KEYS`, or a conversation
    of only :data:`_THREAD_KEYS` whose turns hold only :data:`_TURN_KEYS`; texts as strings or null, tags as a
    list of strings, evaluator maps seen valid already) becomes its case without the item's model validation,
    which would find nothing in it (a million items' load). Anything else is None here and goes through
    :func:`_item`, so a bad item's code, location and message are those of the validation."""

    def __init__(
        self,
        version: tuple[int, int, int] | None,
        defaults: dict[str, CheckSpec],
        tools: list[str] | None,
        cache: SpecCache,
    ) -> None:
        have = version or (1, 0, 0)
        self.gated = have < EVALUATORS_SINCE  # evaluators keys go to the version gate
        self.threads = have >= TURNS_SINCE  # conversations before 1.2.0 go to theirs
        self.defaults = defaults
        self.tools = tools
        self.cache = cache
        # (the base's id, the evaluator map's key, the mode) -> the checks resolved over that base (the
        # document's defaults, or a conversation's own checks: both held here, so their ids stay theirs)
        self.checks: dict[tuple[int, str | None, Any], dict[str, CheckSpec]] = {}
        self.new_turn, self.new_case, _ = makers()

    def case(self, raw: Any, i: int) -> Case | None:
        if type(raw) is not dict:
            return None
        if "turns" in raw:
            return self._thread(raw, i)
        if not raw.keys() <= _PLAIN_KEYS or not _plain_texts(raw, _PLAIN_TEXTS, _PLAIN_NON_BLANK):
            return None
        turn = self._turn(raw, self.defaults, {})
        if turn is None:
            return None
        return self._case(raw, i, [turn])

    def _thread(self, raw: dict[str, Any], i: int) -> Case | None:
        """A conversation's case (docs/dataset-json.md, shapes, cases and names): its checks over the defaults, then
        each turn's over those."""
        turns = raw["turns"]
        if (
            not self.threads
            or not raw.keys() <= _THREAD_KEYS
            or type(turns) is not list
            or not 1 <= len(turns) <= MAX_TURNS
            or not _plain_texts(raw, _THREAD_TEXTS, _THREAD_NON_BLANK)
        ):
            return None
        base = self._checks(raw, self.defaults)
        if base is None:
            return None
        made = []
        for rt in turns:
            if type(rt) is not dict or not rt.keys() <= _TURN_KEYS:
                return None
            if not _plain_texts(rt, _TURN_TEXTS, _TURN_NON_BLANK):
                return None
            turn = self._turn(rt, base, self._tags(rt))
            if turn is None:
                return None
            made.append(turn)
        return self._case(raw, i, made)

    def _turn(self, raw: dict[str, Any], base: dict[str, CheckSpec], meta: dict[str, Any]) -> Turn | None:
        prompt = raw.get("prompt")
        if prompt is None:
            return None
        checks = self._checks(raw, base)
        if checks is None:
            return None
        tools = self.tools
        turn: Turn = self.new_turn(
            prompt=prompt,
            expected=raw.get("expected_response"),
            context=raw.get("context"),
            checks=list(checks.values()),
            allowed_tools=None if tools is None else list(tools),
            meta=meta,
        )
        return turn

    def _case(self, raw: dict[str, Any], i: int, turns: list[Turn]) -> Case:
        get = raw.get
        name = get("name")
        case_id = get("testId") or name or f"item-{i + 1:03d}"
        case: Case = self.new_case(
            id=case_id,
            name=name or case_id,
            category=self.cache.text(get("category")),
            notes=get("notes"),
            runs=1,
            turns=turns,
            meta=self._tags(raw),
        )
        return case

    def _tags(self, raw: dict[str, Any]) -> dict[str, Any]:
        # as _meta keeps them: equal tags one object across items
        tags = raw.get("tags")
        if tags is None:
            return {}
        return self.cache.tags_meta(tags) if tags else {"tags": tags}

    def _checks(self, raw: dict[str, Any], base: dict[str, CheckSpec]) -> dict[str, CheckSpec] | None:
        """The checks of an item or turn over ``base`` when its evaluator keys are plain (resolved without a
        problem before), else None. The dict returned is shared: read, never changed."""
        given, mode = raw.get("evaluators"), raw.get("evaluators_mode")
        if given is None and mode is None:
            if "evaluators" in raw or "evaluators_mode" in raw:
                return None  # a null given: validation says what it makes of it
            return base
        if self.gated or (mode is not None and mode not in ("extend", "replace")):
            return None
        key = None
        if given is not None:
            if type(given) is not dict:
                return None
            key = self.cache.key(given)
            if key not in self.cache.valid_maps:
                return None
        memo = (id(base), key, mode)
        checks = self.checks.get(memo)
        if checks is None:
            problems = Problems(raw)
            checks = apply_evaluators(base, raw, (), problems, self.cache, given_key=key)
            if len(problems):
                return None
            self.checks[memo] = checks
        return checks
