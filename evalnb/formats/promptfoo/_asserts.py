"""promptfoo asserts -> evalnb check specs, with the same meaning (docs/promptfoo.md has the table).

:func:`to_checks` maps one assert of one test (its values rendered with the test's vars); what evalnb cannot run
goes to :meth:`Context.unsupported` (an error, or a warning when the load skips it); a malformed assert to
:meth:`Context.invalid`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from evalnb.formats._common import nearest, shown, type_name
from evalnb.formats.promptfoo._nunjucks import _TemplateError, _TemplateUnsupported, js_str, render
from evalnb.suite import (
    CheckSpec,
    JsonCheck,
    LevenshteinCheck,
    LimitCheck,
    LLMJudgeCheck,
    SemanticSimilarityCheck,
    TextMatchCheck,
)

if TYPE_CHECKING:
    from evalnb.formats.promptfoo._context import Context

__all__ = ["ASSERT_KEYS", "MAPPED", "PROMPTFOO_TYPES", "to_checks"]

# Every assert type promptfoo defines (without `not-`), so a type it knows and evalnb cannot run is told apart
# from a misspelt one.
PROMPTFOO_TYPES = frozenset(
    [
        "answer-relevance",
        "assert-set",
        "bleu",
        "classifier",
        "contains",
        "contains-all",
        "contains-any",
        "contains-html",
        "contains-json",
        "contains-sql",
        "contains-xml",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "cost",
        "equals",
        "factuality",
        "finish-reason",
        "g-eval",
        "gleu",
        "guardrails",
        "icontains",
        "icontains-all",
        "icontains-any",
        "is-html",
        "is-json",
        "is-refusal",
        "is-sql",
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "is-valid-openai-tools-call",
        "is-xml",
        "javascript",
        "latency",
        "levenshtein",
        "llm-rubric",
        "meteor",
        "model-graded-closedqa",
        "model-graded-factuality",
        "moderation",
        "perplexity",
        "perplexity-score",
        "pi",
        "python",
        "regex",
        "rouge-n",
        "ruby",
        "search-rubric",
        "select-best",
        "similar",
        "starts-with",
        "tool-call-f1",
        "trace-error-spans",
        "trace-span-count",
        "trace-span-duration",
        "webhook",
        "word-count",
        "max-score",
        "human",
    ]
)

MAPPED = {
    "equals": "text_match (how=equals), or json (how=equals) for an object value",
    "contains": "text_match (how=contains, case-sensitive)",
    "icontains": "text_match (how=contains, case-insensitive)",
    "contains-any": "text_match (how=any)",
    "contains-all": "text_match (how=all)",
    "icontains-any": "text_match (how=any, case-insensitive)",
    "icontains-all": "text_match (how=all, case-insensitive)",
    "starts-with": "text_match (how=starts_with)",
    "regex": "text_match (how=regex)",
    "is-json": "json (how=is, schema)",
    "contains-json": "json (how=contains, schema)",
    "similar": "SemanticSimilarity (wordllama, offline)",
    "llm-rubric": "llm_judge",
    "model-graded-closedqa": "llm_judge",
    "levenshtein": "levenshtein",
    "latency": "latency",
    "cost": "cost",
}
"""The asserts evalnb runs and the check each becomes (``not-`` forms too, where promptfoo has them)."""

_NO_NOT = {"llm-rubric", "model-graded-closedqa", "latency", "cost"}

ASSERT_KEYS = (
    "type",
    "value",
    "threshold",
    "weight",
    "metric",
    "transform",
    "provider",
    "rubricPrompt",
    "config",
    "contextTransform",
    "assert",
    "$ref",
)

_WHY = {
    "javascript": "evalnb runs no JavaScript; write the check in Python with evalnb.checks.register",
    "python": "evalnb does not run Python from a promptfoo config; register the function with "
    "evalnb.checks.register and name it in a suite of evalnb's",
    "webhook": "evalnb calls no webhooks from a suite",
}


def _split(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list) and value and all(isinstance(v, (str, int, float)) for v in value):
        return [js_str(v) for v in value]
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None if value is None else js_str(value)
    if isinstance(value, (str, int, float)):
        return js_str(value)
    return None


def _number(raw: Mapping[str, Any], key: str, ctx: Context, loc: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        ctx.invalid("TYPE_MISMATCH", f"'{key}' must be a number, got {type_name(value)}", f"{loc}.{key}")
        return None
    return float(value)


def _schema(value: Any, ctx: Context, loc: str) -> tuple[bool, dict[str, Any] | None]:
    """The JSON Schema an ``is-json``/``contains-json`` value gives (a mapping, a YAML/JSON text or a file)."""
    if value is None or value == "":
        return True, None
    if isinstance(value, str):
        try:
            value = ctx.read_data(value) if value.startswith("file://") else _yaml(value)
        except (OSError, ValueError) as exc:
            ctx.invalid("INVALID_VALUE", f"the JSON schema could not be read: {exc}", f"{loc}.value")
            return False, None
    if not isinstance(value, dict):
        ctx.invalid(
            "TYPE_MISMATCH", f"a JSON schema must be a mapping, got {type_name(value)}", f"{loc}.value"
        )
        return False, None
    return True, value


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _rendered(value: Any, variables: Mapping[str, Any], ctx: Context, loc: str) -> Any:
    # Assert values are templates rendered with the test's vars, as prompts are (docs/promptfoo.md).
    try:
        if isinstance(value, str):
            return render(value, variables)
        if isinstance(value, list):
            return [render(v, variables) if isinstance(v, str) else v for v in value]
    except _TemplateUnsupported as exc:
        ctx.template_error(exc, f"{loc}.value", unsupported=True)
        return None
    except _TemplateError as exc:
        ctx.template_error(exc, f"{loc}.value", unsupported=False)
        return None
    return value


def to_checks(raw: Any, variables: Mapping[str, Any], ctx: Context, loc: str) -> list[CheckSpec]:
    """The checks of one promptfoo assert (none when it is left out or malformed, which ``ctx`` records)."""
    if not isinstance(raw, dict):
        ctx.invalid("TYPE_MISMATCH", f"an assert must be a mapping, got {type_name(raw)}", loc)
        return []
    if "$ref" in raw:
        raw = ctx.resolve_ref(raw, loc)
        if raw is None:
            return []
    if _misspelt_key(raw, ctx, loc):
        return []
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind.strip():
        code = "MISSING_FIELD" if kind is None else "TYPE_MISMATCH"
        ctx.invalid(code, f"the assert at {loc} needs a 'type' (a string such as 'contains')", f"{loc}.type")
        return []
    negate = kind.startswith("not-")
    base = kind[4:] if negate else kind
    if base not in PROMPTFOO_TYPES:
        hint = nearest(base, sorted(PROMPTFOO_TYPES))
        ctx.invalid(
            "INVALID_VALUE",
            f"unknown assert type {shown(kind)}" + (f"; did you mean '{hint}'?" if hint else ""),
            f"{loc}.type",
            suggestion=hint,
        )
        return []
    if base == "assert-set":
        return _assert_set(raw, variables, ctx, loc, negate)
    if base not in MAPPED or (negate and base in _NO_NOT):
        why = _WHY.get(base, "evalnb has no check with its meaning")
        ctx.unsupported(kind, f"the assert type {kind!r} cannot run in evalnb ({why})", f"{loc}.type")
        return []
    if _runs_code(raw, kind, ctx, loc):
        return []
    weight = _number(raw, "weight", ctx, loc)
    threshold = _number(raw, "threshold", ctx, loc)
    if weight == 0 and not (base == "cost" and threshold is None):
        ctx.unsupported(
            "weight: 0",
            f"the {kind!r} assert has weight 0: promptfoo never fails a test on it, and evalnb has no "
            "report-only checks",
            f"{loc}.weight",
        )
        return []
    if raw.get("provider") is not None:
        ctx.note_grader(raw["provider"])
    label = raw.get("metric") if isinstance(raw.get("metric"), str) and raw.get("metric") else kind
    value = _rendered(raw.get("value"), variables, ctx, loc)
    build = _BUILDERS[base]
    return build(
        kind=kind, base=base, negate=negate, value=value, threshold=threshold, label=label, ctx=ctx, loc=loc
    )


def _misspelt_key(raw: Mapping[str, Any], ctx: Context, loc: str) -> bool:
    """Whether the assert has a key that is a near miss of a key it lacks (recorded as UNKNOWN_FIELD)."""
    for key in raw:
        if key not in ASSERT_KEYS:
            hint = nearest(key, ASSERT_KEYS)
            if hint is not None and hint not in raw:
                ctx.invalid(
                    "UNKNOWN_FIELD",
                    f"unknown key {shown(key)} in {loc}; did you mean '{hint}'?",
                    f"{loc}.{key}",
                    suggestion=hint,
                )
                return True
    return False


def _runs_code(raw: Mapping[str, Any], kind: str, ctx: Context, loc: str) -> bool:
    """Whether the assert needs what evalnb cannot run (a JavaScript transform, a rubric prompt); recorded."""
    for key, why in (
        ("transform", "evalnb runs no JavaScript transforms of the output"),
        ("contextTransform", "evalnb runs no JavaScript transforms"),
        ("rubricPrompt", "evalnb's judge writes its own prompt"),
    ):
        if raw.get(key) not in (None, ""):
            ctx.unsupported(key, f"'{key}' of the {kind!r} assert cannot run ({why})", f"{loc}.{key}")
            return True
    return False


def _assert_set(
    raw: Mapping[str, Any], variables: Mapping[str, Any], ctx: Context, loc: str, negate: bool
) -> list[CheckSpec]:
    # docs/promptfoo.md: an assert-set passes when all its asserts pass, unless a threshold says a share: the
    # first is evalnb's rule for a case's checks, so such a set is its asserts.
    if negate or raw.get("threshold") is not None:
        what = "not-assert-set" if negate else "an assert-set with a threshold"
        ctx.unsupported(
            "assert-set", f"{what} cannot run (evalnb passes a case when all its checks pass)", loc
        )
        return []
    inner = raw.get("assert")
    if not isinstance(inner, list):
        ctx.invalid(
            "TYPE_MISMATCH",
            f"'assert' of an assert-set must be a list, got {type_name(inner)}",
            f"{loc}.assert",
        )
        return []
    out: list[CheckSpec] = []
    for i, item in enumerate(inner):
        out += to_checks(item, variables, ctx, f"{loc}.assert[{i}]")
    return out


Builder = Callable[..., list[CheckSpec]]


def _need_text(kind: str, value: Any, ctx: Context, loc: str) -> str | None:
    text = _text(value)
    if text is None:
        what = "missing" if value is None else f"a {type_name(value)}"
        code = "MISSING_FIELD" if value is None else "TYPE_MISMATCH"
        ctx.invalid(code, f"the {kind!r} assert needs a text 'value', got {what}", f"{loc}.value")
    return text


def _equals(
    *, kind: str, negate: bool, value: Any, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    if isinstance(value, (dict, list)):
        return [JsonCheck(how="equals", value=value, negate=negate, label=label)]
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:  # promptfoo compares a value that is JSON as JSON (docs/promptfoo.md, the asserts: equals)
            return [JsonCheck(how="equals", value=json.loads(value), negate=negate, label=label)]
        except json.JSONDecodeError:
            pass
    text = _need_text(kind, value, ctx, loc)
    return [] if text is None else [TextMatchCheck(how="equals", values=[text], negate=negate, label=label)]


def _contains(
    *, kind: str, base: str, negate: bool, value: Any, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    text = _need_text(kind, value, ctx, loc)
    if text is None:
        return []
    how: Literal["starts_with", "contains"] = "starts_with" if base == "starts-with" else "contains"
    return [
        TextMatchCheck(how=how, values=[text], case_sensitive=base != "icontains", negate=negate, label=label)
    ]


def _contains_many(
    *, kind: str, base: str, negate: bool, value: Any, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    values = _split(value)
    if not values:
        ctx.invalid(
            "INVALID_VALUE" if value is not None else "MISSING_FIELD",
            f"the {kind!r} assert needs a list of texts (or one comma-separated text) as 'value'",
            f"{loc}.value",
        )
        return []
    how: Literal["any", "all"] = "any" if base.endswith("-any") else "all"
    return [
        TextMatchCheck(
            how=how, values=values, case_sensitive=not base.startswith("i"), negate=negate, label=label
        )
    ]


def _regex(
    *, kind: str, negate: bool, value: Any, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    from evalnb.checks._text import compile_pattern

    text = _need_text(kind, value, ctx, loc)
    if text is None:
        return []
    try:
        compile_pattern(text)
    except ValueError as exc:
        ctx.invalid(
            "INVALID_VALUE", f"{shown(text)} is not a valid regular expression: {exc}", f"{loc}.value"
        )
        return []
    return [TextMatchCheck(how="regex", values=[text], negate=negate, label=label)]


def _json(
    *, base: str, negate: bool, value: Any, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    ok, schema = _schema(value, ctx, loc)
    if not ok:
        return []
    how: Literal["contains", "is"] = "contains" if base == "contains-json" else "is"
    return [JsonCheck(how=how, json_schema=schema, negate=negate, label=label)]


def _similar(
    *,
    kind: str,
    negate: bool,
    value: Any,
    threshold: float | None,
    label: str,
    ctx: Context,
    loc: str,
    **_: Any,
) -> list[CheckSpec]:
    text = _need_text(kind, value, ctx, loc)
    if text is None:
        return []
    ctx.note_similar()
    t = (
        0.75 if threshold is None else threshold
    )  # promptfoo's default (docs/promptfoo.md, the asserts: similar)
    if not -1 <= t <= 1:
        ctx.invalid(
            "INVALID_VALUE", f"'threshold' of {kind!r} must be in [-1, 1], got {t:g}", f"{loc}.threshold"
        )
        return []
    return [
        SemanticSimilarityCheck(
            type="not-similar" if negate else "similar",
            value=text,
            threshold=t,
            label=None if label == kind else label,
        )
    ]


def _rubric(
    *, kind: str, value: Any, threshold: float | None, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    text = _need_text(kind, value, ctx, loc)
    if text is None or not text.strip():
        if text is not None:
            ctx.invalid("BLANK_FIELD", f"the {kind!r} assert needs a rubric in 'value'", f"{loc}.value")
        return []
    if threshold is not None:
        ctx.note_rubric_threshold(loc)
    return [LLMJudgeCheck(rubric=text, label=label)]


def _levenshtein(
    *,
    kind: str,
    negate: bool,
    value: Any,
    threshold: float | None,
    label: str,
    ctx: Context,
    loc: str,
    **_: Any,
) -> list[CheckSpec]:
    text = _need_text(kind, value, ctx, loc)
    if text is None:
        return []
    t = 5.0 if threshold is None else threshold
    if t < 0:
        ctx.invalid("INVALID_VALUE", f"'threshold' of {kind!r} must not be negative", f"{loc}.threshold")
        return []
    return [
        LevenshteinCheck(
            value=text, threshold=t, negate=negate, label=None if label == "levenshtein" else label
        )
    ]


def _latency(
    *, kind: str, threshold: float | None, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    if threshold is None or threshold < 0:
        ctx.invalid(
            "MISSING_FIELD" if threshold is None else "INVALID_VALUE",
            f"the {kind!r} assert needs a 'threshold' in milliseconds (0 or more)",
            f"{loc}.threshold",
        )
        return []
    return [LimitCheck(type="latency", threshold=threshold, label=None if label == "latency" else label)]


def _cost(
    *, kind: str, threshold: float | None, label: str, ctx: Context, loc: str, **_: Any
) -> list[CheckSpec]:
    if threshold is not None and threshold < 0:
        ctx.invalid("INVALID_VALUE", f"'threshold' of {kind!r} must not be negative", f"{loc}.threshold")
        return []
    return [LimitCheck(type="cost", threshold=threshold, label=None if label == "cost" else label)]


_BUILDERS: dict[str, Builder] = {
    "equals": _equals,
    "contains": _contains,
    "icontains": _contains,
    "starts-with": _contains,
    "contains-any": _contains_many,
    "contains-all": _contains_many,
    "icontains-any": _contains_many,
    "icontains-all": _contains_many,
    "regex": _regex,
    "is-json": _json,
    "contains-json": _json,
    "similar": _similar,
    "llm-rubric": _rubric,
    "model-graded-closedqa": _rubric,
    "levenshtein": _levenshtein,
    "latency": _latency,
    "cost": _cost,
}
