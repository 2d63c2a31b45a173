"""The streamed content hash gives the bytes (and so the hash) that dumping the whole suite gave."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest

import evalnb
from evalnb.suite import Case, ExactMatchCheck, Message, RegexCheck, Suite, Turn
from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    [
        p
        for p in (ROOT / "tests" / "fixtures").iterdir()
        if "invalid" not in p.name and p.is_file() and p.suffix != ".db"
    ]
    + list((EXAMPLES / "suites").iterdir())
)


def whole_dump_hash(suite: Suite) -> str:
    """The hash as it was first defined: the whole suite dumped, then written with sorted keys."""
    payload = suite.model_dump(mode="json", exclude={"path", "warnings"})  # neither defines the suite
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_shipped_suite_hashes_as_before(path: Path) -> None:
    suite = evalnb.load(path)
    assert suite.content_hash() == whole_dump_hash(suite)


def test_odd_values_hash_as_before() -> None:
    shared = ExactMatchCheck(case_sensitive=True)
    suite = Suite(
        name="odd ✓",
        description=None,
        format="tasks-toml",
        meta={"when": dt.date(2026, 1, 2), "n": [1, 2.5, None], "ü": "\u00e9"},
        cases=[
            Case(
                id="a",
                name='Ä "quoted"',
                category="c",
                runs=3,
                agent="bot",
                notes="line\nbreak",
                meta={"tags": ("x", 1.5e300), "nested": {"b": 1, "a": [True, None]}},
                turns=[
                    Turn(
                        prompt="p",
                        expected=None,
                        history=[Message(role="user", content="hi")],
                        context="ctx",
                        checks=[shared, RegexCheck(on="stdout", pattern=r"\d+")],
                        allowed_tools=["search", "fetch"],
                        meta={"at": dt.datetime(2026, 1, 2, 3, 4, 5)},
                    ),
                    Turn(prompt="q", checks=[shared], allowed_tools=[]),
                ],
            ),
            Case(id="b", name="b", turns=[Turn(prompt="r", checks=[shared])]),
        ],
    )
    assert suite.content_hash() == whole_dump_hash(suite)
    changed = suite.model_copy(deep=True)
    changed.cases[1].turns[0].prompt = "other"
    assert changed.content_hash() != suite.content_hash()
    moved = suite.model_copy(update={"path": "/elsewhere.toml"})
    assert moved.content_hash() == suite.content_hash()  # where it was loaded from is not its content
