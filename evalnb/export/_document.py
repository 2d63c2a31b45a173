"""The output document (docs/dataset-json.md, the output document): a JSON dataset with every item's response, scores
per evaluator, status and, for conversations, a summary (read back with :func:`evalnb.export.read_results`).

Statuses, error codes and messages follow ``docs/dataset-json.md`` ("Output statuses", after the published
example ``scenarios-with-mixed-errors.json``):

* the agent answered and every evaluator gave a verdict: all pass -> ``pass``, any fail -> ``fail``;
* the agent answered and an evaluator produced no result -> ``partial``, ``evaluatorsFailed``
  ("Agent response obtained. K of N evaluators failed to run.");
* the agent gave no usable answer -> ``error`` with the agent's code (``agentTimeout`` ..., ``toolCallNotAllowed``);
* a turn after a failed one -> ``error``, ``turnSkipped``; a thread's summary takes error > partial > fail > pass.

What the schema has no place for travels in ``extensions.evalnb`` (case id, category, further runs, checks of other
formats, the tool calls as evalnb recorded them), so reading the document back gives the same Result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb.checks._text import match_score_reason, partial_match_reason
from evalnb.export._codes import score_error_code, turn_error_code
from evalnb.formats._dataset_json.evaluators import BUILTIN_EVALUATORS
from evalnb.formats._dataset_json.models import LATEST_VERSION
from evalnb.results._frames import TOOL_CALLS_COLUMNS, records

if TYPE_CHECKING:
    from evalnb.results import Result
    from evalnb.suite import Case

__all__ = ["DOCUMENT_SCHEMA_VERSION", "FROM_SCORE_KEYS", "SCORE_KEYS", "to_document", "worst_status"]

#: The schema version our output documents declare (allowlists, tool-call evaluators and diagnostics;
#: docs/dataset-json.md, what evalnb supports of the published schema).
DOCUMENT_SCHEMA_VERSION = LATEST_VERSION

#: ScoreCollection keys for the built-in evaluators (docs/dataset-json.md, the output document)
SCORE_KEYS = {
    "Relevance": "relevance",
    "Coherence": "coherence",
    "Groundedness": "groundedness",
    "Similarity": "similarity",
    "Citations": "citations",
    "ExactMatch": "exactMatch",
    "PartialMatch": "partialMatch",
    "RetrievalQuery": "retrievalQuery",
    "RetrievalResult": "retrievalResult",
    "ToolCallSelection": "toolCallSelection",
    "ToolCallExecution": "toolCallExecution",
}
FROM_SCORE_KEYS = {v: k for k, v in SCORE_KEYS.items()}

_NO_RESULT = "the evaluator did not produce a result"
# docs/dataset-json.md, tool calls and allowlists: these evaluators' score is 1.0 on pass and 0.0 on fail, against a
# pinned threshold of 1.0
_PASS_FAIL = ("RetrievalQuery", "RetrievalResult", "ToolCallSelection", "ToolCallExecution")
_DIAGNOSTIC_FAIL = {"RetrievalQuery": "no_matching_query", "RetrievalResult": "count_below_minimum"}
# docs/dataset-json.md, the output document: a valid entry of these needs its number; without one the evaluator gave
# no result
_NEEDS_VALUE = ("Relevance", "Coherence", "Groundedness", "Similarity", "PartialMatch")
_PRIORITY = ("error", "partial", "fail", "pass")


def worst_status(statuses: list[str]) -> str:
    """docs/dataset-json.md, the output document: a thread's overall status, any ``error``, else any ``partial``, else
    any ``fail``, else ``pass``."""
    for s in _PRIORITY:
        if s in statuses:
            return s
    return "pass"


def _errored(row: dict[str, Any]) -> bool:
    if row["status"] == "degraded" or row["passed"] is None:
        return True
    return row["value"] is None and row["check"] in _NEEDS_VALUE


def _score_entry(row: dict[str, Any], spec: Any, empty_response: bool) -> dict[str, Any]:
    """One ScoreCollection entry (docs/dataset-json.md, the output document) from a scores row and the check spec that
    produced it."""
    check, value, passed = row["check"], row["value"], row["passed"]
    if _errored(row):
        code = score_error_code(
            row["reason"], judged=bool(spec is not None and spec.judged), empty_response=empty_response
        )
        return {"result": "error", "code": code, "error": row["reason"] or _NO_RESULT}
    options = (
        spec.options() if spec is not None else (json.loads(row["options"]) if row.get("options") else {})
    )
    result = "pass" if passed else "fail"
    entry: dict[str, Any]
    if check == "Citations":
        entry = {"count": int(value or 0), "result": result, "threshold": int(options.get("threshold", 1))}
        entry["format"] = options.get("citation_format", "oai_unicode")
    elif check == "ExactMatch":
        entry = {"match": bool(passed), "result": result}
    elif check in _PASS_FAIL:
        entry = {"score": 1.0 if passed else 0.0, "result": result, "threshold": 1.0}
        if check in _DIAGNOSTIC_FAIL:
            entry["diagnostic_code"] = "pass" if passed else _DIAGNOSTIC_FAIL[check]
        entry["reason"] = row["reason"] or result
    else:
        # a custom pass/fail check without a number: no score key rather than a null score
        entry = {"result": result} if value is None else {"score": value, "result": result}
        threshold = options.get("threshold") if isinstance(options, dict) else None
        if threshold is not None:
            entry["threshold"] = threshold
    if row.get("reason"):
        entry["reason"] = _upstream_reason(check, row["reason"], value, options)
    return entry


def _upstream_reason(check: str, reason: str, value: Any, options: Any) -> str:
    """A reason in the dataset tool's own words where they differ from evalnb's (``result.scores`` keeps
    evalnb's): a PartialMatch reads ``Match score: 0.667``, the threshold being the entry's own key."""
    threshold = options.get("threshold", 0.5) if isinstance(options, dict) else 0.5
    if check == "PartialMatch" and value is not None and reason == partial_match_reason(value, threshold):
        return match_score_reason(value)
    return reason


def _evaluator_options(spec: Any) -> dict[str, Any]:
    """A check spec as a dataset's evaluator map writes its options (docs/dataset-json.md, evaluators)."""
    options = dict(spec.options())
    if spec.type == "custom":
        # docs/dataset-json.md, evaluators (a custom evaluator): `threshold`, and `options` forwarded to the check
        threshold, settings = options.get("threshold"), dict(options.get("settings") or {})
        return {
            **({"threshold": threshold} if threshold is not None else {}),
            **({"options": settings} if settings else {}),
        }
    if spec.type in ("RetrievalQuery", "RetrievalResult"):
        return dict(options.get("settings") or {})
    return options


def _is_evaluator(spec: Any) -> bool:
    # what the dataset format knows as an evaluator; other formats' checks (regex ...) travel in extensions
    return spec.type == "custom" or spec.type in BUILTIN_EVALUATORS


def _diagnostics(calls: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """docs/dataset-json.md, the output document: Diagnostics.tool_calls, every call's identity and the executions
    with their outcome."""
    if calls is None:
        return None
    selected = [{"plugin_name": c["plugin"], "function_name": c["function"]} for c in calls]
    executions = [
        {"plugin_name": c["plugin"], "function_name": c["function"], "response_status": c["http_status"]}
        for c in calls
        if c["status"] in ("succeeded", "failed")
    ]
    return {"tool_calls": {"selected_functions": selected, "executions": executions}}


def to_document(result: Result, path: str | Path | None = None) -> dict[str, Any]:
    """The output document (docs/dataset-json.md, the output document): the items with ``response``, ``scores`` per
    evaluator (score/result/threshold/reason, or an errored entry with its code), ``status``, ``error``,
    ``diagnostics.tool_calls`` and, for threads, ``summary``; ``tags`` and allowlists echoed.

    Run 0 fills the schema's fields; further runs of an item go under ``extensions.evalnb.runs``. With
    ``path`` the document is also written there (atomically: the old file stays if anything fails).

    Example::

        doc = evalnb.export.to_document(result, "evals/results/v1.6.0-results.json")
        doc["items"][0]["status"]
        # 'pass'
    """
    writer = _Writer(result)
    items = [writer.item(case) for case in result.suite.cases]
    meta = result.meta
    doc: dict[str, Any] = {
        "schemaVersion": DOCUMENT_SCHEMA_VERSION,
        "metadata": {
            "name": result.suite.name,
            **({"description": result.suite.description} if result.suite.description else {}),
            **({"evaluatedAt": meta.started_at} if meta.started_at else {}),
            **({"agentName": meta.agent} if isinstance(meta.agent, str) else {}),
            "extensions": {
                "evalnb": {
                    "result_schema_version": 1,
                    "meta": json.loads(json.dumps(meta.to_dict(), default=str)),
                }
            },
        },
        "items": items,
    }
    if path is not None:
        atomic_write(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc


class _Writer:
    """The items of one Result's output document: its frames indexed by (case, run, turn) once."""

    def __init__(self, result: Result) -> None:
        self.result = result
        runs = records(result.runs)
        self.by_turn: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
        for s in records(result.scores):
            self.by_turn.setdefault((s["case_id"], s["run"], s["turn"]), []).append(s)
        self.calls_of: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
        for c in records(result.tool_calls):
            self.calls_of.setdefault((c["case_id"], c["run"], c["turn"]), []).append(c)
        self.resp = {(r["case_id"], r["run"], r["turn"]): r for r in runs}
        self.n_runs = {c.id: 0 for c in result.suite.cases}
        for r in runs:
            self.n_runs[r["case_id"]] = max(self.n_runs.get(r["case_id"], 0), (r["run"] or 0) + 1)

    def item(self, case: Case) -> dict[str, Any]:
        """One item: a single turn's document, or a thread with its summary; further runs in extensions."""
        tags = case.meta.get("tags")
        extra_runs: list[dict[str, Any]]
        if len(case.turns) == 1:
            item = self.turn_doc(case, 0, 0)
            if tags is not None:
                item["tags"] = list(tags)
            extra_runs = [
                {"run": r, **self.turn_doc(case, 0, r)} for r in range(1, self.n_runs.get(case.id, 0))
            ]
        else:
            item = self._thread(case)
            extra_runs = [
                {"run": r, "turns": [self.turn_doc(case, t, r) for t in range(len(case.turns))]}
                for r in range(1, self.n_runs.get(case.id, 0))
            ]
        ext: dict[str, Any] = {
            **(item.get("extensions") or {}).get("evalnb", {}),
            "case_id": case.id,
            "category": case.category,
        }
        if extra_runs:
            ext["runs"] = extra_runs
        item["extensions"] = {"evalnb": ext}
        return item

    def _thread(self, case: Case) -> dict[str, Any]:
        turns = [self.turn_doc(case, t, 0) for t in range(len(case.turns))]
        statuses = [t["status"] for t in turns]
        item: dict[str, Any] = {"name": case.name}
        if case.meta.get("description"):
            item["description"] = str(case.meta["description"])
        item["turns"] = turns
        item["conversation_id"] = str(case.meta.get("conversation_id") or case.id)
        item["summary"] = {
            "turns_total": len(turns),
            "turns_passed": statuses.count("pass"),
            "turns_failed": statuses.count("fail"),
            "turns_partial": statuses.count("partial"),
            "turns_errored": statuses.count("error"),
            "overall_status": worst_status(statuses),
        }
        if case.meta.get("tags") is not None:
            item["tags"] = list(case.meta["tags"])
        return item

    def tool_calls(self, key: tuple[str, int, int]) -> list[dict[str, Any]] | None:
        if key in self.calls_of:
            return sorted(self.calls_of[key], key=lambda c: c["order"])
        live = self.result.responses.get(key)
        # no rows: none were made when the agent said so ([]), else the evidence is unknown
        return [] if live is not None and live.tool_calls == [] else None

    def turn_doc(self, case: Case, t: int, run: int) -> dict[str, Any]:
        turn = case.turns[t]
        key = (case.id, run, t)
        row = self.resp.get(key)
        out = _turn_input(turn, row)
        ext: dict[str, Any] = {}
        others = [spec.model_dump(mode="json") for spec in turn.checks if not _is_evaluator(spec)]
        if others:
            ext["checks"] = others
        calls = self.tool_calls(key)
        if calls:
            ext["tool_calls"] = [
                {k: v for k, v in c.items() if k in _CALL_FIELDS and v is not None} for c in calls
            ]
        if row is None or row["status"] == "skipped":
            # a turn after a failed one (or a case run that never happened) is not attempted
            out["status"] = "error"
            first = next(iter(self.by_turn.get(key, [])), None)
            why = (first or {}).get("reason") or "the turn was not run"
            out["error"] = {"code": "turnSkipped", "message": why}
        elif row.get("error"):
            # the agent gave no usable answer: no evaluator ran
            out["status"] = "error"
            out["error"] = {"code": turn_error_code(row["error"]), "message": row["error"]}
        else:
            self._scores(out, ext, turn, row, self.by_turn.get(key, []))
        diagnostics = _diagnostics(calls)
        if diagnostics is not None and row is not None:
            out["diagnostics"] = diagnostics
        if ext:
            out["extensions"] = {"evalnb": ext}
        return out

    @staticmethod
    def _scores(
        out: dict[str, Any], ext: dict[str, Any], turn: Any, row: dict[str, Any], scored: list[dict[str, Any]]
    ) -> None:
        """An answered turn's ``scores``, and its ``status`` and ``error`` from them."""
        spec_of = dict(zip(turn.check_ids(), turn.checks, strict=True))
        empty = not (row.get("response") or "").strip()
        entries: dict[str, Any] = {}
        errored = failed = 0
        not_scored: list[str] = []
        for s in scored:
            if s["status"] in ("not_checked", "skipped"):
                continue
            base = SCORE_KEYS.get(s["check"], s["check"])
            same = s["check_id"].startswith(s["check"])
            entry_key = base + s["check_id"][len(s["check"]) :] if same else s["check_id"]
            entries[entry_key] = entry = _score_entry(s, spec_of.get(s["check_id"]), empty)
            if entry["result"] == "error":
                errored += 1
                if s["status"] != "degraded" and s["passed"] is not None:
                    # failed (docs/results.md, statuses: a judged check without a judge fails) though the schema
                    # can only write it as errored: the list lets read_results give it back as failed, not degraded
                    not_scored.append(entry_key)
            elif entry["result"] == "fail":
                failed += 1
        out["scores"] = entries
        if not_scored:
            ext["failed_without_score"] = not_scored
        if errored:
            out["status"] = "partial"
            out["error"] = {
                "code": "evaluatorsFailed",
                "message": f"Agent response obtained. {errored} of {len(entries)} evaluators failed to run.",
            }
        else:
            out["status"] = "fail" if failed else "pass"


def _turn_input(turn: Any, row: dict[str, Any] | None) -> dict[str, Any]:
    """What a turn document holds before its verdict: prompt, expected response, response, context, the
    evaluators that ran (with their options, so that reading the document back rebuilds the suite), the
    allowlist and the tags."""
    out: dict[str, Any] = {"prompt": turn.prompt}
    if turn.expected is not None:
        out["expected_response"] = turn.expected
    if row is not None and row.get("response") is not None:
        out["response"] = row["response"]
    if turn.context is not None:
        out["context"] = turn.context
    out["evaluators"] = {spec.name: _evaluator_options(spec) for spec in turn.checks if _is_evaluator(spec)}
    out["evaluators_mode"] = "replace"
    if turn.allowed_tools is not None:
        out["allowed_tools"] = list(turn.allowed_tools)
        out["allowed_tools_mode"] = "replace"
    if turn.meta.get("tags") is not None:
        out["tags"] = list(turn.meta["tags"])
    return out


# the tool-call frame's columns kept per call in extensions.evalnb.tool_calls (the rest is where the call is)
_WHERE = ("suite", "case_id", "case_name", "category", "run", "turn")
_CALL_FIELDS = tuple(c for c in TOOL_CALLS_COLUMNS if c not in _WHERE)
