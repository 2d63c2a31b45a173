"""The wide views and reports of a Result: per-check summary, category x check, the text report (docs/results.md,
the text report), the notebook scorecard."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalnb._scoring import STATUSES, not_checked
from evalnb.checks._judged import NO_JUDGE_HINT, NO_JUDGE_REASON
from evalnb.results._deferred import case_ids
from evalnb.results._frames import FAILURE_COLUMNS, conform, in_suite_order, make_frame, records

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalnb.results._result import Result

__all__ = ["PASS_LINES", "by_category", "failures", "html", "summary", "text"]

PASS_LINES = 1000
"""Up to this many cases, the text report gives every passing case its line (docs/results.md, the text report)."""

_AGENT_FAILED = not_checked("the agent failed")
"""How the reason of a score of a turn whose agent failed starts."""


def summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Per check: n (scored rows), mean value, pass rate, degraded count; judge, tokens and cost when present.

    ``n`` counts rows that were checked (not ``not_checked`` or ``skipped``); ``pass_rate`` is over them.
    """
    import numpy as np
    import pandas as pd

    # Per check, positions into whole columns taken once: a filtered copy of the frame per check (every column,
    # answers included) was most of it at a million rows.
    sc = scores
    codes, check_ids = pd.factorize(sc["check_id"], sort=False)  # first-appearance order
    cols = _summary_columns(sc)
    rows = [_check_row(str(cid), np.flatnonzero(codes == k), cols) for k, cid in enumerate(check_ids)]
    schema = {
        "check_id": "string",
        "check": "string",
        "n": "Int64",
        "mean": "float64",
        "pass_rate": "float64",
        "degraded": "Int64",
        "judge": "string",
        "prompt_tokens": "Int64",
        "completion_tokens": "Int64",
        "cost": "float64",
    }
    frame = make_frame(rows, schema)
    # judge/token/cost columns only when some check has them (keeps the deterministic view small).
    drop = [c for c in ("judge", "prompt_tokens", "completion_tokens", "cost") if frame[c].isna().all()]
    return pd.DataFrame(frame.drop(columns=drop))


def _summary_columns(sc: pd.DataFrame) -> dict[str, Any]:
    """The columns a summary reads, each as one array (see :func:`summary`)."""
    import numpy as np

    status = sc["status"]
    return {
        "checked": (~status.isin(["not_checked", "skipped"])).to_numpy(dtype=bool),
        "degraded": (status == "degraded").fillna(False).to_numpy(dtype=bool),
        "value": sc["value"].to_numpy(dtype="float64", na_value=np.nan),
        "passed": sc["passed"].astype("boolean").fillna(False).to_numpy(dtype=bool),
        "check": sc["check"],
        "judge": sc["judge"],
        "has_judge": sc["judge"].notna().to_numpy(dtype=bool),
        **{c: sc[c] for c in ("prompt_tokens", "completion_tokens", "cost")},
    }


def _check_row(cid: str, at: np.ndarray, cols: dict[str, Any]) -> dict[str, Any]:
    """One check's summary row from the rows ``at`` of the columns :func:`_summary_columns` took."""
    import numpy as np

    part = at[cols["checked"][at]]
    values = cols["value"][part]
    values = values[~np.isnan(values)]
    judged = at[cols["has_judge"][at]]

    def total(name: str) -> Any:
        taken = cols[name].iloc[at]
        return taken.sum() if taken.notna().any() else None

    return {
        "check_id": cid,
        "check": cols["check"].iloc[at[0]],
        "n": len(part),
        "mean": float(values.mean()) if len(values) else float("nan"),
        "pass_rate": float(cols["passed"][part].mean()) if len(part) else float("nan"),
        "degraded": int(cols["degraded"][part].sum()),
        "judge": ", ".join(sorted(set(cols["judge"].iloc[judged].tolist()))) or None,
        "prompt_tokens": total("prompt_tokens"),
        "completion_tokens": total("completion_tokens"),
        "cost": total("cost"),
    }


def by_category(scores: pd.DataFrame, value: str = "pass_rate") -> pd.DataFrame:
    """Category x check: the pass rate (or ``value="mean"``: the mean value) of each check per category."""
    if value not in ("pass_rate", "mean"):
        raise ValueError("value must be 'pass_rate' or 'mean'")
    sc = scores[~scores["status"].isin(["not_checked", "skipped"])].copy()
    sc["category"] = sc["category"].fillna("(none)")
    if value == "pass_rate":
        sc["_v"] = sc["passed"].astype("boolean").fillna(False).astype("float64")
    else:
        sc["_v"] = sc["value"]
    wide = sc.pivot_table(index="category", columns="check_id", values="_v", aggfunc="mean", sort=False)
    wide.columns.name = "check_id"
    return wide


def failures(result: Result) -> pd.DataFrame:
    """The failed and degraded rows, one per case x run x turn x check, with what was asked and answered.

    A score row that failed or degraded, joined to its run row (``prompt``, ``expected``, ``response``,
    ``error``) and counting its row ``mismatches``; a failed or degraded turn without such a score (an agent
    error on a turn with no checks) is a row with ``check`` NA. Suite order, then run, turn and check order.
    """
    import pandas as pd

    keys = ["case_id", "run", "turn"]
    sc = result.scores
    bad = sc[sc["status"].isin(["failed", "degraded"])]
    runs = result.runs[[*keys, "prompt", "expected", "response", "error", "status"]]
    # the score's own columns the frame shows (a score column added later does not leak in)
    from_runs = ("prompt", "expected", "response", "error")
    rows = bad[[c for c in bad.columns if c in FAILURE_COLUMNS and c not in from_runs]]
    rows = rows.merge(runs.drop(columns=["status"]), on=keys, how="left")
    # a turn that failed or degraded with no failing score of its own still shows up, with its error
    turns = result.runs[result.runs["status"].isin(["failed", "degraded"])]
    lone = turns.merge(bad[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    lone = lone[lone["_merge"] == "left_only"].drop(columns=["_merge"])
    frame = pd.concat([rows, lone[[c for c in lone.columns if c in FAILURE_COLUMNS]]], ignore_index=True)
    mm = result.mismatches
    counted = mm.groupby(keys).size().rename("mismatches").reset_index() if len(mm) else None
    if counted is not None and len(frame):
        frame = frame.merge(counted, on=keys, how="left")
        frame["mismatches"] = frame["mismatches"].where(frame["check"] == "rows")
    frame = conform(frame, FAILURE_COLUMNS)
    order = {cid: i for i, cid in enumerate(dict.fromkeys(sc["check_id"].tolist()))}
    frame = frame.iloc[frame["check_id"].map(order).fillna(-1).astype("int64").argsort(kind="stable")]
    # the case ids alone: a stored run's suite is not built for its failures (results/_deferred.py)
    return in_suite_order(frame.reset_index(drop=True), case_ids(result._suite))


def text(result: Result, *, passes: bool | None = None) -> str:
    """The text report (docs/results.md, the text report), for a suite of any format.

    ``passes``: whether passing cases get their line (``None``: when the suite has at most
    :data:`PASS_LINES` cases; a million PASS lines would bury the failures in a CI log).
    """
    cases = result.cases  # derived once for the whole report
    c = _counts(cases)
    total = sum(c.values())
    elapsed = result.meta.elapsed_ms
    lines = [f"Suite: {result.suite.name}"]
    if result.suite.description:
        lines.append(f"Description: {' '.join(result.suite.description.split())}")
    head = f"{c['passed']}/{total} passed, {c['failed']} failed, {c['degraded']} degraded, {c['skipped']} skipped"
    if elapsed is not None:
        head += f" (elapsed {round(float(elapsed))}ms)"
    lines += [head, *_stop_lines(result), ""]
    runs = result.runs
    first: dict[str, dict[str, Any]] = {}
    for row in records(runs[["case_id", "intent", "model", "status"]]):
        first.setdefault(row["case_id"], {"intent": None, "model": None})
        for k in ("intent", "model"):
            if first[row["case_id"]][k] is None and row[k] is not None:
                first[row["case_id"]][k] = row[k]
    detail = _failure_lines(result, cases)
    label = {"passed": "PASS", "failed": "FAIL", "degraded": "DEGRADED", "skipped": "SKIPPED"}
    hinted = False
    listed = cases
    if passes is False or (passes is None and len(cases) > PASS_LINES):
        listed = cases[cases["status"] != "passed"]
    if result.stopped_early:  # the cases a stop rule did not run are one line of _stop_lines, not a line each
        listed = listed[listed["status"] != "skipped"]
    for case in records(listed):
        parts = []
        if case["latency_ms"] is not None:
            parts.append(f"{round(case['latency_ms'])}ms")
        if (case["runs"] or 0) > 1:
            parts.append(f"{case['passed_runs']}/{case['runs']} runs passed")
        info = first.get(case["case_id"], {})
        if info.get("intent"):
            parts.append(f"intent={info['intent']}")
        if info.get("model"):
            parts.append(f"model={info['model']}")
        suffix = f" ({', '.join(parts)})" if parts else ""
        lines.append(f"{label.get(case['status'], case['status'].upper())}: {case['case_id']}{suffix}")
        if case["status"] in ("failed", "degraded"):
            for d in detail.get(case["case_id"], []):
                lines.append(f"  {d}")
                if not hinted and d.endswith(NO_JUDGE_REASON):
                    lines.append(f"  {NO_JUDGE_HINT}")  # once per report, under the first such line
                    hinted = True
    left = len(cases) - len(listed)
    if left:
        lines.append(
            f"({left:,} passing cases not listed; report(passes=True), or evalnb run --list-passes, lists them)"
        )
    spent = _spend_lines(result)
    if spent:
        lines += ["", *spent]
    kept = _kept_workdirs(result)
    if kept:
        lines += ["", kept]
    return "\n".join(lines) + "\n"


def _spend_lines(result: Result) -> list[str]:
    """What the run spent (docs/costs.md) and, when a budget stopped it, that it did."""
    from evalnb.results._costs import totals

    out = []
    spent = totals(result)
    if spent.any:
        out.append(f"Spent: {spent.line()}")
    if result.budget_exhausted:
        reason = (result.meta.budget or {}).get("reason") or "the budget is spent"
        out.append(f"Budget exhausted: {reason}; the case runs not started are skipped")
    return out


def _stop_lines(result: Result) -> list[str]:
    """Where a run with a stop rule stopped, and what it saved (docs/comparison.md, deciding with fewer cases)."""
    design = result.meta.sequential
    if not isinstance(design, Mapping):
        return []
    n, ran = design.get("cases"), design.get("cases_run")
    against = f" against {design['baseline']}" if design.get("baseline") else ""
    if result.stopped_early:
        saved = result.calls_saved
        return [
            f"Stopped early (sequential gate{against}): every gating check decided after {ran} of {n} cases; "
            f"{saved:,} case run{'s' * (saved != 1)} not run (skipped)"
        ]
    decided = "every gating check decided" if design.get("decided") else "not every gating check decided"
    return [f"Sequential gate{against}: {decided} after {ran} of {n} cases"]


def _kept_workdirs(result: Result) -> str | None:
    """Where the working directories of failed case runs were kept, and how many (docs/results.md)."""
    policy = result.meta.workdirs
    if not isinstance(policy, Mapping) or "workdir" not in result.runs.columns:
        return None  # a run given workdir=PATH, or one saved before evalnb said so
    kept = result.runs["workdir"].dropna().unique()
    if not len(kept):
        return None
    from pathlib import Path

    folders = ", ".join(sorted({str(Path(str(w)).parent) for w in kept}))
    many = "y" if len(kept) == 1 else "ies"
    return (
        f"Kept for inspection: the working director{many} of {len(kept):,} failed case run{'s' * (len(kept) != 1)}, "
        f"in {folders} (at most {policy.get('keep_failed')} a run; the folders of the "
        f"{policy.get('keep_runs')} latest runs that kept some stay)"
    )


def _failure_lines(result: Result, cases: pd.DataFrame) -> dict[str, list[str]]:
    """Indented lines under a FAIL/DEGRADED case: mismatch paths for rows, else ``check: reason``.

    The same line from several runs is written once, prefixed with the runs it happened in.
    """
    # The runs that happened, not the suite's count: `runs=1` overrides a task's default of 3.
    multi_run = set(cases.loc[cases["runs"] > 1, "case_id"].tolist())
    multi_turn = {c.id for c in result.suite.cases if len(c.turns) > 1}
    # case -> (turn label, message) -> runs, in first-seen order
    grouped: dict[str, dict[tuple[str, str], list[int]]] = {}

    def add(cid: str, run: Any, turn: Any, message: str) -> None:
        label = f"turn {turn + 1}" if cid in multi_turn and turn is not None else ""
        runs = grouped.setdefault(cid, {}).setdefault((label, message), [])
        if run is not None and run not in runs:
            runs.append(run)

    for r in records(result.runs[result.runs["status"] == "degraded"]):
        if r["error"]:
            add(r["case_id"], r["run"], r["turn"], f"error: {r['error']}")
    with_mm: set[tuple[Any, Any, Any]] = set()
    for m in records(result.mismatches):
        with_mm.add((m["case_id"], m["run"], m["turn"]))
        add(m["case_id"], m["run"], m["turn"], _mismatch_line(m))
    sc = result.scores
    bad = sc[(sc["status"] == "degraded") | (sc["passed"] == False)]  # noqa: E712 - boolean NA-aware
    for s in records(bad):
        if s["check"] == "rows" and (s["case_id"], s["run"], s["turn"]) in with_mm:
            continue
        if s["status"] == "degraded" and (s["reason"] or "").startswith(_AGENT_FAILED):
            continue  # the run's error line already says why
        add(s["case_id"], s["run"], s["turn"], f"{s['check_id']}: {s['reason'] or s['status']}")

    out: dict[str, list[str]] = {}
    for cid, lines in grouped.items():
        for (label, message), runs in lines.items():
            bits = []
            if cid in multi_run and runs:
                nums = ", ".join(str(r + 1) for r in sorted(runs))
                bits.append(f"run{'s' if len(runs) > 1 else ''} {nums}")
            if label:
                bits.append(label)
            prefix = f"[{', '.join(bits)}] " if bits else ""
            out.setdefault(cid, []).append(prefix + message)
    return out


def html(result: Result) -> str:
    from html import escape as esc  # here: its entity tables are a good part of the results' import (1 ms)

    cases = result.cases
    c = _counts(cases)
    total = sum(c.values())
    elapsed = result.meta.elapsed_ms
    colour = {"passed": "#1a7f37", "failed": "#cf222e", "degraded": "#9a6700", "skipped": "#6e7781"}
    badges = " ".join(
        f'<span style="color:{colour[s]};font-weight:600">{c[s]} {esc(s)}</span>' for s in STATUSES
    )
    head = (
        f"<div><b>{esc(result.suite.name)}</b> ({esc(result.suite.format)}): "
        f"{c['passed']}/{total} passed &middot; {badges}"
        + (f" &middot; {round(float(elapsed))} ms" if elapsed is not None else "")
        + "</div>"
        + "".join(f'<div class="evalnb-cost">{esc(line)}</div>' for line in _spend_lines(result))
    )
    summary = result.summary().to_html(index=False, escape=True, float_format=lambda x: f"{x:.3g}", na_rep="")
    shown = cases[cases["status"] != "passed"].head(20)
    body = _judge_note(result.scores)
    if len(shown):
        table = shown[["case_id", "category", "status", "runs", "passed_runs", "latency_ms"]]
        table = table.astype("object").where(table.notna(), "")  # an empty cell, never "<NA>"
        body += "<div>Cases not passed:</div>" + table.to_html(
            index=False, escape=True, float_format=lambda x: f"{x:.0f}"
        )
    return f'<div class="evalnb-result">{head}{summary}{body}</div>'


def _judge_note(scores: pd.DataFrame) -> str:
    """The notebook's one line beside judged checks that had no judge: which, the reason, how to give one."""
    unjudged = scores.loc[scores["reason"] == NO_JUDGE_REASON, "check_id"]
    if unjudged.empty:
        return ""
    from html import escape as esc

    checks = list(dict.fromkeys(str(c) for c in unjudged.tolist()))
    names = ", ".join(esc(c) for c in checks)
    return (
        f'<div class="evalnb-judge-note" style="color:#9a6700">Judged check{"s" * (len(checks) > 1)} {names} '
        f"failed with <code>{esc(NO_JUDGE_REASON)}</code>. {esc(NO_JUDGE_HINT)}</div>"
    )


def _counts(cases: pd.DataFrame) -> dict[str, int]:
    vc = cases["status"].value_counts()
    return {s: int(vc.get(s, 0)) for s in STATUSES}


def _fmt_value(value: Any) -> str:
    if value is None:
        return "null"
    return str(value)


def _mismatch_line(m: Mapping[str, Any]) -> str:
    # docs/cube-yaml.md, row comparison: `rows[0].productFamily: expected "Food", got "Drink"`. The rows check writes
    # the full line (with the tolerance it applied) as the reason; rebuild it only for mismatches saved without one.
    if m.get("reason"):
        return str(m["reason"])
    if m.get("row") is not None and m.get("key") is not None and (m.get("expected") or m.get("actual")):
        return f"rows[{m['row']}].{m['key']}: expected {_fmt_value(m.get('expected'))}, got {_fmt_value(m.get('actual'))}"
    return str(m.get("reason") or "row mismatch")
