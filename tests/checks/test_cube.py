"""Cube checks: intent (case-insensitive), refusal and insight (case-sensitive substrings)."""

from __future__ import annotations

from evalnb.suite import InsightCheck, IntentCheck, RefusalCheck
from tests.checks._ctx import score


def test_intent_case_insensitive() -> None:
    assert score(IntentCheck(expected="QUERY"), intent="query").passed is True
    s = score(IntentCheck(expected="QUERY"), intent="Insight")
    assert s.passed is False and s.reason == "expected QUERY, got INSIGHT"
    assert score(IntentCheck(expected="REFUSED"), intent=None).passed is False


def test_refusal_case_sensitive_substring() -> None:
    spec = RefusalCheck(contains="cube")
    assert score(spec, refusal="I can only answer questions about the cube.").passed is True
    s = score(spec, refusal="I can only answer questions about the CUBE.")
    assert s.passed is False and "does not contain 'cube'" in s.reason
    assert score(spec, refusal=None).passed is False


def test_insight_lists_what_is_missing() -> None:
    spec = InsightCheck(contains=["Store Sales", "week-on-week"])
    assert score(spec, insight="Store Sales rose 3% week-on-week.").passed is True
    s = score(spec, insight="store sales rose 3% week-on-week.")
    assert s.passed is False and "'Store Sales'" in s.reason and s.value == 0.5
    assert score(spec, insight=None).passed is False
    assert score(spec, insight="").passed is False
