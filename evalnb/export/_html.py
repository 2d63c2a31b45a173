"""The HTML scorecard: one self-contained page (plotly's JavaScript inlined once), with sortable tables; and the
page style every evalnb page shares (:func:`page`: the scorecard, the comparison page).

``plotlyjs`` says how a page gets plotly's JavaScript (about 4.8 MB): ``"inline"`` (the default: once per page,
which then works offline and alone), ``"file"`` (written once as ``plotly-VERSION.min.js`` beside the page and
linked: small pages that work offline while the folder stays together), ``"cdn"`` (linked from plotly's CDN:
the page needs the network) or any other string, used as the script's ``src``.

Every string that came from an agent or a suite is escaped: an answer containing ``<script>`` shows as text.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb.export._tables import case_table, category_table
from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result

__all__ = ["PAGE_CSS", "PLOTLYJS", "figure_div", "page", "plotly_script", "slug", "table", "to_html"]

PLOTLYJS = ("inline", "file", "cdn")
"""The named ways a page gets plotly's JavaScript (any other string is a ``src`` URL or path)."""

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

PAGE_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2em; color: #1f2328; line-height: 1.4; }
h1 { font-size: 1.6em; margin: 0 0 .4em; } h2 { font-size: 1.25em; margin: 1.6em 0 .4em; }
h2 + p, h1 + p { margin-top: 0; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
table.evalnb-sortable th { cursor: pointer; user-select: none; }
th[data-sort=asc]::after { content: " \\25B2"; } th[data-sort=desc]::after { content: " \\25BC"; }
td.passed { color: #1a7f37; font-weight: 600; } td.failed { color: #cf222e; font-weight: 600; }
td.degraded { color: #9a6700; font-weight: 600; } td.skipped { color: #6e7781; }
td.text { min-width: 18em; max-width: 40em; white-space: pre-wrap; word-break: break-word; }
td.worse, td.regressed { color: #cf222e; font-weight: 600; } td.better, td.improved { color: #1a7f37; font-weight: 600; }
td.within-margin, td.changed { color: #9a6700; font-weight: 600; }
td.too-few-cases-to-tell, td.no-detectable-difference, td.same { color: #57606a; }
td.new { color: #0969da; } td.gone { color: #9a6700; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; color: #fff; }
.verdict.pass { background: #1a7f37; } .verdict.fail { background: #cf222e; }
.muted { color: #57606a; } td.nowrap { white-space: nowrap; }
"""
"""The one style of evalnb's pages (the scorecard, the comparison page): read by :func:`page`."""

_CASE_COLUMNS = [
    "case_id",
    "case_name",
    "category",
    "status",
    "runs",
    "passed_runs",
    "pass_rate",
    "latency_ms",
    "response",
    "response from",
    "reasons",
]


def _cell(value: Any, *, cls: str = "") -> str:
    import pandas as pd

    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return f'<td class="{cls}" data-v=""></td>'
    if isinstance(value, float):
        return f'<td class="{cls}" data-v="{value!r}">{value:.3g}</td>'
    text = html.escape(str(value))
    return f'<td class="{cls}">{text}</td>'


def slug(value: str) -> str:
    """A value as a CSS class name of :data:`PAGE_CSS`: ``"within margin"`` -> ``"within-margin"``."""
    return "-".join(str(value).split()).lower()


def table(
    frame: pd.DataFrame,
    *,
    table_id: str,
    text_cols: tuple[str, ...] = (),
    class_cols: tuple[str, ...] = ("status",),
    nowrap_cols: tuple[str, ...] = (),
) -> str:
    """A sortable HTML table of ``frame`` (click a header to sort); the cells of ``class_cols`` (``status``,
    a comparison's ``verdict`` or ``change``) are coloured by their value, those of ``nowrap_cols`` kept on
    one line.

    Example::

        table(result.summary(), table_id="summary")
    """
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False, name=None):
        cells = []
        for col, v in zip(frame.columns, rec, strict=False):
            cls = (
                "text" if col in text_cols else (slug(v) if col in class_cols and isinstance(v, str) else "")
            )
            if col in nowrap_cols:
                cls = f"{cls} nowrap".strip()
            cells.append(_cell(v, cls=html.escape(cls)))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<table id="{table_id}" class="evalnb-sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def figure_div(fig: Any) -> str:
    """A plotly figure as a ``<div>`` for a page that inlines plotly's JavaScript once (:func:`page`)."""
    # plotly's JSON escapes "<", ">" and "/" inside strings, so agent text cannot close the script element.
    return str(fig.to_html(full_html=False, include_plotlyjs=False, config={"displaylogo": False}))


def plotly_script(plotlyjs: str = "inline", *, beside: str | Path | None = None) -> str:
    """The ``<script>`` element that gives a page plotly's JavaScript (see the module docstring).

    ``"file"`` writes ``plotly-VERSION.min.js`` into the folder of ``beside`` (the page's path) unless it is
    there already.

    Raises:
        ValueError: ``plotlyjs`` is empty, or ``"file"`` without ``beside``.

    Example::

        plotly_script("cdn")
        # '<script src="https://cdn.plot.ly/plotly-4.1.1.min.js" charset="utf-8"></script>'
    """
    import plotly.offline

    if plotlyjs == "inline":
        return f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script>'
    version = plotly.offline.get_plotlyjs_version()
    name = f"plotly-{version}.min.js"
    if plotlyjs == "cdn":
        src = f"https://cdn.plot.ly/{name}"
    elif plotlyjs == "file":
        if beside is None:
            raise ValueError('plotlyjs="file" needs the page\'s path to write plotly.js beside it')
        script = Path(beside).parent / name
        if not script.is_file() or script.stat().st_size == 0:
            atomic_write(script, plotly.offline.get_plotlyjs())
        src = name
    elif plotlyjs.strip():
        src = plotlyjs
    else:
        raise ValueError(f"plotlyjs must be one of {', '.join(PLOTLYJS)} or a script URL, not {plotlyjs!r}")
    return f'<script src="{html.escape(src)}" charset="utf-8"></script>'


def page(
    title: str,
    body: str,
    *,
    css: str = PAGE_CSS,
    sortable: bool = True,
    plotlyjs: str = "inline",
    beside: str | Path | None = None,
) -> str:
    """A whole HTML document: ``title`` (escaped here), ``body`` (HTML already escaped), plotly's JavaScript
    once (inlined by default, so the page works offline; see :func:`plotly_script`), and the table-sorting
    script when ``sortable``.

    Example::

        page("Scorecard", "<h1>Scorecard</h1>").startswith("<!DOCTYPE html>")
        # True
    """
    sort = f"<script>{_SORT_JS}</script>" if sortable else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{css}</style>"
        f"{plotly_script(plotlyjs, beside=beside)}</head>"
        f"<body>{body}{sort}</body></html>\n"
    )


def _facts(result: Result) -> str:
    """The run's facts as a two-column table."""
    esc = html.escape
    meta = result.meta
    agent = meta.agent if isinstance(meta.agent, str) else json.dumps(meta.agent)
    facts = [
        ("suite", result.suite.name),
        ("format", result.suite.format),
        ("version", meta.version),
        ("agent", agent),
        ("model", meta.model),
        ("judge", meta.judge),
        ("started", meta.started_at),
        ("run id", meta.run_id),
        *_spent(result),
    ]
    return "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in facts if v and v != "null")


def _spent(result: Result) -> list[tuple[str, Any]]:
    """What the run spent and whether its budget stopped it (docs/costs.md)."""
    from evalnb.results._costs import totals

    spent = totals(result)
    out: list[tuple[str, Any]] = [("spent", spent.line())] if spent.any else []
    if result.budget_exhausted:
        out.append(
            ("budget", f"exhausted: {(result.meta.budget or {}).get('reason') or 'the budget is spent'}")
        )
    return out


def _counts_line(result: Result) -> str:
    c = result.counts()
    return (
        f"{c['passed']} passed, {c['failed']} failed, {c['degraded']} degraded, {c['skipped']} skipped"
        f" &middot; exit code {result.exit_code}"
    )


def _section(result: Result, *, key: str = "", h: int = 2) -> str:
    """One suite's scorecard: counts, facts, summary, categories, plots and the case table. ``key`` makes its
    element ids unique on a page of several suites; ``h`` is the level of its headings."""
    from evalnb import plots

    cases = case_table(result)
    # the answer shown is the first run x turn that did not pass (a failure on turn 2 shows turn 2)
    cases["response from"] = [
        f"run {r}, turn {t}" if not (_na(r) or _na(t)) else ""
        for r, t in zip(cases["response_run"], cases["response_turn"], strict=True)
    ]
    figs = [plots.scorecard(result), plots.categories(result)]
    return f"""
<p id="counts{key}">{_counts_line(result)}</p>
<table>{_facts(result)}</table>
<h{h}>Summary per check</h{h}>
{table(result.summary(), table_id=f"summary{key}")}
<h{h}>Pass rate per category</h{h}>
{table(category_table(result), table_id=f"categories{key}")}
<h{h}>Plots</h{h}>
{"".join(figure_div(f) for f in figs)}
<h{h}>Cases</h{h}>
<p>Click a column header to sort. The response is that of the case's first run and turn that did not pass.</p>
{table(cases[_CASE_COLUMNS], table_id=f"cases{key}", text_cols=("response", "reasons"))}
"""


def _na(value: Any) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


@register_writer("html", suffixes=(".html", ".htm"))
def to_html(result: Result | Sequence[Result], path: str | Path, *, plotlyjs: str = "inline") -> Path:
    """A single self-contained HTML scorecard: summary, per-category table, plots and a sortable case table;
    for several results (the suites of one run or version) one page with a section per suite, after a table
    of every suite's counts.

    plotly's JavaScript is inlined once, so the page works offline (``plotlyjs="file"`` or ``"cdn"`` links it
    instead: see the module docstring). Click a column header to sort. The file is written atomically (the old
    one stays if anything fails).

    Example::

        evalnb.export.to_html(result, "scorecard.html")
        evalnb.export.to_html(result, "cards/v2.html", plotlyjs="file")   # plotly-*.min.js beside it, once
        evalnb.export.to_html([tasks, cube], "v2.html")                    # a section per suite
    """
    from evalnb.results import Result

    esc = html.escape
    results = [result] if isinstance(result, Result) else list(result)
    if not results:
        raise ValueError("to_html needs a result")
    if len(results) == 1:
        one = results[0]
        body = f"<h1>Scorecard: {esc(one.suite.name)}</h1>" + _section(one)
        return atomic_write(path, page(f"Scorecard: {one.suite.name}", body, plotlyjs=plotlyjs, beside=path))
    title, body = _several(results)
    return atomic_write(path, page(title, body, plotlyjs=plotlyjs, beside=path))


def _several(results: list[Result]) -> tuple[str, str]:
    """The title and body of one page for several suites: every suite's counts, then a section each."""
    esc = html.escape
    versions = list(dict.fromkeys(str(r.meta.version) for r in results if r.meta.version))
    title = f"Scorecard: {len(results)} suites" + (f" · version {', '.join(versions)}" if versions else "")
    counts = [r.counts() for r in results]
    total = {k: sum(c[k] for c in counts) for k in ("passed", "failed", "degraded", "skipped")}
    overview = "".join(
        f'<tr><td><a href="#suite-{i}">{esc(r.suite.name)}</a></td><td>{c["passed"]}</td><td>{c["failed"]}</td>'
        f"<td>{c['degraded']}</td><td>{c['skipped']}</td><td>{r.exit_code}</td></tr>"
        for i, (r, c) in enumerate(zip(results, counts, strict=True), start=1)
    )
    parts = [
        f"<h1>{esc(title)}</h1>",
        f'<p id="counts">{total["passed"]} passed, {total["failed"]} failed, {total["degraded"]} degraded, '
        f"{total['skipped']} skipped over {len(results)} suites &middot; exit code "
        f"{max(r.exit_code for r in results)}</p>",
        '<table id="suites"><thead><tr><th>suite</th><th>passed</th><th>failed</th><th>degraded</th>'
        f"<th>skipped</th><th>exit code</th></tr></thead><tbody>{overview}</tbody></table>",
    ]
    parts += [
        f'<section id="suite-{i}"><h2>{esc(r.suite.name)}</h2>{_section(r, key=f"-{i}", h=3)}</section>'
        for i, r in enumerate(results, start=1)
    ]
    return title, "\n".join(parts)
