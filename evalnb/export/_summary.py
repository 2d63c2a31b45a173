"""A Markdown summary of a run for a CI job's summary page (GitHub Actions ``$GITHUB_STEP_SUMMARY``, GitLab,
Azure Pipelines): pass counts per suite, the gate's verdicts when the run was compared with a baseline, and the
failed cases with their reasons. ``evalnb run --summary PATH``.

Example::

    evalnb.export.to_summary([result], "summary.md", gate=evalnb.comparison.gate([cmp]))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb.results._frames import records
from evalnb.results._report import _failure_lines

if TYPE_CHECKING:
    from evalnb.comparison import Comparison, Comparisons
    from evalnb.results import Result

__all__ = ["gate_markdown", "summary_markdown", "to_summary"]

MAX_FAILED = 50
"""Failed cases listed per suite (the rest are counted): a summary page is read, not searched."""
_MAX_LINES = 5
_ICON = {"passed": "✅", "failed": "❌", "degraded": "⚠️", "skipped": "⏭️"}


# Characters that start Markdown or HTML inline syntax anywhere in a line: HTML tags and comments (`<`), entities
# (`&`), emphasis and strikethrough (`*`, `~`), code (a backtick), links and images (`[`, `]`), math on GitHub
# (`$`), a table cell's end (`|`) and the escape itself. CommonMark lets a backslash escape any of them.
_INLINE = re.compile(r"[\\`*~\[\]<>&|$]")
# `_` opens or closes emphasis only where it is not between two letters or digits: `sales_by_country` stays.
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# What starts a block at the beginning of a list item's text: a heading, a quote, a list, a thematic break.
_BLOCK_START = re.compile(r"^(?:([#>+=-])|([0-9]{1,9})([.)]))")


def _unblock(m: re.Match[str]) -> str:
    # `1. x` keeps its number readable: the `.` or `)` after it is escaped
    return f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}"


def _cell(value: Any) -> str:
    """User text (a suite name, a case id, a reason) as Markdown that renders as exactly that text: one line
    (a table cell is one), and every character that would start Markdown or HTML syntax escaped, so a case id
    ``<details>`` or ``<img onerror=...>`` shows as written and cannot fold away or hide the rest of the page.

    Example::

        _cell("<b>x</b> | 2*3")
        # '\\<b\\>x\\</b\\> \\| 2\\*3'
    """
    text = " ".join(str(value).split())
    text = _UNDERSCORE.sub(r"\\_", _INLINE.sub(r"\\\g<0>", text))
    return _BLOCK_START.sub(_unblock, text, count=1)


def _num(x: Any) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if v != v else f"{v:.3g}"


def gate_markdown(gate: Comparisons | Comparison) -> str:
    """The gate's verdicts as Markdown: the overall verdict, then per suite and check the baseline and candidate
    means, the verdict and its words (``worse by 0.08 (95% one-sided bound 0.03)``).

    Example::

        print(gate_markdown(evalnb.comparison.gate([evalnb.compare(base, result)])))
    """
    from evalnb.comparison import Comparison
    from evalnb.comparison import gate as gate_of

    family = gate_of([gate]) if isinstance(gate, Comparison) else gate
    head = (
        "**FAIL**: a check got worse than the baseline"
        if family.regressed
        else "**pass**: no check got worse"
    )
    lines = [f"### Gate: {head}", ""]
    checks = family.checks
    if len(checks):
        lines += [
            "| suite | check | baseline | candidate | verdict | |",
            "| --- | --- | ---: | ---: | --- | --- |",
        ]
        for r in records(checks):
            mark = "❌" if r["verdict"] == "worse" else ""
            lines.append(
                f"| {_cell(r['suite'])} | {_cell(r['check_id'])} | {_num(r['mean_a'])} | {_num(r['mean_b'])} "
                f"| {mark} {_cell(r['verdict'])} | {_cell(r['words'])} |"
            )
    for name, side in family.missing_suites.items():
        lines.append(f"- {_cell(name)}: compared on one side only ({side})")
    return "\n".join(lines).rstrip() + "\n"


def summary_markdown(
    results: Result | Sequence[Result], *, gate: Comparisons | Comparison | None = None
) -> str:
    """The Markdown summary of one or several results (and the gate's verdicts, when given)."""
    from evalnb.results import Result

    many = [results] if isinstance(results, Result) else list(results)
    counts = [r.counts() for r in many]
    total = {k: sum(c[k] for c in counts) for k in ("passed", "failed", "degraded", "skipped")}
    n = sum(total.values())
    ok = all(r.passed for r in many) and (gate is None or not _regressed(gate))
    lines = [
        f"## evalnb: {'✅ passed' if ok else '❌ failed'} ({total['passed']}/{n} cases passed)",
        "",
        "| suite | cases | passed | failed | degraded | skipped | pass rate |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r, c in zip(many, counts, strict=True):
        cases = sum(c.values())
        rate = f"{c['passed'] / cases:.0%}" if cases else ""
        lines.append(
            f"| {_cell(r.suite.name)} | {cases} | {c['passed']} | {c['failed']} | {c['degraded']} | {c['skipped']} "
            f"| {rate} |"
        )
    if gate is not None:
        lines += ["", gate_markdown(gate).rstrip()]
    bad = [(r, [x for x in records(r.cases) if x["status"] in ("failed", "degraded")]) for r in many]
    if any(found for _, found in bad):
        lines += ["", "### Failed cases", ""]
        for r, failed_cases in bad:
            detail = _failure_lines(r, r.cases) if failed_cases else {}
            for case in failed_cases[:MAX_FAILED]:
                runs = (
                    f", {case['passed_runs']}/{case['runs']} runs passed" if (case["runs"] or 0) > 1 else ""
                )
                lines.append(
                    f"- {_ICON[case['status']]} **{_cell(r.suite.name)} / {_cell(case['case_id'])}** "
                    f"({case['status']}{runs})"
                )
                why = detail.get(case["case_id"], [])
                lines += [f"  - {_cell(line)}" for line in why[:_MAX_LINES]]
                if len(why) > _MAX_LINES:
                    lines.append(f"  - ... and {len(why) - _MAX_LINES} more")
            if len(failed_cases) > MAX_FAILED:
                lines.append(
                    f"- ... and {len(failed_cases) - MAX_FAILED} more failed cases in {_cell(r.suite.name)}"
                )
    return "\n".join(lines) + "\n"


def _regressed(gate: Comparisons | Comparison) -> bool:
    return bool(gate.regressed)


def to_summary(
    results: Result | Sequence[Result], path: str | Path, *, gate: Comparisons | Comparison | None = None
) -> Path:
    """Write :func:`summary_markdown` to ``path`` (atomically).

    Example::

        evalnb.export.to_summary(results, os.environ["GITHUB_STEP_SUMMARY"])
    """
    return atomic_write(path, summary_markdown(results, gate=gate))
