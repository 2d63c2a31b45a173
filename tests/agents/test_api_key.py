"""``OpenAIChat(api_key=...)`` and ``OpenAIJudge(api_key=...)``: the key itself is accepted in Python, sent to
the endpoint, and found in no output (repr, errors, the stored run, exports, reports, the log, a cassette);
a configuration file still names only the variable that holds it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import evalnb
from evalnb.agents import OpenAIChat, Record, Request
from evalnb.config import Config
from evalnb.errors import AgentError, ConfigError
from evalnb.export._junit import to_junit
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, ExactMatchCheck, JudgedMetricCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer, Reply

KEY = "sk-GIVEN-IN-PYTHON-5b7e1"


def _suite() -> Suite:
    checks = [ExactMatchCheck(), JudgedMetricCheck(type="Relevance")]
    turns = [Turn(prompt="capital of France?", expected="Paris", checks=checks)]
    return Suite(name="keyed", format="dataset-json", cases=[Case(id="c0", name="c0", turns=turns)])


def _everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


async def test_the_key_is_sent_and_wins_over_the_variable(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    agent = OpenAIChat("m", base_url=openai_server.base_url, api_key=KEY)
    assert (await agent.respond(Request(prompt="hi"))).text == "OK"
    assert openai_server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(agent) and "api_key=<set>" in repr(agent)
    azure = OpenAIChat(deployment="d1", azure_endpoint=openai_server.url, api_key=KEY)
    await azure.respond(Request(prompt="hi"))
    assert openai_server.requests[1].headers["api-key"] == KEY
    assert KEY not in repr(azure)


async def test_an_error_echoing_the_key_is_scrubbed(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(status=401, body=f'{{"error": "invalid key {KEY}"}}'))
    agent = OpenAIChat("m", base_url=openai_server.base_url, api_key=KEY, retries=0)
    with pytest.raises(AgentError) as info:
        await agent.respond(Request(prompt="hi"))
    assert "HTTP 401" in str(info.value) and KEY not in str(info.value)
    judge = OpenAIJudge("m", base_url=openai_server.base_url, api_key=KEY, cache=False, retries=0)
    openai_server.script(Reply(status=401, body=f'{{"error": "invalid key {KEY}"}}'))
    with pytest.raises(evalnb.EvalnbError) as err:
        await judge.complete("grade")
    assert KEY not in str(err.value) and KEY not in repr(judge)


def test_no_output_of_a_run_holds_the_key(
    openai_server: OpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.default = lambda req: (
        '{"score": 5, "reason": "on topic"}'
        if "Relevance" in req.last_user or "DATA" in req.last_user
        else "Paris"
    )
    agent = OpenAIChat("m", base_url=openai_server.base_url, api_key=KEY)
    judge = OpenAIJudge("j", base_url=openai_server.base_url, api_key=KEY, cache=tmp_path / "cache")
    out = tmp_path / "out"
    caplog.set_level(logging.DEBUG)
    store = evalnb.Store(out / "evalnb.db")
    result = evalnb.run(
        _suite(),
        Record(agent, out / "cassette.jsonl"),
        judge=judge,
        store=store,
        version="v1",
        progress=False,
    )
    assert all(r.headers.get("Authorization") == f"Bearer {KEY}" for r in openai_server.requests)
    assert result.passed, result.report()  # the agent answered, and the judge scored Relevance 5
    assert result.scores.set_index("check").loc["Relevance", "value"] == 5.0
    texts = [
        repr(result),
        result.report(),
        result.to_json(),
        repr(dict(result.meta)),
        result.runs.to_csv(),
        result.scores.to_csv(),
        caplog.text,
        repr(store.history()),
        store.load("v1").to_json(),
    ]
    result.to_html(out / "scorecard.html")
    result.to_csv(out / "csv")
    to_junit(result, out / "junit.xml")
    store.engine.dispose()
    assert all(KEY not in t for t in texts)
    assert KEY.encode() not in _everything_under(out)  # the store file, the cassette, the exports
    assert KEY.encode() not in _everything_under(tmp_path / "cache")


def test_a_configuration_file_names_only_the_variable() -> None:
    for table in (
        {"agents": {"chat": {"type": "openai", "model": "m", "api_key": KEY}}},
        {"judge": {"type": "openai", "model": "m", "api_key": KEY}},
    ):
        with pytest.raises(ConfigError) as info:
            cfg = Config.from_dict(table)
            cfg.agent("chat") if "agents" in table else cfg.judge()
        message = str(info.value)
        assert "api_key" in message and 'api_key_env = "NAME"' in message, message
        assert KEY not in message
