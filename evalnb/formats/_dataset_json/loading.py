"""Loading a dataset: strict JSON parsing, version gates, items -> cases, and the whole document -> Suite.

Three shapes load: the versioned object (``schemaVersion`` ``1.x.y``, recommended), the legacy array of
items, and the older ``{"prompts": [...], "expected_responses": [...]}`` pair of lists. Every error found is
reported at once, the first in document order, with all of them in ``.errors``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalnb.formats._common import Loc, Problems, fail, nearest, shown, type_name
from evalnb.formats._dataset_json.evaluators import (
    SYSTEM_DEFAULTS,
    SpecCache,
    apply_allowed_tools,
    apply_evaluators,
)
from evalnb.formats._dataset_json.legacy import is_legacy, pair_items
from evalnb.formats._dataset_json.models import (
    EVALUATORS_SINCE,
    LATEST_VERSION,
    TURNS_SINCE,
    RootDoc,
    SingleItemDoc,
    ThreadItemDoc,
)
from evalnb.formats._dataset_json.plain import Plain, makers
from evalnb.suite import Case, CheckSpec, Suite

__all__ = ["load_data", "load_text", "parse", "stem"]

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)  # built in C; a key given twice leaves fewer keys than pairs (a million items' load)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


# A JSON string, or a bracket: what finding a key's place needs (a key is a string followed by a colon).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.S)
_COLON = re.compile(r"\s*:")


def _duplicate_at(text: str) -> int | None:
    """Where the first key given twice in one object starts (an index into ``text``), or None.

    The parser's hook sees an object's keys but not where they are; so, on this error path only, the text is
    scanned once more for its strings and brackets (YAML and TOML name the line and column of a duplicate key:
    so does JSON).
    """
    stack: list[set[str] | None] = []  # the keys of each open object; None for an open array
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if token in ("{", "["):
            stack.append(set() if token == "{" else None)
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif stack and stack[-1] is not None and _COLON.match(text, m.end()):
            key = json.loads(token)
            if key in stack[-1]:
                return m.start()
            stack[-1].add(key)
    return None


def _line_column(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - text.rfind("\n", 0, index)  # 1-based, as JSONDecodeError counts
    return f"line {line}, column {column}"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse(text: str) -> Any:
    """Parse JSON text strictly: no NaN/Infinity, no duplicate keys; failures are ``MALFORMED_JSON``."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        fail("MALFORMED_JSON", exc.msg, f"line {exc.lineno}, column {exc.colno}")
    except _DuplicateKey as exc:
        at = _duplicate_at(text)
        where = "" if at is None else _line_column(text, at)
        fail("MALFORMED_JSON", f"duplicate key {shown(exc.args[0])} in an object", where)
    except RecursionError:
        fail("MALFORMED_JSON", "the document is nested too deeply")
    except (ValueError, TypeError, OverflowError) as exc:
        fail("MALFORMED_JSON", f"invalid JSON: {exc}")


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
            f"schemaVersion {shown(raw)} is not a semantic version (MAJOR.MINOR.PATCH)",
            ("schemaVersion",),
        )
    version = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if version[0] != 1:
        # docs/dataset-json.md, what evalnb supports of the published schema: evalnb reads every 1.x.y.
        fail(
            "UNSUPPORTED_VERSION",
            f"schemaVersion {shown(raw)} is not supported; evalnb reads 1.x.y",
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
_ALLOWLIST_KEYS = ("allowed_tools", "allowed_tools_mode")


def _meta(raw: Mapping[str, Any], keys: tuple[str, ...], cache: SpecCache) -> dict[str, Any]:
    # The values as the document wrote them (validated already): a null inside `diagnostics` is information
    # (docs/dataset-json.md, tool calls and allowlists: the evidence was unavailable), which a dump without nulls
    # would drop.
    if raw.keys().isdisjoint(keys):
        return {}  # the common case, found in C
    out = {k: raw[k] for k in keys if raw.get(k) is not None}
    tags = out.get("tags")
    if tags and type(tags) is list and len(out) == 1:
        return cache.tags_meta(tags)  # equal tags are one object across items
    if tags:
        out["tags"] = cache.texts_of(tags)
    return out


def declares_allowlist(root: Mapping[str, Any]) -> bool:
    """docs/dataset-json.md, tool calls and allowlists: whether a document declares a tool allowlist anywhere (root,
    item, thread or turn). Only then are tool calls checked: a document without one is not checked for tool calls at
    all."""
    if "default_allowed_tools" in root:
        return True
    for item in root.get("items") or []:
        if not isinstance(item, Mapping):
            continue
        if not item.keys().isdisjoint(_ALLOWLIST_KEYS):
            return True
        turns = item.get("turns")
        if isinstance(turns, list) and any(
            isinstance(t, Mapping) and not t.keys().isdisjoint(_ALLOWLIST_KEYS) for t in turns
        ):
            return True
    return False


def _case_id(raw: Mapping[str, Any], i: int) -> str:
    for key in ("testId", "name"):
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return f"item-{i + 1:03d}"


def _item(
    raw: Any,
    i: int,
    version: tuple[int, int, int] | None,
    defaults: dict[str, CheckSpec],
    tools: list[str] | None,
    problems: Problems,
    cache: SpecCache,
) -> Case | None:
    """One item -> its case, or None after recording every problem found in it."""
    loc: Loc = ("items", i)
    if not _item_shape(raw, i, loc, problems):
        return None
    before = len(problems)
    # Version gates are recorded first: at one location, an older schemaVersion explains the failure
    # better than its consequences.
    if (version or (1, 0, 0)) < EVALUATORS_SINCE:
        _gate_evaluators(raw, loc, version, problems)
    if "turns" in raw:
        return _thread(raw, i, loc, version, defaults, tools, problems, cache, before)
    return _single(raw, i, loc, defaults, tools, problems, cache, before)


def _item_shape(raw: Any, i: int, loc: Loc, problems: Problems) -> bool:
    """Whether an item is an object with exactly one of ``prompt`` and ``turns``; records why not."""
    if not isinstance(raw, Mapping):
        problems.add("TYPE_MISMATCH", f"items[{i}] must be an object, got {type_name(raw)}", loc)
        return False
    has_prompt, has_turns = "prompt" in raw, "turns" in raw
    if has_prompt and has_turns:
        problems.add(
            "INVALID_VALUE",
            f"items[{i}] gives both 'prompt' and 'turns'; an item is one or the other",
            (*loc, "turns"),
        )
        return False
    if has_prompt or has_turns:
        return True
    near = [(key, hint) for key in raw if (hint := nearest(key, ["prompt", "turns"]))]
    if near:
        key, hint = near[0]
        problems.add(
            "UNKNOWN_FIELD",
            f"unknown key {shown(key)} in items[{i}]; did you mean {hint!r}?",
            (*loc, key),
            suggestion=hint,
        )
    else:
        problems.add(
            "MISSING_FIELD",
            f"items[{i}] needs 'prompt' (single turn) or 'turns' (a conversation)",
            (*loc, "prompt"),
        )
    return False


def _gate_evaluators(
    raw: Mapping[str, Any], loc: Loc, version: tuple[int, int, int] | None, problems: Problems
) -> None:
    for key in ("evaluators", "evaluators_mode"):
        if key in raw:
            _gate(version, EVALUATORS_SINCE, f"'{key}'", (*loc, key), problems)


def _thread(
    raw: Mapping[str, Any],
    i: int,
    loc: Loc,
    version: tuple[int, int, int] | None,
    defaults: dict[str, CheckSpec],
    tools: list[str] | None,
    problems: Problems,
    cache: SpecCache,
    before: int,
) -> Case | None:
    """A multi-turn item -> one case whose turns are one conversation."""
    _gate(version, TURNS_SINCE, "'turns' (multi-turn items)", (*loc, "turns"), problems)
    if "expected_response" in raw:
        problems.add(
            "INVALID_VALUE",
            f"items[{i}] has 'turns': give each turn its own 'expected_response'",
            (*loc, "expected_response"),
        )
    raw_turns = raw.get("turns")
    listed = raw_turns if isinstance(raw_turns, list) else []
    for t, turn in enumerate(listed):
        if isinstance(turn, Mapping):
            _gate_evaluators(turn, (*loc, "turns", t), version, problems)
    thread: ThreadItemDoc | None = problems.validate(ThreadItemDoc, raw, prefix=loc)
    base = apply_evaluators(defaults, raw, loc, problems, cache)
    turn_checks = [
        list(apply_evaluators(base, turn, (*loc, "turns", t), problems, cache).values())
        for t, turn in enumerate(listed)
        if isinstance(turn, Mapping)
    ]
    if thread is None or len(problems) > before:
        return None
    # maps resolved without a problem: a plain item repeating one takes the fast path (plain.py)
    for part in (raw, *listed):
        if isinstance(part, Mapping) and isinstance(part.get("evaluators"), Mapping):
            cache.valid_maps.add(cache.key(part["evaluators"]))
    # docs/dataset-json.md, tool calls and allowlists: they resolve like evaluators (a thread's list is evalnb's)
    thread_tools = None if tools is None else apply_allowed_tools(tools, raw)
    new_turn, new_case, _ = makers()
    model_turns = [
        new_turn(
            prompt=td.prompt,
            expected=td.expected_response,
            context=td.context,
            checks=checks,
            allowed_tools=None if thread_tools is None else apply_allowed_tools(thread_tools, rt),
            meta=_meta(rt, (*_TURN_OUTPUT, "tags"), cache),
        )
        for td, rt, checks in zip(thread.turns, raw_turns or [], turn_checks, strict=True)
    ]
    case_id = thread.testId or thread.name or f"item-{i + 1:03d}"
    return new_case(
        id=case_id,
        name=thread.name or case_id,
        category=cache.text(thread.category),
        notes=thread.notes,
        runs=1,
        turns=model_turns,
        meta=_meta(raw, ("description", "conversation_id", "summary", "tags", "extensions"), cache),
    )


def _single(
    raw: Mapping[str, Any],
    i: int,
    loc: Loc,
    defaults: dict[str, CheckSpec],
    tools: list[str] | None,
    problems: Problems,
    cache: SpecCache,
    before: int,
) -> Case | None:
    """A single-turn item -> one case of one turn."""
    given = cache.key(raw["evaluators"]) if isinstance(raw.get("evaluators"), Mapping) else None
    # An evaluator map already resolved without a problem is not validated again with each item that repeats it.
    shown_raw = {k: v for k, v in raw.items() if k != "evaluators"} if given in cache.valid_maps else raw
    single: SingleItemDoc | None = problems.validate(SingleItemDoc, shown_raw, prefix=loc)
    checks = apply_evaluators(defaults, raw, loc, problems, cache, given_key=given)
    if single is None or len(problems) > before:
        return None
    if given is not None:
        cache.valid_maps.add(given)
    new_turn, new_case, _ = makers()
    turn = new_turn(
        prompt=single.prompt,
        expected=single.expected_response,
        context=single.context,
        checks=list(checks.values()),
        allowed_tools=None if tools is None else apply_allowed_tools(tools, raw),
        meta=_meta(raw, _TURN_OUTPUT, cache),
    )
    case_id = single.testId or single.name or f"item-{i + 1:03d}"
    return new_case(
        id=case_id,
        name=single.name or case_id,
        category=cache.text(single.category),
        notes=single.notes,
        runs=1,
        turns=[turn],
        meta=_meta(raw, ("tags",), cache),
    )


def load_data(data: Any, *, name: str | None = None, consume: bool = False) -> Suite:
    """Build a Suite from an already parsed document (any of the three shapes).

    Every error found is reported at once: the :class:`~evalnb.errors.SuiteError` raised is the first in
    document order and lists them all in ``.errors``. A ``schemaVersion`` evalnb cannot read stops the load
    on its own, since the rest of the document then follows rules evalnb does not know.

    Args:
        data: the parsed JSON.
        name: the suite name when the document has no ``metadata.name`` (the file's stem).
        consume: ``data`` is not used again by the caller: each item is let go once built into its case
            (its place in the items list becomes None), so the peak memory of a large load is not the parsed
            document's plus the suite's.
    """
    legacy = is_legacy(data)
    root = _root(data)
    version = _version(root)
    problems = Problems(root)
    if "default_evaluators" in root:
        _gate(version, EVALUATORS_SINCE, "'default_evaluators'", ("default_evaluators",), problems)
    if "items" not in root and not any(nearest(key, ["items"]) for key in root):
        # Validation's error in the dataset's words; recorded first, it is the one kept at this location.
        # (A near-miss key such as `itms` is reported by validation as the unknown key instead.)
        problems.add("MISSING_FIELD", "missing required key 'items' (the list of test items)", ("items",))
    doc: RootDoc | None = problems.validate(RootDoc, root)
    if doc is not None:
        doc.items = []  # its copy of the list would hold every parsed item to the end; `items` is read below
    raw_items = root.get("items")
    if isinstance(raw_items, list) and not raw_items:
        # docs/dataset-json.md, errors: at least one item; an empty legacy array is an error too.
        problems.add(
            "MISSING_FIELD",
            "'items' must list at least one item",
            ("items",) if not isinstance(data, list) else (),
        )
    raw_defaults = root.get("default_evaluators")
    cache = SpecCache()
    defaults = _defaults(raw_defaults, problems, cache)
    raw_tools = root.get("default_allowed_tools")
    # docs/dataset-json.md, tool calls and allowlists: an absent allowlist resolves to empty (fail closed), in a
    # document that declares one
    tools: list[str] | None = (
        apply_allowed_tools([], {"allowed_tools": raw_tools}) if declares_allowlist(root) else None
    )
    items = raw_items if isinstance(raw_items, list) else []
    cases = _cases(items, version, defaults, tools, problems, cache, consume=consume)
    problems.raise_if_any()
    assert doc is not None  # no problems means validation succeeded
    meta_name = (
        doc.metadata.name if doc.metadata and doc.metadata.name and doc.metadata.name.strip() else None
    )
    _, _, new_suite = makers()
    suite = new_suite(
        name=meta_name or name or "dataset",
        description=doc.description or (doc.metadata.description if doc.metadata else None),
        format="dataset-json",
        cases=cases,
        meta=_suite_meta(doc, version, legacy, tools),
    )
    if legacy and not isinstance(raw_defaults, Mapping):
        _legacy_defaults(suite, defaults)
    return suite


def _root(data: Any) -> dict[str, Any]:
    """The document as a versioned root: a legacy array or pair of lists becomes its ``items``."""
    if isinstance(data, list):
        return {"items": data}
    if not isinstance(data, Mapping):
        fail("TYPE_MISMATCH", f"the top level must be an object or an array of items, got {type_name(data)}")
    if (
        "items" not in data
        and "schemaVersion" not in data
        and ("prompts" in data or "expected_responses" in data)
    ):
        return {"items": pair_items(data)}
    return dict(data)


def _defaults(raw_defaults: Any, problems: Problems, cache: SpecCache) -> dict[str, CheckSpec]:
    """The document's default evaluators (the dataset defaults when it names none), as check specs."""
    defaults: dict[str, CheckSpec] = {}
    for n, o in (raw_defaults if isinstance(raw_defaults, Mapping) else SYSTEM_DEFAULTS).items():
        spec = cache.spec(n, o, ("default_evaluators", n), problems)
        if spec is not None:
            defaults[n] = spec
    return defaults


def _cases(
    items: list[Any],
    version: tuple[int, int, int] | None,
    defaults: dict[str, CheckSpec],
    tools: list[str] | None,
    problems: Problems,
    cache: SpecCache,
    *,
    consume: bool = False,
) -> list[Case]:
    """Every item's case, recording the problems of each and the ids used twice (``consume``: each item of
    ``items`` built into its case is replaced by None as it is)."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    plain = Plain(version, defaults, tools, cache)
    for i, raw in enumerate(items):
        case = plain.case(raw, i)
        if case is None:
            case = _item(raw, i, version, defaults, tools, problems, cache)
        if case is not None:
            cases.append(case)
            if consume:
                # An item built is not read again (an error is placed by the items that hold it): its parsed
                # dicts go now, so a large document and its cases are not both held whole at the peak.
                items[i] = None
        if type(raw) is not dict and not isinstance(raw, Mapping):
            continue
        case_id = case.id if case is not None else _case_id(raw, i)
        if case_id in seen:
            key = "testId" if raw.get("testId") else "name"
            problems.add(
                "INVALID_VALUE",
                f"duplicate case id {shown(case_id)} (first used by items[{seen[case_id]}]); give each item a unique testId",
                ("items", i, key),
            )
        else:
            seen[case_id] = i
    return cases


def _suite_meta(
    doc: RootDoc, version: tuple[int, int, int] | None, legacy: bool, tools: list[str] | None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "schemaVersion": ".".join(map(str, version)) if version else None,
        "legacy": legacy,
    }
    if doc.metadata is not None:
        meta["metadata"] = doc.metadata.model_dump(mode="json", exclude_none=True)
    if doc.schema_uri is not None:
        meta["$schema"] = doc.schema_uri
    if tools is not None:
        meta["default_allowed_tools"] = tools
    return meta


def _legacy_defaults(suite: Suite, defaults: dict[str, CheckSpec]) -> None:
    """A legacy document names no default evaluators: say which checks its items got from the dataset
    defaults (docs/dataset-json.md, shapes, cases and names) (judged ones), so a file of prompts and expected answers
    is not silently judged instead of compared."""
    shared = {id(spec) for spec in defaults.values()}
    using = [c for c in suite.cases if any(id(s) in shared for t in c.turns for s in t.checks)]
    if not using:
        return
    names = " and ".join(defaults)
    answered = sum(1 for c in using if any(t.expected for t in c.turns))
    compared = (
        f", {answered:,} of them with an expected_response that nothing compares with" if answered else ""
    )
    suite.warnings.append(
        f"a legacy dataset (no schemaVersion) names no default_evaluators, so {len(using):,} of its "
        f"{len(suite.cases):,} items are checked by the dataset defaults {names} only (judged: they need a "
        f"judge){compared}; to compare the answers, give "
        '"default_evaluators": {"ExactMatch": {}, "PartialMatch": {}} (evalnb upgrade writes the versioned form) '
        "or load the rows as a table (docs/tables.md)"
    )


def load_text(text: str, *, name: str | None = None) -> Suite:
    """Load a JSON dataset from its text.

    Raises:
        SuiteError: ``MALFORMED_JSON``, ``UNSUPPORTED_VERSION``, ``UNKNOWN_FIELD``, ``MISSING_FIELD``,
            ``TYPE_MISMATCH``, ``INVALID_VALUE`` or ``BLANK_FIELD`` with the location of the key.
    """
    return load_data(parse(text), name=name)


def stem(path: Path) -> str:
    """docs/dataset-json.md, shapes, cases and names: the suite name when the document has no ``metadata.name``: the
    file's stem.

    ``.json`` and then ``.eval`` come off: ``kb.eval.json`` is ``kb``.
    """
    name = path.name
    for suffix in (".json", ".eval"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or path.stem
