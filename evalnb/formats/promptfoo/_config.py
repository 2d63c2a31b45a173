"""A promptfoo config -> Suite: prompts x tests, each combination one case (docs/promptfoo.md).

The steps: the prompts (inline, ``file://`` files and globs, chat JSON), the tests (inline, CSV / YAML / JSON /
JSONL files, ``defaultTest`` merged in, list-valued vars expanded), then per test x prompt one case whose
prompt is rendered with the test's vars and whose checks are its asserts mapped by ``_asserts``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalnb.formats._common import nearest, shown, type_name
from evalnb.formats.promptfoo._asserts import to_checks
from evalnb.formats.promptfoo._context import Context, provider_name
from evalnb.formats.promptfoo._nunjucks import _TemplateError, _TemplateUnsupported, js_str, render
from evalnb.formats.promptfoo._prompts import CODE_FILES, Prompt, prompts
from evalnb.suite import Case, CheckSpec, Message, Suite, Turn

__all__ = ["CONFIG_KEYS", "TEST_KEYS", "build"]

CONFIG_KEYS = (
    "description",
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "scenarios",
    "outputPath",
    "assertionTemplates",
    "env",
    "evaluateOptions",
    "sharing",
    "nunjucksFilters",
    "filters",
    "derivedMetrics",
    "extensions",
    "redteam",
    "metadata",
    "tags",
    "commandLineOptions",
    "writeLatestResults",
    "tracing",
)
"""The top-level keys of a promptfoo config (others: a near miss is an error, the rest a warning)."""

TEST_KEYS = (
    "description",
    "vars",
    "assert",
    "options",
    "threshold",
    "metadata",
    "provider",
    "providers",
    "providerOutput",
    "prompts",
    "assertScoringFunction",
)


@dataclass
class Test:
    """One test after ``defaultTest`` was merged in, before list-valued vars are expanded."""

    loc: str
    vars: dict[str, Any] = field(default_factory=dict)
    asserts: list[tuple[Any, str]] = field(default_factory=list)
    description: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    threshold: Any = None
    prompts: list[str] | None = None


# ------------------------------------------------------------------------------------------------------
# Prompts
# ------------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------------


def _as_mapping(value: Any, what: str, ctx: Context, loc: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str) and value.startswith("file://"):
        try:
            value = ctx.read_data(value)
        except (OSError, ValueError) as exc:
            ctx.invalid(
                "FILE_NOT_FOUND" if isinstance(exc, OSError) else "INVALID_VALUE",
                f"{what} {shown(value)}: {exc}",
                loc,
            )
            return {}
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        merged: dict[str, Any] = {}
        for v in value:
            merged.update(v)
        return merged
    if not isinstance(value, dict):
        ctx.invalid("TYPE_MISMATCH", f"{what} must be a mapping, got {type_name(value)}", loc)
        return {}
    return dict(value)


def _test_keys(raw: dict[str, Any], ctx: Context, loc: str) -> None:
    unknown = [k for k in raw if k not in TEST_KEYS]
    for key in unknown:
        hint = nearest(key, TEST_KEYS)
        if hint is not None and hint not in raw:
            ctx.invalid(
                "UNKNOWN_FIELD",
                f"unknown key {shown(key)} in {loc}; did you mean '{hint}'?",
                f"{loc}.{key}",
                suggestion=hint,
            )
    quiet = [k for k in unknown if nearest(k, TEST_KEYS) is None]
    if quiet:
        ctx.notes.append(
            f"{loc}: keys evalnb does not use were left as they are: {', '.join(map(repr, quiet))}"
        )


def _test(raw: Any, default: dict[str, Any], ctx: Context, loc: str) -> Test | None:
    if not isinstance(raw, dict):
        ctx.invalid("TYPE_MISMATCH", f"a test must be a mapping, got {type_name(raw)}", loc)
        return None
    _test_keys(raw, ctx, loc)
    # docs/promptfoo.md, prompts x tests (defaultTest): its vars and options are defaults, its asserts come first.
    dvars = _as_mapping(default.get("vars"), "defaultTest.vars", ctx, "defaultTest.vars")
    tvars = _as_mapping(raw.get("vars"), "vars", ctx, f"{loc}.vars")
    asserts: list[tuple[Any, str]] = []
    for where, source in (("defaultTest", default), (loc, raw)):
        items = source.get("assert")
        if items is None:
            continue
        if not isinstance(items, list):
            ctx.invalid(
                "TYPE_MISMATCH", f"'assert' must be a list, got {type_name(items)}", f"{where}.assert"
            )
            continue
        asserts += [(a, f"{where}.assert[{i}]") for i, a in enumerate(items)]
    options = {
        **_as_mapping(default.get("options"), "defaultTest.options", ctx, "defaultTest.options"),
        **_as_mapping(raw.get("options"), "options", ctx, f"{loc}.options"),
    }
    metadata = {
        **_as_mapping(default.get("metadata"), "metadata", ctx, "defaultTest.metadata"),
        **_as_mapping(raw.get("metadata"), "metadata", ctx, f"{loc}.metadata"),
    }
    threshold = raw.get("threshold", default.get("threshold"))
    restrict = raw.get("prompts")
    return Test(
        loc=loc,
        vars={**dvars, **tvars},
        asserts=asserts,
        description=raw.get("description") if isinstance(raw.get("description"), str) else None,
        options=options,
        metadata=metadata,
        threshold=threshold,
        prompts=[str(p) for p in restrict] if isinstance(restrict, list) else None,
    )


def _csv_assert(text: str) -> dict[str, Any]:
    """One ``__expected`` cell as promptfoo reads it (docs/promptfoo.md, prompts x tests: CSV tests)."""
    for prefix in ("javascript:", "fn:", "eval:"):
        if text.startswith(prefix):
            return {"type": "javascript", "value": text[len(prefix) :].strip()}
    if text.startswith("file://") and text.lower().endswith((".js", ".mjs", ".cjs", ".ts")):
        return {"type": "javascript", "value": text}
    for prefix in ("grade:", "llm-rubric:"):
        if text.startswith(prefix):
            return {"type": "llm-rubric", "value": text[len(prefix) :]}
    if text.startswith("python:") or (
        text.startswith("file://") and (text.endswith(".py") or ".py:" in text)
    ):
        return {"type": "python", "value": text.removeprefix("python:").strip()}
    from evalnb.formats.promptfoo._asserts import PROMPTFOO_TYPES

    types = "|".join(sorted((re.escape(t) for t in PROMPTFOO_TYPES), key=len, reverse=True))
    m = re.match(rf"^(not-)?({types})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$", text)
    if m is None:
        return {"type": "equals", "value": text}
    negate, kind, threshold, value = m.groups()
    out: dict[str, Any] = {"type": f"{negate or ''}{kind}"}
    if kind in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
        out["value"] = [v.strip() for v in value.split(",")] if value else value
    elif kind in ("is-json", "contains-json"):
        out["value"] = value
    else:
        out["value"] = value.strip() if value is not None else None
        if threshold is not None:
            out["threshold"] = float(threshold)
        elif kind == "similar":
            out["threshold"] = 0.8  # promptfoo's default for a CSV `similar` without one
    if out.get("value") is None:
        out.pop("value")
    return out


def _csv_tests(text: str, name: str, ctx: Context) -> list[tuple[dict[str, Any], str]]:
    out: list[tuple[dict[str, Any], str]] = []
    reader = csv.DictReader(io.StringIO(text))
    try:
        for row in reader:
            line = reader.line_num
            loc = f"{name} line {line}"
            test: dict[str, Any] = {"vars": {}, "assert": [], "metadata": {}}
            for key, value in row.items():
                key = (key or "").strip()
                value = value if isinstance(value, str) else ""
                if key.startswith("__expected"):
                    if value.strip():
                        test["assert"].append(_csv_assert(value.strip()))
                elif key == "__description":
                    test["description"] = value
                elif key == "__threshold":
                    # promptfoo keeps a CSV threshold only when it is a number other than 0
                    try:
                        t = float(value)
                    except ValueError:
                        t = 0.0
                    if t:
                        test["threshold"] = t
                elif key.startswith("__metadata:"):
                    mkey = key[len("__metadata:") :]
                    if value.strip() and mkey.endswith("[]"):
                        test["metadata"][mkey[:-2]] = [
                            v.strip().replace("\\,", ",") for v in re.split(r"(?<!\\),", value)
                        ]
                    elif value.strip():
                        test["metadata"][mkey] = value
                elif key in ("__prefix", "__suffix"):
                    test.setdefault("options", {})[key[2:]] = value
                elif key == "__metric":
                    for a in test["assert"]:
                        a["metric"] = value
                elif key.startswith("__"):
                    ctx.notes.append(f"{name}: the column {key!r} is not one evalnb reads; it was left out")
                else:
                    test["vars"][key] = value
            out.append((test, loc))
    except csv.Error as exc:
        ctx.invalid("MALFORMED_CSV", f"{name} is not valid CSV: {exc}", name)
    return out


def _test_file(p: Path, ctx: Context, loc: str) -> list[tuple[Any, str]]:
    name = ctx.relative(p)
    suffix = p.suffix.lower()
    if suffix in CODE_FILES:
        ctx.unsupported(
            "test generator", f"{name} generates tests with code; evalnb reads test files only", loc
        )
        return []
    text = ctx.read_text(p, loc)
    if text is None:
        return []
    if suffix in (".csv", ".tsv"):
        return _csv_tests(text, name, ctx) if suffix == ".csv" else []
    try:
        if suffix == ".jsonl":
            docs: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif suffix == ".json":
            docs = json.loads(text)
        else:
            import yaml

            docs = yaml.safe_load(text)
    except (ValueError, Exception) as exc:  # JSON and YAML errors alike
        ctx.invalid("INVALID_VALUE", f"{name} is not a list of tests: {exc}", loc)
        return []
    if isinstance(docs, dict):
        docs = [docs]
    if not isinstance(docs, list):
        ctx.invalid("TYPE_MISMATCH", f"{name} must hold a list of tests, got {type_name(docs)}", loc)
        return []
    return [(d, f"{name}[{i}]") for i, d in enumerate(docs)]


def tests(config: dict[str, Any], ctx: Context) -> list[Test]:
    raw = config.get("tests")
    default = config.get("defaultTest") or {}
    if isinstance(default, str):
        default = _as_mapping(default, "defaultTest", ctx, "defaultTest")
    if not isinstance(default, dict):
        ctx.invalid(
            "TYPE_MISMATCH", f"'defaultTest' must be a mapping, got {type_name(default)}", "defaultTest"
        )
        default = {}
    if isinstance(default.get("options"), dict) and default["options"].get("provider") is not None:
        ctx.note_grader(default["options"]["provider"])
    sources: list[tuple[Any, str]]
    if raw is None:
        sources = [({}, "tests")]  # no tests: each prompt once, with defaultTest's vars and asserts
    elif isinstance(raw, (str, dict)):
        sources = [(raw, "tests")]
    elif isinstance(raw, list):
        sources = [(item, f"tests[{i}]") for i, item in enumerate(raw)]
    else:
        ctx.invalid("TYPE_MISMATCH", f"'tests' must be a list, got {type_name(raw)}", "tests")
        return []
    out: list[Test] = []
    for item, loc in sources:
        expanded = [(item, loc)]
        if isinstance(item, str):
            expanded = [t for p in ctx.files(item, loc) for t in _test_file(p, ctx, loc)]
        for test, where in expanded:
            made = _test(test, default, ctx, where)
            if made is not None:
                out.append(made)
    return out


def _combinations(variables: dict[str, Any], expand: bool) -> list[dict[str, Any]]:
    # docs/promptfoo.md, prompts x tests (vars): a list-valued var makes one test per value (every combination of them).
    lists = [k for k, v in variables.items() if isinstance(v, list)] if expand else []
    if not lists:
        return [variables]
    combos = itertools.product(*(variables[k] for k in lists))
    return [{**variables, **dict(zip(lists, combo, strict=True))} for combo in combos]


def _file_var(value: Any, ctx: Context, loc: str) -> Any:
    if not (isinstance(value, str) and value.startswith("file://")):
        return value
    p = ctx.path(value)
    if p.suffix.lower() in CODE_FILES:
        ctx.unsupported("var function", f"the var {shown(value)} is code; evalnb reads var files only", loc)
        return ""
    if p.suffix.lower() in (".json", ".yaml", ".yml"):
        try:
            return ctx.read_data(value)
        except (OSError, ValueError) as exc:
            ctx.invalid(
                "FILE_NOT_FOUND" if isinstance(exc, OSError) else "INVALID_VALUE",
                f"var {shown(value)}: {exc}",
                loc,
            )
            return ""
    files = ctx.files(value, loc)
    text = ctx.read_text(files[0], loc) if files else None
    return text if text is not None else ""


# ------------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------------


def _render(text: str, variables: dict[str, Any], ctx: Context, loc: str) -> str | None:
    try:
        return render(text, variables)
    except _TemplateUnsupported as exc:
        ctx.template_error(exc, loc, unsupported=True)
    except _TemplateError as exc:
        ctx.template_error(exc, loc, unsupported=False)
    return None


def _turn(
    prompt: Prompt, test: Test, variables: dict[str, Any], checks: list[CheckSpec], ctx: Context
) -> Turn | None:
    prefix = js_str(test.options.get("prefix") or "")
    suffix = js_str(test.options.get("suffix") or "")
    where = f"{prompt.loc} with the vars of {test.loc}"
    if prompt.messages is None:
        text = _render(prompt.text or "", variables, ctx, where)
        if text is None:
            return None
        return Turn(prompt=prefix + text + suffix, checks=checks, meta={"prompt_label": prompt.label})
    rendered: list[dict[str, str]] = []
    for m in prompt.messages:
        content = _render(m["content"], variables, ctx, where)
        if content is None:
            return None
        rendered.append({"role": m["role"], "content": content})
    # A chat prompt: its last message is what is sent, the earlier ones are the conversation before it.
    last = rendered[-1]
    return Turn(
        prompt=prefix + last["content"] + suffix,
        history=[Message(role=m["role"], content=m["content"]) for m in rendered[:-1]],
        checks=checks,
        meta={"prompt_label": prompt.label, "role": last["role"]},
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


def _case_id(test: Test, variables: dict[str, Any], prompt: Prompt, taken: set[str]) -> str:
    # A stable id: the test's description (or "test") and a hash of the prompt and the vars, so reordering the
    # tests keeps each case's id (comparisons across versions match cases by id).
    key = json.dumps(
        {"prompt": prompt.text or prompt.messages, "vars": variables}, sort_keys=True, default=str
    )
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    base = f"{_slug(test.description or '') or 'test'}-{digest}"
    out, n = base, 1
    while out in taken:
        n += 1
        out = f"{base}#{n}"
    taken.add(out)
    return out


def _checks(test: Test, variables: dict[str, Any], ctx: Context) -> list[CheckSpec]:
    if test.options.get("transform") not in (None, ""):
        ctx.unsupported(
            "transform",
            f"'options.transform' of {test.loc} rewrites the output with JavaScript before its asserts; "
            "evalnb runs no JavaScript (with unsupported='skip' the test's asserts are left out)",
            f"{test.loc}.options.transform",
        )
        return []
    if test.options.get("rubricPrompt") not in (None, ""):
        ctx.unsupported(
            "rubricPrompt",
            "a custom rubricPrompt cannot run (evalnb's judge writes its own prompt)",
            f"{test.loc}.options.rubricPrompt",
        )
    if test.options.get("provider") is not None:
        ctx.note_grader(test.options["provider"])
    if test.threshold is not None:
        ctx.unsupported(
            "threshold",
            f"the test threshold {shown(test.threshold)} passes a test on the weighted mean of its asserts' "
            "scores; evalnb passes a case when all its checks pass (with unsupported='skip' all must pass)",
            f"{test.loc}.threshold",
        )
    out: list[CheckSpec] = []
    for raw, loc in test.asserts:
        out += to_checks(raw, variables, ctx, loc)
    return out


def cases(prompt_list: list[Prompt], test_list: list[Test], ctx: Context, runs: int) -> list[Case]:
    out: list[Case] = []
    taken: set[str] = set()
    many = len(prompt_list) > 1
    for test in test_list:
        expand = not bool(test.options.get("disableVarExpansion"))
        resolved = {k: _file_var(v, ctx, f"{test.loc}.vars.{k}") for k, v in test.vars.items()}
        for variables in _combinations(resolved, expand):
            scope = {"env": {**os.environ, **_env(ctx.config)}, **variables}
            checks = _checks(test, scope, ctx)
            for j, prompt in enumerate(prompt_list):
                if test.prompts is not None and prompt.label not in test.prompts:
                    continue
                turn = _turn(prompt, test, scope, checks, ctx)
                if turn is None:
                    continue
                shown_vars = ", ".join(f"{k}={js_str(v)[:30]}" for k, v in variables.items())
                name = test.description or shown_vars or "test"
                if many:
                    name += f" · prompt {j + 1}"
                category = test.metadata.get("category")
                out.append(
                    Case(
                        id=_case_id(test, variables, prompt, taken),
                        name=name,
                        category=category if isinstance(category, str) else None,
                        runs=runs,
                        turns=[turn],
                        meta={
                            "vars": _plain(variables),
                            "test": test.loc,
                            "prompt": prompt.label,
                            "metadata": _plain(test.metadata),
                        },
                    )
                )
    return out


def _env(config: dict[str, Any]) -> dict[str, str]:
    env = config.get("env")
    return {str(k): js_str(v) for k, v in env.items()} if isinstance(env, dict) else {}


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


# ------------------------------------------------------------------------------------------------------
# The whole config
# ------------------------------------------------------------------------------------------------------


def _top_keys(config: dict[str, Any], ctx: Context) -> None:
    for key in config:
        if key in CONFIG_KEYS:
            continue
        hint = nearest(key, CONFIG_KEYS)
        if hint is not None and hint not in config:
            ctx.invalid(
                "UNKNOWN_FIELD",
                f"unknown key {shown(key)} at the top level; did you mean '{hint}'?",
                str(key),
                suggestion=hint,
            )
        else:
            ctx.notes.append(f"the key {key!r} is not one evalnb reads; it was left as it is")
    for key, why in (
        ("scenarios", "scenarios (groups of vars x tests) are not read by evalnb"),
        ("derivedMetrics", "derived metrics are computed with code promptfoo runs"),
        ("redteam", "red-team generation is promptfoo's"),
        ("extensions", "extension hooks run code"),
    ):
        if config.get(key):
            ctx.unsupported(key, f"'{key}' cannot run ({why})", key)
    filters = config.get("nunjucksFilters") or config.get("filters")
    if isinstance(filters, dict) and filters:
        ctx.notes.append(
            f"custom Nunjucks filters ({', '.join(map(str, filters))}) are JavaScript; a template that uses one "
            "cannot be rendered"
        )


def _runs(config: dict[str, Any], ctx: Context) -> int:
    options = config.get("evaluateOptions")
    repeat = options.get("repeat") if isinstance(options, dict) else None
    if repeat is None:
        return 1
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        ctx.invalid(
            "INVALID_VALUE",
            f"evaluateOptions.repeat must be a whole number >= 1, got {shown(repeat)}",
            "evaluateOptions.repeat",
        )
        return 1
    return repeat


def _providers(config: dict[str, Any]) -> list[str]:
    raw = config.get("providers", config.get("targets"))
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    return [n for n in (provider_name(p) for p in items) if n]


def build(config: Any, path: Path | None, *, mode: str) -> Suite:
    """The suite of a parsed promptfoo config (``path``: its file, for ``file://`` references and the name)."""
    from evalnb.formats._common import fail

    if not isinstance(config, dict):
        fail("TYPE_MISMATCH", f"a promptfoo config is a mapping, got {type_name(config)}")
    ctx = Context(base=path.parent if path is not None else Path.cwd(), config=config, mode=mode)
    _top_keys(config, ctx)
    runs = _runs(config, ctx)
    made = cases(prompts(config, ctx), tests(config, ctx), ctx, runs)
    ctx.raise_if_any()
    providers = _providers(config)
    warnings = ctx.warnings()
    if providers:
        warnings.insert(
            0,
            f"providers {', '.join(providers)} are promptfoo's: evalnb sends every prompt to the agent given to "
            "evalnb.run (or --agent)",
        )
    description = config.get("description") if isinstance(config.get("description"), str) else None
    return Suite(
        name=_name(path, description),
        description=description,
        format="promptfoo",
        cases=made,
        meta={"promptfoo": {"providers": providers, "graders": ctx.graders, "runs": runs}},
        warnings=warnings,
    )


def _name(path: Path | None, description: str | None) -> str:
    if path is None:
        return _slug(description or "") or "promptfoo"
    stem = path.name
    for ending in (".yaml", ".yml", ".json"):
        stem = stem.removesuffix(ending)
    # promptfooconfig.yaml is named by its folder (examples/simple-test/promptfooconfig.yaml -> simple-test)
    if stem.lower() in ("promptfooconfig", ""):
        return path.parent.name or "promptfoo"
    stem = stem.removesuffix(".promptfooconfig").removesuffix("promptfooconfig").rstrip("-_.")
    return stem or path.parent.name or "promptfoo"
