"""``evalnb run --judge ... --judge-base-url ... --no-cache``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evalnb.cli import app
from tests.support.openai_server import OpenAIServer

SUITE = """
name = "cli-judged"

[[tasks]]
id = "cat"
prompt = "Where did the cat sit?"
runs = 1

  [[tasks.assertions]]
  type = "llm_judge"
  rubric = "The answer must say where the cat sat: on the mat."
"""

AGENT = "def agent(prompt):\n    return 'The cat sat on the mat.'\n"


def setup(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "suite.toml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    return str(tmp_path / "suite.toml"), f"{tmp_path / 'agent.py'}:agent"


def test_cli_heuristic_judge(tmp_path: Path) -> None:
    suite, agent = setup(tmp_path)
    out = CliRunner().invoke(
        app, ["run", suite, "--agent", agent, "--judge", "heuristic", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    scores = json.loads(out.stdout)["scores"]
    assert [s["judge"] for s in scores] == ["heuristic (not an LLM)"]


def test_cli_openai_judge_base_url_cache_and_no_cache(tmp_path: Path, openai_server: OpenAIServer) -> None:
    suite, agent = setup(tmp_path)
    openai_server.default = '{"verdict": "FAIL", "reason": "scripted"}'
    args = [
        "run",
        suite,
        "--agent",
        agent,
        "--judge",
        "openai:judge-model",
        "--judge-base-url",
        openai_server.base_url,
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 1, first.output  # the judge said FAIL
    assert len(openai_server.requests) == 1
    assert CliRunner().invoke(app, args).exit_code == 1
    assert len(openai_server.requests) == 1  # cached in .evals/cache under the working directory
    assert CliRunner().invoke(app, [*args, "--no-cache"]).exit_code == 1
    assert len(openai_server.requests) == 2


def test_cli_bad_judge_cannot_start(tmp_path: Path) -> None:
    suite, agent = setup(tmp_path)
    out = CliRunner().invoke(app, ["run", suite, "--agent", agent, "--judge", "nonsense"])
    assert out.exit_code == 2
    assert "unknown judge" in out.output
