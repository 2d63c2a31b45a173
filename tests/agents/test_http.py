"""HTTP agent against a real local "ask" service on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalnb
from evalnb.agents import OpenAIChat, Record, Request
from evalnb.agents._http import ASK_MAPPING, HTTP, get_path
from evalnb.errors import AgentError, ConfigError
from evalnb.judges import OpenAIJudge
from tests.agents.ask_server import AskServer
from tests.support.openai_server import OpenAIServer, Reply

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


ONE_ITEM = """{"schemaVersion": "1.6.0", "default_evaluators": {"Relevance": {}},
  "items": [{"prompt": "What is 2+2?", "expected_response": "4"}]}"""


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    return openai_server


def _raw(body: str, status: int = 200) -> Reply:
    return Reply(body=body, status=status, headers={"Content-Type": "application/json"})


async def test_a_mapping_that_fits_nothing_in_the_answer_is_an_agent_error(server: OpenAIServer) -> None:
    server.default = _raw(json.dumps({"answer": "42", "meta": {"took": 3}}))
    agent = HTTP(f"{server.url}/chat/completions", response_map={"text": "anser", "intent": "kind"})
    with pytest.raises(AgentError) as err:
        await agent.respond(evalnb.Request(prompt="q"))
    msg = str(err.value)
    assert "none of the mapped paths" in msg and "text: anser" in msg and "'answer'" in msg
    assert not err.value.transient
    # One mapped path present, even as null, is an answer: the other fields are simply absent.
    server.default = _raw(json.dumps({"answer": None, "kind": "QUERY"}))
    agent2 = HTTP(f"{server.url}/chat/completions", response_map={"text": "answer", "intent": "kind"})
    r = await agent2.respond(evalnb.Request(prompt="q"))
    assert (r.text, r.intent) == (None, "QUERY")
    server.default = _raw(json.dumps({"answer": None}))
    assert (await agent2.respond(evalnb.Request(prompt="q"))).text is None


def test_the_mismatch_is_the_reason_in_the_results(server: OpenAIServer) -> None:
    server.default = _raw(json.dumps({"answer": "42"}))
    suite = evalnb.load(ONE_ITEM, format="dataset-json")
    agent = HTTP(f"{server.url}/chat/completions", response_map={"text": "result.text"})
    result = evalnb.run(suite, agent, judge="heuristic", retries=0, progress=False)
    assert result.runs["status"].tolist() == ["degraded"]
    assert "none of the mapped paths (text: result.text)" in result.runs["error"].iloc[0]


async def test_secrets_stay_out_of_http_messages(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-SECRET-4242"
    monkeypatch.setenv("GW_TOKEN", token)
    # A gateway that echoes the header back in a page that is not JSON.
    server.default = lambda req: Reply(body=f"<html>denied for {req.headers.get('X-Gw')}</html>")
    url = f"http://alice:pa55word@127.0.0.1:{server.port}/v1/chat/completions"
    agent = HTTP(url, secret_headers={"X-Gw": "${GW_TOKEN}"}, response_map={"text": "answer"})
    with pytest.raises(AgentError) as err:
        await agent.respond(evalnb.Request(prompt="q"))
    assert "not JSON" in str(err.value)
    for text in (str(err.value), repr(agent)):
        assert token not in text and "pa55word" not in text


def test_url_passwords_stay_out_of_errors_reprs_and_cassettes(server: OpenAIServer, tmp_path: Path) -> None:
    server.default = Reply(status=401)
    base = f"http://bob:hunter2pw@127.0.0.1:{server.port}/v1"
    suite = evalnb.load(ONE_ITEM, format="dataset-json")
    judge = OpenAIJudge("m", base_url=base, cache=False, retries=0)
    server.script("4")  # the agent's answer; then the judge gets the 401
    cassette = tmp_path / "c.jsonl"
    agent = Record(OpenAIChat("m", base_url=base, retries=0), cassette)
    result = evalnb.run(suite, agent, judge=judge, retries=0, progress=False)
    assert result.scores["status"].tolist() == ["degraded"]
    assert "HTTP 401" in result.scores["reason"].iloc[0]
    outputs = [
        result.scores.to_csv(),
        result.runs.to_csv(),
        result.to_json(),
        repr(judge),
        repr(agent),
        repr(judge.client),
        cassette.read_text(encoding="utf-8"),
    ]
    for text in outputs:
        assert "hunter2pw" not in text
    assert "127.0.0.1" in result.scores["reason"].iloc[0]  # the endpoint is still named
