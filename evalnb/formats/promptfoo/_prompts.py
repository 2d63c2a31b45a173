"""The prompts of a promptfoo config: inline texts, ``file://`` files and globs, chat prompts (docs/promptfoo.md)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalnb.formats._common import shown, type_name
from evalnb.formats.promptfoo._context import Context

__all__ = ["CODE_FILES", "Prompt", "prompts"]

_PROMPT_FILES = (".txt", ".md", ".j2", ".njk", ".json", ".jsonl", ".yaml", ".yml", ".prompt")
CODE_FILES = (".py", ".js", ".mjs", ".cjs", ".ts")
_SEPARATOR = re.compile(r"^---[ \t]*$", re.MULTILINE)


@dataclass
class Prompt:
    """One prompt: a template, or chat messages each with a template; ``label`` as promptfoo shows it."""

    label: str
    text: str | None = None
    messages: list[dict[str, str]] | None = None
    loc: str = "prompts"


def _looks_like_file(text: str) -> bool:
    # promptfoo reads `prompts: [prompts.txt]` as a file: one line ending in a file suffix, no spaces.
    return (
        "\n" not in text
        and " " not in text.strip()
        and text.strip().lower().endswith(_PROMPT_FILES + CODE_FILES)
    )


def prompts(config: dict[str, Any], ctx: Context) -> list[Prompt]:
    raw = config.get("prompts")
    if raw is None:
        return [Prompt(label="{{prompt}}", text="{{prompt}}")]  # promptfoo's default prompt
    items: list[tuple[Any, str | None, str]] = []
    if isinstance(raw, str):
        items = [(raw, None, "prompts")]
    elif isinstance(raw, list):
        items = [(item, None, f"prompts[{i}]") for i, item in enumerate(raw)]
    elif isinstance(raw, dict):  # the older form: {file: label}
        items = [(k, v if isinstance(v, str) else None, f"prompts.{k}") for k, v in raw.items()]
    else:
        ctx.invalid("TYPE_MISMATCH", f"'prompts' must be a list, got {type_name(raw)}", "prompts")
        return []
    out: list[Prompt] = []
    for item, label, loc in items:
        out += _prompt(item, label, ctx, loc)
    return out


def _prompt(item: Any, label: str | None, ctx: Context, loc: str) -> list[Prompt]:
    if isinstance(item, dict):
        label = item.get("label") if isinstance(item.get("label"), str) else label
        if isinstance(item.get("raw"), str):
            return [Prompt(label=label or item["raw"], text=item["raw"], loc=loc)]
        if isinstance(item.get("id"), str):
            return _prompt(item["id"], label, ctx, f"{loc}.id")
        ctx.invalid("MISSING_FIELD", f"the prompt at {loc} needs 'raw' (its text) or 'id' (a file)", loc)
        return []
    if not isinstance(item, str):
        ctx.invalid("TYPE_MISMATCH", f"a prompt must be a text or a mapping, got {type_name(item)}", loc)
        return []
    if not (item.startswith("file://") or _looks_like_file(item)):
        return [Prompt(label=label or item, text=item, loc=loc)]
    ref, _, function = (
        item.partition(":")
        if not item.startswith("file://")
        else ("file://" + item[7:].split(":")[0], "", "")
    )
    if Path(ref[7:] if ref.startswith("file://") else ref).suffix.lower() in CODE_FILES or function:
        ctx.unsupported(
            "prompt function", f"the prompt {shown(item)} is code; evalnb renders text prompts only", loc
        )
        return []
    out: list[Prompt] = []
    for p in ctx.files(item, loc):
        out += _prompt_file(p, label, ctx, loc)
    return out


def _prompt_file(p: Path, label: str | None, ctx: Context, loc: str) -> list[Prompt]:
    text = ctx.read_text(p, loc)
    if text is None:
        return []
    name = ctx.relative(p)
    suffix = p.suffix.lower()
    if suffix in (".json", ".yaml", ".yml", ".jsonl"):
        chats = _chats(text, suffix, ctx, f"{loc} ({name})")
        if chats is not None:
            return [
                Prompt(
                    label=label or (name if len(chats) == 1 else f"{name}:{i + 1}"),
                    messages=m,
                    loc=f"{loc} ({name})",
                )
                for i, m in enumerate(chats)
            ]
    # A text file holds one prompt, or several split by a line `---` (docs/promptfoo.md, prompts).
    parts = [part.strip() for part in _SEPARATOR.split(text)]
    parts = [part for part in parts if part]
    return [
        Prompt(
            label=label or f"{name}: {part}",
            text=part,
            loc=f"{loc} ({name})",
        )
        for part in parts
    ]


def _chats(text: str, suffix: str, ctx: Context, loc: str) -> list[list[dict[str, str]]] | None:
    """Chat prompts of a JSON / YAML / JSONL file (a list of ``{role, content}`` each), or None for plain text."""
    import yaml

    try:
        if suffix == ".jsonl":
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif suffix == ".json":
            docs = [json.loads(text)]
        else:
            docs = [yaml.safe_load(text)]
    except (json.JSONDecodeError, yaml.YAMLError):
        return None  # not data: a text prompt that happens to have this suffix
    out: list[list[dict[str, str]]] = []
    for doc in docs:
        if not (isinstance(doc, list) and doc and all(isinstance(m, dict) for m in doc)):
            return None
        messages: list[dict[str, str]] = []
        for m in doc:
            role, content = m.get("role"), m.get("content")
            if not isinstance(role, str) or not isinstance(content, str):
                ctx.unsupported(
                    "chat message",
                    "a chat message needs a text 'role' and 'content' (images and tool parts are not sent)",
                    loc,
                )
                return []
            messages.append({"role": role, "content": content})
        out.append(messages)
    return out
