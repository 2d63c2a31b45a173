"""The output document of the published dataset schema: a JSON dataset with every item's response, scores per
evaluator, status and, for conversations, a summary (read back with :func:`evalnb.export.read_results`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb.results.frames import records

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["DOCUMENT_SCHEMA_VERSION", "FROM_SCORE_KEYS", "SCORE_KEYS", "to_document"]

#: The dataset schema version our output documents declare (scores, status and thread summaries exist there).
DOCUMENT_SCHEMA_VERSION = "1.6.0"

#: dataset schema: ScoreCollection keys for the built-in evaluators
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
}
FROM_SCORE_KEYS = {v: k for k, v in SCORE_KEYS.items()}

_NO_RESULT = "the evaluator did not produce a result"


def _threshold(spec_options: dict[str, Any], check: str) -> Any:
    if "threshold" in spec_options:
        return spec_options["threshold"]
    return {"RetrievalQuery": 1.0, "RetrievalResult": 1.0}.get(check)


def _score_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One ScoreCollection entry (dataset schema) from a scores row."""
    check, value, passed = row["check"], row["value"], row["passed"]
    if row["status"] == "degraded" or passed is None:
        return {"result": "error", "error": row["reason"] or _NO_RESULT}
    if value is None and check in SCORE_KEYS and check not in ("ExactMatch", "Citations"):
        # dataset schema: a pass/fail entry of a built-in evaluator needs its number; one that failed without
        # a score (a judged check with no judge) did not produce a result, which is an ErroredScore
        return {"result": "error", "error": row["reason"] or _NO_RESULT}
    options = json.loads(row["options"]) if row.get("options") else {}
    result = "pass" if passed else "fail"
    entry: dict[str, Any]
    if check == "Citations":
        entry = {"count": int(value or 0), "result": result, "threshold": _threshold(options, check)}
    elif check == "ExactMatch":
        entry = {"match": bool(passed), "result": result}
    else:
        # a custom pass/fail check without a number: no score key rather than a null score
        entry = {"result": result} if value is None else {"score": value, "result": result}
        th = _threshold(options, check)
        if th is not None:
            entry["threshold"] = th
    if row.get("reason"):
        entry["reason"] = row["reason"]
    return entry


def _evaluator_options(spec: Any) -> dict[str, Any]:
    options = dict(spec.options())
    if spec.type == "custom":
        settings = dict(options.get("settings") or {})
        threshold = settings.pop("threshold", None)
        return {
            **({"threshold": threshold} if threshold is not None else {}),
            **({"options": settings} if settings else {}),
        }
    if spec.type in ("RetrievalQuery", "RetrievalResult"):
        return dict(options.get("settings") or {})
    return options


def _status(results: list[str]) -> str:
    # dataset schema: pass / fail / partial / error
    if not results or "error" in results:
        return "error"
    if all(r == "pass" for r in results):
        return "pass"
    if all(r == "fail" for r in results):
        return "fail"
    return "partial"


def to_document(result: Result, path: str | Path | None = None) -> dict[str, Any]:
    """The output document of the published dataset schema: the items with ``response``, ``scores`` per
    evaluator (score/result/threshold/reason), ``status`` and, for threads, ``summary``.

    Run 0 fills the schema's fields; further runs of an item go under ``extensions.evalnb.runs``. With
    ``path`` the document is also written there (atomically: the old file stays if anything fails).

    Example::

        doc = evalnb.export.to_document(result, "evals/results/v1.6.0-results.json")
        doc["items"][0]["status"]
        # 'pass'
    """
    runs = records(result.runs)
    scores = records(result.scores)
    by_turn: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for s in scores:
        by_turn.setdefault((s["case_id"], s["run"], s["turn"]), []).append(s)
    resp = {(r["case_id"], r["run"], r["turn"]): r for r in runs}
    n_runs = {c.id: 0 for c in result.suite.cases}
    for r in runs:
        n_runs[r["case_id"]] = max(n_runs.get(r["case_id"], 0), (r["run"] or 0) + 1)

    def turn_doc(case: Any, t: int, run: int) -> dict[str, Any]:
        turn = case.turns[t]
        row = resp.get((case.id, run, t), {})
        out: dict[str, Any] = {"prompt": turn.prompt}
        if turn.expected is not None:
            out["expected_response"] = turn.expected
        if row.get("response") is not None:
            out["response"] = row["response"]
        if turn.context is not None:
            out["context"] = turn.context
        # the evaluators that ran, with their options, so that reading the document back rebuilds the suite
        out["evaluators"] = {spec.name: _evaluator_options(spec) for spec in turn.checks}
        out["evaluators_mode"] = "replace"
        entries: dict[str, Any] = {}
        outcomes: list[str] = []
        not_scored: list[str] = []
        for s in by_turn.get((case.id, run, t), []):
            if s["status"] in ("not_checked", "skipped"):
                continue
            base = SCORE_KEYS.get(s["check"], s["check"])
            key = (
                base + s["check_id"][len(s["check"]) :]
                if s["check_id"].startswith(s["check"])
                else s["check_id"]
            )
            entries[key] = _score_entry(s)
            degraded = s["status"] == "degraded" or s["passed"] is None
            outcomes.append("error" if degraded else "pass" if s["passed"] else "fail")
            if entries[key]["result"] == "error" and not degraded:
                not_scored.append(key)
        out["scores"] = entries
        if not_scored:
            # these failed (api: a judged check without a judge fails) though the schema can only write them
            # as errored entries: the list lets read_results give them back as failed, not degraded
            out["extensions"] = {"evalnb": {"failed_without_score": not_scored}}
        # the status follows our verdicts: a check that failed without a score is a failure, not an error
        status = _status(outcomes)
        if row.get("status") == "degraded":
            status = "error"
            out["error"] = {"code": "agentRequestFailed", "message": row.get("error") or "the agent failed"}
        elif row.get("status") == "skipped":
            status = "error"
            out["error"] = {"code": "turnSkipped", "message": row.get("error") or "the turn was skipped"}
        out["status"] = status
        return out

    items = []
    for case in result.suite.cases:
        if len(case.turns) == 1:
            item = turn_doc(case, 0, 0)
            extra_runs = [{"run": r, **turn_doc(case, 0, r)} for r in range(1, n_runs.get(case.id, 0))]
        else:
            turns = [turn_doc(case, t, 0) for t in range(len(case.turns))]
            statuses = [t["status"] for t in turns]
            item = {
                "name": case.name,
                "turns": turns,
                "conversation_id": case.id,
                "summary": {
                    "turns_total": len(turns),
                    "turns_passed": statuses.count("pass"),
                    "turns_failed": statuses.count("fail"),
                    "turns_partial": statuses.count("partial"),
                    "turns_errored": statuses.count("error"),
                    "overall_status": _status(statuses),
                },
            }
            extra_runs = [
                {"run": r, "turns": [turn_doc(case, t, r) for t in range(len(case.turns))]}
                for r in range(1, n_runs.get(case.id, 0))
            ]
        ext: dict[str, Any] = {
            **(item.get("extensions") or {}).get("evalnb", {}),
            "case_id": case.id,
            "category": case.category,
        }
        if extra_runs:
            ext["runs"] = extra_runs
        item["extensions"] = {"evalnb": ext}
        items.append(item)
    meta = result.meta
    doc: dict[str, Any] = {
        "schemaVersion": DOCUMENT_SCHEMA_VERSION,
        "metadata": {
            "name": result.suite.name,
            **({"description": result.suite.description} if result.suite.description else {}),
            **({"evaluatedAt": meta["started_at"]} if meta.get("started_at") else {}),
            **({"agentName": meta["agent"]} if isinstance(meta.get("agent"), str) else {}),
            "extensions": {
                "evalnb": {"result_schema_version": 1, "meta": json.loads(json.dumps(meta, default=str))}
            },
        },
        "items": items,
    }
    if path is not None:
        atomic_write(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc
