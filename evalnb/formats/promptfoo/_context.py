"""What building one promptfoo config keeps track of: its folder, its errors, what was left out, what it noted."""

from __future__ import annotations

import glob
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalnb.errors import SuiteError
from evalnb.formats._common import shown, type_name

__all__ = ["Context"]


@dataclass
class Context:
    """The state of one build.

    Attributes:
        base: the folder ``file://`` references resolve against (the config's, else the working directory).
        config: the parsed config (``$ref`` pointers resolve in it).
        mode: ``"error"`` or ``"skip"`` (what ``evalnb.load(..., unsupported=)`` asked).
    """

    base: Path
    config: dict[str, Any]
    mode: str = "error"
    errors: dict[str, SuiteError] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    graders: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    similar: bool = False
    rubric_thresholds: list[str] = field(default_factory=list)

    # -- problems ----------------------------------------------------------------------------------------

    def invalid(self, code: str, message: str, loc: str, *, suggestion: str | None = None) -> None:
        """Record an error of the config (once per location: a defaultTest assert is seen by every test)."""
        if loc not in self.errors:
            self.errors[loc] = SuiteError(code, message, location=loc, suggestion=suggestion)

    def unsupported(self, feature: str, message: str, loc: str) -> None:
        """Something evalnb cannot run: an error, or (``unsupported="skip"``) left out and named in a warning."""
        if self.mode == "skip":
            where = self.skipped.setdefault(feature, [])
            if loc not in where:
                where.append(loc)
            return
        hint = ' (evalnb.load(path, unsupported="skip") or --unsupported skip leaves it out)'
        self.invalid("UNSUPPORTED_FEATURE", message + hint, loc)

    def template_error(self, exc: Exception, loc: str, *, unsupported: bool) -> None:
        # A template evalnb cannot render is an error in both modes: a prompt is never sent half-rendered.
        code = "UNSUPPORTED_FEATURE" if unsupported else "INVALID_VALUE"
        self.invalid(code, f"the template at {loc} cannot be rendered: {exc}", loc)

    def raise_if_any(self) -> None:
        if self.errors:
            errors = list(self.errors.values())
            first = errors[0]
            first.errors = errors
            raise first

    # -- notes -------------------------------------------------------------------------------------------

    def note_grader(self, provider: Any) -> None:
        name = provider_name(provider)
        if name and name not in self.graders:
            self.graders.append(name)

    def note_similar(self) -> None:
        self.similar = True

    def note_rubric_threshold(self, loc: str) -> None:
        if loc not in self.rubric_thresholds:
            self.rubric_thresholds.append(loc)

    def warnings(self) -> list[str]:
        """What the suite's warnings say about this build (docs/promptfoo.md, what differs)."""
        out = list(self.notes)
        for feature, where in self.skipped.items():
            more = f" and {len(where) - 3} more" if len(where) > 3 else ""
            out.append(f"left out {feature!r} (unsupported='skip'), at {', '.join(where[:3])}{more}")
        if self.similar:
            out.append(
                "'similar' uses evalnb's offline wordllama embeddings, not promptfoo's OpenAI embedding model: "
                "their cosines run lower, so a threshold written for promptfoo is stricter here"
            )
        if self.rubric_thresholds:
            out.append(
                "llm-rubric 'threshold' is not applied: evalnb's judge gives a PASS/FAIL verdict, not a 0-1 "
                f"score (at {', '.join(self.rubric_thresholds[:3])})"
            )
        return out

    # -- files -------------------------------------------------------------------------------------------

    def path(self, ref: str) -> Path:
        """The file a reference names (``file://`` or a bare path), relative to the config's folder."""
        name = ref[len("file://") :] if ref.startswith("file://") else ref
        p = Path(name).expanduser()
        return p if p.is_absolute() else self.base / p

    def files(self, ref: str, loc: str) -> list[Path]:
        """The files a reference names: a glob matches several (sorted); a missing file is an error."""
        p = self.path(ref)
        if glob.has_magic(str(p)):
            hits = sorted(Path(h) for h in glob.glob(str(p), recursive=True) if Path(h).is_file())
            if not hits:
                self.invalid("FILE_NOT_FOUND", f"no file matches {shown(ref)} (from {self.base})", loc)
            return hits
        if not p.is_file():
            self.invalid("FILE_NOT_FOUND", f"{shown(ref)} names no file ({p} does not exist)", loc)
            return []
        return [p]

    def read_text(self, p: Path, loc: str) -> str | None:
        try:
            return p.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            self.invalid("FILE_UNREADABLE", f"cannot read {p.name}: {exc}", loc)
            return None

    def read_data(self, ref: str) -> Any:
        """A JSON or YAML file's data (raises ``OSError`` / ``ValueError``)."""
        import yaml

        p = self.path(ref)
        text = p.read_text(encoding="utf-8-sig")
        if p.suffix.lower() == ".json":
            return json.loads(text)
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{p.name} is not YAML: {exc}") from None

    def relative(self, p: Path) -> str:
        try:
            return str(p.relative_to(self.base))
        except ValueError:
            return str(p)

    def resolve_ref(self, raw: dict[str, Any], loc: str) -> dict[str, Any] | None:
        """``{"$ref": "#/assertionTemplates/name"}`` -> that template (the assert's other keys override it)."""
        ref = raw.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            self.invalid(
                "INVALID_VALUE", f"$ref {shown(ref)} must point into this file ('#/...')", f"{loc}.$ref"
            )
            return None
        node: Any = self.config
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                self.invalid(
                    "INVALID_VALUE", f"$ref {shown(ref)} points to nothing in the file", f"{loc}.$ref"
                )
                return None
            node = node[part]
        if not isinstance(node, dict):
            self.invalid(
                "TYPE_MISMATCH",
                f"$ref {shown(ref)} must point to a mapping, got {type_name(node)}",
                f"{loc}.$ref",
            )
            return None
        return {**node, **{k: v for k, v in raw.items() if k != "$ref"}}


def provider_name(provider: Any) -> str | None:
    """How a promptfoo provider is named in the suite's notes: its ``label``, else its ``id``."""
    if isinstance(provider, str):
        return provider
    if isinstance(provider, dict):
        for key in ("label", "id"):
            if isinstance(provider.get(key), str):
                return str(provider[key])
        if len(provider) == 1:
            return str(next(iter(provider)))
    return None
