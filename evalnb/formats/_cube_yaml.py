"""The YAML cube suite (docs/cube-yaml.md): ground-truth questions for an analytics agent over one data cube.

Parsed with ``yaml.safe_load`` semantics only, plus two guards the spec's intent calls for: a duplicate key in
any mapping is an error (not "last one wins"), and a key the spec does not define is ``UNKNOWN_FIELD`` with
a suggestion, because a misspelt expectation (``expectedRow``) would otherwise make a case always pass.
A third guard is for safety: aliases that expand to a huge document (a "billion laughs" file of a few
hundred bytes, or one large anchored string referred to many times) are ``MALFORMED_YAML`` before anything
walks the expanded data. libyaml's parser is used when PyYAML has it (``CSafeLoader``), with the same guards.

Example::

    suite = load_text(evalnb.examples.path("foodmart-sales").read_text())
    suite.meta["cube"]["cubeName"]
    # 'Sales'
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, Field

from evalnb.formats._common import (
    Edge,
    NonBlank,
    Problems,
    custom_error,
    fail,
    nearest,
    shown,
    type_name,
)
from evalnb.formats._registry import Format, Sniff, register
from evalnb.suite import (
    INTENTS,
    Case,
    CheckSpec,
    InsightCheck,
    IntentCheck,
    Message,
    ReferenceQuery,
    RefusalCheck,
    RowsCheck,
    Suite,
    Tolerance,
    Turn,
)

__all__ = ["CubeSuiteDoc", "load_data", "load_text", "parse"]


def _non_negative(value: float) -> float:
    # docs/cube-yaml.md, errors: a negative tolerance is INVALID_TOLERANCE.
    if value < 0:
        raise custom_error("INVALID_TOLERANCE", f"must not be negative, got {value}")
    return value


def _intent(value: str) -> str:
    # docs/cube-yaml.md, numbers and text in rows: expectedIntent is case-insensitive; the model stores it upper-case.
    up = value.strip().upper()
    if up not in INTENTS:
        hint = nearest(up, INTENTS)
        raise custom_error(
            "INVALID_VALUE",
            f"must be one of {', '.join(INTENTS)} (any case), got {shown(value)}"
            + (f"; did you mean {hint!r}?" if hint else ""),
        )
    return up


def _at_least_one(cases: list[Any]) -> list[Any]:
    # docs/cube-yaml.md, errors: `cases` is a non-empty list; an empty one is MISSING_FIELD.
    if not cases:
        raise custom_error("MISSING_FIELD", "must list at least one case")
    return cases


def _scalar_row(row: dict[str, Any]) -> dict[str, Any]:
    from evalnb.checks._rows import normalise_key

    seen: dict[str, str] = {}
    for key, value in row.items():
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise custom_error(
                "TYPE_MISMATCH", f"value of {shown(key)} must be a scalar, got {type_name(value)}"
            )
        # docs/cube-yaml.md, row comparison: `Store Sales`, `storeSales`, `store_sales` are one key. Two of them in
        # one row would both be compared with the same actual column, so the case could never pass when they differ.
        same = seen.setdefault(normalise_key(key), key)
        if same != key:
            raise custom_error(
                "INVALID_VALUE",
                f"keys {shown(same)} and {shown(key)} name the same column (keys compare ignoring case, spaces, "
                "'_' and '-'); keep one",
            )
    return row


class CubeDoc(Edge):
    """The cube every case runs against: all four keys required, non-blank strings."""

    connectionName: NonBlank
    catalog: NonBlank
    schema_: NonBlank = Field(alias="schema")
    cubeName: NonBlank


class MessageDoc(Edge):
    """One earlier message that seeds the question."""

    role: Literal["user", "assistant", "system"]
    content: NonBlank


class ToleranceDoc(Edge):
    """Numeric tolerance for row comparison; both default to 0 (exact)."""

    absolute: Annotated[float, AfterValidator(_non_negative)] = 0.0
    relative: Annotated[float, AfterValidator(_non_negative)] = 0.0


class MeasureDoc(Edge):
    """A measure of the structured reference query."""

    name: NonBlank


class AxisDoc(Edge):
    """A row axis of the structured reference query."""

    dimension: NonBlank
    hierarchy: NonBlank | None = None
    level: NonBlank | None = None


class ReferenceQueryDoc(Edge):
    """Ground truth run live: ``{sql}`` or ``{measures, rows, filters}``."""

    sql: NonBlank | None = None
    measures: list[MeasureDoc] = Field(default_factory=list)
    rows: list[AxisDoc] = Field(default_factory=list)
    filters: list[dict[str, Any]] = Field(default_factory=list)


class CaseDoc(Edge):
    """One question and what its answer must show."""

    name: NonBlank
    question: NonBlank
    history: list[MessageDoc] = Field(default_factory=list)
    expectedIntent: Annotated[str, AfterValidator(_intent)] | None = None
    expectedRefusalContains: NonBlank | None = None
    expectedRows: list[Annotated[dict[str, Any], AfterValidator(_scalar_row)]] | None = None
    referenceQuery: ReferenceQueryDoc | None = None
    orderMatters: bool = True
    expectedInsightContains: list[NonBlank] | None = None
    tolerance: ToleranceDoc | None = None
    decimalComma: bool = False


class CubeSuiteDoc(Edge):
    """A YAML cube suite: one cube, non-empty list of cases."""

    name: NonBlank
    description: str | None = None
    cube: CubeDoc
    cases: Annotated[list[CaseDoc], AfterValidator(_at_least_one)]


# ------------------------------------------------------------------------------------------------------
# Parsing: safe_load semantics, duplicate keys rejected
# ------------------------------------------------------------------------------------------------------


class _DuplicateKeyError(yaml.MarkedYAMLError):
    pass


class _AliasBombError(yaml.YAMLError):
    pass


# How much aliases may add to a document once expanded, in nodes and in characters of scalar text. Real suites
# reuse a few anchored blocks (`<<: *defaults`); a billion-laughs file adds billions of nodes, and one anchored
# 1 MB string referred to 90,000 times (a 1.5 MB file) adds 90 GB of text. Validation, hashing, saving and the
# options saved with each score all walk or write the expanded data, so both are checked on the node graph,
# where shared nodes are measured once.
MAX_ALIAS_NODES = 100_000
MAX_ALIAS_CHARS = 10_000_000

# libyaml's parser (CSafeLoader) when PyYAML was built with it: 30-70 times faster than the pure-Python one;
# the constructor, and so every guard below, is the same Python code on top of either.
_FAST = getattr(yaml, "CSafeLoader", None)


class _Strict:
    """A safe loader that rejects a key given twice in one mapping and aliases that expand without bound."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<:` merge keys may be overridden by explicit keys (YAML merge semantics)
                key = self.construct_object(key_node, deep=True)  # type: ignore[attr-defined]
                if isinstance(key, Hashable) and not isinstance(key, (list, dict)):
                    if key in seen:
                        raise _DuplicateKeyError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"duplicate key {shown(key)}",
                            key_node.start_mark,
                        )
                    seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expansion(node)
        return super().construct_document(node)  # type: ignore[misc]


class _StrictLoader(_Strict, yaml.SafeLoader):
    """The pure-Python parser: always there, and it reads surrogate escapes (``"\\ud800"``) libyaml refuses."""


_StrictFastLoader: Any = type("_StrictFastLoader", (_Strict, _FAST), {}) if _FAST is not None else None


def _check_expansion(root: yaml.Node) -> None:
    """Raise when aliases make the document expand past :data:`MAX_ALIAS_NODES` extra nodes or
    :data:`MAX_ALIAS_CHARS` extra characters of scalar text, or loop."""
    # node id -> (nodes, characters) under it once aliases are expanded; each node is measured once, so this is
    # linear in the document's size even when the expanded size is astronomical (Python integers do not
    # overflow).
    sizes: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    own_chars = 0

    def size(node: yaml.Node) -> tuple[int, int]:
        nonlocal own_chars
        key = id(node)
        if key in sizes:
            return sizes[key]  # an alias: the same node object again, already measured
        if key in active:
            raise _AliasBombError("an alias refers to a node that contains it (the data would be infinite)")
        active.add(key)
        nodes, chars = 1, 0
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                n, c = size(child)
                nodes, chars = nodes + n, chars + c
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                (kn, kc), (vn, vc) = size(k), size(v)
                nodes, chars = nodes + kn + vn, chars + kc + vc
        else:
            chars = len(node.value)
            own_chars += chars
        active.discard(key)
        sizes[key] = (nodes, chars)
        return nodes, chars

    expanded_nodes, expanded_chars = size(root)
    if expanded_nodes - len(sizes) > MAX_ALIAS_NODES:
        raise _AliasBombError(
            f"aliases expand the document by more than {MAX_ALIAS_NODES:,} nodes; "
            "refusing it (a 'billion laughs' document?)"
        )
    if expanded_chars - own_chars > MAX_ALIAS_CHARS:
        raise _AliasBombError(
            f"aliases expand the document by {expanded_chars - own_chars:,} characters of text (more than "
            f"{MAX_ALIAS_CHARS:,}); refusing it (one large anchored value referred to many times?)"
        )


def _load(text: str, fast: Any = None, slow: Any = None) -> Any:
    fast = _StrictFastLoader if fast is None else fast
    slow = _StrictLoader if slow is None else slow
    if fast is not None:
        try:
            return yaml.load(text, Loader=fast)
        except yaml.MarkedYAMLError as exc:
            # libyaml refuses a surrogate escape ("\ud83d\ude00" written as two escapes, a lone "\ud800"); the
            # pure-Python parser reads it, and the loader turns it into U+FFFD (or the character of a pair),
            # so a document means the same with libyaml or without.
            if "invalid Unicode character escape code" not in str(exc.problem):
                raise
        except UnicodeEncodeError:
            pass  # text holding a lone surrogate itself: the pure-Python parser says where (ReaderError)
    return yaml.load(text, Loader=slow)


def parse(text: str, *, loaders: tuple[Any, Any] | None = None) -> Any:
    """Parse YAML text; a parser failure is ``MALFORMED_YAML`` with line and column when known.

    ``loaders``: (libyaml loader or None, pure-Python loader) with the same guards, for a format that reads
    YAML another way (promptfoo's YAML 1.2).
    """
    try:
        return _load(text, *(loaders or (None, None)))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "invalid YAML"
        fail("MALFORMED_YAML", str(problem), where)
    except RecursionError:
        fail("MALFORMED_YAML", "the document is nested too deeply")
    except _AliasBombError as exc:
        fail("MALFORMED_YAML", str(exc))
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        fail("MALFORMED_YAML", f"invalid YAML: {exc}")


# ------------------------------------------------------------------------------------------------------
# Translation into the one model
# ------------------------------------------------------------------------------------------------------


def _case_rules(data: dict[str, Any], problems: Problems) -> None:
    """The spec's rules across keys, checked on the parsed document so they join the other errors."""
    cases = data.get("cases")
    if not isinstance(cases, list):
        return
    seen: dict[str, int] = {}
    for i, case in enumerate(cases):
        name = case.get("name")
        if isinstance(name, str) and name.strip():
            if name in seen:
                # docs/cube-yaml.md, suite and case keys: names are unique within the suite (mismatch paths and
                # reports use them).
                problems.add(
                    "INVALID_VALUE",
                    f"duplicate case name {shown(name)} (first used by cases[{seen[name]}])",
                    ("cases", i, "name"),
                )
            else:
                seen[name] = i
        loc = ("cases", i, "referenceQuery")
        if case.get("expectedRows") is not None and case.get("referenceQuery") is not None:
            # docs/cube-yaml.md, suite and case keys: at most one of expectedRows and referenceQuery (which one would
            # be the truth?).
            problems.add(
                "INVALID_VALUE", f"cases[{i}] gives both 'expectedRows' and 'referenceQuery'; keep one", loc
            )
            continue
        rq = case.get("referenceQuery")
        if not isinstance(rq, dict):
            continue  # absent, or a type mismatch that validation reports
        structured = any(rq.get(k) for k in ("measures", "rows", "filters"))
        if rq.get("sql") is not None and structured:
            problems.add(
                "INVALID_VALUE", "referenceQuery gives both 'sql' and a structured query; keep one", loc
            )
        elif rq.get("sql") is None and not rq.get("measures"):
            problems.add(
                "MISSING_FIELD", "referenceQuery needs 'sql' or at least one of 'measures'", (*loc, "sql")
            )


class _Shared:
    """Equal things of one document once: equal check specs of different cases are one object (specs are not
    changed after the load), and the keys and texts of expected rows one string each (a suite of many cases that
    ask for the same columns holds each column name once)."""

    def __init__(self) -> None:
        self.specs: dict[tuple[Any, ...], CheckSpec] = {}
        self.texts: dict[str, str] = {}

    def spec(self, key: tuple[Any, ...], make: Any) -> CheckSpec:
        spec = self.specs.get(key)
        if spec is None:
            spec = self.specs[key] = make()
        return spec

    def rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        t = self.texts
        return [
            {t.setdefault(k, k): t.setdefault(v, v) if isinstance(v, str) else v for k, v in row.items()}
            for row in rows
        ]


def _checks(case: CaseDoc, shared: _Shared | None = None) -> list[CheckSpec]:
    shared = shared or _Shared()
    checks: list[CheckSpec] = []
    # Only the expectations the case states become checks (docs/cube-yaml.md, suite and case keys).
    if case.expectedIntent is not None:
        intent = case.expectedIntent
        checks.append(shared.spec(("intent", intent), lambda: IntentCheck(expected=intent)))  # type: ignore[arg-type]
    if case.expectedRefusalContains is not None:
        refusal = case.expectedRefusalContains
        checks.append(shared.spec(("refusal", refusal), lambda: RefusalCheck(contains=refusal)))
    if case.expectedInsightContains:
        insight = list(case.expectedInsightContains)
        checks.append(shared.spec(("insight", *insight), lambda: InsightCheck(contains=insight)))
    tolerance = case.tolerance.model_dump() if case.tolerance else {}
    how = (case.orderMatters, repr(tolerance), case.decimalComma)
    if case.expectedRows is not None:
        expected = case.expectedRows
        checks.append(
            shared.spec(
                ("rows", repr(expected), *how),
                lambda: RowsCheck(
                    expected=shared.rows(expected),
                    order_matters=case.orderMatters,
                    tolerance=Tolerance(**tolerance),
                    decimal_comma=case.decimalComma,
                ),
            )
        )
    elif case.referenceQuery is not None:
        rq = case.referenceQuery
        ref = ReferenceQuery(
            sql=rq.sql,
            measures=[m.model_dump() for m in rq.measures],
            rows=[r.model_dump(exclude_none=True) for r in rq.rows],
            filters=list(rq.filters),
        )
        checks.append(
            shared.spec(
                ("reference", repr(ref.model_dump()), *how),
                lambda: RowsCheck(
                    reference_query=ref,
                    order_matters=case.orderMatters,
                    tolerance=Tolerance(**tolerance),
                    decimal_comma=case.decimalComma,
                ),
            )
        )
    return checks


def build(doc: CubeSuiteDoc) -> Suite:
    """Translate a validated document (its cross-key rules already checked) into the one model.

    Each case is one turn, run once. Equal checks of different cases are one object (:class:`_Shared`).
    """
    cases: list[Case] = []
    shared = _Shared()
    for c in doc.cases:
        turn = Turn(
            prompt=c.question,
            history=[Message(role=m.role, content=m.content) for m in c.history],
            checks=_checks(c, shared),
        )
        cases.append(Case(id=c.name, name=c.name, runs=1, turns=[turn]))
    return Suite(
        name=doc.name,
        description=doc.description,
        format="cube-yaml",
        cases=cases,
        meta={"cube": doc.cube.model_dump(by_alias=True)},
    )


def load_text(text: str) -> Suite:
    """Load a YAML cube suite from its text.

    Raises:
        SuiteError: the codes of docs/cube-yaml.md, errors (``MALFORMED_YAML``, ``MISSING_FIELD``, ``BLANK_FIELD``,
            ``TYPE_MISMATCH``, ``INVALID_TOLERANCE``) and ``UNKNOWN_FIELD`` / ``INVALID_VALUE``; the first
            error in document order, with every error of the file in ``.errors``.
    """
    return load_data(parse(text))


def load_data(data: Any) -> Suite:
    """Load a YAML cube suite from its parsed document (see :func:`load_text`)."""
    # docs/cube-yaml.md, errors: a top level or a case that is not a mapping is MALFORMED_YAML (not a type mismatch).
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type_name(data)}"
        fail("MALFORMED_YAML", f"the top level must be a mapping, got {what}")
    cases = data.get("cases")
    if isinstance(cases, list):
        for i, case in enumerate(cases):
            if not isinstance(case, dict):
                fail("MALFORMED_YAML", f"cases[{i}] must be a mapping, got {type_name(case)}", ("cases", i))
    problems = Problems(data)
    doc: CubeSuiteDoc | None = problems.validate(CubeSuiteDoc, data)
    _case_rules(data, problems)
    problems.raise_if_any()
    assert doc is not None  # no problems means validation succeeded
    return build(doc)


register(
    Format(
        name="cube-yaml",
        suffixes=(".yaml", ".yml"),
        malformed="MALFORMED_YAML",
        parse=parse,
        build=lambda data, path: load_data(data),
        schema=lambda: CubeSuiteDoc.model_json_schema(by_alias=True),
        sniff=Sniff(
            order=30,
            accepts=lambda data: isinstance(data, dict),
            fallback=lambda t: True,  # the last resort: any text parses as YAML, or its error is the verdict
        ),
        what="YAML cube suites",
    )
)
