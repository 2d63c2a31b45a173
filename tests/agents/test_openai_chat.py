"""OpenAIChat against the real local chat-completions server on 127.0.0.1."""

from __future__ import annotations

import pytest

from evalnb.agents import Request
from evalnb.agents._openai_chat import OpenAIChat
from evalnb.errors import AgentError
from tests.support.openai_server import OpenAIServer, Reply

KEY = "sk-test-SECRET-7d1e5b"


async def test_single_turn_usage_and_model(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALNB_TEST_KEY", KEY)
    openai_server.script(
        Reply(content="Paris.", usage={"prompt_tokens": 21, "completion_tokens": 3}, model="m-2024")
    )
    agent = OpenAIChat(
        "m", base_url=openai_server.base_url, api_key_env="EVALNB_TEST_KEY", system="Be brief."
    )
    r = await agent.respond(Request(prompt="Capital of France?"))
    assert r.text == "Paris."
    assert r.model == "m-2024"
    assert r.usage == {"prompt_tokens": 21, "completion_tokens": 3}
    sent = openai_server.requests[-1]
    assert sent.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert sent.json["temperature"] == 0.0 and sent.json["model"] == "m"
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(agent) and "api_key=<set>" in repr(agent)


async def test_multi_turn_history(openai_server: OpenAIServer) -> None:
    openai_server.default = lambda rec: f"seen {len(rec.messages)} messages"
    agent = OpenAIChat(
        "m", base_url=openai_server.base_url, api_key_env="EVALNB_UNSET_KEY_X", temperature=0.3
    )
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    r = await agent.respond(Request(prompt="and now?", history=history, turn=1))
    assert r.text == "seen 3 messages"
    sent = openai_server.requests[-1]
    assert sent.messages == [*history, {"role": "user", "content": "and now?"}]
    assert sent.json["temperature"] == 0.3
    assert "Authorization" not in sent.headers  # no key variable set: no auth header


async def test_retries_then_answers(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(status=503), Reply(status=429, headers={"Retry-After": "0"}), "finally")
    agent = OpenAIChat("m", base_url=openai_server.base_url, retries=3)
    agent.client.backoff = 0.01
    r = await agent.respond(Request(prompt="x"))
    assert r.text == "finally" and r.meta["attempts"] == 3


async def test_errors_become_agent_errors_without_the_key(
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALNB_TEST_KEY", KEY)
    monkeypatch.setenv("GATEWAY_TOKEN", "gw-SECRET-99")
    openai_server.script(Reply(status=401, body=f'{{"error": "bad key {KEY} gw-SECRET-99"}}'))
    agent = OpenAIChat(
        "m",
        base_url=openai_server.base_url,
        api_key_env="EVALNB_TEST_KEY",
        secret_headers={"X-Gateway": "${GATEWAY_TOKEN}"},
    )
    with pytest.raises(AgentError) as err:
        await agent.respond(Request(prompt="x"))
    assert "HTTP 401" in str(err.value)
    assert KEY not in str(err.value) and "gw-SECRET-99" not in str(err.value)
    assert not err.value.transient
    assert openai_server.requests[-1].headers["X-Gateway"] == "gw-SECRET-99"
    assert "gw-SECRET" not in repr(agent)
    openai_server.script(*[Reply(status=500)] * 3)
    agent.client.retries = 2
    agent.client.backoff = 0.01
    with pytest.raises(AgentError, match="after 3 attempt"):
        await agent.respond(Request(prompt="x"))
