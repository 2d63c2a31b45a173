"""Reading results back: our versioned JSON (``Result.to_json``) and dataset output documents.

Both are JSON; which one a file is comes from its content (``schema_version`` or ``items``), never its name.
CSV, HTML and Excel exports are for people and are not read back: the error says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalnb._scoring import TOOL_NOT_ALLOWED, agent_failed, not_checked, options_json, worst
from evalnb.checks._text import match_score_reason, partial_match_reason
from evalnb.errors import StoreError
from evalnb.export._document import FROM_SCORE_KEYS
from evalnb.results import Result
from evalnb.results._frames import (
    MISMATCH_COLUMNS,
    RUNS_COLUMNS,
    SCORES_COLUMNS,
    TOOL_CALLS_COLUMNS,
    json_cell,
)

__all__ = ["read_results"]

READS = (
    "read_results reads the JSON that Result.to_json (or evalnb.export.write to a .json file) writes, "
    "dataset output documents (evalnb.export.to_document) and folders of Parquet files (Result.to_parquet); "
    "CSV, HTML and Excel exports are not read back"
)

# docs/dataset-json.md, the output document: item/turn status -> our run status (partial: the worst of its scores; see
# _run_status)
_RUN_STATUS = {"pass": "passed", "fail": "failed", "partial": "failed", "error": "degraded"}


def read_results(path: str | Path) -> Result:
    """Read a result back: our versioned JSON, a dataset-schema document with responses and scores, or a folder
    that :meth:`Result.to_parquet` wrote.

    A document becomes a Result whose suite is the document's items (as ``evalnb.load`` reads them) and
    whose frames hold the recorded responses and scores, so earlier outputs can join the history.

    Raises:
        StoreError: the file is missing (code ``RESULTS_NOT_FOUND``), is not JSON or is JSON of another kind
            (``UNKNOWN_RESULTS``, saying which files are read), or is a result of an unsupported version.

    Example::

        evalnb.read_results("evals/results/v1.5.0-results.json").summary()
    """
    p = Path(path)
    from evalnb.export._parquet import is_parquet_folder, read_folder

    if is_parquet_folder(p):
        return read_folder(p)
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
    runs: list[dict[str, Any]] = []
    scores: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for case, item in zip(suite.cases, data["items"], strict=False):
        _restore_checks(case, item)
        ext = _restore_case(case, item)
        where = {"suite": suite.name, "case_id": case.id, "case_name": case.name, "category": case.category}
        for run, turns in _run_sets(item, ext):
            for t, (turn, tdoc) in enumerate(zip(case.turns, turns, strict=False)):
                at = {**where, "run": run, "turn": t}
                run_row, rows = _turn(at, turn, tdoc)
                scores += rows
                runs.append(run_row)
                t_ext = (tdoc.get("extensions") or {}).get("evalnb") or {}
                calls += [{**at, **c} for c in _tool_calls(tdoc, t_ext)]
    meta = ((data.get("metadata") or {}).get("extensions") or {}).get("evalnb", {}).get("meta") or {}
    return Result.from_frames(
        suite=suite,
        runs=pd.DataFrame(runs, columns=list(RUNS_COLUMNS)),
        scores=pd.DataFrame(scores, columns=list(SCORES_COLUMNS)),
        mismatches=pd.DataFrame([], columns=list(MISMATCH_COLUMNS)),
        meta=meta,
        tool_calls=pd.DataFrame(calls, columns=list(TOOL_CALLS_COLUMNS)),
    )


def _restore_case(case: Any, item: dict[str, Any]) -> dict[str, Any]:
    """The item's ``extensions.evalnb``, after giving the case back the id and category kept there."""
    ext: dict[str, Any] = (item.get("extensions") or {}).get("evalnb") or {}
    # docs/dataset-json.md, the output document: no place for our case id and category; they travel in extensions
    if ext.get("case_id"):
        case.id = str(ext["case_id"])
    if ext.get("category"):
        case.category = str(ext["category"])
    return ext


def _run_sets(item: dict[str, Any], ext: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]]]]:
    """The runs of an item, each with its turn documents: the item's own (run 0), then the further runs."""
    sets = [(0, item.get("turns") or [item])]
    for extra in ext.get("runs") or []:
        sets.append((int(extra.get("run", len(sets))), extra.get("turns") or [extra]))
    return sets


def _turn(at: dict[str, Any], turn: Any, tdoc: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One turn document -> its runs row and its scores rows (``at``: suite, case, run and turn)."""
    options = {cid: options_json(spec) for cid, spec in zip(turn.check_ids(), turn.checks, strict=True)}
    t_ext = (tdoc.get("extensions") or {}).get("evalnb") or {}
    failed_without_score = set(t_ext.get("failed_without_score") or [])
    rows = [
        {**at, **_score_row(key, entry, failed_without_score)}
        for key, entry in (tdoc.get("scores") or {}).items()
    ]
    error = tdoc.get("error") or {}
    status = _run_status(tdoc.get("status", ""), error.get("code"), rows)
    if status in ("degraded", "skipped") and not rows and error:
        rows = _unscored(at, turn, status, error.get("message") or "")
    for row in rows:
        row["options"] = options.get(row["check_id"])
    run_row = {
        **at,
        "prompt": turn.prompt,
        "expected": turn.expected,
        "response": tdoc.get("response"),
        "context": tdoc.get("context"),
        "status": status,
        # only a turn without an answer has an error (`partial`: evaluators failed, not the agent)
        "error": error.get("message") if status == "degraded" and not tdoc.get("scores") else None,
    }
    return run_row, rows


def _unscored(at: dict[str, Any], turn: Any, status: str, message: str) -> list[dict[str, Any]]:
    """No evaluator ran: every check is recorded, none passes (as the runner writes such a turn)."""
    reason = message if status == "skipped" else agent_failed(message)
    if message.startswith(TOOL_NOT_ALLOWED):
        reason = not_checked(message)
    passed = None if status == "skipped" else False  # as scoring.unanswered writes them
    return [
        {
            **at,
            **{"check": spec.name, "check_id": cid, "value": None},
            **{"passed": passed, "status": status, "reason": reason},
        }
        for cid, spec in zip(turn.check_ids(), turn.checks, strict=True)
    ]


def _run_status(status: str, code: str | None, rows: list[dict[str, Any]]) -> str:
    """Our run status of a document's turn status: ``partial`` is the worst of its scores (failed or
    degraded), an ``error`` is degraded, or skipped for ``turnSkipped``."""
    if status == "error":
        return "skipped" if code == "turnSkipped" else "degraded"
    if status == "partial":
        return worst([r["status"] for r in rows], empty="failed") if rows else "failed"
    return _RUN_STATUS.get(status, "passed")


def _restore_checks(case: Any, item: dict[str, Any]) -> None:
    """Checks of other formats (regex, rows ...) that the document keeps in ``extensions.evalnb.checks``."""
    from pydantic import TypeAdapter

    from evalnb.suite import CheckSpec

    adapter: TypeAdapter[Any] = TypeAdapter(CheckSpec)
    turns = item.get("turns") or [item]
    for turn, tdoc in zip(case.turns, turns, strict=False):
        ext = (tdoc.get("extensions") or {}).get("evalnb") or {}
        for spec in ext.get("checks") or []:
            turn.checks.append(adapter.validate_python(spec))


def _tool_calls(tdoc: dict[str, Any], ext: dict[str, Any]) -> list[dict[str, Any]]:
    """A turn's tool calls: as evalnb recorded them, else from the published ``diagnostics.tool_calls``
    (each selected function a call; an execution's HTTP status says whether it succeeded)."""
    if ext.get("tool_calls"):
        return [dict(c) for c in ext["tool_calls"]]
    diag = ((tdoc.get("diagnostics") or {}).get("tool_calls")) or {}
    executions = list(diag.get("executions") or [])
    out: list[dict[str, Any]] = []
    for sel in diag.get("selected_functions") or []:
        plugin, function = sel.get("plugin_name"), sel.get("function_name")
        ran = next(
            (e for e in executions if (e.get("plugin_name"), e.get("function_name")) == (plugin, function)),
            None,
        )
        if ran is not None:
            executions.remove(ran)
        code = None if ran is None else ran.get("response_status")
        status = (
            "requested"
            if ran is None
            else "succeeded"
            if isinstance(code, int) and 200 <= code < 300
            else "failed"
        )
        tool = f"{plugin}_{function}" if plugin and function else str(function or plugin or "unknown")
        out.append(
            {
                "order": len(out),
                "tool": tool,
                "plugin": plugin,
                "function": function,
                "arguments": json_cell(None),
                "status": status,
                "http_status": code,
            }
        )
    return out


def _score_row(key: str, entry: dict[str, Any], failed_without_score: set[str]) -> dict[str, Any]:
    """The scores-frame fields of one ScoreCollection entry."""
    base, sep, nth = key.partition("#")
    check = FROM_SCORE_KEYS.get(base, base)
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
    reason = entry.get("reason") or entry.get("error")
    if check == "PartialMatch" and isinstance(value, (int, float)) and reason == match_score_reason(value):
        # the document has the dataset tool's words; evalnb's reason also names the threshold (the entry's key)
        reason = partial_match_reason(value, float(entry.get("threshold", 0.5)))
    return {
        "check": check,
        # the key says which check of a name it is: `regex` the first (api: check ids), `regex#2` the second
        "check_id": f"{check}#{nth}" if sep else check,
        "value": value,
        # an errored evaluator did not pass: False, as the runner writes it
        "passed": res == "pass",
        "status": status,
        "reason": reason,
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
