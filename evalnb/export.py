"""Scorecards to hand to colleagues: one self-contained HTML page, an Excel workbook, CSV files, versioned JSON,
and, for JSON datasets, the output document of the published dataset schema (read back with ``read_results``).

Every string that came from an agent or a suite is escaped in the HTML page: an answer containing ``<script>``
shows as text.

Example:
    >>> result.to_html("scorecard.html")
    >>> result.to_excel("scorecard.xlsx")
    >>> evalnb.export.to_document(result, "evals/results/v1.6.0-results.json")
    >>> evalnb.read_results("evals/results/v1.6.0-results.json").summary()
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result

__all__ = ["DOCUMENT_SCHEMA_VERSION", "read_results", "to_csv", "to_document", "to_excel", "to_html", "write"]

#: The dataset schema version our output documents declare (scores, status and thread summaries exist there).
DOCUMENT_SCHEMA_VERSION = "1.6.0"

# dataset schema: ScoreCollection keys for the built-in evaluators
_SCORE_KEYS = {
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
_FROM_KEYS = {v: k for k, v in _SCORE_KEYS.items()}


# --------------------------------------------------------------------------------------------------
# Tables shared by the exports
# --------------------------------------------------------------------------------------------------


def _categories(result: Result) -> pd.DataFrame:
    wide = result.by_category()
    wide = wide.reset_index()
    wide.columns = [str(c) for c in wide.columns]
    return wide


def _case_table(result: Result) -> pd.DataFrame:
    """One row per case with its status, pass rate, latency and the reasons of what failed."""
    import pandas as pd

    cases = result.cases.copy()
    sc = result.scores
    bad = sc[(sc["status"] == "degraded") | (sc["passed"].astype("boolean") == False)]  # noqa: E712
    reasons = (
        bad.assign(_r=bad["check_id"].astype(str) + ": " + bad["reason"].fillna(bad["status"]).astype(str))
        .drop_duplicates(["case_id", "_r"])
        .groupby("case_id", sort=False)["_r"]
        .agg(lambda x: "; ".join(x.tolist()[:5]))
    )
    first = result.runs.drop_duplicates("case_id").set_index("case_id")["response"]
    cases["response"] = cases["case_id"].map(first)
    # A dict lookup, not Series.map: with no failures the mapped column would be float NaN, not text.
    found = reasons.to_dict()
    cases["reasons"] = pd.array([found.get(c, "") for c in cases["case_id"]], dtype="string")
    return cases


_ILLEGAL_XL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _excel_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """openpyxl refuses control characters and Excel cells hold at most 32,767 characters."""
    out = frame.copy()
    for col in out.columns:
        if str(out[col].dtype) in ("string", "str", "object"):
            out[col] = out[col].map(
                lambda v: _ILLEGAL_XL.sub("", v)[:32000] if isinstance(v, str) else v, na_action="ignore"
            )
    return out


# --------------------------------------------------------------------------------------------------
# Excel, CSV
# --------------------------------------------------------------------------------------------------


def to_excel(result: Result, path: str | Path) -> Path:
    """One workbook with the sheets ``summary``, ``categories``, ``cases`` and ``scores``.

    Example:
        >>> evalnb.export.to_excel(result, "scorecard.xlsx")
    """
    import pandas as pd

    try:
        import openpyxl  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError('Excel export needs openpyxl: pip install "evalnb[excel]"') from exc
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with pd.ExcelWriter(p, engine="openpyxl") as xl:
        _excel_safe(result.summary()).to_excel(xl, sheet_name="summary", index=False)
        _excel_safe(_categories(result)).to_excel(xl, sheet_name="categories", index=False)
        _excel_safe(_case_table(result)).to_excel(xl, sheet_name="cases", index=False)
        _excel_safe(result.scores).to_excel(xl, sheet_name="scores", index=False)
    return p


def to_csv(result: Result, folder: str | Path) -> Path:
    """``summary.csv``, ``categories.csv``, ``cases.csv``, ``runs.csv``, ``scores.csv``, ``mismatches.csv``.

    Example:
        >>> evalnb.export.to_csv(result, ".evals/results/v1")
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    result.summary().to_csv(out / "summary.csv", index=False)
    _categories(result).to_csv(out / "categories.csv", index=False)
    result.cases.to_csv(out / "cases.csv", index=False)
    result.runs.to_csv(out / "runs.csv", index=False)
    result.scores.to_csv(out / "scores.csv", index=False)
    result.mismatches.to_csv(out / "mismatches.csv", index=False)
    return out


# --------------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------------

# Text sorts in natural order (case2 before case10), as ids with numbers are usually meant.
_SORT_JS = """
document.querySelectorAll('table.evalnb-sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var asc = th.getAttribute('data-sort') !== 'asc';
      table.querySelectorAll('th').forEach(function (h) { h.removeAttribute('data-sort'); });
      th.setAttribute('data-sort', asc ? 'asc' : 'desc');
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute('data-v') || a.cells[col].textContent;
        var y = b.cells[col].getAttribute('data-v') || b.cells[col].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny) && isFinite(x) && isFinite(y)) ? nx - ny : x.localeCompare(y, undefined, {numeric: true});
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2em; color: #1f2328; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; }
th[data-sort=asc]::after { content: " \\25B2"; } th[data-sort=desc]::after { content: " \\25BC"; }
td.passed { color: #1a7f37; font-weight: 600; } td.failed { color: #cf222e; font-weight: 600; }
td.degraded { color: #9a6700; font-weight: 600; } td.skipped { color: #6e7781; }
td.text { max-width: 40em; white-space: pre-wrap; word-break: break-word; }
"""


def _cell(value: Any, *, cls: str = "") -> str:
    import pandas as pd

    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return f'<td class="{cls}" data-v=""></td>'
    if isinstance(value, float):
        return f'<td class="{cls}" data-v="{value!r}">{value:.3g}</td>'
    text = html.escape(str(value))
    return f'<td class="{cls}">{text}</td>'


def _table(frame: pd.DataFrame, *, table_id: str, text_cols: tuple[str, ...] = ()) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False, name=None):
        cells = []
        for col, v in zip(frame.columns, rec, strict=False):
            cls = "text" if col in text_cols else (str(v) if col == "status" and isinstance(v, str) else "")
            cells.append(_cell(v, cls=html.escape(cls)))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table id="{table_id}" class="evalnb-sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _figure_div(fig: Any) -> str:
    # plotly's JSON escapes "<", ">" and "/" inside strings, so agent text cannot close the script element.
    return str(fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False}))


def to_html(result: Result, path: str | Path) -> Path:
    """A single self-contained HTML scorecard: summary, per-category table, plots and a sortable case table.

    plotly's JavaScript is inlined once, so the page works offline. Click a column header to sort.

    Example:
        >>> evalnb.export.to_html(result, "scorecard.html")
    """
    import plotly.offline

    from evalnb import plots

    esc = html.escape
    c = result.counts()
    meta = result.meta
    facts = [
        ("suite", result.suite.name),
        ("format", result.suite.format),
        ("version", meta.get("version")),
        ("agent", meta.get("agent") if isinstance(meta.get("agent"), str) else json.dumps(meta.get("agent"))),
        ("model", meta.get("model")),
        ("judge", meta.get("judge")),
        ("started", meta.get("started_at")),
        ("run id", meta.get("run_id")),
    ]
    fact_html = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in facts if v)
    cases = _case_table(result)[
        [
            "case_id",
            "case_name",
            "category",
            "status",
            "runs",
            "passed_runs",
            "pass_rate",
            "latency_ms",
            "response",
            "reasons",
        ]
    ]
    figs = [plots.scorecard(result), plots.categories(result)]
    body = f"""
<h1>Scorecard: {esc(result.suite.name)}</h1>
<p id="counts">{c["passed"]} passed, {c["failed"]} failed, {c["degraded"]} degraded, {c["skipped"]} skipped
 &middot; exit code {result.exit_code}</p>
<table>{fact_html}</table>
<h2>Summary per check</h2>
{_table(result.summary(), table_id="summary")}
<h2>Pass rate per category</h2>
{_table(_categories(result), table_id="categories")}
<h2>Plots</h2>
{"".join(_figure_div(f) for f in figs)}
<h2>Cases</h2>
<p>Click a column header to sort.</p>
{_table(cases, table_id="cases", text_cols=("response", "reasons"))}
"""
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Scorecard: {esc(result.suite.name)}</title><style>{_CSS}</style>"
        f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script></head>'
        f"<body>{body}<script>{_SORT_JS}</script></body></html>\n"
    )
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(page, encoding="utf-8")
    return p


# --------------------------------------------------------------------------------------------------
# The published dataset schema's output document
# --------------------------------------------------------------------------------------------------


def _threshold(spec_options: dict[str, Any], check: str) -> Any:
    if "threshold" in spec_options:
        return spec_options["threshold"]
    return {"RetrievalQuery": 1.0, "RetrievalResult": 1.0}.get(check)


def _score_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One ScoreCollection entry (dataset schema) from a scores row."""
    check, value, passed = row["check"], row["value"], row["passed"]
    if row["status"] == "degraded" or passed is None:
        return {"result": "error", "error": row["reason"] or "the evaluator did not produce a result"}
    if value is None and check in _SCORE_KEYS and check not in ("ExactMatch", "Citations"):
        # dataset schema: a pass/fail entry of a built-in evaluator needs its number; one that failed without
        # a score (a judged check with no judge) did not produce a result, which is an ErroredScore
        return {"result": "error", "error": row["reason"] or "the evaluator did not produce a result"}
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

    Run 0 fills the schema's fields; further runs of an item go under ``extensions.evalnb.runs``.

    Example:
        >>> doc = evalnb.export.to_document(result, "evals/results/v1.6.0-results.json")
        >>> doc["items"][0]["status"]
        'pass'
    """
    from evalnb.results.frames import records

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
            base = _SCORE_KEYS.get(s["check"], s["check"])
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
                    "overall_status": _status(["pass" if s == "pass" else s for s in statuses]),
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
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return doc


def read_results(path: str | Path) -> Result:
    """Read a result back: our versioned JSON, or a dataset-schema document with responses and scores.

    A document becomes a Result whose suite is the document's items (as ``evalnb.load`` reads them) and
    whose frames hold the recorded responses and scores, so earlier outputs can join the history.

    Example:
        >>> evalnb.read_results("evals/results/v1.5.0-results.json").summary()
    """
    from evalnb.errors import StoreError
    from evalnb.results import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, Result

    p = Path(path)
    if p.suffix.lower() != ".json":
        raise StoreError(
            f"{p}: read_results reads JSON files: a result written by Result.to_json, or a dataset output "
            "document (evalnb.export.to_document); CSV, HTML and Excel exports are for reading by people",
            code="UNKNOWN_RESULTS",
        )
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise StoreError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{p}: cannot be read ({exc})", code="UNKNOWN_RESULTS") from exc
    if not (isinstance(data, dict) and "schema_version" not in data and isinstance(data.get("items"), list)):
        return Result.from_dict(data, where=str(p))  # ours, or says why it is neither
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
        for run, turns in sets:
            for t, (turn, tdoc) in enumerate(zip(case.turns, turns, strict=False)):
                status = {"pass": "passed", "fail": "failed", "partial": "failed", "error": "degraded"}.get(
                    tdoc.get("status", ""), "passed"
                )
                runs.append(
                    {
                        "suite": suite.name,
                        "case_id": case.id,
                        "case_name": case.name,
                        "category": case.category,
                        "run": run,
                        "turn": t,
                        "prompt": turn.prompt,
                        "expected": turn.expected,
                        "response": tdoc.get("response"),
                        "context": tdoc.get("context"),
                        "status": status,
                        "error": (tdoc.get("error") or {}).get("message"),
                    }
                )
                ids = dict(zip([s.name for s in turn.checks], turn.check_ids(), strict=False))
                t_ext = (tdoc.get("extensions") or {}).get("evalnb") or {}
                failed_without_score = set(t_ext.get("failed_without_score") or [])
                for key, entry in (tdoc.get("scores") or {}).items():
                    check = _FROM_KEYS.get(key.split("#")[0], key.split("#")[0])
                    res = entry.get("result")
                    value = entry.get("score", entry.get("count"))
                    if value is None and "match" in entry:
                        value = 1.0 if entry["match"] else 0.0
                    scores.append(
                        {
                            "suite": suite.name,
                            "case_id": case.id,
                            "case_name": case.name,
                            "category": case.category,
                            "run": run,
                            "turn": t,
                            "check": check,
                            "check_id": ids.get(check, key),
                            "value": value,
                            # an errored evaluator did not pass: False, as the runner writes it
                            "passed": res == "pass",
                            "status": "passed"
                            if res == "pass"
                            else "failed"
                            if res != "error" or key in failed_without_score
                            else "degraded",
                            "reason": entry.get("reason") or entry.get("error"),
                        }
                    )
    meta = ((data.get("metadata") or {}).get("extensions") or {}).get("evalnb", {}).get("meta") or {}
    return Result.from_frames(
        suite=suite,
        runs=pd.DataFrame(runs, columns=list(RUNS_COLUMNS)),
        scores=pd.DataFrame(scores, columns=list(SCORES_COLUMNS)),
        mismatches=pd.DataFrame([], columns=list(MISMATCH_COLUMNS)),
        meta=meta,
    )


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


def write(result: Result, path: str | Path) -> Path:
    """Write ``result`` in the format its extension names: ``.json`` (the dataset document for a JSON dataset,
    else our versioned JSON), ``.html``, ``.xlsx``, or a folder of ``.csv`` files (a path ending in ``.csv``
    or a directory).

    Example:
        >>> evalnb.export.write(result, "scorecard.html")
    """
    p = Path(path)
    ext = p.suffix.lower()
    if ext == ".json":
        if result.suite.format == "dataset-json":
            to_document(result, p)
        else:
            result.to_json(p)
        return p
    if ext in (".html", ".htm"):
        return to_html(result, p)
    if ext == ".xlsx":
        return to_excel(result, p)
    if ext == ".csv":
        return to_csv(result, p.with_suffix(""))
    if ext == "":
        return to_csv(result, p)
    from evalnb.errors import ConfigError

    raise ConfigError(f"--output {p}: use .json, .csv, .html or .xlsx")


# The writers Result.to_html / to_csv / to_excel find through evalnb.results.outputs.
register_writer("html", suffixes=(".html", ".htm"))(to_html)
register_writer("xlsx", suffixes=(".xlsx",))(to_excel)
register_writer("csv", suffixes=(".csv",))(to_csv)
