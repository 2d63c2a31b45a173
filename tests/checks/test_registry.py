"""Built-in check modules are imported plainly: a missing one is an error, never a silently unknown check."""

from __future__ import annotations

import sys
from typing import Any

import pytest

import evalnb
from evalnb.checks import _registry as registry
from evalnb.suite import CustomCheck
from tests.support.suites import suite_of, task


def test_every_builtin_spec_type_is_registered() -> None:
    for spec_type in ("regex", "ExactMatch", "PartialMatch", "Citations", "rows", "Similarity"):
        assert callable(registry.get(spec_type))


def test_a_builtin_module_that_cannot_be_imported_is_a_loud_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry._CHECKS, "_bulk_loaded", False)
    # A None entry in sys.modules makes the import fail with ModuleNotFoundError, as a missing file would.
    monkeypatch.setitem(sys.modules, "evalnb.checks._cube", None)
    with pytest.raises(ModuleNotFoundError, match=r"evalnb\.checks\._cube"):
        registry.get("regex")
    # Still not marked loaded: asking again raises again instead of a KeyError for a missing check.
    assert registry._CHECKS._bulk_loaded is False
    with pytest.raises(ModuleNotFoundError):
        registry.get("rows")


@pytest.fixture
def user_checks() -> Any:
    names: list[str] = []

    def add(name: str, fn: Any) -> None:
        registry.register(name, fn)
        names.append(name)

    yield add
    for n in names:
        registry.unregister(n)


def test_a_user_check_may_answer_with_a_numpy_bool(user_checks: Any) -> None:
    np = pytest.importorskip("numpy")
    user_checks("LongEnough", lambda turn, response: np.mean([len(response.text or "")]) > 1)
    s = suite_of(task("a", checks=[CustomCheck(check="LongEnough")]))
    assert evalnb.run(s, lambda p: "ok", progress=False).passed
    failing = evalnb.run(s, lambda p: "x", progress=False)
    assert failing.scores[["passed", "status"]].values.tolist() == [[False, "failed"]]


def test_a_user_check_returning_a_wrong_type_names_it(user_checks: Any) -> None:
    user_checks("Loose", lambda turn, response: 0.7)
    result = evalnb.run(
        suite_of(task("a", checks=[CustomCheck(check="Loose")])), lambda p: "ok", progress=False
    )
    assert result.scores["status"].tolist() == ["degraded"]
    assert "a check returned float" in result.scores["reason"].iloc[0]


@pytest.mark.parametrize(
    "answer", [(0.5, None, "cannot tell"), registry.Score(value=0.5, passed=None, reason="cannot tell")]
)
def test_a_user_check_without_a_verdict_is_degraded_and_reported(user_checks: Any, answer: Any) -> None:
    # Before: status "failed" with passed NA, and the report printed "FAIL: a" with no line saying why.
    user_checks("Undecided", lambda turn, response: answer)
    result = evalnb.run(
        suite_of(task("a", checks=[CustomCheck(check="Undecided")])), lambda p: "ok", progress=False
    )
    assert result.cases["status"].tolist() == ["degraded"]
    assert result.scores["status"].tolist() == ["degraded"]
    assert not result.passed
    report = result.report()
    assert "DEGRADED: a" in report
    assert "Undecided:" in report and "cannot tell" in report
    assert result.summary().set_index("check_id").loc["Undecided", "degraded"] == 1
