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
from evalnb.suite import Case, CheckSpec, Suite, Turn

__all__ = ["load_data", "load_text", "parse", "stem"]

_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


class _DuplicateKey(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
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
        # dataset spec: compatible within a major version; evalnb reads 1.x.y.
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


def _meta(raw: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    # The values as the document wrote them (validated already): a null inside `diagnostics` is information
    # (published schema: the evidence was unavailable), which a dump without nulls would drop.
    return {k: raw[k] for k in keys if raw.get(k) is not None}


def declares_allowlist(root: Mapping[str, Any]) -> bool:
    """published schema (1.11): whether a document declares a tool allowlist anywhere (root, item, thread or
    turn). Only then are tool calls checked: a document without one is not checked for tool calls at all."""
    if "default_allowed_tools" in root:
        return True
    for item in root.get("items") or []:
        if not isinstance(item, Mapping):
            continue
        turns = item.get("turns")
        scopes = [item, *(t for t in (turns if isinstance(turns, list) else []) if isinstance(t, Mapping))]
        if any(key in scope for scope in scopes for key in _ALLOWLIST_KEYS):
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
        base = apply_evaluators(defaults, raw, loc, problems, cache)
        turn_checks = [
            list(apply_evaluators(base, turn, (*loc, "turns", t), problems, cache).values())
            for t, turn in enumerate(raw_turns if isinstance(raw_turns, list) else [])
            if isinstance(turn, Mapping)
        ]
        if thread is None or len(problems) > before:
            return None
        # published schema: allowlists resolve like evaluators (the thread's own list is evalnb's, as evaluators)
        thread_tools = None if tools is None else apply_allowed_tools(tools, raw)
        model_turns = [
            Turn(
                prompt=td.prompt,
                expected=td.expected_response,
                context=td.context,
                checks=checks,
                allowed_tools=None if thread_tools is None else apply_allowed_tools(thread_tools, rt),
                meta=_meta(rt, (*_TURN_OUTPUT, "tags")),
            )
            for td, rt, checks in zip(thread.turns, raw_turns or [], turn_checks, strict=True)
        ]
        case_id = thread.testId or thread.name or f"item-{i + 1:03d}"
        return Case(
            id=case_id,
            name=thread.name or case_id,
            category=thread.category,
            notes=thread.notes,
            runs=1,
            turns=model_turns,
            meta=_meta(raw, ("description", "conversation_id", "summary", "tags", "extensions")),
        )
    given = cache.key(raw["evaluators"]) if isinstance(raw.get("evaluators"), Mapping) else None
    # An evaluator map already resolved without a problem is not validated again with each item that repeats it.
    shown_raw = {k: v for k, v in raw.items() if k != "evaluators"} if given in cache.valid_maps else raw
    single: SingleItemDoc | None = problems.validate(SingleItemDoc, shown_raw, prefix=loc)
    checks = apply_evaluators(defaults, raw, loc, problems, cache)
    if single is None or len(problems) > before:
        return None
    if given is not None:
        cache.valid_maps.add(given)
    turn = Turn(
        prompt=single.prompt,
        expected=single.expected_response,
        context=single.context,
        checks=list(checks.values()),
        allowed_tools=None if tools is None else apply_allowed_tools(tools, raw),
        meta=_meta(raw, _TURN_OUTPUT),
    )
    case_id = single.testId or single.name or f"item-{i + 1:03d}"
    return Case(
        id=case_id,
        name=single.name or case_id,
        category=single.category,
        notes=single.notes,
        runs=1,
        turns=[turn],
        meta=_meta(raw, ("tags",)),
    )


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
            root = {"items": pair_items(data)}
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
    doc: RootDoc | None = problems.validate(RootDoc, root)
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
    cache = SpecCache()
    for n, o in (raw_defaults if isinstance(raw_defaults, Mapping) else SYSTEM_DEFAULTS).items():
        spec = cache.spec(n, o, ("default_evaluators", n), problems)
        if spec is not None:
            defaults[n] = spec
    raw_tools = root.get("default_allowed_tools")
    # published schema: an absent allowlist resolves to empty (fail closed), in a document that declares one
    tools: list[str] | None = (
        apply_allowed_tools([], {"allowed_tools": raw_tools}) if declares_allowlist(root) else None
    )
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_items if isinstance(raw_items, list) else []):
        case = _item(raw, i, version, defaults, tools, problems, cache)
        if case is not None:
            cases.append(case)
        if not isinstance(raw, Mapping):
            continue
        case_id = _case_id(raw, i)
        if case_id in seen:
            key = "testId" if raw.get("testId") else "name"
            problems.add(
                "INVALID_VALUE",
                f"duplicate case id {shown(case_id)} (first used by items[{seen[case_id]}]); give each item a unique testId",
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
    if tools is not None:
        meta["default_allowed_tools"] = tools
    suite = Suite(
        name=meta_name or name or "dataset",
        description=description,
        format="dataset-json",
        cases=cases,
        meta=meta,
    )
    if legacy and not isinstance(raw_defaults, Mapping):
        _legacy_defaults(suite, defaults)
    return suite


def _legacy_defaults(suite: Suite, defaults: dict[str, CheckSpec]) -> None:
    """A legacy document names no default evaluators: say which checks its items got from the dataset spec's
    system defaults (judged ones), so a file of prompts and expected answers is not silently judged instead of
    compared."""
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
    """dataset spec: the suite name when the document has no ``metadata.name``: the file's stem.

    ``.json`` and then ``.eval`` come off: ``kb.eval.json`` is ``kb``.
    """
    name = path.name
    for suffix in (".json", ".eval"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or path.stem
