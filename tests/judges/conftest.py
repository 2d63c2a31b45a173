"""Fixtures for judge tests: the real local chat-completions server and check contexts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evalnb.agents._base import Request, Response
from evalnb.checks._registry import CheckContext
from evalnb.suite import Case, Suite, Turn


@pytest.fixture(autouse=True)
def _in_tmp(offline_env: Path) -> None:
    """Every judge test runs offline in a temp folder (see tests/conftest.py)."""


def make_ctx(
    *,
    prompt: str = "What is the capital of France?",
    response: str | Response = "Paris is the capital of France.",
    expected: str | None = None,
    context: str | None = None,
    conversation: list[dict[str, str]] | None = None,
    judge: Any = None,
) -> CheckContext:
    turn = Turn(prompt=prompt, expected=expected, context=context)
    case = Case(id="c1", name="c1", turns=[turn])
    suite = Suite(name="s", format="dataset-json", cases=[case])
    resp = response if isinstance(response, Response) else Response(text=response)
    return CheckContext(
        suite=suite,
        case=case,
        turn=turn,
        turn_index=0,
        run=0,
        request=Request(prompt=prompt, history=list(conversation or [])),
        response=resp,
        judge=judge,
        conversation=list(conversation or []),
    )


_BLOCK = re.compile(r"<<<DATA ([\w-]+) id=(\w+)>>>\n(.*?)\n<<<END DATA \1 id=\2>>>", re.S)


def blocks(prompt: str) -> dict[str, str]:
    """The DATA blocks of a judge prompt, by name."""
    return {m.group(1): m.group(3) for m in _BLOCK.finditer(prompt)}


def outside_blocks(prompt: str) -> str:
    """The prompt with every DATA block cut out: what a model would read as instructions."""
    return _BLOCK.sub("", prompt)
