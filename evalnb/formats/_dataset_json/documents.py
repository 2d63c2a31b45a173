"""Dataset documents evalnb writes itself: a suite from prompts given inline, and prompts saved as a dataset.

dataset spec: ``evalnb run --prompts "a" "b" --expected "x" "y"`` runs prompts without a file, and the
interactive loop offers to save what was tried as a dataset. Both go through the dataset format's own rules
(a blank prompt is ``BLANK_FIELD`` with its location, as in a file), so an inline suite is exactly the suite the
saved file loads to.

Example::

    suite = inline_suite(["What is 2+2?"], ["4"])
    path = save_items([{"prompt": "What is 2+2?", "expected_response": "4"}], "evals/tried.json")
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalnb.errors import SuiteError
from evalnb.formats._common import EXPECTED_CHECKS
from evalnb.formats._dataset_json.loading import load_data
from evalnb.formats._dataset_json.models import LATEST_VERSION
from evalnb.suite import Suite

__all__ = ["inline_document", "inline_suite", "items_document", "save_items"]

# With an expected answer the deterministic matchers score it; without one, the dataset defaults (Relevance and
# Coherence, judged) apply, as for a dataset item with no evaluators.
_MATCHERS: dict[str, dict[str, Any]] = {name: {} for name in EXPECTED_CHECKS}


def inline_document(
    prompts: Sequence[str], expected: Sequence[str] | None = None, *, judged: bool = True
) -> dict[str, Any]:
    """The dataset document of prompts given inline, paired in order with their expected answers (if any).

    A prompt with an expected answer is scored by the deterministic matchers; one without by the dataset's
    defaults (Relevance and Coherence, judged), or by nothing when ``judged=False`` (the interactive loop shows
    the answer and only the scores it can give without a judge).

    Raises:
        SuiteError: ``INVALID_VALUE`` when the expected answers do not pair with the prompts.
    """
    expected = list(expected or [])
    if expected and len(expected) != len(prompts):
        raise SuiteError(
            "INVALID_VALUE",
            f"prompts and expected answers pair in order: got {len(prompts)} prompts and "
            f"{len(expected)} expected answers",
            location="expected",
        )
    items: list[dict[str, Any]] = []
    for i, prompt in enumerate(prompts):
        item: dict[str, Any] = {"testId": f"inline-{i + 1}", "prompt": prompt}
        if prompt.strip():
            item["name"] = prompt.strip()[:60]
        if expected:
            item["expected_response"] = expected[i]
            item["evaluators"] = dict(_MATCHERS)
            item["evaluators_mode"] = "replace"
        elif not judged:
            item["evaluators"] = {}
            item["evaluators_mode"] = "replace"
        items.append(item)
    return {"schemaVersion": LATEST_VERSION, "metadata": {"name": "inline"}, "items": items}


def inline_suite(
    prompts: Sequence[str], expected: Sequence[str] | None = None, *, judged: bool = True
) -> Suite:
    """The suite of prompts given inline (``evalnb run --prompts ... --expected ...``; see
    :func:`inline_document`).

    Raises:
        SuiteError: a blank prompt (``BLANK_FIELD`` at ``items[i].prompt``), or answers that do not pair.
    """
    try:
        return load_data(inline_document(prompts, expected, judged=judged))
    except SuiteError as exc:
        # The locations name the arguments, not the document built from them: items[1].prompt -> prompts[1].
        for err in exc.errors:
            err.location = re.sub(
                r"^items\[(\d+)\]\.(prompt|expected_response)$",
                lambda m: f"{'prompts' if m.group(2) == 'prompt' else 'expected'}[{m.group(1)}]",
                err.location,
            )
        raise


def items_document(items: Sequence[Mapping[str, Any]], *, description: str | None = None) -> dict[str, Any]:
    """A versioned dataset of ``items`` (``prompt`` and, when known, ``expected_response``); items with an
    expected answer are scored by the deterministic matchers by default."""
    doc: dict[str, Any] = {"schemaVersion": LATEST_VERSION}
    if description:
        doc["description"] = description
    if any("expected_response" in item for item in items):
        doc["default_evaluators"] = dict(_MATCHERS)
    doc["items"] = [dict(item) for item in items]
    return doc


def save_items(
    items: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *, description: str | None = None
) -> Path:
    """Save ``items`` as a new dataset file; an existing file is never overwritten.

    The document is checked by the loader first, then written whole (a temporary file, then a link to the name:
    a reader sees no file or the complete one).

    Raises:
        FileExistsError: when ``path`` exists.
        SuiteError: when the items would not load as a dataset.
    """
    doc = items_document(items, description=description)
    load_data(doc)  # never save what would not load
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(body, encoding="utf-8")
    try:
        os.link(tmp, target)  # fails when the name is taken: the check and the write are one step
    except FileExistsError:
        raise
    except OSError:
        # a filesystem without hard links: an exclusive create still never overwrites
        with open(target, "x", encoding="utf-8", newline="\n") as fh:
            fh.write(body)
    finally:
        tmp.unlink()
    return target
