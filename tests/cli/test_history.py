"""The command line around the store: run --version/--baseline/--output/--resume, report, compare, trend."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalnb.cli import app

AGENT = """
def good(prompt):
    return "yes"

def bad(prompt):
    # six of the eight cases break: enough for the gate (the exact sign-flip p is 1/64)
    return "yes" if prompt in ("p0", "p1") else "no"

def one_off(prompt):
    # one case of eight breaks: a triage entry, too little for the gate to tell from noise
    return "no" if prompt == "p2" else "yes"
"""


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text(AGENT)
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "cli-suite"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "yes", "testId": f"T-{i}"} for i in range(8)],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    return tmp_path


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def test_versions_baseline_reports_and_trend(project: Path) -> None:
    db = str(project / "h.db")
    code, out = invoke("run", "suite.json", "--agent", "agent.py:good", "--version", "v1", "--store", db)
    assert code == 0, out
    # a check worse than the baseline exits 1
    code, out = invoke("run", "suite.json", "--agent", "agent.py:bad", "--version", "v2", "--store", db,
                       "--baseline", "v1", "--output", "out/v2.html")  # fmt: skip
    assert code == 1, out
    assert "Gate: FAIL: ExactMatch worse by 0.75 (95% one-sided bound" in out
    assert "6 regressed" in out and "T-2 [ExactMatch]: 1.000 -> 0.000 (regressed; untested)" in out
    assert "&lt;" not in out and (project / "out" / "v2.html").read_text().startswith("<!DOCTYPE html>")
    # failures that are already in the baseline are not regressions: exit 0
    code, out = invoke("run", "suite.json", "--agent", "agent.py:bad", "--version", "v3", "--store", db,
                       "--baseline", "v2")  # fmt: skip
    assert code == 0, out
    assert "no change on any of the 8 paired cases" in out
    # a margin wider than the drop does not gate; a drop of one case in eight is triage, not a gate
    code, out = invoke("run", "suite.json", "--agent", "agent.py:bad", "--store", db, "--baseline", "v1",
                       "--margin", "0.8")  # fmt: skip
    assert code == 0 and "not shown to exceed the margin 0.80" in out, out
    code, out = invoke("run", "suite.json", "--agent", "agent.py:one_off", "--store", db, "--baseline", "v1")
    assert code == 0 and "could hide a drop of up to" in out and "T-2 [ExactMatch]" in out, out
    code, out = invoke("run", "suite.json", "--agent", "agent.py:good", "--store", db, "--baseline", "v1",
                       "--confidence", "1.5")  # fmt: skip
    assert code == 2 and "--confidence must be in [0.5, 1)" in out, out

    code, out = invoke("compare", "v1", "v2", "--store", db)
    assert code == 1 and "worse by 0.75" in out
    code, out = invoke("compare", "v1", "v2", "--store", db, "--confidence", "0.999")
    assert code == 0 and "too few cases to tell (8 paired cases)" in out, out
    code, out = invoke("compare", "v2", "v3", "--store", db, "--html", "cmp.html")
    assert code == 0 and (project / "cmp.html").read_text().startswith("<!DOCTYPE html>")

    code, out = invoke("report", "v2", "--store", db)
    assert code == 1 and "FAIL: T-2" in out
    # printed, the report exits 1 on failures; written to a file it is an export: 0, unless asked
    for args, want in ((("-o", "r2.html"), 0), (("-f", "html"), 0), (("-o", "r2.txt"), 0),
                       (("-o", "r2.html", "--fail-on-failures"), 1), (("-f", "json"), 1),
                       (("-f", "json", "-o", "r2.json"), 0)):  # fmt: skip
        code, out = invoke("report", "v2", "--store", db, *args)
        assert code == want, (args, out)
    assert (project / "r2.html").read_text().startswith("<!DOCTYPE html>") and (project / "v2.html").exists()
    assert "FAIL: T-2" in (project / "r2.txt").read_text()
    assert json.loads((project / "r2.json").read_text())["meta"]["version"] == "v2"
    code, out = invoke("report", "v2", "--store", db, "-f", "html", "-o", "r2.xlsx")
    assert code == 2 and "--format html writes a .html or .htm file" in out, out
    code, out = invoke("report", "v1", "--store", db, "--format", "xlsx", "--output", "v1.xlsx")
    assert code == 0 and list(pd.read_excel(project / "v1.xlsx", sheet_name=None)) == [
        "summary", "categories", "cases", "scores"
    ]  # fmt: skip
    code, out = invoke("report", "v1", "--store", db, "--format", "json")
    assert code == 0 and json.loads(out)["schema_version"] == 1
    code, out = invoke("report", "nope", "--store", db)
    assert code == 2 and "nope" in out

    code, out = invoke("trend", "cli-suite", "--store", db, "--html", "trend.html")
    assert code == 0, out
    lines = [ln.split() for ln in out.splitlines()[1:4]]
    assert [ln[1] for ln in lines] == ["v1", "v2", "v3"]
    assert (project / "trend.html").exists()


def test_output_by_extension_and_default_store(project: Path) -> None:
    code, out = invoke(
        "run", "suite.json", "--agent", "agent.py:good", "--version", "d1", "--output", "r.json"
    )
    assert code == 0, out
    assert (project / ".evals" / "evalnb.db").exists()
    doc = json.loads((project / "r.json").read_text())
    assert doc["schemaVersion"] == "1.11.0" and doc["items"][0]["scores"]["exactMatch"]["result"] == "pass"
    code, out = invoke("run", "suite.json", "--agent", "agent.py:good", "--output", "r.xlsx")
    assert code == 0 and (project / "r.xlsx").exists()
    code, out = invoke("run", "suite.json", "--agent", "agent.py:good", "--output", "csvdir.csv")
    assert code == 0 and (project / "csvdir" / "scores.csv").exists()
    # a complete run cannot be resumed: the run could not start
    run_id = json.loads(invoke("report", "d1", "--format", "json")[1])["meta"]["run_id"]
    code, out = invoke("run", "--agent", "agent.py:good", "--resume", run_id)
    assert code == 2 and "nothing to resume" in out


def test_a_version_shared_by_two_suites_baselines_and_reports_each_suite(project: Path) -> None:
    doc = json.loads((project / "suite.json").read_text())
    doc["metadata"]["name"] = "other-suite"
    (project / "other.json").write_text(json.dumps(doc))
    db = str(project / "h.db")
    code, out = invoke("run", "suite.json", "other.json", "--agent", "agent.py:good", "--version", "v1",
                       "--store", db)  # fmt: skip
    assert code == 0, out
    # each suite is compared with its own baseline run, both gated as one family, and either exits 1
    code, out = invoke("run", "suite.json", "other.json", "--agent", "agent.py:bad", "--store", db,
                       "--baseline", "v1")  # fmt: skip
    assert code == 1, out
    assert "Gate over 2 suites: FAIL" in out and "Holm over the 2 checks of 2 suites compared" in out
    assert "=== cli-suite ===" in out and "=== other-suite ===" in out
    assert out.count("Cases (triage, does not gate): 6 regressed") == 2
    # `evalnb compare` compares every suite the two versions share, one section each
    code, out = invoke("run", "suite.json", "other.json", "--agent", "agent.py:bad", "--version", "v2",
                       "--store", db)  # fmt: skip
    code, out = invoke("compare", "v1", "v2", "--store", db)
    assert code == 1 and "=== cli-suite ===" in out and "=== other-suite ===" in out, out
    code, out = invoke("compare", "v1", "v2", "--store", db, "--suite", "other-suite")
    assert code == 1 and "Gate over 1 suite: FAIL" in out and "cli-suite" not in out, out
    code, out = invoke("run", "suite.json", "other.json", "--agent", "agent.py:good", "--store", db,
                       "--baseline", "v1")  # fmt: skip
    assert code == 0, out
    # a label shared by suites reports each suite's run, one after the other; --suite picks one
    code, out = invoke("report", "v1", "--store", db)
    assert code == 0 and out.index("Suite: cli-suite") < out.index("Suite: other-suite"), out
    code, out = invoke("report", "v2", "--store", db)
    assert code == 1 and out.count("FAIL: T-2") == 2, out
    code, out = invoke("report", "v1", "--store", db, "--suite", "other-suite")
    assert code == 0 and "Suite: other-suite" in out and "cli-suite" not in out, out
    # ... and one scorecard with a section per suite (a file: exit 0 though v2 failed)
    code, out = invoke("report", "v2", "--store", db, "-f", "html")
    assert code == 0 and "Wrote v2.html (2 suites)" in out, out
    page = (project / "v2.html").read_text()
    assert page.count('<section id="suite-') == 2 and "Scorecard: 2 suites · version v2" in page
    code, out = invoke("report", "v2", "--store", db, "-f", "json")
    assert code == 1 and [d["suite"]["name"] for d in json.loads(out)] == ["cli-suite", "other-suite"]
    code, out = invoke("report", "v2", "--store", db, "-f", "xlsx")
    assert code == 2 and "holds one suite and this run has 2" in out, out


def test_an_unreachable_store_is_a_clear_error_not_a_traceback(project: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql+psycopg://nobody@127.0.0.1:{port}/x"
    for args in (("trend", "s"), ("report", "v1"), ("compare", "v1", "v2")):
        code, out = invoke(*args, "--store", url)
        assert code == 2 and "could not be used" in out and "Connection refused" in out, (args, out)
