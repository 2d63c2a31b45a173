"""Checks of the response text against strings and JSON, and of the call's latency and cost: ``text_match``,
``json``, ``levenshtein``, ``latency``, ``cost`` (promptfoo's asserts map onto them, docs/promptfoo.md).

Each is pure (it looks at the response alone) and returns a :class:`~evalnb.checks.Score`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from evalnb._text import caseless, nfc
from evalnb.checks._registry import CheckContext, Score, builtin
from evalnb.errors import RegexTimeout
from evalnb.suite import JsonCheck, LevenshteinCheck, LimitCheck, TextMatchCheck

__all__ = ["find_json", "levenshtein"]


def _text(ctx: CheckContext) -> str:
    # promptfoo asserts look at the provider's output: the response text (a command agent's stdout without one).
    text = ctx.response.text
    return text if text is not None else (ctx.response.stdout or "")


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _negated(spec: Any, passed: bool, said: str) -> Score:
    ok = passed != spec.negate
    reason = f"{'not ' if spec.negate else ''}expected, and {said}" if spec.negate else said
    return Score.of(ok, reason)


# --------------------------------------------------------------------------------------------------
# text_match
# --------------------------------------------------------------------------------------------------


@builtin("text_match", needs=())
def text_match(spec: TextMatchCheck, ctx: CheckContext) -> Score:
    from evalnb.checks._text import regex_search

    got = nfc(_text(ctx))
    values = [nfc(v) for v in spec.values]
    if not spec.case_sensitive:
        got, values = caseless(got), [caseless(v) for v in values]
    how = spec.how
    shown = ", ".join(repr(_short(v)) for v in spec.values)
    if how == "regex":
        try:
            found = regex_search(spec.values[0], _text(ctx)) is not None
        except RegexTimeout as exc:
            return Score.degraded(str(exc))
        said = f"pattern '{spec.values[0]}' {'found' if found else 'not found'} in the response"
        return _negated(spec, found, said)
    if how == "equals":
        hit = got == values[0]
        said = "the response equals " + shown if hit else f"the response {_short(got)!r} is not {shown}"
    elif how == "contains":
        hit = values[0] in got
        said = f"the response {'contains' if hit else 'does not contain'} {shown}"
    elif how == "starts_with":
        hit = got.startswith(values[0])
        said = f"the response {'starts' if hit else 'does not start'} with {shown}"
    elif how == "any":
        hits = [v for v, w in zip(spec.values, values, strict=True) if w in got]
        hit = bool(hits)
        said = f"the response contains {hits[0]!r}" if hit else f"the response contains none of {shown}"
    else:
        missing = [v for v, w in zip(spec.values, values, strict=True) if w not in got]
        hit = not missing
        said = f"the response contains all of {shown}" if hit else f"the response lacks {missing!r}"
    if not spec.case_sensitive:
        said += " (case-insensitive)"
    return _negated(spec, hit, said)


# --------------------------------------------------------------------------------------------------
# json
# --------------------------------------------------------------------------------------------------


def find_json(text: str) -> list[Any]:
    """The JSON objects and arrays found inside a text, in order (what ``contains-json`` looks for).

    From each ``{`` or ``[``, the shortest span that parses is taken; scanning goes on after it.

    Example::

        find_json('Sure: {"a": 1} and [2, 3].')
        # [{'a': 1}, [2, 3]]
    """
    decoder = json.JSONDecoder()
    found: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] in "{[":
            try:
                value, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                i += 1
                continue
            found.append(value)
            i = end
        else:
            i += 1
    return found


def _schema_problem(value: Any, schema: dict[str, Any]) -> str | None:
    try:
        import jsonschema
    except ImportError:
        raise ImportError(
            'checking JSON against a schema needs jsonschema: pip install "evalnb[promptfoo]"'
        ) from None
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    first = errors[0]
    where = "/".join(str(p) for p in first.absolute_path) or "the top level"
    return f"{first.message} (at {where})"


@builtin("json", needs=())
def json_check(spec: JsonCheck, ctx: CheckContext) -> Score:
    text = _text(ctx)
    if spec.how == "contains":
        candidates = find_json(text)
        if not candidates:
            return _negated(spec, False, "the response holds no JSON object or array")
    else:
        try:
            candidates = [json.loads(text)]
        except json.JSONDecodeError as exc:
            return _negated(spec, False, f"the response is not JSON ({exc.msg} at character {exc.pos})")
    if spec.how == "equals":
        same = candidates[0] == spec.value
        said = "the response's JSON equals the expected value" if same else "the response's JSON differs"
        return _negated(spec, same, said)
    if spec.json_schema is None:
        return _negated(spec, True, f"the response {'holds' if spec.how == 'contains' else 'is'} JSON")
    try:
        problems = [_schema_problem(c, spec.json_schema) for c in candidates]
    except ImportError as exc:
        return Score.degraded(str(exc))
    if any(p is None for p in problems):
        return _negated(spec, True, "the response's JSON matches the schema")
    return _negated(spec, False, f"the response's JSON does not match the schema: {problems[0]}")


# --------------------------------------------------------------------------------------------------
# levenshtein
# --------------------------------------------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    """The edit distance (insertions, deletions, substitutions) between two texts.

    Example::

        levenshtein("kitten", "sitting")
        # 3
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@builtin("levenshtein", needs=())
def levenshtein_check(spec: LevenshteinCheck, ctx: CheckContext) -> Score:
    distance = levenshtein(_text(ctx), spec.value)
    close = distance <= spec.threshold
    ok = close != spec.negate
    reason = (
        f"edit distance {distance} to {_short(spec.value)!r} ({'<=' if close else '>'} {spec.threshold:g})"
    )
    return Score(value=float(distance), passed=ok, reason=reason)


# --------------------------------------------------------------------------------------------------
# latency and cost
# --------------------------------------------------------------------------------------------------


@builtin("latency", needs=())
def latency_check(spec: LimitCheck, ctx: CheckContext) -> Score:
    ms = ctx.response.latency_ms
    if ms is None:
        return Score(value=None, passed=False, reason="latency not evaluated: the call's latency is unknown")
    if spec.threshold is None:
        return Score(
            value=float(ms), passed=True, reason=f"latency {ms:.0f} ms (no threshold: recorded only)"
        )
    ok = ms <= spec.threshold
    return Score(
        value=float(ms),
        passed=ok,
        reason=f"latency {ms:.0f} ms ({'<=' if ok else '>'} {spec.threshold:g} ms)",
    )


def _reported_cost(ctx: CheckContext) -> float | None:
    for where in (ctx.response.meta, ctx.response.usage):
        if isinstance(where, dict):
            value = where.get("cost")
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return float(value)
    return None


@builtin("cost", needs=())
def cost_check(spec: LimitCheck, ctx: CheckContext) -> Score:
    cost = _reported_cost(ctx)
    if cost is None:
        # Never a pass without evidence: nothing says what the call cost.
        return Score(
            value=None,
            passed=False,
            reason="cost not evaluated: the response reports no cost "
            "(return usage={'cost': USD} or meta={'cost': USD} from the agent)",
        )
    if spec.threshold is None:
        return Score(value=cost, passed=True, reason=f"cost ${cost:.6g} (no threshold: recorded only)")
    ok = cost <= spec.threshold
    return Score(
        value=cost,
        passed=ok,
        reason=f"cost ${cost:.6g} ({'<=' if ok else '>'} ${spec.threshold:g})",
    )
