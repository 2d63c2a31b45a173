"""End to end through the CLI: ``evalnb run --baseline`` on seeded flaky agents against a real SQLite store.

Identical agents must exit 1 in at most 8% of the trials at 1 and at 3 runs per case; a 10-point drop in
pass rate at 100 cases x 3 runs must exit 1 in at least 75%. The trials run in-process (typer's CliRunner)
to stay within a couple of minutes; run with ``-s`` to see the measured rates.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalnb.cli import app

AGENTS = Path(__file__).resolve().parents[1] / "agents_for_gate.py"
TRIALS = 60
CASES = 100


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "gate-suite"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "yes", "testId": f"T-{i}"} for i in range(CASES)],
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(doc))
    return path


def _run(suite: Path, db: Path, agent: str, runs: int, seed: int, monkeypatch: pytest.MonkeyPatch,
         *extra: str) -> int:  # fmt: skip
    monkeypatch.setenv("EVALNB_GATE_SEED", str(seed))
    args = [
        "run",
        str(suite),
        "--agent",
        f"{AGENTS}:{agent}",
        "--runs",
        str(runs),
        "--store",
        str(db),
        *extra,
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output[-2000:]
    return result.exit_code


@pytest.mark.slow
@pytest.mark.parametrize("runs", [1, 3])
def test_identical_flaky_agents_rarely_fail_the_baseline_gate(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: int
) -> None:
    db = tmp_path / "gate.db"
    exits = []
    for t in range(
        TRIALS
    ):  # each trial: two independent runs of the same agent, the second gated on the first
        _run(suite, db, "flaky", runs, 2 * t, monkeypatch, "--version", f"base{t}")
        exits.append(_run(suite, db, "flaky", runs, 2 * t + 1, monkeypatch, "--baseline", f"base{t}"))
    rate = sum(exits) / TRIALS
    print(
        f"\nCLI, identical flaky agents, {CASES} cases x {runs} run(s): exit 1 in {rate:.2f} of {TRIALS} trials"
    )
    assert rate <= 0.08


@pytest.mark.slow
def test_a_ten_point_drop_fails_the_baseline_gate(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "gate.db"
    exits = []
    for t in range(TRIALS):
        _run(suite, db, "flaky", 3, 1000 + t, monkeypatch, "--version", f"base{t}")
        exits.append(_run(suite, db, "dropped", 3, 5000 + t, monkeypatch, "--baseline", f"base{t}"))
    rate = sum(exits) / TRIALS
    print(f"\nCLI, a 10-point drop, {CASES} cases x 3 runs: exit 1 in {rate:.2f} of {TRIALS} trials")
    assert rate >= 0.75
