"""Judge faults found by trying to break evalnb, each reproduced against the real local chat server."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb.cli import app
from evalnb.errors import ConfigError
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, JudgedMetricCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer


def judged_suite(n: int = 1) -> Suite:
    check = JudgedMetricCheck(type="Relevance")
    cases = [Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"q{i}", checks=[check])]) for i in range(n)]
    return Suite(name="judged", format="dataset-json", cases=cases)


def with_credentials(url: str) -> str:
    return url.replace("http://", "http://gateway-user:gateway-pass@")


# -- user:password@ in the judge URL and an API key -------------------------------------------------


def test_url_credentials_and_an_api_key_stop_at_start_up(openai_server: OpenAIServer) -> None:
    # Before, every call failed with aiohttp's "Cannot combine AUTHORIZATION header with AUTH argument".
    url = with_credentials(openai_server.base_url)
    with pytest.raises(ConfigError) as err:
        OpenAIJudge("m", base_url=url, api_key="sk-test-key", cache=False)
    message = str(err.value)
    assert "has a user name and password in its URL and an API key is set (given as api_key)" in message
    assert "gateway-pass" not in message and "sk-test-key" not in message
    with pytest.raises(ConfigError, match="Authorization header is given"):
        OpenAIJudge("m", base_url=url, headers={"Authorization": "Bearer x"}, cache=False)
    assert openai_server.requests == []


def test_url_credentials_alone_are_sent_as_basic_auth(openai_server: OpenAIServer) -> None:
    openai_server.default = '{"score": 5, "reason": "fine"}'
    judge = OpenAIJudge("m", base_url=with_credentials(openai_server.base_url), cache=False)
    result = evalnb.run(judged_suite(), lambda prompt: "an answer", judge=judge, progress=False)
    assert result.passed, result.report()
    token = base64.b64encode(b"gateway-user:gateway-pass").decode()
    assert openai_server.requests[0].headers["Authorization"] == f"Basic {token}"


def test_the_cli_exits_2_for_url_credentials_and_a_key(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "suite.json").write_text('[{"prompt": "q"}]')  # judged by the defaults
    (tmp_path / "agent.py").write_text("def agent(prompt):\n    return 'a'\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    args = [
        "run",
        str(tmp_path / "suite.json"),
        "--agent",
        f"{tmp_path / 'agent.py'}:agent",
        "--judge",
        "openai:m",
    ]
    out = CliRunner().invoke(app, [*args, "--judge-base-url", with_credentials(openai_server.base_url)])
    assert out.exit_code == 2, out.output
    assert "an API key is set (from $OPENAI_API_KEY)" in out.output
    assert "sk-from-env" not in out.output and "gateway-pass" not in out.output
    assert openai_server.requests == []
