"""Validating dataset documents against the published schema (Draft 2020-12), vendored in ``schema/``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA_PATH", "assert_valid", "validator"]

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "eval-document.schema.json"


@functools.lru_cache(maxsize=1)
def validator() -> Any:
    """A Draft 2020-12 validator of the published schema (checked to be a valid schema itself)."""
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def assert_valid(document: Any) -> None:
    """Fail with every schema error of ``document``, each with its path."""
    errors = sorted(validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:20])
