"""The legacy shapes of a dataset (dataset spec): an array of items, or paired ``prompts`` and
``expected_responses``; and their upgrade to the versioned document, dropping nothing.

Example::

    to_versioned([{"prompt": "Hi"}])
    # {'schemaVersion': '1.11.0', 'items': [{'prompt': 'Hi'}]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalnb.formats._common import Problems
from evalnb.formats._dataset_json.models import LATEST_VERSION, LegacyPairsDoc

__all__ = ["is_legacy", "pair_items", "to_versioned"]


def is_legacy(data: Any) -> bool:
    """Whether a parsed document is a legacy dataset (no ``schemaVersion``)."""
    return isinstance(data, list) or (isinstance(data, Mapping) and "schemaVersion" not in data)


def to_versioned(data: Any) -> dict[str, Any] | None:
    """The versioned form of a legacy document, or None when it already is versioned.

    Nothing is dropped: items keep every key, in order; other root keys are kept after ``schemaVersion``.

    Example::

        to_versioned([{"prompt": "Hi"}])
        # {'schemaVersion': '1.11.0', 'items': [{'prompt': 'Hi'}]}
    """
    if not is_legacy(data):
        return None
    if isinstance(data, list):
        return {"schemaVersion": LATEST_VERSION, "items": data}
    if "prompts" in data or "expected_responses" in data:
        return {"schemaVersion": LATEST_VERSION, "items": pair_items(data)}
    return {"schemaVersion": LATEST_VERSION, **data}


def pair_items(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The items of the older ``{"prompts", "expected_responses"}`` shape; raises with all its errors."""
    problems = Problems(data)
    pairs: LegacyPairsDoc | None = problems.validate(LegacyPairsDoc, data)
    prompts, expected = data.get("prompts"), data.get("expected_responses")
    if isinstance(prompts, list) and isinstance(expected, list) and len(expected) != len(prompts):
        problems.add(
            "INVALID_VALUE",
            f"'expected_responses' has {len(expected)} entries for {len(prompts)} prompts; they pair in order",
            ("expected_responses",),
        )
    problems.raise_if_any()
    assert pairs is not None  # no problems means validation succeeded
    expected = pairs.expected_responses
    items: list[dict[str, Any]] = []
    for k, prompt in enumerate(pairs.prompts):
        item: dict[str, Any] = {"prompt": prompt}
        if expected is not None:
            item["expected_response"] = expected[k]
        items.append(item)
    return items
