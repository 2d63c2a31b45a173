"""`evalnb run --prices --max-cost --max-tokens` and `[prices.MODEL]` of evalnb.toml, in real subprocesses against the
loopback chat server; `--resume` continues a budget-stopped run within a new budget."""

from __future__ import annotations

import re
from pathlib import Path

from evalnb import Store
from tests.running.test_costs import AGENT_CALL, answer
from tests.support.cli import evalnb_cli
from tests.support.openai_server import OpenAIServer


def _folder(tmp_path: Path, server: OpenAIServer, *, priced: bool) -> None:
    prices = "[prices.agent-model]\ninput = 2.0\noutput = 8.0\ncached_input = 0.5\n" if priced else ""
    (tmp_path / "evalnb.toml").write_text(
        f'[agents.gpt]\ntype = "openai"\nmodel = "agent-model"\nbase_url = "{server.base_url}"\n\n{prices}',
        encoding="utf-8",
    )
    rows = "\n".join(f"question {i},Paris" for i in range(8))
    (tmp_path / "cases.csv").write_text(f"prompt,expected\n{rows}\n", encoding="utf-8")


def test_prices_of_evalnb_toml_a_cost_budget_exit_1_and_resume(tmp_path: Path) -> None:
    with OpenAIServer(default=answer) as server:
        _folder(tmp_path, server, priced=True)
        out = evalnb_cli(
            "run", "cases.csv", "--agent", "gpt", "--max-cost", f"{3.5 * AGENT_CALL}", "--concurrency", "1",
            "--version", "v1", cwd=tmp_path,
        )  # fmt: skip
        assert out.returncode == 1, out.stderr
        assert "3/8 passed, 0 failed, 0 degraded, 5 skipped" in out.stdout
        assert (
            f"Spent: tokens 4,500 (prompt 3,600, completion 900) · cost ${3 * AGENT_CALL:.4g}" in out.stdout
        )
        assert "budget exhausted: the cost budget of $" in out.stderr
        run_id = re.search(r"--resume (\S+)\)", out.stderr).group(1)  # type: ignore[union-attr]
        out = evalnb_cli("run", "--resume", run_id, "--agent", "gpt", "--max-cost", "1", cwd=tmp_path)
        assert out.returncode == 0, out.stdout + out.stderr
        assert len(server.requests) == 8
    store = Store(tmp_path / ".evals" / "evalnb.db")
    costs = store.costs("cases")
    assert costs["version"].tolist() == ["v1"] and costs["cases"].tolist() == [8]
    assert abs(costs["cost"].iloc[0] - 8 * AGENT_CALL) < 1e-12


def test_a_price_file_a_token_budget_and_an_unpriced_model_said_once(tmp_path: Path) -> None:
    with OpenAIServer(default=answer) as server:
        _folder(tmp_path, server, priced=False)
        out = evalnb_cli("run", "cases.csv", "--agent", "gpt", "--prices", "none.toml", cwd=tmp_path)
        assert out.returncode == 2 and "price file not found: none.toml" in out.stderr
        (tmp_path / "other.yaml").write_text("other-model: {input: 1, output: 1}\n", encoding="utf-8")
        out = evalnb_cli("run", "cases.csv", "--agent", "gpt", "--prices", "other.yaml", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stderr.count("warning: no price for agent-model-2025-01-01") == 1
        assert "cost NA; no price for agent-model-2025-01-01" in out.stdout
        (tmp_path / "prices.toml").write_text(
            '["agent-model"]\ninput = 2.0\noutput = 8.0\n', encoding="utf-8"
        )
        out = evalnb_cli(
            "run", "cases.csv", "--agent", "gpt", "--prices", "prices.toml", "--max-tokens", "4000",
            "--concurrency", "1", cwd=tmp_path,
        )  # fmt: skip
        assert out.returncode == 1, out.stderr
        assert "2/8 passed, 0 failed, 0 degraded, 6 skipped" in out.stdout
        assert "budget exhausted: the token budget of 4,000 is reached" in out.stderr
        assert "warning: no price" not in out.stderr
