"""The gate's options on the command line, as the README prints them: ``--margin CHECK=V`` (repeatable, N% of a
range), ``--fail-on-degraded``, for ``evalnb compare`` and ``evalnb run --baseline``, against a real SQLite
store and a real suite file (in-process, typer's CliRunner)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalnb.checks import _registry as registry
from evalnb.cli import app

AGENT = """
def good(prompt):
    return "yes"

def worse(prompt):
    # every answer a little longer (Brevity, a 1-5 score, falls from 5 to 4) and one of eight wrong
    return "no." if prompt == "p0" else "yes."
"""


def mood(turn: object, response: object) -> tuple[float, bool, str]:
    """A check standing in for a model judge: it cannot run while MOOD_DOWN is set (an outage)."""
    if os.environ.get("MOOD_DOWN"):
        raise ConnectionError("judge endpoint unreachable")
    return (4.0, True, "4/5")


def brevity(turn: object, response: object) -> tuple[float, bool, str]:
    text = getattr(response, "text", "") or ""
    return (5.0 if text == "yes" else 4.0, True, f"{text!r}")


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MOOD_DOWN", raising=False)
    registry.register("Mood", mood)
    registry.register("Brevity", brevity)
    from evalnb.checks.scales import _SCALES, declare

    declare("Brevity", low=1.0, high=5.0, kind="score", label="1-5 score")
    (tmp_path / "agent.py").write_text(AGENT)
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "opts"},
        "default_evaluators": {"ExactMatch": {}, "Mood": {}, "Brevity": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "yes", "testId": f"T-{i}"} for i in range(8)],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    yield tmp_path
    registry.unregister("Mood")
    registry.unregister("Brevity")
    _SCALES.pop("Brevity", None)


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def test_fail_on_degraded_in_compare_and_run_baseline(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(project / "s.db")
    assert invoke("run", "suite.json", "-a", "agent.py:good", "--version", "v1", "--store", db)[0] == 0
    monkeypatch.setenv("MOOD_DOWN", "1")
    # the candidate's judge is down: its Mood scores are degraded, which is not the agent getting worse
    code, out = invoke("run", "suite.json", "-a", "agent.py:good", "--store", db, "--baseline", "v1")
    assert code == 0, out
    assert "Mood: mean per case" not in out and "8 cases degraded on the candidate side: not compared" in out
    assert "Degraded: 8 cases on the candidate side" in out
    code, out = invoke(
        "run", "suite.json", "-a", "agent.py:good", "--store", db, "--baseline", "v1", "--fail-on-degraded"
    )
    assert code == 1 and "Gate: FAIL: Mood: 8 cases degraded on the candidate side" in out, out
    code, out = invoke("run", "suite.json", "-a", "agent.py:good", "--store", db, "--version", "v2")
    monkeypatch.delenv("MOOD_DOWN")
    assert invoke("compare", "v1", "v2", "--store", db)[0] == 0
    code, out = invoke("compare", "v1", "v2", "--store", db, "--fail-on-degraded")
    assert code == 1 and "gates (fail on degraded)" in out, out
    # the baseline's outage never gates
    assert invoke("compare", "v2", "v1", "--store", db, "--fail-on-degraded")[0] == 0


def test_margin_per_check_and_as_a_share_of_the_range(project: Path) -> None:
    db = str(project / "s.db")
    assert invoke("run", "suite.json", "-a", "agent.py:good", "--version", "v1", "--store", db)[0] == 0
    assert invoke("run", "suite.json", "-a", "agent.py:worse", "--version", "v2", "--store", db)[0] == 1
    # ExactMatch falls by 1/8 (one case), Brevity by 1 point of its 1-5 scale on every case: one margin of 0.3
    # is 30 points of pass rate but less than a third of a point of Brevity
    code, out = invoke("compare", "v1", "v2", "--store", db, "--margin", "0.3")
    assert code == 1 and "Gate: FAIL: Brevity worse by 1.00" in out, out
    assert (
        "beyond the margin 0.30 (on the 1-5 score)" in out and "margin 0.30 (30 points of pass rate)" in out
    )
    assert "margin 0.3 in each check's units" in out
    # per check: Brevity gets its own margin in its own units
    code, out = invoke("compare", "v1", "v2", "--store", db, "--margin", "0.3", "--margin", "Brevity=1.5")
    assert code == 0, out
    assert "margins Brevity 1.5, others 0.3 (each in its check's units, or % of its range)" in out
    assert "not shown to exceed the margin 1.50 (on the 1-5 score)" in out
    # a share of each range: 30% is 0.3 of a pass rate and 1.2 on the 1-5 score
    code, out = invoke("compare", "v1", "v2", "--store", db, "--margin", "30%")
    assert code == 0 and "margin 1.20 (on the 1-5 score)" in out and "margin 5% of" not in out, out
    # the same option on run --baseline
    code, out = invoke("run", "suite.json", "-a", "agent.py:worse", "--store", db, "--baseline", "v1",
                       "--margin", "0.3", "--margin", "Brevity=1.5")  # fmt: skip
    assert code == 0 and "margins Brevity 1.5, others 0.3" in out, out
    # a typo is refused before any agent is called (exit 2), naming the checks there are
    calls = project / "calls.txt"
    (project / "counting.py").write_text(
        f"def counted(prompt):\n    open({str(calls)!r}, 'a').write('x')\n    return 'yes'\n"
    )
    code, out = invoke("run", "suite.json", "-a", "counting.py:counted", "--store", db, "--baseline", "v1",
                       "--margin", "Brevty=1")  # fmt: skip
    assert code == 2 and "--margin names no check of the suites: 'Brevty'" in out and "Brevity" in out, out
    assert not calls.exists()
    code, out = invoke("compare", "v1", "v2", "--store", db, "--margin", "Brevty=1")
    assert code == 2 and "--margin names no check compared: 'Brevty'" in out, out
    for bad in ("-1", "x", "nan", "Brevity=", "=0.1"):
        code, out = invoke("compare", "v1", "v2", "--store", db, "--margin", bad)
        assert code == 2 and "error: --margin" in out, (bad, out)
