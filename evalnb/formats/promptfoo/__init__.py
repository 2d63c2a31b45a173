"""promptfoo configs as suites (``"promptfoo"``): each prompt x each test one case, its asserts as checks.

Recognised by a file name ending ``promptfooconfig.yaml`` / ``.yml`` (or ``.json``), or by content: a mapping
with ``prompts`` and ``tests`` (or ``providers``), in a YAML or JSON file. docs/promptfoo.md has the rules: how
prompts and tests combine, how ``{{var}}`` is rendered (the Nunjucks that prompts use), and each assert's
mapping onto evalnb's checks, with what differs. What evalnb cannot run (``javascript``, ``python``,
``webhook`` asserts, a transform, a test threshold) is a ``SuiteError`` with code ``UNSUPPORTED_FEATURE`` naming it
and where it is, or, with ``evalnb.load(path, unsupported="skip")``, left out and named in the suite's warnings.
The ``providers`` are promptfoo's: the suite names them in its warnings and ``meta``; the agent is yours.

Example::

    suite = evalnb.load("examples/simple-test/promptfooconfig.yaml", unsupported="skip")
    suite.format, len(suite.cases)
    # ('promptfoo', 10)
    result = evalnb.run(suite, my_agent)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalnb.errors import SuiteError
from evalnb.formats._registry import Format, Sniff, Text, register, unsupported_mode
from evalnb.formats._takers import is_promptfoo_asserts, is_promptfoo_config, takes_promptfoo
from evalnb.formats.promptfoo._asserts import MAPPED, PROMPTFOO_TYPES
from evalnb.formats.promptfoo._config import build as build_config
from evalnb.formats.promptfoo._yaml import parse as parse_yaml
from evalnb.suite import CheckSpec, Suite

__all__ = ["MAPPED", "PROMPTFOO_TYPES", "is_config", "read_asserts", "schema"]


def is_config(data: Any) -> bool:
    """Whether a parsed document is a promptfoo config: top-level ``prompts`` with ``tests`` or ``providers``.

    Example::

        is_config({"prompts": ["Hi {{name}}"], "tests": [{"vars": {"name": "Ada"}}]})
        # True
    """
    return is_promptfoo_config(data)


def _build(data: Any, path: Path | None) -> Suite:
    if is_promptfoo_asserts(data):
        raise SuiteError(
            "INVALID_VALUE",
            "this is a list of promptfoo asserts (for promptfoo eval --assertions), not a config with prompts; "
            "evalnb.formats.promptfoo.read_asserts(path) gives them as evalnb checks, for "
            "evalnb.from_frame(df, checks=...)",
        )
    return build_config(data, path, mode=unsupported_mode())


def read_asserts(path: str | Path, *, unsupported: str = "error") -> list[CheckSpec]:
    """The checks of a file holding a bare list of promptfoo asserts (what ``promptfoo eval --assertions`` reads).

    Their values are used as written (no vars to render them with).

    Raises:
        SuiteError: as :func:`evalnb.load` does for asserts (``UNSUPPORTED_FEATURE`` for what evalnb cannot run
            unless ``unsupported="skip"``).

    Example::

        checks = evalnb.formats.promptfoo.read_asserts("asserts.yaml", unsupported="skip")
        suite = evalnb.from_frame(pd.DataFrame({"prompt": prompts}), checks=checks)
    """
    from evalnb.formats.promptfoo._asserts import to_checks
    from evalnb.formats.promptfoo._context import Context

    p = Path(path)
    try:
        data = parse_yaml(p.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise SuiteError("FILE_NOT_FOUND", f"cannot read {p}: {exc}", path=str(p)) from None
    if not is_promptfoo_asserts(data):
        raise SuiteError(
            "TYPE_MISMATCH", "the file must hold a list of asserts (mappings with a 'type')", path=str(p)
        )
    ctx = Context(base=p.parent, config={}, mode=unsupported)
    checks: list[CheckSpec] = []
    for i, raw in enumerate(data):
        checks += to_checks(raw, {}, ctx, f"[{i}]")
    for err in ctx.errors.values():
        err.path = str(p)
    ctx.raise_if_any()
    return checks


def schema() -> dict[str, Any]:
    """A JSON Schema of the parts of a promptfoo config evalnb reads (for editors; promptfoo publishes its own)."""
    assertion = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "description": "an assert type; evalnb runs: " + ", ".join(MAPPED)},
            "value": {},
            "threshold": {"type": "number"},
            "metric": {"type": "string"},
            "weight": {"type": "number"},
        },
        "required": ["type"],
    }
    test = {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "vars": {"type": ["object", "string"]},
            "assert": {"type": "array", "items": assertion},
            "options": {"type": "object"},
            "metadata": {"type": "object"},
        },
    }
    return {
        "title": "PromptfooConfig",
        "description": "A promptfoo config as evalnb reads it (docs/promptfoo.md).",
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "prompts": {"type": ["array", "string", "object"]},
            "providers": {"type": ["array", "string", "object"]},
            "tests": {"type": ["array", "string"], "items": {"anyOf": [test, {"type": "string"}]}},
            "defaultTest": {"anyOf": [test, {"type": "string"}]},
        },
        "required": ["prompts"],
    }


def _tries(t: Text) -> bool:
    return "prompts" in t.text or "type" in t.text


register(
    Format(
        name="promptfoo",
        suffixes=(),
        file_names=("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json"),
        malformed="MALFORMED_YAML",
        parse=parse_yaml,
        build=_build,
        schema=schema,
        # Before YAML (30): a YAML text with `prompts` and `tests` is a promptfoo config, not a cube suite.
        sniff=Sniff(
            order=25,
            tries=_tries,
            accepts=takes_promptfoo,
            takes_from=("cube-yaml", "dataset-json"),
        ),
        what="promptfoo configs",
    )
)
