"""The comparison page: what ``evalnb compare A B --html PAGE`` and ``Comparisons.to_html`` write.

One self-contained page in the scorecard's style (:func:`evalnb.export._html.page`): the gate's outcome, the
gate as a table (one row per suite x check, with its verdict and the words that explain it), then per suite
the cases that changed and the comparison figure (:func:`evalnb.plots.compare`). Registered as the writer
of kind ``comparison-html`` (``evalnb.results.outputs``), which is how a comparison finds it without importing
the exports.

Every string that came from a suite or an agent is escaped.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb.export._html import figure_div, page, table
from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.comparison import Comparison, Comparisons

__all__ = ["comparison_page", "write_comparison_html"]

_TRIAGE_ROWS = 20
_GATE_COLUMNS = {
    "check_id": "check",
    "scale": "scale",
    "paired": "paired cases",
    "mean_a": "baseline mean",
    "mean_b": "candidate mean",
    "diff": "difference",
    "interval": "interval",
    "margin": "margin",
    "p_adjusted": "p (Holm)",
    "verdict": "verdict",
    "words": "words",
}
_TRIAGE_COLUMNS = {
    "case_id": "case",
    "case_name": "name",
    "check_id": "check",
    "a": "baseline",
    "b": "candidate",
    "delta": "delta",
    "change": "change",
    "significant": "significant",
}


def _as_comparisons(comparison: Comparison | Comparisons) -> Comparisons:
    from evalnb.comparison import Comparisons, gate

    if isinstance(comparison, Comparisons):
        return comparison
    return gate({comparison.suite or "suite": comparison})


def _interval(low: Any, high: Any) -> str:
    import pandas as pd

    if pd.isna(low) or pd.isna(high):
        return ""
    return f"[{low:+.3g}, {high:+.3g}]"


def _gate_table(comparisons: Comparisons) -> pd.DataFrame:
    """One row per suite x check: the numbers the gate decided on, its verdict and its words."""
    import pandas as pd

    frames = []
    for name, c in comparisons.comparisons.items():
        checks = c.checks
        part = checks.assign(
            interval=[_interval(lo, hi) for lo, hi in zip(checks["ci_low"], checks["ci_high"], strict=True)]
        )[list(_GATE_COLUMNS)].rename(columns=_GATE_COLUMNS)
        part.insert(0, "suite", name)
        frames.append(part)
    if not frames:
        return pd.DataFrame(columns=["suite", *_GATE_COLUMNS.values()])
    return pd.concat(frames, ignore_index=True)


def _triage_table(changed: pd.DataFrame) -> pd.DataFrame:
    """The changed case x check rows as the page lists them: signed deltas, the significance flag in words."""
    import pandas as pd

    out = changed[list(_TRIAGE_COLUMNS)].rename(columns=_TRIAGE_COLUMNS)
    out["delta"] = ["" if pd.isna(d) else f"{d:+.3g}" for d in changed["delta"]]
    out["significant"] = [
        "untested (needs 2 runs a side)" if pd.isna(v) else ("yes" if v else "no")
        for v in changed["significant"]
    ]
    return out


def comparison_page(
    comparison: Comparison | Comparisons, *, plotlyjs: str = "inline", beside: Any = None
) -> str:
    """The comparison page's HTML (see the module docstring): a Comparison, or Comparisons of several suites.

    Example::

        comparison_page(store.compare_all("v1", "v2")).startswith("<!DOCTYPE html>")
        # True
    """
    from evalnb import plots

    esc = html.escape
    many = _as_comparisons(comparison)
    items = list(many.comparisons.items())
    first = items[0][1] if items else None
    a_label, b_label = (first.a_label, first.b_label) if first else ("a", "b")
    verdict = "FAIL" if many.regressed else "pass"
    n = len(items)
    facts = [("baseline", a_label), ("candidate", b_label)]
    if first is not None:
        facts += [
            ("the gate", f"one-sided {first.confidence:.0%}; each check's margin in the table"),
            ("family", f"Holm over {first.family}"),
        ]
    facts.append(("suites compared", ", ".join(name for name, _ in items) or "none"))
    for name, side in many.missing_suites.items():
        facts.append(("compared on one side only", f"{name} ({side})"))
    fact_html = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in facts)
    lines = many.headline().splitlines()
    body = [
        f"<h1>Comparison: {esc(a_label)} &rarr; {esc(b_label)}</h1>",
        f'<p id="gate"><span class="verdict {verdict.lower()}">{verdict}</span> '
        f"the gate over {n} suite{'s' * (n != 1)} &middot; exit code {many.exit_code}</p>",
        f"<table>{fact_html}</table>",
        "<h2>The gate, per check</h2>",
        f'<p class="muted">{esc(lines[0]) if lines else ""}. Paired over cases; the difference is candidate '
        "&minus; baseline in the check's own units, with its two-sided interval. Click a header to sort.</p>",
        table(
            _gate_table(many),
            table_id="gate-table",
            text_cols=("words",),
            class_cols=("verdict",),
            nowrap_cols=("suite", "check", "difference", "interval"),
        ),
    ]
    for i, (name, c) in enumerate(items):
        body.append(f"<h2>{esc(name)}</h2>")
        body += [f'<p class="summary">{esc(line)}</p>' for line in c.headline().splitlines()]
        changed = c.triage
        changed = changed[changed["change"].isin(["regressed", "improved", "changed"])]
        if changed.empty:
            body.append('<p class="muted">No case changed.</p>')
        else:
            shown = _triage_table(changed.head(_TRIAGE_ROWS))
            more = f" (the first {_TRIAGE_ROWS} of {len(changed)})" if len(changed) > _TRIAGE_ROWS else ""
            body.append(
                f'<p class="muted">Cases that changed{more}, surest first (triage: it does not gate).</p>'
            )
            body.append(table(shown, table_id=f"triage-{i}", class_cols=("change",), nowrap_cols=("delta",)))
        body += [f'<p class="muted">{esc(note)}</p>' for note in c.notes]
        body.append(figure_div(plots.compare(c)))
    title = f"Comparison: {a_label} → {b_label}"
    return page(title, "\n".join(body), plotlyjs=plotlyjs, beside=beside)


@register_writer("comparison-html")
def write_comparison_html(
    comparison: Comparison | Comparisons, path: str | Path, *, plotlyjs: str = "inline"
) -> Path:
    """Write the comparison page to ``path`` (atomically); ``plotlyjs`` as for the scorecard.

    Example::

        write_comparison_html(store.compare_all("v1", "v2"), "compare.html")
    """
    return atomic_write(path, comparison_page(comparison, plotlyjs=plotlyjs, beside=path))
