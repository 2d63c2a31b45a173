"""Cube checks: ``intent``, ``refusal`` and ``insight`` (cube spec).

``expectedIntent`` compares case-insensitively; ``expectedRefusalContains`` and ``expectedInsightContains``
are case-sensitive substrings. All compare in Unicode NFC (docs/cube-yaml.md), so an accent typed as a combining
mark matches the composed one. An intent mismatch fails the case and the runner records the turn's other
checks as not checked.
"""

from __future__ import annotations

from evalnb._text import nfc
from evalnb.checks._registry import CheckContext, Score, builtin
from evalnb.suite import InsightCheck, IntentCheck, RefusalCheck

__all__ = ["insight_check", "intent_check", "refusal_check"]


@builtin("intent", needs=())
def intent_check(spec: IntentCheck, ctx: CheckContext) -> Score:
    got = ctx.response.intent
    if got is None or not str(got).strip():
        return Score.of(False, f"no intent returned, expected {spec.expected}")
    if nfc(str(got).strip()).upper() == nfc(spec.expected).upper():
        return Score.of(True, f"intent {spec.expected}")
    # The report prefixes the check id: `intent: expected INSIGHT, got QUERY` (cube spec), not `intent: intent: ...`.
    return Score.of(False, f"expected {spec.expected}, got {str(got).strip().upper()}")


@builtin("refusal", needs=())
def refusal_check(spec: RefusalCheck, ctx: CheckContext) -> Score:
    reason = ctx.response.refusal
    if reason is None:
        return Score.of(False, f"no refusal reason returned; expected it to contain {spec.contains!r}")
    if nfc(spec.contains) in nfc(reason):
        return Score.of(True, f"refusal reason contains {spec.contains!r}")
    return Score.of(False, f"refusal reason does not contain {spec.contains!r}: {reason[:120]!r}")


@builtin("insight", needs=())
def insight_check(spec: InsightCheck, ctx: CheckContext) -> Score:
    text = ctx.response.insight
    if text is None:
        return Score.of(False, f"no insight returned; missing {spec.contains!r}")
    text = nfc(text)
    missing = [s for s in spec.contains if nfc(s) not in text]
    if missing:
        found = len(spec.contains) - len(missing)
        return Score.of(
            False,
            f"insight is missing {missing!r} ({found}/{len(spec.contains)} found)",
            value=found / len(spec.contains),
        )
    return Score.of(True, f"insight contains all {len(spec.contains)} expected substring(s)")
