"""The JSON evaluation dataset (dataset spec): prompts, expected responses and named evaluators.

Three shapes load: the versioned object (``schemaVersion`` ``1.x.y``, recommended), the legacy array of
items, and the older ``{"prompts": [...], "expected_responses": [...]}`` pair of lists. Every key of the
published schema is accepted, output keys included (``response``, ``scores``, ``status`` ...) so that output
documents load too, plus ``testId``, ``category``, ``notes`` and a root ``description`` from the source
document. Any other key is ``UNKNOWN_FIELD``.

Evaluators are resolved once, here: the file's ``default_evaluators`` (or the system defaults Relevance and
Coherence), then the item's ``evaluators`` with ``evaluators_mode`` extend/replace, then the turn's. Each
``Turn`` of the model holds its final list of checks.

Example:
    >>> suite = load_text('[{"prompt": "What is 2+2?", "expected_response": "4"}]')
    >>> [c.name for c in suite.cases[0].turns[0].checks]
    ['Relevance', 'Coherence']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, WithJsonSchema

from evalnb.checks import registry
from evalnb.formats._common import (
    Edge,
    Loc,
    NonBlank,
    Problems,
    custom_error,
    fail,
    nearest,
    type_name,
)
from evalnb.suite import (
    JUDGED_METRICS,
    Case,
    CheckSpec,
    CitationsCheck,
    CustomCheck,
    ExactMatchCheck,
    JudgedMetricCheck,
    PartialMatchCheck,
    RetrievalQueryCheck,
    RetrievalResultCheck,
    Suite,
    Turn,
)

__all__ = [
    "LATEST_VERSION",
    "STARTER",
    "DatasetDoc",
    "EvaluatorMap",
    "is_legacy",
    "load_data",
    "load_text",
    "parse",
    "to_versioned",
]

LATEST_VERSION = "1.7.0"  # the published schema evalnb follows (see its changelog)
# Published changelog: per-prompt evaluator configuration arrived in 1.1.0, multi-turn in 1.2.0.
EVALUATORS_SINCE = (1, 1, 0)
TURNS_SINCE = (1, 2, 0)
MAX_TURNS = 20
SYSTEM_DEFAULTS: dict[str, dict[str, Any]] = {"Relevance": {}, "Coherence": {}}
BUILTIN_EVALUATORS = (
    *JUDGED_METRICS,
    "Citations",
    "ExactMatch",
    "PartialMatch",
    "RetrievalQuery",
    "RetrievalResult",
)
_EVALUATOR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # published schema: EvaluatorMap.propertyNames
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


# ------------------------------------------------------------------------------------------------------
# Evaluator options (published schema: LlmEvaluatorOptions, CitationsOptions, ...)
# ------------------------------------------------------------------------------------------------------


def _whole(value: float) -> float:
    # The model scores the 1-5 metrics on whole numbers; a fractional threshold would be silently rounded.
    if value != int(value):
        raise custom_error("INVALID_VALUE", f"must be a whole number from 1 to 5, got {value}")
    return value


class LlmEvaluatorOptions(Edge):
    """Relevance, Coherence, Groundedness, Similarity: pass at ``score >= threshold`` (1..5, default 3)."""

    threshold: Annotated[float, Field(ge=1, le=5), AfterValidator(_whole)] = 3


class CitationsOptions(Edge):
    """Citations: pass at ``count >= threshold`` (default 1)."""

    threshold: int = Field(default=1, ge=1)
    citation_format: Literal["oai_unicode", "bracket", "markdown", "mixed"] = "oai_unicode"


class ExactMatchOptions(Edge):
    """ExactMatch: the response contains the expected string (both trimmed)."""

    case_sensitive: bool = False


class PartialMatchOptions(Edge):
    """PartialMatch: token F1 against the expected response, pass at ``value >= threshold``."""

    threshold: float = Field(default=0.5, ge=0, le=1)
    case_sensitive: bool = False


class RetrievalQueryOptions(Edge):
    """RetrievalQuery (published schema 1.5.0): checks the queries the agent's retrieval issued."""

    capability: NonBlank
    selector: NonBlank
    includes: list[NonBlank] | None = None
    excludes: list[NonBlank] | None = None


class RetrievalExpectedItem(Edge):
    """One claim the retrieved evidence must support."""

    retrievalExtract_contains: NonBlank


class RetrievalResultOptions(Edge):
    """RetrievalResult (published schema 1.5.0): checks what the agent's retrieval returned."""

    capability: NonBlank
    max_rank: int = Field(default=10, ge=1)
    min_expected_count: int | None = Field(default=None, ge=1)
    expected_items: Annotated[list[RetrievalExpectedItem], Field(min_length=1)] | None = None


class CustomEvaluatorOptions(Edge):
    """Options of a user-registered check; evalnb passes them to the check as keyword arguments."""

    model_config = ConfigDict(extra="allow")


class EvaluatorMap(Edge):
    """Evaluator name -> options (``{}`` = defaults). Other identifiers name user-registered checks."""

    model_config = ConfigDict(extra="allow")

    Relevance: LlmEvaluatorOptions | None = None
    Coherence: LlmEvaluatorOptions | None = None
    Groundedness: LlmEvaluatorOptions | None = None
    Similarity: LlmEvaluatorOptions | None = None
    Citations: CitationsOptions | None = None
    ExactMatch: ExactMatchOptions | None = None
    PartialMatch: PartialMatchOptions | None = None
    RetrievalQuery: RetrievalQueryOptions | None = None
    RetrievalResult: RetrievalResultOptions | None = None


_OPTIONS: dict[str, type[Edge]] = {
    **{m: LlmEvaluatorOptions for m in JUDGED_METRICS},
    "Citations": CitationsOptions,
    "ExactMatch": ExactMatchOptions,
    "PartialMatch": PartialMatchOptions,
    "RetrievalQuery": RetrievalQueryOptions,
    "RetrievalResult": RetrievalResultOptions,
}

# Validated entry by entry (each evaluator's own options model, user checks by their signature), so the
# document-level model keeps the map open; the JSON Schema points editors at the typed EvaluatorMap.
_EMAP_MARK = "x-evalnb-evaluator-map"
Evaluators = Annotated[dict[str, Any], WithJsonSchema({_EMAP_MARK: True})]


# ------------------------------------------------------------------------------------------------------
# Document models (published schema: SingleTurnEvaluation, MultiTurnThread, Turn, DocumentMetadata ...)
# ------------------------------------------------------------------------------------------------------


class CitationDoc(Edge):
    """A citation reference (output documents)."""

    model_config = ConfigDict(extra="allow")

    index: int = Field(ge=1)
    text: str | None = None
    source: str | None = None


class ErrorDoc(Edge):
    """A turn or item error (output documents)."""

    code: NonBlank
    message: NonBlank


class ThreadSummaryDoc(Edge):
    """Aggregate statistics of a thread (output documents)."""

    turns_total: int = Field(ge=1)
    turns_passed: int = Field(ge=0)
    turns_failed: int = Field(ge=0)
    turns_partial: int = Field(ge=0)
    turns_errored: int = Field(ge=0)
    overall_status: Literal["pass", "fail", "partial", "error"]


Status = Literal["pass", "fail", "partial", "error"]


class TurnDoc(Edge):
    """One turn of a conversation; also the core of a single-turn item."""

    prompt: NonBlank
    expected_response: str | None = None
    context: str | None = None
    evaluators: Evaluators | None = None
    evaluators_mode: Literal["extend", "replace"] | None = None
    response: str | None = None
    citations: list[CitationDoc] | None = None
    scores: dict[str, Any] | None = None
    diagnostics: dict[str, Any] | None = None
    status: Status | None = None
    error: ErrorDoc | None = None
    extensions: dict[str, Any] | None = None


class SingleItemDoc(TurnDoc):
    """A single-turn item: one prompt, optionally its expected response."""

    name: NonBlank | None = None
    testId: NonBlank | None = None
    category: NonBlank | None = None
    notes: str | None = None


def _turn_count(turns: list[Any]) -> list[Any]:
    # dataset spec: a conversation has 1 to 20 turns.
    if not turns:
        raise custom_error("MISSING_FIELD", "must list at least one turn")
    if len(turns) > MAX_TURNS:
        raise custom_error("INVALID_VALUE", f"may list at most {MAX_TURNS} turns, got {len(turns)}")
    return turns


class ThreadItemDoc(Edge):
    """A multi-turn item: named turns sent in order as one conversation."""

    turns: Annotated[list[TurnDoc], AfterValidator(_turn_count)]
    name: NonBlank | None = None
    description: str | None = None
    testId: NonBlank | None = None
    category: NonBlank | None = None
    notes: str | None = None
    evaluators: Evaluators | None = None
    evaluators_mode: Literal["extend", "replace"] | None = None
    conversation_id: str | None = None
    summary: ThreadSummaryDoc | None = None
    extensions: dict[str, Any] | None = None


class MetadataDoc(Edge):
    """Optional metadata about the document."""

    name: str | None = None
    description: str | None = None
    createdAt: str | None = None
    createdBy: str | None = None
    evaluatedAt: str | None = None
    tags: list[str] | None = None
    agentId: str | None = None
    agentName: str | None = None
    cliVersion: str | None = None
    extensions: dict[str, Any] | None = None


class DatasetDoc(Edge):
    """A versioned dataset document (the shape ``evalnb schema dataset-json`` describes)."""

    schema_uri: str | None = Field(default=None, alias="$schema")
    schemaVersion: str = Field(pattern=r"^1\.\d+\.\d+$")
    description: str | None = None
    metadata: MetadataDoc | None = None
    default_evaluators: Evaluators | None = None
    items: Annotated[list[SingleItemDoc | ThreadItemDoc], Field(min_length=1)]


class _Root(DatasetDoc):
    # What is validated in one go: version and items are checked separately, with better messages.
    schemaVersion: str | None = None  # type: ignore[assignment]
    items: list[Any]


def _min_one_prompt(prompts: list[str]) -> list[str]:
    if not prompts:
        raise custom_error("MISSING_FIELD", "must list at least one prompt")
    return prompts


class LegacyPairsDoc(Edge):
    """The older legacy shape: prompts and expected responses paired in order."""

    prompts: Annotated[list[NonBlank], AfterValidator(_min_one_prompt)]
    expected_responses: list[str] | None = None


# ------------------------------------------------------------------------------------------------------
# Parsing
# ------------------------------------------------------------------------------------------------------


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse(text: str) -> Any:
    """Parse JSON text strictly: no NaN/Infinity, no duplicate keys; failures are ``MALFORMED_JSON``."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        fail("MALFORMED_JSON", exc.msg, f"line {exc.lineno}, column {exc.colno}")
    except _DuplicateKey as exc:
        fail("MALFORMED_JSON", f"duplicate key {exc.args[0]!r} in an object")
    except RecursionError:
        fail("MALFORMED_JSON", "the document is nested too deeply")
    except (ValueError, TypeError, OverflowError) as exc:
        fail("MALFORMED_JSON", f"invalid JSON: {exc}")


# ------------------------------------------------------------------------------------------------------
# Evaluator resolution
# ------------------------------------------------------------------------------------------------------


def _evaluator(name: str, options: Any, loc: Loc, problems: Problems) -> CheckSpec | None:
    """One evaluator entry -> its check spec with final option values; None after recording what is wrong."""
    if not _EVALUATOR_NAME.match(name):
        problems.add(
            "INVALID_VALUE", f"evaluator name {name!r} must be an identifier (letters, digits, _)", loc
        )
        return None
    if not isinstance(options, Mapping):
        problems.add(
            "TYPE_MISMATCH",
            f"options of {name!r} must be an object ({{}} for defaults), got {type_name(options)}",
            loc,
        )
        return None
    model = _OPTIONS.get(name)
    if model is not None:
        o = problems.validate(model, options, prefix=loc)
        if isinstance(o, LlmEvaluatorOptions):
            return JudgedMetricCheck(type=name, threshold=int(o.threshold))  # type: ignore[arg-type]
        if isinstance(o, CitationsOptions):
            return CitationsCheck(threshold=o.threshold, citation_format=o.citation_format)
        if isinstance(o, ExactMatchOptions):
            return ExactMatchCheck(case_sensitive=o.case_sensitive)
        if isinstance(o, PartialMatchOptions):
            return PartialMatchCheck(threshold=o.threshold, case_sensitive=o.case_sensitive)
        if isinstance(o, RetrievalQueryOptions):
            return RetrievalQueryCheck(settings=o.model_dump(exclude_none=True))
        if isinstance(o, RetrievalResultOptions):
            if o.expected_items is None and o.min_expected_count is None:
                # published schema: at least one of expected_items and min_expected_count.
                problems.add(
                    "MISSING_FIELD",
                    "RetrievalResult needs 'expected_items' or 'min_expected_count'",
                    (*loc, "expected_items"),
                )
                return None
            return RetrievalResultCheck(settings=o.model_dump(exclude_none=True))
        return None  # the options did not validate; validation recorded why
    # dataset spec: any other name is a check the user registered (evalnb.checks.register).
    registered = registry.user_definition(name)
    if registered is None:
        known = registry.known()
        hint = nearest(name, [*BUILTIN_EVALUATORS, *known])
        listing = ", ".join([*BUILTIN_EVALUATORS, *known])
        problems.add(
            "UNKNOWN_FIELD",
            f"unknown evaluator {name!r}"
            + (f"; did you mean {hint!r}?" if hint else "")
            + f" (known: {listing}; register your own with evalnb.checks.register)",
            loc,
            suggestion=hint,
        )
        return None
    # published schema (CustomEvaluatorOptions): `threshold` is applied to the check's value by the runner and
    # `options` is forwarded to the check; other keys are evalnb's flat form of the same options.
    threshold = options.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        problems.add("TYPE_MISMATCH", "'threshold' must be a number", (*loc, "threshold"))
        return None
    nested = options.get("options", {})
    if not isinstance(nested, Mapping):
        problems.add("TYPE_MISMATCH", "'options' must be an object", (*loc, "options"))
        return None
    flat = {k: v for k, v in options.items() if k not in ("threshold", "options")}
    options = {**flat, **nested}
    loc_of = {k: (*loc, "options", k) if k in nested else (*loc, k) for k in options}
    allowed = registered.options  # what the check said it takes, at registration (None: anything)
    unknown = [key for key in options if allowed is not None and key not in allowed]
    for key in unknown:
        hint = nearest(key, allowed or [])
        problems.add(
            "UNKNOWN_FIELD",
            f"check {name!r} takes no option {key!r}"
            + (f"; did you mean {hint!r}?" if hint else f" (it takes: {', '.join(allowed or []) or 'none'})"),
            loc_of[key],
            suggestion=hint,
        )
    if unknown:
        return None
    return CustomCheck(
        check=name, settings=dict(options), threshold=None if threshold is None else float(threshold)
    )


def _apply(
    base: dict[str, CheckSpec], raw: Mapping[str, Any], loc: Loc, problems: Problems
) -> dict[str, CheckSpec]:
    """dataset spec: ``extend`` (default) merges over ``base``; ``replace`` keeps only the given ones.

    Reads ``evaluators`` and ``evaluators_mode`` from the parsed item or turn ``raw`` (validation reports
    a wrong type of either; here they are skipped), so evaluator errors join the others of the file.
    """
    given, mode = raw.get("evaluators"), raw.get("evaluators_mode")
    if not isinstance(given, Mapping):
        given = None
    if mode not in ("extend", "replace"):
        mode = None
    if given is None and mode is None:
        return dict(base)
    own: dict[str, CheckSpec] = {}
    for name, opts in (given or {}).items():
        spec = _evaluator(name, opts, (*loc, "evaluators", name), problems)
        if spec is not None:
            own[name] = spec
    if (mode or "extend") == "replace":
        return own
    merged = dict(base)
    merged.update(own)  # an item's options for a default evaluator replace the default's
    return merged


# ------------------------------------------------------------------------------------------------------
# Version gates
# ------------------------------------------------------------------------------------------------------


def _version(data: Mapping[str, Any]) -> tuple[int, int, int] | None:
    if "schemaVersion" not in data:
        return None
    raw = data["schemaVersion"]
    if not isinstance(raw, str):
        fail(
            "TYPE_MISMATCH",
            f"'schemaVersion' must be a string such as \"{LATEST_VERSION}\", got {type_name(raw)}",
            ("schemaVersion",),
        )
    m = _SEMVER.match(raw.strip())
    if m is None:
        fail(
            "UNSUPPORTED_VERSION",
            f"schemaVersion {raw!r} is not a semantic version (MAJOR.MINOR.PATCH)",
            ("schemaVersion",),
        )
    version = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if version[0] != 1:
        # dataset spec: compatible within a major version; evalnb reads 1.x.y.
        fail(
            "UNSUPPORTED_VERSION",
            f"schemaVersion {raw!r} is not supported; evalnb reads 1.x.y",
            ("schemaVersion",),
        )
    return version


def _gate(
    version: tuple[int, int, int] | None, since: tuple[int, int, int], what: str, loc: Loc, problems: Problems
) -> None:
    have = version or (1, 0, 0)
    if have < since:
        need = ".".join(map(str, since))
        said = ".".join(map(str, have)) if version else "none (a legacy document counts as 1.0.0)"
        problems.add(
            "UNSUPPORTED_VERSION",
            f"{what} needs schemaVersion {need} or later; this document's schemaVersion is {said}",
            loc,
        )


# ------------------------------------------------------------------------------------------------------
# Items -> cases
# ------------------------------------------------------------------------------------------------------

_TURN_OUTPUT = ("response", "citations", "scores", "diagnostics", "status", "error", "extensions")


def _meta(doc: Edge, keys: tuple[str, ...]) -> dict[str, Any]:
    dumped = doc.model_dump(mode="json", exclude_none=True)
    return {k: dumped[k] for k in keys if k in dumped}


def _case_id(raw: Mapping[str, Any], i: int) -> str:
    for key in ("testId", "name"):
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return f"item-{i + 1:03d}"


def _item(
    raw: Any, i: int, version: tuple[int, int, int] | None, defaults: dict[str, CheckSpec], problems: Problems
) -> Case | None:
    """One item -> its case, or None after recording every problem found in it."""
    loc: Loc = ("items", i)
    if not isinstance(raw, Mapping):
        problems.add("TYPE_MISMATCH", f"items[{i}] must be an object, got {type_name(raw)}", loc)
        return None
    has_prompt, has_turns = "prompt" in raw, "turns" in raw
    if has_prompt and has_turns:
        problems.add(
            "INVALID_VALUE",
            f"items[{i}] gives both 'prompt' and 'turns'; an item is one or the other",
            (*loc, "turns"),
        )
        return None
    if not has_prompt and not has_turns:
        near = [(key, hint) for key in raw if (hint := nearest(key, ["prompt", "turns"]))]
        if near:
            key, hint = near[0]
            problems.add(
                "UNKNOWN_FIELD",
                f"unknown key {key!r} in items[{i}]; did you mean {hint!r}?",
                (*loc, key),
                suggestion=hint,
            )
        else:
            problems.add(
                "MISSING_FIELD",
                f"items[{i}] needs 'prompt' (single turn) or 'turns' (a conversation)",
                (*loc, "prompt"),
            )
        return None
    before = len(problems)
    # Version gates are recorded first: at one location, an older schemaVersion explains the failure
    # better than its consequences.
    for key in ("evaluators", "evaluators_mode"):
        if key in raw:
            _gate(version, EVALUATORS_SINCE, f"'{key}'", (*loc, key), problems)
    if has_turns:
        _gate(version, TURNS_SINCE, "'turns' (multi-turn items)", (*loc, "turns"), problems)
        if "expected_response" in raw:
            problems.add(
                "INVALID_VALUE",
                f"items[{i}] has 'turns': give each turn its own 'expected_response'",
                (*loc, "expected_response"),
            )
        raw_turns = raw.get("turns")
        for t, turn in enumerate(raw_turns if isinstance(raw_turns, list) else []):
            if isinstance(turn, Mapping):
                for key in ("evaluators", "evaluators_mode"):
                    if key in turn:
                        _gate(version, EVALUATORS_SINCE, f"'{key}'", (*loc, "turns", t, key), problems)
        thread: ThreadItemDoc | None = problems.validate(ThreadItemDoc, raw, prefix=loc)
        base = _apply(defaults, raw, loc, problems)
        turn_checks = [
            list(_apply(base, turn, (*loc, "turns", t), problems).values())
            for t, turn in enumerate(raw_turns if isinstance(raw_turns, list) else [])
            if isinstance(turn, Mapping)
        ]
        if thread is None or len(problems) > before:
            return None
        model_turns = [
            Turn(
                prompt=td.prompt,
                expected=td.expected_response,
                context=td.context,
                checks=checks,
                meta=_meta(td, _TURN_OUTPUT),
            )
            for td, checks in zip(thread.turns, turn_checks, strict=True)
        ]
        case_id = thread.testId or thread.name or f"item-{i + 1:03d}"
        return Case(
            id=case_id,
            name=thread.name or case_id,
            category=thread.category,
            notes=thread.notes,
            runs=1,
            turns=model_turns,
            meta=_meta(thread, ("description", "conversation_id", "summary", "extensions")),
        )
    single: SingleItemDoc | None = problems.validate(SingleItemDoc, raw, prefix=loc)
    checks = _apply(defaults, raw, loc, problems)
    if single is None or len(problems) > before:
        return None
    turn = Turn(
        prompt=single.prompt,
        expected=single.expected_response,
        context=single.context,
        checks=list(checks.values()),
        meta=_meta(single, _TURN_OUTPUT),
    )
    case_id = single.testId or single.name or f"item-{i + 1:03d}"
    return Case(
        id=case_id,
        name=single.name or case_id,
        category=single.category,
        notes=single.notes,
        runs=1,
        turns=[turn],
    )


def is_legacy(data: Any) -> bool:
    """Whether a parsed document is a legacy dataset (no ``schemaVersion``)."""
    return isinstance(data, list) or (isinstance(data, Mapping) and "schemaVersion" not in data)


def to_versioned(data: Any) -> dict[str, Any] | None:
    """The versioned form of a legacy document, or None when it already is versioned.

    Nothing is dropped: items keep every key, in order; other root keys are kept after ``schemaVersion``.

    Example:
        >>> to_versioned([{"prompt": "Hi"}])
        {'schemaVersion': '1.7.0', 'items': [{'prompt': 'Hi'}]}
    """
    if not is_legacy(data):
        return None
    if isinstance(data, list):
        return {"schemaVersion": LATEST_VERSION, "items": data}
    if "prompts" in data or "expected_responses" in data:
        return {"schemaVersion": LATEST_VERSION, "items": _pair_items(data)}
    return {"schemaVersion": LATEST_VERSION, **data}


def _pair_items(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The items of the older ``{"prompts", "expected_responses"}`` shape; raises with all its errors."""
    problems = Problems(data)
    pairs: LegacyPairsDoc | None = problems.validate(LegacyPairsDoc, data)
    prompts, expected = data.get("prompts"), data.get("expected_responses")
    if isinstance(prompts, list) and isinstance(expected, list) and len(expected) != len(prompts):
        problems.add(
            "INVALID_VALUE",
            f"'expected_responses' has {len(expected)} entries for {len(prompts)} prompts; they pair in order",
            ("expected_responses",),
        )
    problems.raise_if_any()
    assert pairs is not None  # no problems means validation succeeded
    expected = pairs.expected_responses
    items: list[dict[str, Any]] = []
    for k, prompt in enumerate(pairs.prompts):
        item: dict[str, Any] = {"prompt": prompt}
        if expected is not None:
            item["expected_response"] = expected[k]
        items.append(item)
    return items


def load_data(data: Any, *, name: str | None = None) -> Suite:
    """Build a Suite from an already parsed document (any of the three shapes).

    Every error found is reported at once: the :class:`~evalnb.errors.SuiteError` raised is the first in
    document order and lists them all in ``.errors``. A ``schemaVersion`` evalnb cannot read stops the load
    on its own, since the rest of the document then follows rules evalnb does not know.

    Args:
        data: the parsed JSON.
        name: the suite name when the document has no ``metadata.name`` (the file's stem).
    """
    legacy = is_legacy(data)
    if isinstance(data, list):
        root: dict[str, Any] = {"items": data}
    elif isinstance(data, Mapping):
        if (
            "items" not in data
            and "schemaVersion" not in data
            and ("prompts" in data or "expected_responses" in data)
        ):
            root = {"items": _pair_items(data)}
        else:
            root = dict(data)
    else:
        fail("TYPE_MISMATCH", f"the top level must be an object or an array of items, got {type_name(data)}")
    version = _version(root)
    problems = Problems(root)
    if "default_evaluators" in root:
        _gate(version, EVALUATORS_SINCE, "'default_evaluators'", ("default_evaluators",), problems)
    if "items" not in root and not any(nearest(key, ["items"]) for key in root):
        # Validation's error in the dataset's words; recorded first, it is the one kept at this location.
        # (A near-miss key such as `itms` is reported by validation as the unknown key instead.)
        problems.add("MISSING_FIELD", "missing required key 'items' (the list of test items)", ("items",))
    doc: _Root | None = problems.validate(_Root, root)
    raw_items = root.get("items")
    if isinstance(raw_items, list) and not raw_items:
        # dataset spec: at least one item; an empty legacy array is an error too.
        problems.add(
            "MISSING_FIELD",
            "'items' must list at least one item",
            ("items",) if not isinstance(data, list) else (),
        )
    raw_defaults = root.get("default_evaluators")
    defaults: dict[str, CheckSpec] = {}
    for n, o in (raw_defaults if isinstance(raw_defaults, Mapping) else SYSTEM_DEFAULTS).items():
        spec = _evaluator(n, o, ("default_evaluators", n), problems)
        if spec is not None:
            defaults[n] = spec
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_items if isinstance(raw_items, list) else []):
        case = _item(raw, i, version, defaults, problems)
        if case is not None:
            cases.append(case)
        if not isinstance(raw, Mapping):
            continue
        case_id = _case_id(raw, i)
        if case_id in seen:
            key = "testId" if raw.get("testId") else "name"
            problems.add(
                "INVALID_VALUE",
                f"duplicate case id {case_id!r} (first used by items[{seen[case_id]}]); give each item a unique testId",
                ("items", i, key),
            )
        else:
            seen[case_id] = i
    problems.raise_if_any()
    assert doc is not None  # no problems means validation succeeded
    meta_name = (
        doc.metadata.name if doc.metadata and doc.metadata.name and doc.metadata.name.strip() else None
    )
    description = doc.description or (doc.metadata.description if doc.metadata else None)
    meta: dict[str, Any] = {
        "schemaVersion": ".".join(map(str, version)) if version else None,
        "legacy": legacy,
    }
    if doc.metadata is not None:
        meta["metadata"] = doc.metadata.model_dump(mode="json", exclude_none=True)
    if doc.schema_uri is not None:
        meta["$schema"] = doc.schema_uri
    return Suite(
        name=meta_name or name or "dataset",
        description=description,
        format="dataset-json",
        cases=cases,
        meta=meta,
    )


def load_text(text: str, *, name: str | None = None) -> Suite:
    """Load a JSON dataset from its text.

    Raises:
        SuiteError: ``MALFORMED_JSON``, ``UNSUPPORTED_VERSION``, ``UNKNOWN_FIELD``, ``MISSING_FIELD``,
            ``TYPE_MISMATCH``, ``INVALID_VALUE`` or ``BLANK_FIELD`` with the location of the key.
    """
    return load_data(parse(text), name=name)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a versioned dataset document, for editors."""
    schema: dict[str, Any] = _point_at_map(DatasetDoc.model_json_schema(by_alias=True))
    emap = EvaluatorMap.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
    defs = schema.setdefault("$defs", {})
    defs.update(emap.pop("$defs", {}))
    emap["propertyNames"] = {"pattern": _EVALUATOR_NAME.pattern}
    emap["additionalProperties"] = {"type": "object", "description": "options of a user-registered check"}
    defs["EvaluatorMap"] = emap
    return schema


def _point_at_map(node: Any) -> Any:
    if isinstance(node, dict):
        if node.get(_EMAP_MARK):
            return {"$ref": "#/$defs/EvaluatorMap"}
        return {k: _point_at_map(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_point_at_map(v) for v in node]
    return node


# The starter document (dataset spec: "Answering Y creates ./evals/evals.json with sample prompts"), written by
# `evalnb init` and by `evalnb run` when discovery finds nothing. `run` scores it right away, so its defaults
# are the deterministic matchers: a first run needs no judge. It shows single items and a short conversation.
STARTER: dict[str, Any] = {
    "schemaVersion": LATEST_VERSION,
    "description": "Starter prompts: replace them with prompts your agent should handle.",
    "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
    "items": [
        {
            "testId": "SAMPLE-001",
            "category": "knowledge",
            "prompt": "What is the capital of France?",
            "expected_response": "Paris",
        },
        {
            "testId": "SAMPLE-002",
            "category": "arithmetic",
            "prompt": "What is 2 + 2?",
            "expected_response": "4",
        },
        {
            "testId": "SAMPLE-003",
            "category": "conversation",
            "name": "Two questions in one conversation",
            "turns": [
                {"prompt": "What is 2 + 2?", "expected_response": "4"},
                {
                    "prompt": "What is the capital of France?",
                    "expected_response": "Paris",
                    "evaluators": {"ExactMatch": {}},
                    "evaluators_mode": "replace",
                },
            ],
        },
    ],
}
