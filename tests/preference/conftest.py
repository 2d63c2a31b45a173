"""Two versions' Results of one suite, built by real runs, for the pairwise tests."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import evalnb


def versions(n: int = 40, *, expected: bool = False, runs: int = 1) -> tuple[Any, Any]:
    """Results ``a`` and ``b`` of an ``n``-case suite; each answer names its side and its case."""
    frame = pd.DataFrame({"prompt": [f"question {i}" for i in range(n)]})
    if expected:
        frame["expected"] = [f"the answer to question {i} is {i}" for i in range(n)]
    suite = evalnb.from_frame(frame, checks=())
    a = evalnb.run(suite, lambda p: f"a says {p}", progress=False, runs=runs)
    b = evalnb.run(suite, lambda p: f"b says {p}", progress=False, runs=runs)
    return a, b


def noisy_judge(
    world: int, *, shift: float = 0.0, bias: float = 0.8, noise: float = 1.0
) -> Callable[..., Any]:
    """A judge with a position bias toward the first answer and noise, in world ``world``.

    Each answer has a hidden quality N(0, 1) (b's shifted by ``shift``); the judge sees the difference of the
    two qualities plus ``bias`` for the first position plus N(0, noise) and answers first / second, or tie
    inside 0.5. Everything is seeded by the world and the texts, so the order of the calls changes nothing.
    """

    def quality(answer: str) -> float:
        return random.Random(f"{world}:{answer}").gauss(0, 1) + (shift if answer.startswith("b") else 0.0)

    async def judge(prompt: str, first: str, second: str) -> str:
        d = (
            quality(first)
            - quality(second)
            + bias
            + random.Random(f"{world}:{first}|{second}").gauss(0, noise)
        )
        return "first" if d > 0.5 else "second" if d < -0.5 else "tie"

    return judge


@pytest.fixture(scope="module")
def forty() -> tuple[Any, Any]:
    return versions(40)


from tests.support.openai_server import openai_server  # noqa: E402,F401 - the real loopback server fixture


@pytest.fixture(autouse=True)
def _offline(offline_env: Any) -> None:
    """Every pairwise test runs in a temp folder with no OpenAI settings (see tests/conftest.py)."""
