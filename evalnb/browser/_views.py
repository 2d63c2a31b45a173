"""The failure browser's HTML: one case side by side (prompt, expected, actual with the difference marked), its
checks, its rows with the mismatched ones marked, and for a comparison both versions' answers side by side.

Every string from a suite or an agent is escaped. The functions return HTML text, so they can be tested and
shown anywhere (the widgets put it in an ``HTML`` widget).

Example::

    from evalnb.browser._views import case_html, word_diff
    word_diff("Open 9 to 5", "Open 9 to 6")
    # ('Open 9 to <del class="eb-del">5</del>', 'Open 9 to <ins class="eb-ins">6</ins>')
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Mapping, Sequence
from typing import Any

from evalnb._text import pieces
from evalnb.browser._data import CaseView
from evalnb.checks._rows import normalise_key

__all__ = ["CSS", "case_html", "comparison_html", "verdict_html", "word_diff"]

CSS = """
<style>
.evalnb-browser{font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;color:#1f2328}
.evalnb-browser h4{margin:.6em 0 .3em;font-size:13px}
.evalnb-browser .eb-head{font-size:14px;margin:.2em 0 .5em}
.evalnb-browser .eb-cols{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:10px}
.evalnb-browser .eb-cols.eb-two{grid-template-columns:repeat(2,minmax(0,1fr))}
.evalnb-browser pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;border:1px solid #d0d7de;
  border-radius:4px;padding:6px;margin:0;max-height:22em;overflow:auto;font-size:12px}
.evalnb-browser .eb-none{color:#6e7781;font-style:italic}
.evalnb-browser del.eb-del{background:#ffd7d5;color:#82071e;text-decoration:line-through}
.evalnb-browser ins.eb-ins{background:#ccffd8;color:#055d20;text-decoration:none}
.evalnb-browser table{border-collapse:collapse;margin:.3em 0}
.evalnb-browser th,.evalnb-browser td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}
.evalnb-browser th{background:#f6f8fa}
.evalnb-browser tr.eb-failed td{background:#fff5f5}.evalnb-browser tr.eb-degraded td{background:#fff8c5}
.evalnb-browser .eb-s-passed{color:#1a7f37;font-weight:600}.evalnb-browser .eb-s-failed{color:#cf222e;font-weight:600}
.evalnb-browser .eb-s-degraded{color:#9a6700;font-weight:600}.evalnb-browser .eb-s-skipped{color:#6e7781}
.evalnb-browser tr.eb-bad td:first-child{border-left:4px solid #cf222e}
.evalnb-browser td.eb-cell-bad{background:#ffd7d5}
.evalnb-browser .eb-error{background:#fff8c5;border:1px solid #d4a72c;padding:6px;border-radius:4px}
.evalnb-browser .eb-verdict{border:1px solid #54aeff;background:#ddf4ff;border-radius:4px;padding:4px 8px;margin:.4em 0}
.evalnb-browser .eb-verdict table{background:#fff}
</style>
"""

_MAX_DIFF_TOKENS = 4000
"""Tokens of a side beyond which no difference is marked (difflib's time grows with their product)."""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def word_diff(a: str | None, b: str | None) -> tuple[str, str]:
    """Both texts as HTML with their word differences marked: what only ``a`` has struck out (``<del>``), what
    only ``b`` has highlighted (``<ins>``). Words compare case-insensitively (as ExactMatch does)."""
    # Pieces, not words: the marked text must join back into the text as written (evalnb._text.pieces).
    ta, tb = pieces(a), pieces(b)
    if len(ta) > _MAX_DIFF_TOKENS or len(tb) > _MAX_DIFF_TOKENS:
        return _e(a), _e(b)
    matcher = difflib.SequenceMatcher(
        None, [t.casefold() for t in ta], [t.casefold() for t in tb], autojunk=False
    )
    left, right = [], []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        sa, sb = _e("".join(ta[i1:i2])), _e("".join(tb[j1:j2]))
        if op == "equal":
            left.append(sa)
            right.append(sb)
            continue
        if sa.strip():
            left.append(f'<del class="eb-del">{sa}</del>')
        else:
            left.append(sa)
        if sb.strip():
            right.append(f'<ins class="eb-ins">{sb}</ins>')
        else:
            right.append(sb)
    return "".join(left), "".join(right)


def _text_box(title: str, body: str | None, *, none: str) -> str:
    inner = f"<pre>{body}</pre>" if body else f'<div class="eb-none">{_e(none)}</div>'
    return f"<div><h4>{_e(title)}</h4>{inner}</div>"


def _status(status: Any) -> str:
    return f'<span class="eb-s-{_e(status)}">{_e(status)}</span>'


def _num(value: Any) -> str:
    if value is None:
        return ""
    try:
        return f"{float(value):.3g}"
    except (TypeError, ValueError):
        return _e(value)


def _checks_table(checks: Sequence[Mapping[str, Any]]) -> str:
    if not checks:
        return '<div class="eb-none">no checks on this turn</div>'
    rows = []
    for c in checks:
        cls = f"eb-{c['status']}" if c["status"] in ("failed", "degraded") else ""
        judge = f" <i>({_e(c['judge'])})</i>" if c.get("judge") else ""
        rows.append(
            f'<tr class="{cls}" data-check="{_e(c["check_id"])}"><td>{_e(c["check_id"])}</td>'
            f"<td>{_status(c['status'])}</td><td>{_num(c['value'])}</td>"
            f"<td>{_reason(c['reason'])}{judge}</td></tr>"
        )
    return (
        '<table class="eb-checks"><tr><th>check</th><th>status</th><th>value</th><th>reason</th></tr>'
        + "".join(rows)
        + "</table>"
    )


def _reason(value: Any) -> str:
    return _e(value).replace("\n", "<br>")


def _cell_text(value: Any) -> str:
    if value is None:
        return "null"
    # a count read into a float column (a SQL sum, a DataFrame) shows as the count it is: 8, not 8.0
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def _rows_table(
    rows: Sequence[Mapping[str, Any]],
    keys: list[str],
    *,
    bad_rows: set[int],
    bad_cells: Mapping[tuple[int, str], str],
) -> str:
    head = "<tr><th>#</th>" + "".join(f"<th>{_e(k)}</th>" for k in keys) + "</tr>"
    body = []
    for i, row in enumerate(rows):
        by_key = {normalise_key(k): v for k, v in row.items()}
        cells = []
        for k in keys:
            reason = bad_cells.get((i, normalise_key(k)))
            value = _e(_cell_text(by_key.get(normalise_key(k)))) if normalise_key(k) in by_key else ""
            if reason is not None:
                cells.append(f'<td class="eb-cell-bad" title="{_e(reason)}">{value}</td>')
            else:
                cells.append(f"<td>{value}</td>")
        cls = ' class="eb-bad"' if i in bad_rows else ""
        body.append(f"<tr{cls}><td>{i}{' ≠' if i in bad_rows else ''}</td>{''.join(cells)}</tr>")
    return f'<table class="eb-rows">{head}{"".join(body)}</table>'


def _rows_section(view: CaseView) -> str:
    """The rows check: expected and actual rows with the mismatched ones marked, then the mismatch lines."""
    if not view.mismatches and view.expected_rows is None and view.actual_rows is None:
        return ""
    bad_cells: dict[tuple[int, str], str] = {}
    bad_rows: set[int] = set()
    for m in view.mismatches:
        if m["row"] is not None:
            bad_rows.add(int(m["row"]))
            if m["key"] is not None:
                bad_cells[(int(m["row"]), normalise_key(m["key"]))] = str(m["reason"] or "")
    parts = ["<h4>Rows</h4>"]
    expected, actual = view.expected_rows, view.actual_rows
    keys: list[str] = []
    for side in (expected or [], actual or []):
        for row in side:
            for k in row:
                if normalise_key(k) not in {normalise_key(x) for x in keys}:
                    keys.append(str(k))
    cols = []
    if expected is not None:
        cols.append(
            "<div><h4>Expected rows</h4>"
            + _rows_table(expected, keys, bad_rows=bad_rows, bad_cells=bad_cells)
            + "</div>"
        )
    if actual is not None:
        # in order, row i was compared with row i (extra rows are mismatched too); unordered, both sides were
        # sorted first, so the marks are on the expected rows
        extra = (
            set(range(len(expected), len(actual))) if expected is not None and view.order_matters else set()
        )
        marks = (bad_rows | extra) if view.order_matters else set()
        cells = bad_cells if view.order_matters else {}
        note = "" if view.order_matters else " (compared unordered: the expected rows carry the marks)"
        cols.append(
            f"<div><h4>Actual rows{_e(note)}</h4>"
            + _rows_table(actual, keys, bad_rows=marks, bad_cells=cells)
            + "</div>"
        )
    if cols:
        parts.append('<div class="eb-cols eb-two">' + "".join(cols) + "</div>")
    if view.mismatches:
        lines = "".join(f"<li>{_e(m['reason'])}</li>" for m in view.mismatches)
        parts.append(f'<h4>Mismatches ({len(view.mismatches)})</h4><ul class="eb-mismatches">{lines}</ul>')
    return "".join(parts)


def _head(view: CaseView, *, status: str | None = None) -> str:
    where = f" · {_e(view.category)}" if view.category else ""
    run = f" · run {view.run + 1} of {len(view.runs)}" if len(view.runs) > 1 else ""
    turn = f" · turn {view.turn + 1} of {len(view.turns)}" if len(view.turns) > 1 else ""
    this = (
        f" (this turn: {_status(view.turn_status)})"
        if view.turn_status and view.turn_status != view.status
        else ""
    )
    return (
        f'<div class="eb-head"><b>{_e(view.case_name)}</b> ({_e(view.case_id)}){where} · '
        f"{status or _status(view.status) + this}{run}{turn}</div>"
    )


def _no_text(view: CaseView) -> str:
    """What the Actual box says when the answer has no text: a cube answer may be rows alone."""
    if view.actual_rows is not None:
        n = len(view.actual_rows)
        return f"(rows only: no text; the {n} row{'s' * (n != 1)} answered are under Rows)"
    if not view.error and view.mismatches:
        # a saved run keeps no answer rows, only where they differed
        return "(rows only: no text; a saved run keeps where the rows differed, listed under Rows)"
    return "(no answer)"


def case_html(view: CaseView) -> str:
    """One case x run x turn: prompt, expected and actual side by side (differences marked), the error if the
    turn degraded, each check's status, value and reason, and its rows."""
    exp, act = word_diff(view.expected, view.response) if view.expected else (None, _e(view.response))
    parts = [
        CSS,
        '<div class="evalnb-browser">',
        _head(view),
        '<div class="eb-cols">',
        _text_box("Prompt", _e(view.prompt), none="(no prompt)"),
        _text_box("Expected", exp, none="(the suite gives no expected answer)"),
        _text_box("Actual", act, none=_no_text(view)),
        "</div>",
    ]
    if view.error:
        parts.append(f'<h4>Error</h4><div class="eb-error">{_e(view.error)}</div>')
    parts += ["<h4>Checks</h4>", _checks_table(view.checks), _rows_section(view), "</div>"]
    return "".join(parts)


def verdict_html(verdict: Mapping[str, Any] | None, *, labels: tuple[str, str], judge: str = "") -> str:
    """A pairwise verdict (a row of ``Pairwise.cases``) beside the answers: who won, the verdict in each order,
    whether the orders agreed, and the judge's reason; versions named by ``labels``. Empty for no verdict.

    Example::

        verdict_html({"winner": "b", "verdict_ab": "b", "verdict_ba": "b", "consistent": True,
                      "reason": "fuller", "status": "judged"}, labels=("v1", "v2"))
    """
    if verdict is None:
        return ""
    la, lb = labels

    def name(side: Any) -> str:
        # plain values (Pairwise.cases rows through records()): None where the frame has NA
        if side is None or side != side:
            return "<i>not judged</i>"
        return _e({"a": la, "b": lb}.get(str(side), str(side)))

    consistent = verdict.get("consistent")
    agree = "" if consistent is None else ("yes" if consistent else "<b>no: a tie</b>")
    status = str(verdict.get("status") or "")
    who = f" by {_e(judge)}" if judge else ""
    head = (
        f"<h4>Pairwise verdict{who}: {name(verdict.get('winner'))}</h4>"
        if status == "judged"
        else f"<h4>Pairwise verdict{who}: {_status('degraded')} (not judged)</h4>"
    )
    return (
        f'<div class="eb-verdict">{head}<table><tr><th>{_e(la)} shown first</th><th>{_e(lb)} shown first</th>'
        f"<th>orders agree</th><th>reason</th></tr><tr><td>{name(verdict.get('verdict_ab'))}</td>"
        f"<td>{name(verdict.get('verdict_ba'))}</td><td>{agree}</td><td>{_reason(verdict.get('reason'))}</td>"
        "</tr></table></div>"
    )


def comparison_html(
    a: CaseView | None,
    b: CaseView | None,
    changes: Sequence[Mapping[str, Any]],
    *,
    labels: tuple[str, str],
    verdict: str = "",
) -> str:
    """One case of a comparison: the prompt and expected answer, both versions' answers side by side with
    their difference marked, a pairwise verdict on them when given (``verdict``: :func:`verdict_html`), and
    per check both values, the change and both reasons."""
    la, lb = labels
    base = b or a
    if base is None:
        return CSS + '<div class="evalnb-browser"><div class="eb-none">no such case</div></div>'
    ta, tb = word_diff(a.response if a else None, b.response if b else None)
    sides = " → ".join(
        f"{_e(label)}: {_status(v.status) if v else '<i>absent</i>'}" for label, v in ((la, a), (lb, b))
    )
    parts = [
        CSS,
        '<div class="evalnb-browser">',
        _head(base, status=sides),
        '<div class="eb-cols eb-two">',
        _text_box("Prompt", _e(base.prompt), none="(no prompt)"),
        _text_box(
            "Expected",
            _e(base.expected) if base.expected else None,
            none="(the suite gives no expected answer)",
        ),
        "</div>",
        '<div class="eb-cols eb-two">',
        _text_box(
            f"Answer of {la}", ta if a else None, none=_no_text(a) if a else f"(the case is not in {la})"
        ),
        _text_box(
            f"Answer of {lb}", tb if b else None, none=_no_text(b) if b else f"(the case is not in {lb})"
        ),
        "</div>",
        verdict,
    ]
    reasons_a = {c["check_id"]: c for c in (a.checks if a else [])}
    reasons_b = {c["check_id"]: c for c in (b.checks if b else [])}
    rows = []
    for ch in changes:
        cid = ch["check_id"]
        ra, rb = reasons_a.get(cid, {}), reasons_b.get(cid, {})
        cls = {"regressed": "eb-failed", "improved": "", "changed": "eb-degraded"}.get(str(ch["change"]), "")
        rows.append(
            f'<tr class="{cls}" data-check="{_e(cid)}"><td>{_e(cid)}</td><td>{_num(ch.get("a"))}</td>'
            f"<td>{_num(ch.get('b'))}</td><td>{_num(ch.get('delta'))}</td><td>{_e(ch['change'])}</td>"
            f"<td>{_reason(ra.get('reason'))}</td><td>{_reason(rb.get('reason'))}</td></tr>"
        )
    if rows or not verdict:  # a pairwise view of a suite without checks has no table to show
        parts.append(
            f"<h4>Checks (case means over runs; this run's reasons)</h4><table class='eb-checks'><tr><th>check</th>"
            f"<th>{_e(la)}</th><th>{_e(lb)}</th><th>delta</th><th>change</th><th>reason in {_e(la)}</th>"
            f"<th>reason in {_e(lb)}</th></tr>" + "".join(rows) + "</table>"
        )
    rows_of = [(label, _rows_section(v)) for label, v in ((la, a), (lb, b)) if v is not None]
    if any(section for _label, section in rows_of):
        parts.append('<div class="eb-cols eb-two">')
        parts += [f"<div><h4>In {_e(label)}</h4>{section}</div>" for label, section in rows_of]
        parts.append("</div>")
    parts.append("</div>")
    return "".join(parts)
