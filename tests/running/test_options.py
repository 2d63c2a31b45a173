"""Durations and counts by one rule (a finite number above 0; a whole number at or above its minimum), for the
run and for every agent, judge, executor and store option that is one; ``--workdir`` that does not exist is
refused unless ``--workdir-create`` asks for it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb._numbers import count, seconds
from evalnb.agents import HTTP, Command, OpenAIChat
from evalnb.errors import ConfigError
from evalnb.executors import Ray
from evalnb.judges import OpenAIJudge
from evalnb.store import Store
from tests.support.cli import evalnb_cli
from tests.support.suites import suite_of, task

NAN, INF = float("nan"), float("inf")


def calls() -> Any:
    made: list[str] = []

    def agent(prompt: str) -> str:
        made.append(prompt)
        return "ok"

    agent.made = made  # type: ignore[attr-defined]
    return agent


@pytest.mark.parametrize(
    "options",
    [
        {"timeout": NAN},
        {"timeout": INF},
        {"timeout": -INF},
        {"timeout": 0},
        {"timeout": -1.5},
        {"timeout": True},
        {"timeout": "10"},
        {"concurrency": 0},
        {"concurrency": NAN},
        {"concurrency": 2.0},
        {"concurrency": True},
        {"runs": 0},
        {"runs": -2},
        {"runs": NAN},
        {"retries": -1},
        {"retries": INF},
        {"retries": 1.5},
    ],
    ids=repr,
)
def test_a_run_refuses_a_duration_or_count_that_is_not_one(options: dict[str, Any]) -> None:
    agent = calls()
    with pytest.raises(ConfigError) as err:
        evalnb.run(suite_of(task("a")), agent, progress=False, **options)
    ((name, value),) = options.items()
    assert err.value.code == "INVALID_VALUE" and err.value.message.startswith(f"{name} must be ")
    assert f"not {value!r}" in err.value.message
    assert agent.made == []  # type: ignore[attr-defined]


def test_what_the_rule_accepts() -> None:
    assert seconds("timeout", 0.25) == 0.25 and seconds("timeout", None, none=True) is None
    assert seconds("backoff", 0, zero=True) == 0.0
    assert count("retries", 0) == 0 and count("runs", None, none=True) is None
    result = evalnb.run(suite_of(task("a")), lambda p: "ok", timeout=None, retries=0, runs=1, progress=False)
    assert result.passed and result.meta["options"]["timeout"] is None
    for bad in (NAN, INF, -1.0, 0.0):
        with pytest.raises(ConfigError, match="finite number of seconds"):
            seconds("timeout", bad)


@pytest.mark.parametrize("value", [NAN, INF, 0, -3])
def test_every_agent_judge_executor_and_store_timeout_follows_the_rule(value: float, tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"
    makers = {
        "HTTP timeout": lambda: HTTP("http://127.0.0.1:9/ask", timeout=value),
        "Command timeout": lambda: Command(["true"], timeout=value),
        "OpenAIChat timeout": lambda: OpenAIChat("m", base_url=url, timeout=value),
        "OpenAIJudge timeout": lambda: OpenAIJudge("m", base_url=url, timeout=value, cache=False),
        "Ray num_cpus": lambda: Ray(num_cpus=value),
    }
    if not math.isfinite(value) or value < 0:  # 0 is allowed: no retrying
        makers["Store retry_seconds"] = lambda: Store(tmp_path / "s.db", retry_seconds=value)
    for what, make in makers.items():
        with pytest.raises(ConfigError) as err:
            make()
        assert "must be a finite number" in err.value.message and repr(value) in err.value.message, what


@pytest.mark.parametrize("value", [-1, NAN, 1.5, True])
def test_every_count_option_follows_the_rule(value: Any) -> None:
    url = "http://127.0.0.1:9/v1"
    for make in (
        lambda: OpenAIJudge("m", base_url=url, retries=value, cache=False),
        lambda: OpenAIJudge("m", base_url=url, concurrency=value if value != -1 else 0, cache=False),
        lambda: OpenAIChat("m", base_url=url, retries=value),
        lambda: OpenAIChat("m", base_url=url, max_tool_rounds=value),
        lambda: OpenAIChat("m", base_url=url, max_tokens=value if value != -1 else 0),
        lambda: Command(["true"], max_output=value if value != -1 else 0),
        lambda: Ray(max_retries=value),
        lambda: Ray(batch_size=value if value != -1 else 0),
    ):
        with pytest.raises(ConfigError, match="must be a whole number"):
            make()


def test_an_evalnb_toml_timeout_of_inf_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalnb import config

    (tmp_path / "evalnb.toml").write_text('[agents.prog]\ntype = "command"\nargv = ["true"]\ntimeout = inf\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        config.agents_from_specs(["prog"])
    assert "agents.prog: Command timeout must be a finite number of seconds above 0" in err.value.message
    assert err.value.message.endswith("not inf")


def _cli_folder(tmp_path: Path) -> Path:
    (tmp_path / "agents.py").write_text(
        "import pathlib\n\ndef agent(prompt):\n    pathlib.Path('called').write_text('x')\n    return 'ok'\n\n"
        "def inwork(request):\n    (request.workdir / 'called').write_text('x')\n    return 'ok'\n"
    )
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "s"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": "p", "expected_response": "ok"}],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    return tmp_path


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        (
            "--timeout",
            "nan",
            "timeout must be a finite number of seconds above 0 or None (no limit), not nan",
        ),
        ("--timeout", "inf", "not inf"),
        ("--timeout", "0", "not 0.0"),
        ("-c", "0", "concurrency must be a whole number, 1 or more, not 0"),
        ("--runs", "0", "runs must be a whole number, 1 or more or None, not 0"),
        ("--retries", "-1", "retries must be a whole number, 0 or more, not -1"),
    ],
)
def test_the_command_line_exits_2_on_one_line(tmp_path: Path, option: str, value: str, words: str) -> None:
    folder = _cli_folder(tmp_path)
    out = evalnb_cli("run", "suite.json", "--agent", "agents.py:agent", option, value, cwd=folder)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.splitlines() == [f"error: {words}"] or words in out.stderr, out.stderr
    assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr
    assert not (folder / "called").exists()


# --- --workdir -----------------------------------------------------------------------------------------


def test_a_missing_workdir_is_refused_unless_asked_to_create_it(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "deep" / "repo"
    agent = calls()
    with pytest.raises(ConfigError) as err:
        evalnb.run(suite_of(task("a")), agent, workdir=missing, progress=False)
    assert f"the working directory {missing} does not exist" in err.value.message
    assert "create_workdir=True" in err.value.message and "--workdir-create" in err.value.message
    assert not (tmp_path / "typo").exists() and agent.made == []  # type: ignore[attr-defined]
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        evalnb.run(suite_of(task("a")), agent, workdir=afile, progress=False)
    with pytest.raises(ConfigError, match="goes with workdir=PATH"):
        evalnb.run(suite_of(task("a")), agent, create_workdir=True, progress=False)

    seen: list[Path] = []

    def looks(request: evalnb.Request) -> str:
        assert request.workdir is not None
        seen.append(request.workdir)
        return "ok"

    result = evalnb.run(suite_of(task("a")), looks, workdir=missing, create_workdir=True, progress=False)
    assert result.passed and missing.is_dir() and seen == [missing]


def test_the_command_line_refuses_a_missing_workdir(tmp_path: Path) -> None:
    folder = _cli_folder(tmp_path)
    run = ("run", "suite.json", "--agent", "agents.py:inwork", "--workdir", "no/such/dir")
    out = evalnb_cli(*run, cwd=folder)
    assert out.returncode == 2 and len(out.stderr.splitlines()) == 1, out.stderr
    assert (
        "the working directory no/such/dir does not exist" in out.stderr and "--workdir-create" in out.stderr
    )
    assert not (folder / "no").exists()
    out = evalnb_cli(*run, "--workdir-create", cwd=folder)
    assert out.returncode == 0, out.stderr
    assert (folder / "no" / "such" / "dir" / "called").exists()  # the agent ran there
