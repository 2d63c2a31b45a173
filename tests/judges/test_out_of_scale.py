"""A judge score that is not a whole number on the 1-5 scale is unreadable: asked once more, then degraded with
the raw answer; never read as the digit inside it, never a pass."""

from __future__ import annotations

import pandas as pd
import pytest

import evalnb
from evalnb.judges import OpenAIJudge
from evalnb.judges._rubrics import parse_score
from evalnb.suite import Case, JudgedMetricCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer

# Answers a judge really gave, each of which used to be read as a valid score (and several passed).
OUT_OF_SCALE = [
    '{"score": -3, "reason": "bad"}',
    '{"score": "4/10", "reason": "weak"}',
    "Score: 4/10\nWeak.",
    '{"score": 1e999}',
    '{"score": "5 out of 10"}',
    "Score: 5 out of 10",
    '{"score": 0, "reason": "nothing"}',
    '{"score": NaN}',
    '{"score": 7}',
    '{"score": 4.5}',
    "Score: -3",
    "Score: 0.4",
    "Score: 40%",
    "4/10\nWeak.",
]


@pytest.mark.parametrize("answer", OUT_OF_SCALE)
def test_a_score_off_the_scale_is_unreadable(answer: str) -> None:
    assert parse_score(answer) is None


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ('{"score": "4/5"}', 4.0),
        ('{"score": "3 out of 5"}', 3.0),
        ("Score: 4 out of 5.", 4.0),
        ("Score: 4/5.", 4.0),
        ('{"score": 4e0}', 4.0),
    ],
)
def test_a_score_on_the_5_point_scale_is_read(answer: str, score: float) -> None:
    parsed = parse_score(answer)
    assert parsed is not None and parsed[0] == score


@pytest.mark.parametrize("answer", OUT_OF_SCALE)
def test_through_a_real_server_it_is_asked_again_then_degraded_with_the_raw_answer(
    openai_server: OpenAIServer, answer: str
) -> None:
    openai_server.default = answer
    case = Case(id="c", name="c", turns=[Turn(prompt="q", checks=[JudgedMetricCheck(type="Relevance")])])
    suite = Suite(name="s", format="dataset-json", cases=[case])
    judge = OpenAIJudge("m", base_url=openai_server.base_url, cache=False, retries=0)
    result = evalnb.run(suite, lambda prompt: "an answer", judge=judge, progress=False)
    score = result.scores.iloc[0]
    assert score["status"] == "degraded" and pd.isna(score["value"]) and not score["passed"]
    assert len(openai_server.requests) == 2  # the first answer, then once more with a reminder
    assert "Reminder: your previous reply could not be read" in openai_server.requests[1].last_user
    assert "gave no readable answer after 2 attempt(s); raw answer: " in score["reason"]
    assert repr(answer.strip())[1:20] in score["reason"]
    assert result.cases["status"].tolist() == ["degraded"]
