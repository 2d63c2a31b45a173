"""What callables answer: fields of the wrong type degrade the run naming the field; numpy integers are exit
codes (evalnb/agents/_base.py)."""

from __future__ import annotations

from typing import Any

import pytest

import evalnb
from evalnb.suite import ExitCodeCheck, RegexCheck
from tests.support.suites import suite_of, task


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"text": "ok", "exit_code": "0"}, "exit_code='0' (str); exit_code must be an int or None"),
        ({"text": 4}, "text=4 (int); text must be a str or None"),
        (evalnb.Response(text="ok", exit_code=True), "exit_code=True (bool)"),
        (evalnb.Response(text="ok", latency_ms="fast"), "latency_ms='fast' (str)"),
    ],
)
def test_an_answer_field_of_the_wrong_type_degrades_the_run_naming_the_field(
    answer: Any, message: str
) -> None:
    s = suite_of(task("a", checks=[ExitCodeCheck(equals=0), RegexCheck(on="result", pattern="ok")]))
    result = evalnb.run(s, lambda prompt: answer, progress=False)
    assert result.cases["status"].tolist() == ["degraded"]
    error = result.runs["error"].iloc[0]
    assert message in error
    assert message in result.report()


def test_numpy_integers_are_exit_codes() -> None:
    np = pytest.importorskip("numpy")
    s = suite_of(task("a", checks=[ExitCodeCheck(equals=0)]))
    result = evalnb.run(s, lambda prompt: {"text": "ok", "exit_code": np.int64(0)}, progress=False)
    assert result.passed
    assert result.runs["exit_code"].tolist() == [0]
