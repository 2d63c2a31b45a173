"""A stored suite definition that evalnb wrote, read back without validating it again.

A store keeps a suite as its canonical JSON, the document its content hash is taken over plus the load path
and the warnings as its last keys (``evalnb/_canonical.py``). When the hash of all but those keys is the one
the suite's row names, the definition is what evalnb wrote from a validated suite: its cases and turns are
built as they are (the check objects validated once per distinct check), one case at a time from the text, so
a million cases cost what their load from the file did, not a revalidation of the whole document and a
parsed copy of it (docs/results.md, the store). Anything else, a definition edited by hand or written by an
earlier evalnb, is ``None`` here and goes through the model's own validation.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.suite import Suite

__all__ = ["trusted_suite", "written_by_evalnb"]

_HEAD = '{"cases":['
_PATH = ',"path":'
_CHUNK = 1 << 22


def written_by_evalnb(definition: str, content_hash: str | None) -> bool:
    """Whether ``definition`` is what evalnb wrote of a suite whose hash is ``content_hash``."""
    if content_hash is None or not definition.startswith(_HEAD) or not definition.isascii():
        return False  # evalnb writes ASCII (escapes): text edited in by hand may not be
    end = definition.rfind(_PATH)  # no string holds it (a quote in one is escaped): the top-level key
    if end < 0:
        return False
    h = hashlib.sha256()
    for start in range(0, end, _CHUNK):  # the document is ASCII (escapes): its characters are its bytes
        h.update(definition[start : min(start + _CHUNK, end)].encode("ascii"))
    h.update(b"}")
    return h.hexdigest()[:16] == content_hash


def trusted_suite(definition: str, content_hash: str | None) -> Suite | None:
    """The suite of a definition evalnb wrote whose hash is ``content_hash``; else None."""
    if not written_by_evalnb(definition, content_hash):
        return None
    try:
        return _build(definition)
    except (KeyError, TypeError, ValueError, IndexError):  # a shape this reader does not know
        return None


def _build(definition: str) -> Suite:
    from evalnb.suite import Suite

    build = _Builder()
    decode = json.JSONDecoder().raw_decode
    pos = len(_HEAD)
    cases = []
    if definition[pos] != "]":
        while True:
            raw, pos = decode(definition, pos)
            cases.append(build.case(raw))
            pos += 1
            if definition[pos - 1] == "]":
                break
    else:
        pos += 1
    rest = json.loads("{" + definition[pos + 1 :])  # after "],": the suite's other keys
    suite = Suite.model_validate({**rest, "cases": []})
    suite.cases = cases
    return suite


class _Builder:
    """Cases and turns of a trusted definition; equal checks and repeated labels one object each."""

    def __init__(self) -> None:
        from pydantic import TypeAdapter

        from evalnb.suite import Case, CheckSpec, Message, Turn

        self._turn = Turn._trusted_maker()
        self._case = Case._trusted_maker()
        self._message = Message.model_construct
        self._check = TypeAdapter(CheckSpec).validate_python
        self._checks: dict[Any, Any] = {}
        self._labels: dict[str, str] = {}

    def case(self, raw: dict[str, Any]) -> Any:
        label = self._labels.setdefault
        category, agent = raw["category"], raw["agent"]
        return self._case(
            id=raw["id"],
            name=raw["name"],
            category=None if category is None else label(category, category),
            runs=raw["runs"],
            agent=None if agent is None else label(agent, agent),
            turns=[self.turn(t) for t in raw["turns"]],
            notes=raw["notes"],
            meta=raw["meta"],
        )

    def turn(self, raw: dict[str, Any]) -> Any:
        history = raw["history"]
        return self._turn(
            prompt=raw["prompt"],
            expected=raw["expected"],
            history=[self._message(role=m["role"], content=m["content"]) for m in history] if history else [],
            context=raw["context"],
            checks=[self.check(c) for c in raw["checks"]],
            allowed_tools=raw.get("allowed_tools"),
            meta=raw["meta"],
        )

    def check(self, raw: dict[str, Any]) -> Any:
        try:
            key: Any = tuple(raw.items())
            hash(key)
        except TypeError:  # an option that is a list or a mapping
            key = json.dumps(raw, sort_keys=True)
        spec = self._checks.get(key)
        if spec is None:
            spec = self._checks[key] = self._check(raw)
        return spec
