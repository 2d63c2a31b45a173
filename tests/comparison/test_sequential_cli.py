"""``evalnb run SUITE --baseline V --sequential`` as users run it: a real subprocess and a real SQLite store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import evalnb
from tests.support.cli import evalnb_cli

AGENTS = Path(__file__).resolve().parents[1] / "agents_for_gate.py"
CASES = 400


def _suite(folder: Path) -> Path:
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "seq-suite"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "yes", "testId": f"T-{i}"} for i in range(CASES)],
    }
    path = folder / "suite.json"
    path.write_text(json.dumps(doc))
    return path


def test_sequential_run_stops_early_saves_and_gates(tmp_path: Path, monkeypatch) -> None:
    suite = _suite(tmp_path)
    monkeypatch.setenv("EVALNB_GATE_SEED", "1")
    base = evalnb_cli(
        "run", str(suite), "--agent", f"{AGENTS}:flaky", "--store", "e.db", "--version", "v1", cwd=tmp_path,
        timeout=300,
    )  # fmt: skip
    assert base.returncode in (0, 1), base.stderr[-2000:]
    monkeypatch.setenv("EVALNB_GATE_SEED", "2")
    out = evalnb_cli(
        "run", str(suite), "--agent", f"{AGENTS}:halved", "--store", "e.db", "--version", "v2",
        "--baseline", "v1", "--sequential", "--seed", "4", cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr[-2000:]
    text = out.stdout + out.stderr
    stopped = re.search(
        r"Stopped early \(sequential gate against v1\): every gating check decided after (\d+) of 400", text
    )
    assert stopped, text[-3000:]
    ran = int(stopped.group(1))
    assert ran % 20 == 0 and ran < CASES
    assert "sequential gate: one-sided 95% anytime-valid" in text
    assert re.search(
        rf"ExactMatch \(pass rate\): .*worse by at least 0\.\d+ .*decided after {ran} of 400 cases", text
    )
    assert "SKIPPED: T-" not in text  # the cases not run are one line, not one each
    store = evalnb.Store(tmp_path / "e.db", create=False)
    v2 = store.load("v2")
    assert v2.stopped_early and v2.calls_saved == CASES - ran
    # a reading command gives the same verdict from the stored rows
    again = evalnb_cli("compare", "v1", "v2", "--store", "e.db", cwd=tmp_path)
    assert again.returncode == 1, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"decided after {ran} of 400 cases" in again.stdout + again.stderr
    # a spend margin is refused for it, in one line (exit 2: the comparison could not be made as asked)
    spend = evalnb_cli("compare", "v1", "v2", "--store", "e.db", "--cost-margin", "10%", cwd=tmp_path)
    assert spend.returncode == 2, spend.stdout[-2000:] + spend.stderr[-2000:]
    assert spend.stderr.startswith("error: cost_margin: b is a run of the sequential gate"), spend.stderr
    assert len(spend.stderr.splitlines()) == 1


def test_sequential_needs_a_baseline(tmp_path: Path) -> None:
    out = evalnb_cli("run", str(_suite(tmp_path)), "--agent", f"{AGENTS}:flaky", "--sequential", cwd=tmp_path)
    assert out.returncode == 2
    assert "--sequential goes with --baseline" in out.stderr


def test_sequential_on_the_demo_versions(tmp_path: Path) -> None:
    demo = evalnb_cli("demo", "--out", "demo", cwd=tmp_path, timeout=300)
    assert demo.returncode == 0, demo.stderr[-2000:]
    kb = evalnb.examples.path("knowledge-base")
    out = evalnb_cli(
        "run", str(kb), "--agent", f"{AGENTS}:kb_flawed", "--baseline", "current", "--sequential",
        "--store", "demo/evalnb.db", cwd=tmp_path, timeout=300,
    )  # fmt: skip
    text = out.stdout + out.stderr
    assert out.returncode in (0, 1), text[-3000:]
    assert "sequential gate: one-sided 95% anytime-valid" in text
    # nine cases, one a batch: each check's verdict is said, with where it was decided (or that it was not)
    assert re.search(r"(decided after \d+ of 9 cases|not decided after all 9 cases)", text), text[-3000:]
    assert (
        "Citations" in text and "no finite range" in text
    )  # a count cannot be bounded: said, not waited for


def test_several_suites_split_the_error_rate_by_their_gating_checks() -> None:
    # docs/comparison.md, the family: a suite of 1 gating check of 3 spends a third of the 5%
    from evalnb.cli._run import _sequential_rules
    from tests.comparison.test_sequential_run import agent, suite

    one, two = suite(20), suite(20, checks=("ExactMatch", "PartialMatch"))
    bases = [evalnb.run(s, agent(0.0, "b"), runs=1, progress=False) for s in (one, two)]
    rules = _sequential_rules(bases, [one, two], 0.0, 0.95, 0)
    assert [round(r.share, 6) for r in rules] == [round(1 / 3, 6), round(2 / 3, 6)]
    assert abs(sum(r.alpha for r in rules) - 0.05) < 1e-12
