"""Start-up checks: an agent or judge that cannot be reached stops the run before anything runs (exit 2).

Real parts only: a port that was just closed (nothing listens there), the local chat-completions server, real
programs, real cassette files, a real SQLite store and the CLI in a subprocess.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalnb
from evalnb.agents import HTTP, Command, OpenAIChat, Record, Replay
from evalnb.chat._net import probe, safe_url
from evalnb.errors import ConfigError
from evalnb.judges import HeuristicJudge, OpenAIJudge
from tests.support.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[2]

TOML = """
name = "preflight"

[[tasks]]
id = "summary"
prompt = "Summarise: the cat sat on the mat."
runs = 2

  [[tasks.assertions]]
  type = "llm_judge"
  rubric = "The answer must mention the cat."
"""


@pytest.fixture
def suite() -> evalnb.Suite:
    return evalnb.load(TOML, format="tasks-toml")


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: bound, then closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.fixture
def listening_port() -> Iterator[int]:
    """A port on 127.0.0.1 with a listening socket that never answers (a probe only needs the connection).

    The chat server is not used for probe-only tests: a connection that never sends a request can still be
    pending in its loop when it stops, which leaves a socket for the garbage collector to warn about.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


@pytest.fixture(autouse=True)
def _in_tmp(offline_env: Path) -> None:
    """Every test here runs offline in a temp folder (see tests/conftest.py)."""


class Counting:
    """A plain agent that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        return "A cat sat."


# --- endpoints -------------------------------------------------------------------------------------


def test_unreachable_judge_stops_the_run_before_the_agent_is_called(
    suite: evalnb.Suite, closed_port: int
) -> None:
    agent = Counting()
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{closed_port}/v1", cache=False)
    with pytest.raises(ConfigError) as info:
        evalnb.run(suite, agent, judge=judge, progress=False)
    assert agent.calls == 0
    assert info.value.code == "UNREACHABLE"
    message = str(info.value)
    assert message.startswith(f"judge endpoint http://127.0.0.1:{closed_port}/v1 is not reachable: ")
    assert "connection refused" in message
    assert "--judge-base-url" in message


def test_a_judge_the_suite_never_calls_need_not_be_reachable(closed_port: int) -> None:
    plain = evalnb.load('name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\nruns = 1\n', format="tasks-toml")
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{closed_port}/v1", cache=False)
    assert evalnb.run(plain, lambda p: "ok", judge=judge, progress=False).passed


def test_unreachable_agent_endpoint_is_a_config_error(suite: evalnb.Suite, closed_port: int) -> None:
    agent = OpenAIChat("m", base_url=f"http://127.0.0.1:{closed_port}/v1", retries=0)
    with pytest.raises(
        ConfigError, match=rf"agent endpoint http://127.0.0.1:{closed_port}/v1 is not reachable"
    ):
        evalnb.run(suite, agent, progress=False)


def test_agent_and_judge_both_down_are_both_reported(suite: evalnb.Suite, closed_port: int) -> None:
    agent = HTTP(f"http://127.0.0.1:{closed_port}/ai/ask?code=s3cr3t-code")
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{closed_port}/judge/v1", cache=False)
    with pytest.raises(ConfigError) as info:
        evalnb.run(suite, agent, judge=judge, progress=False)
    message = str(info.value)
    assert message.startswith("the run cannot start:")
    assert f"agent endpoint http://127.0.0.1:{closed_port}/ai/ask is not reachable" in message
    assert f"judge endpoint http://127.0.0.1:{closed_port}/judge/v1 is not reachable" in message
    assert "s3cr3t-code" not in message  # a query string may carry a key


@pytest.mark.parametrize(
    ("credentials", "key"),
    [("user:pa55word@", None), ("", "sk-very-secret")],  # both at once is refused earlier: one Authorization
)
def test_messages_never_show_keys_or_credentials(
    suite: evalnb.Suite, closed_port: int, credentials: str, key: str | None
) -> None:
    judge = OpenAIJudge(
        "m", base_url=f"http://{credentials}127.0.0.1:{closed_port}/v1", api_key=key, cache=False
    )
    with pytest.raises(ConfigError) as info:
        evalnb.run(suite, Counting(), judge=judge, progress=False)
    message = str(info.value)
    assert f"http://127.0.0.1:{closed_port}/v1" in message
    for secret in ("pa55word", "user:", "sk-very-secret"):
        assert secret not in message


def test_live_endpoints_pass_and_the_probe_sends_no_request(
    suite: evalnb.Suite, openai_server: OpenAIServer
) -> None:
    openai_server.default = lambda req: (
        '{"verdict": "PASS", "reason": "mentions the cat"}'
        if "rubric" in str(req.json["messages"]).lower()
        else "The cat sat on the mat."
    )
    agent = OpenAIChat("agent-model", base_url=openai_server.base_url)
    judge = OpenAIJudge("judge-model", base_url=openai_server.base_url, cache=False)
    result = evalnb.run(suite, agent, judge=judge, progress=False)
    assert result.passed, result.scores[["reason"]]
    # Two agent calls and two judge calls: the start-up check opened a connection and sent nothing.
    models = sorted(r.json["model"] for r in openai_server.requests)
    assert models == ["agent-model", "agent-model", "judge-model", "judge-model"]


def test_http_agent_reachable_when_something_listens(listening_port: int) -> None:
    import asyncio

    asyncio.run(HTTP(f"http://127.0.0.1:{listening_port}/anything").preflight())  # no ConfigError


def test_preflight_false_lets_the_run_go_on_as_degraded_rows(suite: evalnb.Suite, closed_port: int) -> None:
    agent = OpenAIChat("m", base_url=f"http://127.0.0.1:{closed_port}/v1", retries=0)
    result = evalnb.run(suite, agent, retries=0, progress=False, preflight=False)
    assert set(result.runs["status"]) == {"degraded"}
    assert result.runs["error"].str.contains("connection failed").all()


def test_store_writes_nothing_when_the_run_cannot_start(suite: evalnb.Suite, closed_port: int) -> None:
    store = evalnb.Store("runs.db")
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{closed_port}/v1", cache=False)
    agent = Counting()
    with pytest.raises(ConfigError, match="judge endpoint"):
        evalnb.run(suite, agent, judge=judge, store=store, version="v1", progress=False)
    assert agent.calls == 0
    assert len(store.history()) == 0


async def test_run_async_checks_too(suite: evalnb.Suite, closed_port: int) -> None:
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{closed_port}/v1", cache=False)
    with pytest.raises(ConfigError, match="not reachable"):
        await evalnb.run_async(suite, Counting(), judge=judge, progress=False)


async def test_probe_reports_none_for_a_listener_and_a_reason_otherwise(
    listening_port: int, closed_port: int
) -> None:
    assert await probe(f"http://127.0.0.1:{listening_port}/v1", timeout=2.0) is None
    assert await probe(f"http://127.0.0.1:{closed_port}/v1", timeout=2.0) == "connection refused"
    assert "not an http(s) URL" in (await probe("ftp://127.0.0.1/x") or "")
    assert safe_url("https://u:p@example.com:8443/v1?key=k#f") == "https://example.com:8443/v1"


# --- commands and cassettes ------------------------------------------------------------------------


def test_missing_command_is_a_config_error(suite: evalnb.Suite) -> None:
    with pytest.raises(ConfigError, match="'no-such-evalnb-agent' was not found on the PATH"):
        evalnb.run(suite, Command(["no-such-evalnb-agent", "--flag"]), progress=False)


def test_command_path_checks(tmp_path: Path) -> None:
    import asyncio

    with pytest.raises(ConfigError, match="does not exist"):
        asyncio.run(Command(["./agents/missing.sh"]).preflight())
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(ConfigError, match="is not executable"):
        asyncio.run(Command([str(script)]).preflight())
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    asyncio.run(Command([str(script)]).preflight())
    asyncio.run(Command(["./agent.sh"]).preflight())  # relative to the current directory
    asyncio.run(Command([sys.executable, "-c", "print(1)"]).preflight())
    # A bare name is looked up on the PATH the program gets, not only on this process's.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "only-here").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "only-here").chmod(0o755)
    with pytest.raises(ConfigError, match="not found"):
        asyncio.run(Command(["only-here"]).preflight())
    asyncio.run(Command(["only-here"], env={"PATH": str(tmp_path / "bin")}).preflight())
    asyncio.run(Command(["{workdir}/made-per-run.sh"]).preflight())  # known only per call


def test_replay_of_a_cassette_that_is_gone(suite: evalnb.Suite, tmp_path: Path) -> None:
    cassette = tmp_path / "answers.jsonl"
    evalnb.run(suite, Record(Counting(), cassette), progress=False)
    replay = Replay(cassette)
    cassette.unlink()
    with pytest.raises(ConfigError, match="replay cassette not found"):
        evalnb.run(suite, replay, progress=False)
    with pytest.raises(ConfigError, match="replay cassette not found"):
        Replay(tmp_path / "never-written.jsonl")


def test_record_checks_the_agent_it_wraps(suite: evalnb.Suite, closed_port: int, tmp_path: Path) -> None:
    inner = OpenAIChat("m", base_url=f"http://127.0.0.1:{closed_port}/v1")
    with pytest.raises(ConfigError, match="agent endpoint"):
        evalnb.run(suite, Record(inner, tmp_path / "c.jsonl"), progress=False)


def test_each_distinct_agent_is_checked_once(suite: evalnb.Suite) -> None:
    checked: list[str] = []

    class Custom:
        name = "custom"

        async def preflight(self) -> None:
            checked.append("agent")

        async def respond(self, request: evalnb.Request) -> evalnb.Response:
            return evalnb.Response(text="A cat sat.")

    class Broken(Custom):
        async def preflight(self) -> None:
            raise RuntimeError("license server down")

    shared = Custom()
    evalnb.run(suite, {"default": shared, "other": shared}, judge=HeuristicJudge(), progress=False)
    assert checked == ["agent"]
    with pytest.raises(ConfigError, match="agent custom failed its start-up check: RuntimeError: license"):
        evalnb.run(suite, Broken(), progress=False)


# --- command line ----------------------------------------------------------------------------------


def test_cli_exits_2_with_the_message(tmp_path: Path, closed_port: int) -> None:
    (tmp_path / "s.toml").write_text(TOML)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    out = subprocess.run(
        [sys.executable, "-m", "evalnb", "run", "s.toml", "--agent", f"{ROOT / 'tests' / 'agents_for_cli.py'}:echo",
         "--judge", "openai:m", "--judge-base-url", f"http://127.0.0.1:{closed_port}/v1", "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert (
        f"judge endpoint http://127.0.0.1:{closed_port}/v1 is not reachable: connection refused" in out.stderr
    )
    assert "--judge-base-url" in out.stderr
    assert "PASS" not in out.stdout and "FAIL" not in out.stdout
