"""The lean chat-completions client against a real local server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

import pytest

from evalnb.chat import ChatClient, ChatError
from evalnb.chat import _session as chat_session
from evalnb.chat._limiter import AIMDLimiter, limiter_for
from evalnb.chat._net import parse_retry_after
from tests.support.openai_server import OpenAIServer, Recorded, Reply


def client(server: OpenAIServer, **kw: object) -> ChatClient:
    opts: dict[str, object] = {"base_url": server.base_url, "backoff": 0.02, "timeout": 5.0}
    opts.update(kw)
    return ChatClient("judge-model", **opts)  # type: ignore[arg-type]


async def test_text_usage_model_and_request_shape(openai_server: OpenAIServer) -> None:
    openai_server.script(
        Reply(content="hello", usage={"prompt_tokens": 7, "completion_tokens": 2}, model="m-2")
    )
    reply = await client(openai_server, api_key="sk-test", headers={"X-Team": "evals"}).complete("hi")
    assert (reply.text, reply.model, reply.attempts) == ("hello", "m-2", 1)
    assert reply.usage == {"prompt_tokens": 7, "completion_tokens": 2}
    req = openai_server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.json["model"] == "judge-model"
    assert req.json["temperature"] == 0.0  # judges default to temperature 0
    assert req.messages == [{"role": "user", "content": "hi"}]
    assert req.headers["Authorization"] == "Bearer sk-test"
    assert req.headers["X-Team"] == "evals"


async def test_no_key_sends_no_auth_header(openai_server: OpenAIServer) -> None:
    await client(openai_server).complete("hi")
    assert "Authorization" not in openai_server.requests[0].headers


async def test_key_from_named_env(openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-from-env")
    await client(openai_server, api_key_env="MY_JUDGE_KEY").complete("hi")
    assert openai_server.requests[0].headers["Authorization"] == "Bearer sk-from-env"


async def test_azure_deployment_path_and_api_key_header(openai_server: OpenAIServer) -> None:
    c = ChatClient(
        azure_endpoint=openai_server.url,
        deployment="gpt4o-prod",
        api_version="2024-10-21",
        api_key="az-secret",
    )
    reply = await c.complete("hi")
    assert reply.text == "OK"
    req = openai_server.requests[0]
    assert req.path == "/openai/deployments/gpt4o-prod/chat/completions"
    assert req.query == {"api-version": "2024-10-21"}
    assert req.headers["api-key"] == "az-secret"
    assert "Authorization" not in req.headers


async def test_429_honours_retry_after_seconds(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(status=429, headers={"Retry-After": "0.6"}), "after the wait")
    t0 = time.monotonic()
    reply = await client(openai_server).complete("hi")
    waited = time.monotonic() - t0
    assert reply.text == "after the wait" and reply.attempts == 2
    gap = openai_server.requests[1].time - openai_server.requests[0].time
    assert gap >= 0.55, gap  # the server's Retry-After, not the 20 ms backoff
    assert waited < 3


async def test_429_honours_retry_after_http_date(openai_server: OpenAIServer) -> None:
    when = email.utils.formatdate(time.time() + 2, usegmt=True)  # whole seconds: 1..2 s from now
    openai_server.script(Reply(status=429, headers={"Retry-After": when}), "ok")
    await client(openai_server).complete("hi")
    gap = openai_server.requests[1].time - openai_server.requests[0].time
    assert 0.5 <= gap <= 3.0, gap


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0.25 ") == 0.25
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0  # past: no wait
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


async def test_5xx_retried_then_success(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(status=500), Reply(status=502), Reply(status=503), "finally")
    reply = await client(openai_server).complete("hi")
    assert reply.text == "finally" and reply.attempts == 4
    assert len(openai_server.requests) == 4


async def test_5xx_exhausted_raises_transient(openai_server: OpenAIServer) -> None:
    openai_server.default = Reply(status=500)
    with pytest.raises(ChatError) as err:
        await client(openai_server, retries=2).complete("hi")
    assert err.value.transient and err.value.status == 500 and err.value.attempts == 3
    assert len(openai_server.requests) == 3


async def test_timeout_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(content="late", delay=2.0), "in time")
    t0 = time.monotonic()
    reply = await client(openai_server, timeout=0.3).complete("hi")
    assert reply.text == "in time" and reply.attempts == 2
    assert time.monotonic() - t0 < 1.5


async def test_4xx_not_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(status=404), "never")
    with pytest.raises(ChatError) as err:
        await client(openai_server).complete("hi")
    assert err.value.status == 404 and not err.value.transient
    assert len(openai_server.requests) == 1


async def test_secret_never_in_repr_or_errors(openai_server: OpenAIServer) -> None:
    secret = "sk-very-secret-123"
    # A server that echoes the key back in its error body must not leak it into the exception either.
    openai_server.script(lambda req: Reply(status=401, body=f"bad key {req.headers['Authorization']}"))
    c = client(openai_server, api_key=secret)
    assert secret not in repr(c)
    with pytest.raises(ChatError) as err:
        await c.complete("hi")
    assert secret not in str(err.value) and secret not in repr(err.value)
    assert "***" in str(err.value)


async def test_connection_refused_is_transient() -> None:
    with OpenAIServer() as s:
        url = s.base_url
    with pytest.raises(ChatError) as err:
        await ChatClient("m", base_url=url, retries=1, backoff=0.01).complete("hi")
    assert err.value.transient and err.value.status is None


async def test_limiter_shared_per_endpoint_and_halves_once_per_burst(openai_server: OpenAIServer) -> None:
    a = client(openai_server, concurrency=16)
    b = client(openai_server, concurrency=16)
    lim = limiter_for(a.endpoint, initial=16)
    assert limiter_for(b.endpoint) is lim  # agent and judge clients of one endpoint share it
    assert limiter_for(openai_server.url + "/other") is not lim
    lim.limit = 16.0

    # Eight calls refused at once are one burst: one halving, not eight.
    calls = 0

    def first_eight_refused(req: Recorded) -> Reply | str:
        nonlocal calls
        calls += 1
        return Reply(status=429, headers={"Retry-After": "0.2"}, delay=0.05) if calls <= 8 else "ok"

    openai_server.default = first_eight_refused
    await asyncio.gather(*(a.complete(f"burst {i}") for i in range(8)))
    assert lim.decreases == 1
    assert 8.0 <= lim.limit <= 9.5  # halved once, then grew a little on the eight successes
    before = lim.limit
    await asyncio.gather(*(b.complete("ok") for _ in range(10)))
    assert lim.limit > before  # additive increase after successes


async def test_limiter_caps_in_flight() -> None:
    lim = AIMDLimiter(initial=3)
    peak = 0

    async def work() -> None:
        nonlocal peak
        async with lim.slot():
            peak = max(peak, lim.in_flight)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(work() for _ in range(20)))
    assert peak == 3 and lim.in_flight == 0


async def test_one_pool_per_loop(openai_server: OpenAIServer) -> None:
    pool = await chat_session.shared_pool()
    await client(openai_server).complete("hi")
    await client(openai_server).complete("again")
    assert await chat_session.shared_pool() is pool
    assert sum(map(len, pool._idle.values())) == 1  # the second call went over the first one's connection
    await chat_session.aclose()
    assert pool.closed and not pool._idle
    assert await chat_session.shared_pool() is not pool  # a new one once the old is closed


async def test_one_proxy_session_per_loop() -> None:
    s1 = await chat_session.shared_session()
    assert await chat_session.shared_session() is s1
    await chat_session.aclose()
    assert s1.closed


@pytest.fixture
def server(openai_server: OpenAIServer) -> OpenAIServer:
    return openai_server


def _raw(body: str, status: int = 200) -> Reply:
    return Reply(body=body, status=status, headers={"Content-Type": "application/json"})


async def test_a_chat_answer_of_another_shape_is_a_clear_error(server: OpenAIServer) -> None:
    from evalnb.chat import ChatClient, ChatError

    server.script(
        _raw(json.dumps({"choices": [{"message": "hi"}]})),
        _raw(json.dumps({"choices": [{"message": {"content": "ok"}}], "usage": ["odd"]})),
    )
    client = ChatClient("m", base_url=server.base_url, retries=0)
    with pytest.raises(ChatError, match="unexpected body"):
        await client.complete("q")
    reply = await client.complete("q")
    assert (reply.text, reply.usage) == ("ok", {})
