"""Evaluator resolution (docs/dataset-json.md, evaluators): each entry of an evaluator map -> its check spec, and
extend/replace.

The file's ``default_evaluators`` (or the system defaults Relevance and Coherence), then the item's
``evaluators`` with ``evaluators_mode`` extend/replace, then the turn's: each ``Turn`` of the model holds its
final list of checks. A problem is recorded with its location, so it joins the other errors of the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalnb._frozen import FrozenDict, FrozenList
from evalnb.checks import _registry as registry
from evalnb.formats._common import Loc, Problems, nearest, shown, type_name
from evalnb.formats._dataset_json.models import (
    EVALUATOR_NAME,
    OPTIONS,
    CitationsOptions,
    ExactMatchOptions,
    LlmEvaluatorOptions,
    PartialMatchOptions,
    RetrievalQueryOptions,
    RetrievalResultOptions,
    SemanticSimilarityOptions,
    ToolCallExecutionOptions,
    ToolCallSelectionOptions,
)
from evalnb.suite import (
    JUDGED_METRICS,
    CheckSpec,
    CitationsCheck,
    CustomCheck,
    ExactMatchCheck,
    JudgedMetricCheck,
    PartialMatchCheck,
    RetrievalQueryCheck,
    RetrievalResultCheck,
    SemanticSimilarityCheck,
    ToolCallExecutionCheck,
    ToolCallSelectionCheck,
)

__all__ = [
    "BUILTIN_EVALUATORS",
    "SYSTEM_DEFAULTS",
    "SpecCache",
    "apply_allowed_tools",
    "apply_evaluators",
    "evaluator_spec",
]

SYSTEM_DEFAULTS: dict[str, dict[str, Any]] = {"Relevance": {}, "Coherence": {}}
BUILTIN_EVALUATORS = (
    *JUDGED_METRICS,
    "Citations",
    "ExactMatch",
    "PartialMatch",
    "SemanticSimilarity",
    "RetrievalQuery",
    "RetrievalResult",
    "ToolCallSelection",
    "ToolCallExecution",
)


#: How each built-in evaluator's validated options become its check spec (the evaluator's name as second argument).
_BUILTIN_SPECS: tuple[tuple[type[Any], Callable[[Any, str], CheckSpec]], ...] = (
    (LlmEvaluatorOptions, lambda o, name: JudgedMetricCheck(type=name, threshold=o.threshold)),  # type: ignore[arg-type]
    (CitationsOptions, lambda o, _: CitationsCheck(threshold=o.threshold, citation_format=o.citation_format)),
    (ExactMatchOptions, lambda o, _: ExactMatchCheck(case_sensitive=o.case_sensitive)),
    (
        PartialMatchOptions,
        lambda o, _: PartialMatchCheck(threshold=o.threshold, case_sensitive=o.case_sensitive),
    ),
    (SemanticSimilarityOptions, lambda o, _: SemanticSimilarityCheck(threshold=o.threshold, value=o.value)),
    (RetrievalQueryOptions, lambda o, _: RetrievalQueryCheck(settings=o.model_dump(exclude_none=True))),
    (RetrievalResultOptions, lambda o, _: RetrievalResultCheck(settings=o.model_dump(exclude_none=True))),
    (
        ToolCallSelectionOptions,
        lambda o, _: ToolCallSelectionCheck.model_validate(o.model_dump(exclude_none=True)),
    ),
    (
        ToolCallExecutionOptions,
        lambda o, _: ToolCallExecutionCheck.model_validate(o.model_dump(exclude_none=True)),
    ),
)


def evaluator_spec(name: str, options: Any, loc: Loc, problems: Problems) -> CheckSpec | None:
    """One evaluator entry -> its check spec with final option values; None after recording what is wrong."""
    if not EVALUATOR_NAME.match(name):
        problems.add(
            "INVALID_VALUE", f"evaluator name {shown(name)} must be an identifier (letters, digits, _)", loc
        )
        return None
    if not isinstance(options, Mapping):
        problems.add(
            "TYPE_MISMATCH",
            f"options of {shown(name)} must be an object ({{}} for defaults), got {type_name(options)}",
            loc,
        )
        return None
    model = OPTIONS.get(name)
    if model is not None:
        return _builtin_spec(name, model, options, loc, problems)
    # docs/dataset-json.md, evaluators: any other name is a check the user registered (evalnb.checks.register).
    registered = registry.user_definition(name)
    if registered is None:
        _unknown_evaluator(name, loc, problems)
        return None
    return _custom_spec(name, registered, options, loc, problems)


def _builtin_spec(
    name: str, model: Any, options: Mapping[str, Any], loc: Loc, problems: Problems
) -> CheckSpec | None:
    o = problems.validate(model, options, prefix=loc)
    if isinstance(o, RetrievalResultOptions) and o.expected_items is None and o.min_expected_count is None:
        # the schema's RetrievalQuery/RetrievalResult (docs/dataset-json.md, evaluators): at least one of
        # expected_items and min_expected_count.
        problems.add(
            "MISSING_FIELD",
            "RetrievalResult needs 'expected_items' or 'min_expected_count'",
            (*loc, "expected_items"),
        )
        return None
    for options_model, build in _BUILTIN_SPECS:
        if isinstance(o, options_model):
            return build(o, name)
    return None  # the options did not validate; validation recorded why


def _unknown_evaluator(name: str, loc: Loc, problems: Problems) -> None:
    known = registry.known()
    hint = nearest(name, [*BUILTIN_EVALUATORS, *known])
    listing = ", ".join([*BUILTIN_EVALUATORS, *known])
    problems.add(
        "UNKNOWN_FIELD",
        f"unknown evaluator {shown(name)}"
        + (f"; did you mean {hint!r}?" if hint else "")
        + f" (known: {listing}; register your own with evalnb.checks.register)",
        loc,
        suggestion=hint,
    )


def _custom_spec(
    name: str, registered: Any, options: Mapping[str, Any], loc: Loc, problems: Problems
) -> CheckSpec | None:
    """A registered check as a custom evaluator: its threshold, and its options checked against its signature."""
    # docs/dataset-json.md, evaluators (CustomEvaluatorOptions): `threshold` is applied to the check's value by the
    # runner and `options` is forwarded to the check; other keys are evalnb's flat form of the same options.
    threshold = options.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
        problems.add("TYPE_MISMATCH", "'threshold' must be a number", (*loc, "threshold"))
        return None
    nested = options.get("options", {})
    if not isinstance(nested, Mapping):
        problems.add("TYPE_MISMATCH", "'options' must be an object", (*loc, "options"))
        return None
    flat = {k: v for k, v in options.items() if k not in ("threshold", "options")}
    merged = {**flat, **nested}
    loc_of = {k: (*loc, "options", k) if k in nested else (*loc, k) for k in merged}
    allowed = registered.options  # what the check said it takes, at registration (None: anything)
    unknown = [key for key in merged if allowed is not None and key not in allowed]
    for key in unknown:
        hint = nearest(key, allowed or [])
        problems.add(
            "UNKNOWN_FIELD",
            f"check {shown(name)} takes no option {shown(key)}"
            + (f"; did you mean {hint!r}?" if hint else f" (it takes: {', '.join(allowed or []) or 'none'})"),
            loc_of[key],
            suggestion=hint,
        )
    if unknown:
        return None
    return CustomCheck(
        check=name, settings=dict(merged), threshold=None if threshold is None else float(threshold)
    )


class SpecCache:
    """Equal evaluator entries of one document resolve to one check spec object.

    A suite converted from another tool often gives every item its own ``evaluators`` block; read as written,
    a million items would hold two million equal check specs and validate each. Keyed on the entry's name and
    its options as written, equal entries share one spec (specs are not changed after the load; a
    ``default_evaluators`` suite shares them the same way), and an evaluator map seen valid once is not
    validated again with its item. Only entries that resolved without a problem are kept, so an invalid one
    is reported at every location it occurs.
    """

    def __init__(self) -> None:
        self.specs: dict[tuple[str, str], CheckSpec] = {}
        self.valid_maps: set[str] = set()
        self.texts: dict[str, str] = {}
        self.tag_sets: dict[tuple[str, ...], dict[str, Any]] = {}
        # (the base's names and spec ids, the map's key, the mode) -> (the result, the base's specs): holding the
        # base's specs keeps their ids from being reused by other objects while the key names them.
        self.merged: dict[tuple[Any, ...], tuple[dict[str, CheckSpec], tuple[CheckSpec, ...]]] = {}

    @staticmethod
    def key(value: Any) -> str:
        """A key equal for equal parsed JSON values written alike (``repr``: fast, and it tells ``1`` from
        ``1.0`` and ``true``; the same options in another key order are just not shared)."""
        return repr(value)

    def text(self, value: str | None) -> str | None:
        """``value`` as the first equal text seen in this document (a category repeated by a million items is
        one object)."""
        return value if value is None else self.texts.setdefault(value, value)

    def texts_of(self, values: list[Any]) -> list[Any]:
        """A list of texts (tags) with each one :meth:`text`; other values as they are."""
        texts = self.texts
        return [texts.setdefault(v, v) if isinstance(v, str) else v for v in values]

    def tags_meta(self, tags: list[Any]) -> dict[str, Any]:
        """The ``meta`` of a case or turn that gives only ``tags``: equal lists of texts give one frozen meta,
        shared (``evalnb._frozen``: a million items of a few tag sets held a million equal dicts); other tags a
        meta of their own, each text one object."""
        if not all(type(v) is str for v in tags):
            return {"tags": self.texts_of(tags)}
        key = tuple(tags)
        meta = self.tag_sets.get(key)
        if meta is None:
            meta = self.tag_sets[key] = FrozenDict({"tags": FrozenList(self.texts_of(tags))})
        return meta

    def spec(self, name: str, options: Any, loc: Loc, problems: Problems) -> CheckSpec | None:
        """:func:`evaluator_spec`, once per distinct ``(name, options)`` that resolves."""
        key = (name, self.key(options))
        if key in self.specs:
            return self.specs[key]
        spec = evaluator_spec(name, options, loc, problems)
        if spec is not None:
            self.specs[key] = spec
        return spec


def apply_evaluators(
    base: dict[str, CheckSpec],
    raw: Mapping[str, Any],
    loc: Loc,
    problems: Problems,
    cache: SpecCache | None = None,
    *,
    given_key: str | None = None,
) -> dict[str, CheckSpec]:
    """docs/dataset-json.md, evaluators: ``extend`` (default) merges over ``base``; ``replace`` keeps only the given
    ones.

    Reads ``evaluators`` and ``evaluators_mode`` from the parsed item or turn ``raw`` (validation reports
    a wrong type of either; here they are skipped), so evaluator errors join the others of the file.
    ``given_key``: the cache's key of ``raw["evaluators"]`` when the caller has it already.
    """
    given, mode = raw.get("evaluators"), raw.get("evaluators_mode")
    if not isinstance(given, Mapping):
        given = None
    if mode not in ("extend", "replace"):
        mode = None
    if given is None and mode is None:
        return dict(base)
    cache = cache or SpecCache()
    memo = (tuple((n, id(v)) for n, v in base.items()), given_key or cache.key(given), mode)
    if memo in cache.merged:
        return dict(cache.merged[memo][0])
    before = len(problems)
    own: dict[str, CheckSpec] = {}
    for name, opts in (given or {}).items():
        spec = cache.spec(name, opts, (*loc, "evaluators", name), problems)
        if spec is not None:
            own[name] = spec
    if (mode or "extend") == "replace":
        merged = own
    else:
        merged = dict(base)
        merged.update(own)  # an item's options for a default evaluator replace the default's
    if len(problems) == before:
        cache.merged[memo] = (merged, tuple(base.values()))
    return dict(merged)


def apply_allowed_tools(base: list[str], raw: Mapping[str, Any]) -> list[str]:
    """docs/dataset-json.md, tool calls and allowlists: ``allowed_tools_mode`` ``extend`` (default) takes the union
    with ``base`` (the ``default_allowed_tools``), ``replace`` only the item's or turn's own ``allowed_tools``.

    Entries are trimmed (matched after trimming, exactly and case-sensitively); the order is
    the defaults', then the new ones'. Validation reports a wrong type of either key; here it is skipped.
    """
    given, mode = raw.get("allowed_tools"), raw.get("allowed_tools_mode")
    own = [t.strip() for t in given if isinstance(t, str) and t.strip()] if isinstance(given, list) else None
    if own is None and mode not in ("extend", "replace"):
        return list(base)
    if mode == "replace":
        return list(dict.fromkeys(own or []))
    return list(dict.fromkeys([*base, *(own or [])]))
