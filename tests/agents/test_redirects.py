"""Secrets stay with their origin: a redirect to another origin gets none of the configured headers.

Two real servers on 127.0.0.1, on different ports (so different origins), record every header they receive.
The first answers with a redirect to the second; the HTTP agent, OpenAIChat, the OpenAI judge, the Azure judge
and the chat client under them follow it and send the second server none of their API key, ``api-key``,
``headers`` or ``secret_headers``. A redirect within the first origin keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalnb.agents import OpenAIChat, Request
from evalnb.agents._http import HTTP
from evalnb.chat import ChatClient, ChatError
from evalnb.chat._net import origin_of
from evalnb.errors import AgentError
from evalnb.judges import OpenAIJudge
from tests.support.openai_server import OpenAIServer, Recorded, Reply

KEY = "sk-KEY-8c1d"
TOKEN = "tok-GATEWAY-77ab"
PLAIN = "team-plain-3e"
SECRETS = (KEY, TOKEN, PLAIN)


@pytest.fixture
def elsewhere() -> Iterator[OpenAIServer]:
    """A second server: another port of 127.0.0.1 is another origin."""
    with OpenAIServer(default="from elsewhere") as server:
        yield server


def _redirect(to: str, status: int = 307) -> Reply:
    return Reply(status=status, headers={"Location": to}, body="")


def _leaked(rec: Recorded) -> list[str]:
    """The configured header names and secret values that reached a server."""
    names = {"authorization", "api-key", "x-gateway-token", "x-team"}
    found = [k for k in rec.headers if k.lower() in names]
    found += [s for s in SECRETS if any(s in v for v in rec.headers.values())]
    return found


def test_origins_are_scheme_host_and_port() -> None:
    assert origin_of("http://127.0.0.1:8080/a") == origin_of("HTTP://127.0.0.1:8080/b?x=1")
    assert origin_of("https://api.example.com/v1") == origin_of("https://API.example.com:443/v2")
    assert origin_of("http://127.0.0.1:8080/a") != origin_of("http://127.0.0.1:8081/a")
    assert origin_of("http://example.com/a") != origin_of("https://example.com/a")
    assert origin_of("http://example.com/a") != origin_of("http://example.com.evil/a")


async def test_http_agent(
    openai_server: OpenAIServer, elsewhere: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_TOKEN", TOKEN)
    openai_server.script(_redirect(f"{elsewhere.base_url}/chat/completions"))
    agent = HTTP(
        f"{openai_server.base_url}/chat/completions",
        body={"model": "m", "messages": [{"role": "user", "content": "{prompt}"}]},
        headers={"X-Team": PLAIN},
        secret_headers={"Authorization": f"Bearer {KEY}", "X-Gateway-Token": "${GATEWAY_TOKEN}"},
        response_map={"text": "choices.0.message.content"},
    )
    response = await agent.respond(Request(prompt="hi"))
    assert response.text == "from elsewhere"
    first, second = openai_server.requests[0], elsewhere.requests[0]
    assert first.headers["Authorization"] == f"Bearer {KEY}" and first.headers["X-Team"] == PLAIN
    assert first.headers["X-Gateway-Token"] == TOKEN
    assert _leaked(second) == []
    assert second.json["messages"] == [{"role": "user", "content": "hi"}]  # a 307 repeats the request


async def test_http_agent_same_origin_keeps_headers(openai_server: OpenAIServer) -> None:
    openai_server.script(
        _redirect("/chat/completions"), _redirect(f"{openai_server.url}/v1/chat/completions", 308)
    )
    agent = HTTP(
        f"{openai_server.base_url}/chat/completions",
        body={"model": "m", "messages": [{"role": "user", "content": "{prompt}"}]},
        headers={"X-Team": PLAIN},
        secret_headers={"Authorization": f"Bearer {KEY}"},
        response_map={"text": "choices.0.message.content"},
    )
    response = await agent.respond(Request(prompt="hi"))
    assert response.text == "OK"
    assert [r.path for r in openai_server.requests] == [
        "/v1/chat/completions",
        "/chat/completions",
        "/v1/chat/completions",
    ]
    for rec in openai_server.requests:
        assert rec.headers["Authorization"] == f"Bearer {KEY}" and rec.headers["X-Team"] == PLAIN


async def test_http_agent_error_from_elsewhere_says_what_was_not_sent(
    openai_server: OpenAIServer, elsewhere: OpenAIServer
) -> None:
    openai_server.script(_redirect(f"{elsewhere.base_url}/chat/completions"))
    elsewhere.script(Reply(status=401))
    agent = HTTP(
        f"{openai_server.base_url}/chat/completions",
        body={"model": "m", "messages": []},
        secret_headers={"Authorization": f"Bearer {KEY}"},
    )
    with pytest.raises(AgentError) as info:
        await agent.respond(Request(prompt="hi"))
    assert "HTTP 401" in str(info.value)
    assert f"redirected to another origin, {elsewhere.base_url}/chat/completions" in str(info.value)
    assert "which was sent none of the configured headers" in str(info.value)
    assert KEY not in str(info.value)


async def test_openai_chat_agent(
    openai_server: OpenAIServer, elsewhere: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_TOKEN", TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.script(_redirect(f"{elsewhere.base_url}/chat/completions"))
    agent = OpenAIChat(
        "m",
        base_url=openai_server.base_url,
        headers={"X-Team": PLAIN},
        secret_headers={"X-Gateway-Token": "${GATEWAY_TOKEN}"},
        retries=0,
    )
    response = await agent.respond(Request(prompt="hi"))
    assert response.text == "from elsewhere"
    first = openai_server.requests[0]
    assert first.headers["Authorization"] == f"Bearer {KEY}" and first.headers["X-Gateway-Token"] == TOKEN
    assert _leaked(elsewhere.requests[0]) == []


async def test_openai_judge_and_back_again(openai_server: OpenAIServer, elsewhere: OpenAIServer) -> None:
    # home -> elsewhere -> home: what was dropped on leaving does not come back on the return
    openai_server.script(_redirect(f"{elsewhere.base_url}/chat/completions"), "back home")
    elsewhere.script(_redirect(f"{openai_server.base_url}/chat/completions"))
    judge = OpenAIJudge(
        "m",
        base_url=openai_server.base_url,
        api_key=KEY,
        headers={"X-Gateway-Token": TOKEN, "X-Team": PLAIN},
        cache=False,
        retries=0,
    )
    reply = await judge.complete("grade this")
    assert reply.text == "back home"
    assert _leaked(openai_server.requests[0]) != []  # the first request carried them
    assert _leaked(elsewhere.requests[0]) == []
    assert _leaked(openai_server.requests[1]) == []


async def test_azure_judge_api_key(openai_server: OpenAIServer, elsewhere: OpenAIServer) -> None:
    target = f"{elsewhere.url}/openai/deployments/d1/chat/completions?api-version=2024-10-21"
    openai_server.script(_redirect(target, 308))
    judge = OpenAIJudge(
        deployment="d1", azure_endpoint=openai_server.url, api_key=KEY, cache=False, retries=0
    )
    reply = await judge.complete("grade this")
    assert reply.text == "from elsewhere"
    assert openai_server.requests[0].headers["api-key"] == KEY
    assert _leaked(elsewhere.requests[0]) == []


async def test_chat_client_error_from_elsewhere(openai_server: OpenAIServer, elsewhere: OpenAIServer) -> None:
    openai_server.script(_redirect(f"{elsewhere.base_url}/chat/completions"))
    elsewhere.script(Reply(status=401))
    client = ChatClient("m", base_url=openai_server.base_url, api_key=KEY, retries=0)
    with pytest.raises(ChatError) as info:
        await client.complete("hi")
    assert "HTTP 401" in str(info.value) and "which was sent none of the configured headers" in str(
        info.value
    )
    assert KEY not in str(info.value)


async def test_a_302_continues_as_get_without_the_body(
    openai_server: OpenAIServer, elsewhere: OpenAIServer
) -> None:
    # The chat server answers only POST: the GET a 302 turns the request into is refused there.
    openai_server.script(_redirect(f"{elsewhere.base_url}/chat/completions", 302))
    client = ChatClient("m", base_url=openai_server.base_url, api_key=KEY, retries=0)
    with pytest.raises(ChatError, match="HTTP 405"):
        await client.complete("hi")
    assert elsewhere.requests == []


async def test_redirect_loops_and_other_schemes_fail(openai_server: OpenAIServer) -> None:
    openai_server.default = _redirect(f"{openai_server.base_url}/chat/completions")
    client = ChatClient("m", base_url=openai_server.base_url, retries=0)
    with pytest.raises(ChatError, match="more than 10 redirects"):
        await client.complete("hi")
    assert len(openai_server.requests) == 11
    openai_server.clear()
    openai_server.default = _redirect("file:///etc/passwd")
    with pytest.raises(ChatError, match="not an http"):
        await client.complete("hi")
