"""The JSON evaluation dataset (docs/dataset-json.md): prompts, expected responses and named evaluators.

Three shapes load: the versioned object (``schemaVersion`` ``1.x.y``, recommended), the legacy array of
items, and the older ``{"prompts": [...], "expected_responses": [...]}`` pair of lists. Every key of the
published schema is accepted, output keys included (``response``, ``scores``, ``status`` ...) so that output
documents load too, plus ``testId``, ``category``, ``notes`` and a root ``description`` from the source
document (docs/dataset-json.md, where evalnb differs from the published schema). Any other key is
``UNKNOWN_FIELD``.

Evaluators are resolved once, at load (``evaluators``): the file's ``default_evaluators`` (or the system defaults Relevance and
Coherence), then the item's ``evaluators`` with ``evaluators_mode`` extend/replace, then the turn's. Each
``Turn`` of the model holds its final list of checks.

Example::

    suite = load_text('[{"prompt": "What is 2+2?", "expected_response": "4"}]')
    [c.name for c in suite.cases[0].turns[0].checks]
    # ['Relevance', 'Coherence']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalnb.formats._common import EXPECTED_CHECKS
from evalnb.formats._dataset_json.documents import inline_suite, items_document, save_items
from evalnb.formats._dataset_json.evaluators import BUILTIN_EVALUATORS, SYSTEM_DEFAULTS
from evalnb.formats._dataset_json.legacy import is_legacy, to_versioned
from evalnb.formats._dataset_json.loading import load_data, load_text, parse, stem
from evalnb.formats._dataset_json.models import LATEST_VERSION, DatasetDoc, EvaluatorMap, json_schema
from evalnb.formats._registry import Format, Sniff, Text, register
from evalnb.suite import Suite

__all__ = [
    "BUILTIN_EVALUATORS",
    "LATEST_VERSION",
    "STARTER",
    "SYSTEM_DEFAULTS",
    "DatasetDoc",
    "EvaluatorMap",
    "inline_suite",
    "is_legacy",
    "items_document",
    "json_schema",
    "load_data",
    "load_text",
    "parse",
    "save_items",
    "stem",
    "to_versioned",
]

# The starter document (docs/dataset-json.md, without a file: `./evals/evals.json` with sample prompts), written by
# `evalnb init` and by `evalnb run` when discovery finds nothing. `run` scores it right away, so its defaults
# are the deterministic matchers: a first run needs no judge. It shows single items and a short conversation.
STARTER: dict[str, Any] = {
    "schemaVersion": LATEST_VERSION,
    # Only keys of the published schema (docs/dataset-json.md, without a file): the upstream tool reads the
    # starter as evalnb does. Tags group the items (evalnb's own testId and category are not the schema's:
    # docs/dataset-json.md, where evalnb differs from the published schema).
    "metadata": {
        "name": "evals",
        "description": "Starter prompts: replace them with prompts your agent should handle.",
    },
    "default_evaluators": {name: {} for name in EXPECTED_CHECKS},
    "items": [
        {"prompt": "What is the capital of France?", "expected_response": "Paris", "tags": ["knowledge"]},
        {"prompt": "What is 2 + 2?", "expected_response": "4", "tags": ["arithmetic"]},
        {
            "name": "Two questions in one conversation",
            "tags": ["conversation"],
            "turns": [
                {"prompt": "What is 2 + 2?", "expected_response": "4"},
                {
                    "prompt": "What is the capital of France?",
                    "expected_response": "Paris",
                    "evaluators": {"ExactMatch": {}},
                    "evaluators_mode": "replace",
                },
            ],
        },
    ],
}


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _build(data: Any, path: Path | None) -> Suite:
    # docs/dataset-json.md, shapes, cases and names: Suite.name is metadata.name, else the file's stem.
    # `data` is the parse of this load only (evalnb.load drops it after the build): its items may go as they
    # are built
    return load_data(data, name=stem(path) if path is not None else None, consume=True)


def _upgrade(data: Any, path: Path) -> str | None:
    load_data(data, name=stem(path))  # never upgrade what would not load
    new = to_versioned(data)
    return None if new is None else _dump(new)


def _tries(t: Text) -> bool:
    # JSON starts with an object or an array; a first line `[name]` / `[[name]]` is a table header instead.
    return t.head in ("{", "[") and not t.bracket_header


register(
    Format(
        name="dataset-json",
        suffixes=(".json",),
        malformed="MALFORMED_JSON",
        parse=parse,
        build=_build,
        schema=json_schema,
        sniff=Sniff(
            order=10,
            tries=_tries,
            # A TOML or YAML file does not start with `{`: report the JSON error.
            claims=lambda t: t.head == "{",
            # An array nothing else took (`[1, 2` is no TOML table and no YAML mapping) is malformed JSON.
            fallback=_tries,
        ),
        upgrade=_upgrade,
        starter=lambda: _dump(STARTER),
        what="JSON datasets",
    )
)
