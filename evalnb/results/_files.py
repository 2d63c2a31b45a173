"""A Result as versioned JSON, and back (``Result.to_json``; the JSON side of ``evalnb.read_results``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb._unicode import clean
from evalnb.errors import StoreError
from evalnb.results._frames import records

if TYPE_CHECKING:
    from evalnb.results._result import Result

__all__ = ["SCHEMA_VERSION", "check_readable", "to_dict", "to_json"]

SCHEMA_VERSION = 1
"""Version of the JSON written by :meth:`Result.to_json` (and of the frame shapes)."""


def to_dict(result: Result) -> dict[str, Any]:
    """Everything as plain JSON-able data (what :meth:`Result.to_json` writes)."""
    cases = result.cases
    counts = {s: int((cases["status"] == s).sum()) for s in ("passed", "failed", "degraded", "skipped")}
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": {
            "name": result.suite.name,
            "format": result.suite.format,
            "description": result.suite.description,
            "path": result.suite.path,
            "content_hash": result.suite.content_hash(),
        },
        "meta": json.loads(json.dumps(result.meta.to_dict(), default=str)),
        "counts": counts,
        "passed": result.passed,
        "cases": records(cases),
        "runs": records(result.runs),
        "scores": records(result.scores),
        "mismatches": records(result.mismatches),
        "tool_calls": records(result.tool_calls),
        "definition": result.suite.model_dump(mode="json"),
    }


def to_json(result: Result, path: str | Path | None = None, *, indent: int = 2) -> str:
    """The JSON text of :func:`to_dict`; written to ``path`` (atomically) when given."""
    # The text as UTF-8 can hold it: a lone surrogate in the meta or a caller's frame is U+FFFD (evalnb._unicode).
    text = clean(json.dumps(to_dict(result), indent=indent, ensure_ascii=False, default=str))
    if path is not None:
        atomic_write(path, text + "\n")
    return text


def check_readable(data: Any, where: str) -> None:
    """Raise a StoreError saying why ``data`` is not what :func:`to_dict` writes (``where`` names the source).

    Raises:
        StoreError: when ``data`` is not such a result, or a version this evalnb does not read.
    """
    if not isinstance(data, dict):
        raise StoreError(
            f"{where}: a JSON {type(data).__name__}, not a result written by Result.to_json "
            "(a dataset? load it with evalnb.load)",
            code="UNKNOWN_RESULTS",
        )
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{where}: results schema_version {version!r} is not supported (expected {SCHEMA_VERSION})"
        )
    if not isinstance(data.get("definition"), dict):
        raise StoreError(
            f"{where}: the result has no suite 'definition' to rebuild it from", code="UNKNOWN_RESULTS"
        )
