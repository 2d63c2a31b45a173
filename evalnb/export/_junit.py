"""JUnit XML, the test report every CI system reads natively (Jenkins, GitLab, GitHub Actions reporters, Azure
Pipelines): ``evalnb run --junit PATH``.

One ``<testsuite>`` per suite, one ``<testcase>`` per case of the suite (``classname`` the suite, ``name`` the case
id). A failed case has a ``<failure>`` whose message is its first failed check and whose text lists every failed
check with its reason (runs and turns named as in the text report); a degraded case (the answer could not be
obtained or judged) an ``<error>``; a skipped case a ``<skipped>``. The layout is the JUnit format as Jenkins and
Maven Surefire document it (``testsuites`` / ``testsuite`` / ``testcase``; ``tests``, ``failures``, ``errors``,
``skipped`` and ``time`` in seconds).

Example::

    evalnb.export.to_junit([result], "reports/evalnb.xml")
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb._unicode import xml_text
from evalnb.results._frames import records
from evalnb.results._report import _failure_lines
from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["junit_xml", "to_junit"]

_KINDS = {"failed": "failure", "degraded": "error", "skipped": "skipped"}
_PROPERTIES = ("agent", "model", "judge", "version", "run_id", "started_at")


def _seconds(ms: Any) -> str:
    return f"{(float(ms) if ms is not None else 0.0) / 1000.0:.3f}"


def _suite(result: Result) -> ET.Element:
    cases = records(result.cases)
    detail = _failure_lines(result, result.cases)
    runs = result.runs
    time_of = (
        runs.groupby("case_id", sort=False)["latency_ms"].sum(min_count=1).to_dict() if len(runs) else {}
    )
    counts = {k: sum(c["status"] == k for c in cases) for k in ("failed", "degraded", "skipped")}
    suite = ET.Element(
        "testsuite",
        {
            "name": result.suite.name,
            "tests": str(len(cases)),
            "failures": str(counts["failed"]),
            "errors": str(counts["degraded"]),
            "skipped": str(counts["skipped"]),
            "time": _seconds(result.meta.elapsed_ms),
            "hostname": socket.gethostname(),
        },
    )
    if result.meta.started_at:
        suite.set("timestamp", str(result.meta.started_at)[:19])
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", {"name": "format", "value": result.suite.format})
    for key in _PROPERTIES:
        value = result.meta.get(key)
        if value is not None:
            ET.SubElement(props, "property", {"name": key, "value": str(value)})
    for key, value in _spent(result):
        ET.SubElement(props, "property", {"name": key, "value": value})
    for case in cases:
        tc = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": result.suite.name,
                "name": case["case_id"],
                "time": _seconds(_plain(time_of.get(case["case_id"]))),
            },
        )
        kind = _KINDS.get(case["status"])
        if kind is None:
            continue
        lines = detail.get(case["case_id"], [])
        runs_word = f"{case['passed_runs']}/{case['runs']} runs passed" if (case["runs"] or 0) > 1 else ""
        message = lines[0] if lines else (runs_word or case["status"])
        el = ET.SubElement(tc, kind, {"message": message[:1000]})
        if kind != "skipped":
            el.set("type", case["status"])
            el.text = "\n".join([*([runs_word] if runs_word else []), *lines]) or case["status"]
    return suite


def _spent(result: Result) -> list[tuple[str, str]]:
    """The run's totals as properties (docs/costs.md): tokens, cost (``NA`` when unknown), cost per case."""
    from evalnb.results._costs import totals

    spent = totals(result)
    out = []
    if spent.any:
        out.append(("tokens", str(spent.tokens)))
        if spent.priced:
            out.append(("cost", "NA" if spent.cost is None else f"{spent.cost:.6g}"))
            if spent.cost_per_case is not None:
                out.append(("cost_per_case", f"{spent.cost_per_case:.6g}"))
    if result.budget_exhausted:
        out.append(("budget_exhausted", "true"))
    return out


def _plain(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if v != v else v


def junit_xml(results: Result | Sequence[Result]) -> str:
    """The JUnit XML text of one or several results (one ``<testsuite>`` each)."""
    from evalnb.results import Result

    many = [results] if isinstance(results, Result) else list(results)
    root = ET.Element("testsuites", {"name": "evalnb"})
    suites = [_suite(r) for r in many]
    root.extend(suites)
    for key, attr in (("tests", "tests"), ("failures", "failures"), ("errors", "errors")):
        root.set(attr, str(sum(int(s.get(key) or 0) for s in suites)))
    root.set("time", f"{sum(float(s.get('time') or 0) for s in suites):.3f}")
    ET.indent(root)
    # ElementTree escapes markup but writes any character as it is: the whole text goes through the XML 1.0
    # rule once (docs/results.md, text that cannot be encoded), so no field (a case id, a host name) is missed.
    return xml_text('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")


def to_junit(results: Result | Sequence[Result], path: str | Path) -> Path:
    """Write the JUnit XML of one or several results to ``path`` (atomically).

    Example::

        evalnb.export.to_junit(result, "reports/evalnb.xml")
    """
    return atomic_write(path, junit_xml(results))


register_writer("junit", suffixes=(".xml",))(to_junit)
