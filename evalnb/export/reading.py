"""Reading results back: our versioned JSON (``Result.to_json``) and dataset output documents.

Both are JSON; which one a file is comes from its content (``schema_version`` or ``items``), never its name.
CSV, HTML and Excel exports are for people and are not read back: the error says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalnb.errors import StoreError
from evalnb.export.document import FROM_SCORE_KEYS
from evalnb.results import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, Result

__all__ = ["read_results"]

READS = (
    "read_results reads the JSON that Result.to_json (or evalnb.export.write to a .json file) writes and "
    "dataset output documents (evalnb.export.to_document); CSV, HTML and Excel exports are not read back"
)

# dataset schema item/turn status -> our run status
_RUN_STATUS = {"pass": "passed", "fail": "failed", "partial": "failed", "error": "degraded"}


def read_results(path: str | Path) -> Result:
    """Read a result back: our versioned JSON, or a dataset-schema document with responses and scores.

    A document becomes a Result whose suite is the document's items (as ``evalnb.load`` reads them) and
    whose frames hold the recorded responses and scores, so earlier outputs can join the history.

    Raises:
        StoreError: the file is missing (code ``RESULTS_NOT_FOUND``), is not JSON or is JSON of another kind
            (``UNKNOWN_RESULTS``, saying which files are read), or is a result of an unsupported version.

    Example::

        evalnb.read_results("evals/results/v1.5.0-results.json").summary()
    """
    p = Path(path)
    data = _load(p)
    if isinstance(data, dict) and "schema_version" in data:
        return Result.from_dict(data, where=str(p))
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        return _from_document(p, data)
    kind = f"a JSON {type(data).__name__}" if not isinstance(data, dict) else "a JSON object without items"
    raise StoreError(
        f"{p}: {kind}, not a result written by Result.to_json nor a dataset output document (a dataset? load "
        f"it with evalnb.load); {READS}",
        code="UNKNOWN_RESULTS",
    )


def _load(p: Path) -> Any:
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StoreError(f"{p}: no such file; {READS}", code="RESULTS_NOT_FOUND") from None
    except IsADirectoryError:
        raise StoreError(f"{p} is a folder (of CSV files?); {READS}", code="UNKNOWN_RESULTS") from None
    except UnicodeDecodeError:
        raise StoreError(
            f"{p}: not a text file (an Excel workbook?); {READS}", code="UNKNOWN_RESULTS"
        ) from None
    except OSError as exc:
        raise StoreError(f"{p}: cannot be read ({exc.strerror or exc})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoreError(
            f"{p}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); {READS}",
            code="UNKNOWN_RESULTS",
        ) from exc


def _from_document(p: Path, data: dict[str, Any]) -> Result:
    """A Result from a dataset output document: the suite from its items, the frames from its outputs."""
    import pandas as pd

    from evalnb.formats import load

    suite = load(_strip_outputs(data), format="dataset-json")
    suite.name = (data.get("metadata") or {}).get("name") or p.stem.removesuffix("-results")
    runs, scores = [], []
    for case, item in zip(suite.cases, data["items"], strict=False):
        ext = (item.get("extensions") or {}).get("evalnb") or {}
        # the published schema has no place for our case id and category: they travel in extensions
        if ext.get("case_id"):
            case.id = str(ext["case_id"])
        if ext.get("category"):
            case.category = str(ext["category"])
        sets = [(0, item.get("turns") or [item])]
        for extra in ext.get("runs") or []:
            sets.append((int(extra.get("run", len(sets))), extra.get("turns") or [extra]))
        where = {"suite": suite.name, "case_id": case.id, "case_name": case.name, "category": case.category}
        for run, turns in sets:
            for t, (turn, tdoc) in enumerate(zip(case.turns, turns, strict=False)):
                runs.append(
                    {
                        **where,
                        "run": run,
                        "turn": t,
                        "prompt": turn.prompt,
                        "expected": turn.expected,
                        "response": tdoc.get("response"),
                        "context": tdoc.get("context"),
                        "status": _RUN_STATUS.get(tdoc.get("status", ""), "passed"),
                        "error": (tdoc.get("error") or {}).get("message"),
                    }
                )
                ids = dict(zip([s.name for s in turn.checks], turn.check_ids(), strict=False))
                t_ext = (tdoc.get("extensions") or {}).get("evalnb") or {}
                failed_without_score = set(t_ext.get("failed_without_score") or [])
                for key, entry in (tdoc.get("scores") or {}).items():
                    scores.append(
                        {**where, "run": run, "turn": t, **_score_row(key, entry, ids, failed_without_score)}
                    )
    meta = ((data.get("metadata") or {}).get("extensions") or {}).get("evalnb", {}).get("meta") or {}
    return Result.from_frames(
        suite=suite,
        runs=pd.DataFrame(runs, columns=list(RUNS_COLUMNS)),
        scores=pd.DataFrame(scores, columns=list(SCORES_COLUMNS)),
        mismatches=pd.DataFrame([], columns=list(MISMATCH_COLUMNS)),
        meta=meta,
    )


def _score_row(
    key: str, entry: dict[str, Any], ids: dict[str, str], failed_without_score: set[str]
) -> dict[str, Any]:
    """The scores-frame fields of one ScoreCollection entry."""
    check = FROM_SCORE_KEYS.get(key.split("#")[0], key.split("#")[0])
    res = entry.get("result")
    value = entry.get("score", entry.get("count"))
    if value is None and "match" in entry:
        value = 1.0 if entry["match"] else 0.0
    if res == "pass":
        status = "passed"
    elif res != "error" or key in failed_without_score:
        status = "failed"
    else:
        status = "degraded"
    return {
        "check": check,
        "check_id": ids.get(check, key),
        "value": value,
        # an errored evaluator did not pass: False, as the runner writes it
        "passed": res == "pass",
        "status": status,
        "reason": entry.get("reason") or entry.get("error"),
    }


def _strip_outputs(data: dict[str, Any]) -> str:
    """The document without outputs (response, scores, status ...): what the dataset loader reads as a suite."""
    out_keys = {"response", "scores", "status", "error", "diagnostics", "summary", "extensions", "citations"}

    def clean(obj: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in obj.items() if k not in out_keys}
        if isinstance(kept.get("turns"), list):
            kept["turns"] = [clean(t) for t in kept["turns"]]
        return kept

    doc = {k: v for k, v in data.items() if k != "items"}
    doc["items"] = [clean(i) for i in data["items"]]
    return json.dumps(doc)
