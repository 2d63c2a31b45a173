"""HTTP agent against a real local "ask" service on 127.0.0.1."""

from __future__ import annotations

import pytest

from evalnb.agents import Request
from evalnb.agents.http import ASK_MAPPING, HTTP, get_path
from evalnb.errors import AgentError, ConfigError
from tests.agents.ask_server import AskServer

TOKEN = "tok-SECRET-4f2a9c"


def req(prompt: str, **kw: object) -> Request:
    return Request(prompt=prompt, case="c1", suite="s", **kw)  # type: ignore[arg-type]


async def test_ask_mapping_query(ask_server: AskServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASK_TOKEN", TOKEN)
    agent = HTTP.ask(
        f"{ask_server.url}/ai/ask",
        secret_headers={"Authorization": "Bearer ${ASK_TOKEN}"},
        headers={"X-Team": "a"},
    )
    r = await agent.respond(req("sales by country", case_meta={"cube": {"cubeName": "Sales"}}))
    assert r.intent == "QUERY"
    assert r.rows == [{"Country": "USA", "Store Sales": 565238.13}, {"Country": "Mexico", "Store Sales": 1.5}]
    assert r.insight == "Two countries (history of 0 messages)."
    assert r.text == r.insight
    assert r.refusal is None
    assert r.model == "ask-model-1"
    assert r.latency_ms is not None and r.meta["http_status"] == 200
    sent = ask_server.requests[-1]
    assert sent == {"question": "sales by country", "history": [], "cube": {"cubeName": "Sales"}}
    assert ask_server.headers[-1]["Authorization"] == f"Bearer {TOKEN}"
    assert ask_server.headers[-1]["X-Team"] == "a"
    assert TOKEN not in repr(agent) and "Authorization" in repr(agent)


async def test_ask_refusal_insight_and_history(ask_server: AskServer) -> None:
    agent = HTTP.ask(f"{ask_server.url}/ai/ask")
    refused = await agent.respond(req("what is the weather"))
    assert refused.intent == "REFUSED" and refused.refusal == "off-topic: not about sales"
    assert refused.text == "off-topic: not about sales" and refused.rows == []
    insight = await agent.respond(req("sales trend"))
    assert insight.intent == "INSIGHT" and insight.insight == "Sales grew 12% in Q4."
    assert insight.rows is None
    history = [{"role": "user", "content": "sales by country"}, {"role": "assistant", "content": "two rows"}]
    follow = await agent.respond(req("only the USA", history=history))
    assert ask_server.requests[-1]["history"] == history  # sent as a JSON list, not pasted text
    assert follow.insight == "Two countries (history of 2 messages)."


async def test_template_values_are_json_not_pasted(ask_server: AskServer) -> None:
    body = {
        "q": "{prompt}",
        "meta": {
            "run": "{run}",
            "turn": "{turn}",
            "label": "case {case} run {run}",
            "cube": "{case_meta.cube.name}",
        },
        "list": ["{suite}", 3, None, True],
    }
    agent = HTTP(f"{ask_server.url}/echo", body=body, response_map={"text": "answer", "context": "received"})
    prompt = 'quote " brace } {prompt} \\ end'
    r = await agent.respond(req(prompt, run=2, turn=1, case_meta={"cube": {"name": "Sales"}}))
    assert r.text == "echoed"
    import json

    received = json.loads(r.context or "")
    assert received == {
        "q": prompt,
        "meta": {"run": 2, "turn": 1, "label": "case c1 run 2", "cube": "Sales"},
        "list": ["s", 3, None, True],
    }


async def test_default_mapping_and_body(ask_server: AskServer) -> None:
    agent = HTTP(f"{ask_server.url}/echo")
    r = await agent.respond(req("hi"))
    assert r.text is None  # "answer" is not a Response field: only Response fields are taken by default
    agent2 = HTTP(f"{ask_server.url}/echo", response_map={"text": ["missing.path", "answer"]})
    assert (await agent2.respond(req("hi"))).text == "echoed"


async def test_errors_transient_or_not(ask_server: AskServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASK_TOKEN", TOKEN)
    agent = HTTP.ask(
        f"{ask_server.url}/ai/ask", secret_headers={"Authorization": "Bearer ${ASK_TOKEN}"}, timeout=0.3
    )
    with pytest.raises(AgentError) as e500:
        await agent.respond(req("boom"))
    assert e500.value.transient and "HTTP 500" in str(e500.value)
    with pytest.raises(AgentError) as e429:
        await agent.respond(req("limit"))
    assert e429.value.transient and "HTTP 429" in str(e429.value)
    assert e429.value.retry_after == 1.0  # type: ignore[attr-defined]
    with pytest.raises(AgentError) as e400:
        await agent.respond(req("bad"))
    assert not e400.value.transient and "HTTP 400" in str(e400.value)
    assert TOKEN not in str(e400.value)  # the server echoed the header: scrubbed
    with pytest.raises(AgentError) as slow:
        await agent.respond(req("slow"))
    assert slow.value.transient and "did not answer within 0.3s" in str(slow.value)
    with pytest.raises(AgentError, match="not JSON") as teapot:
        await agent.respond(req("teapot"))
    assert not teapot.value.transient


async def test_connection_refused_is_transient() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(AgentError) as err:
        await HTTP(f"http://127.0.0.1:{port}/x").respond(req("hi"))
    assert err.value.transient and "could not reach" in str(err.value)


def test_missing_secret_variable_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_TOKEN_EVALNB", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_TOKEN_EVALNB"):
        HTTP("http://127.0.0.1:1/x", secret_headers={"Authorization": "Bearer ${NO_SUCH_TOKEN_EVALNB}"})


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="unknown field"):
        HTTP("http://127.0.0.1:1/x", response_map={"answer": "a"})
    with pytest.raises(ConfigError, match="not valid JSON"):
        HTTP("http://127.0.0.1:1/x", body="{nope")
    assert set(ASK_MAPPING) <= {"text", "intent", "rows", "insight", "refusal", "model"}


def test_get_path() -> None:
    data = {"a": {"b": [{"c": 1}, {"c": 2}]}, "x": None}
    assert get_path(data, "a.b[1].c") == 2
    assert get_path(data, "a.b.0.c") == 1
    assert get_path(data, "a.b[-1].c") == 2
    assert get_path(data, "a.b[5].c") is None
    assert get_path(data, "a.z") is None
    assert get_path(data, "x.y") is None
