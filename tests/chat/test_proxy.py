"""Calls through an HTTP proxy (``HTTP_PROXY``): they go through aiohttp, against a real forward proxy on
127.0.0.1 that relays to the local chat server, and answer as direct calls do."""

from __future__ import annotations

import asyncio
import urllib.parse

import pytest

from evalnb.chat import ChatClient
from evalnb.errors import ChatError
from tests.support.openai_server import OpenAIServer


class ForwardProxy:
    """A real forward proxy: each request (absolute-form, as clients send proxies) is recorded and relayed to
    ``upstream`` (host, port) whatever host it names, and the answer relayed back."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.seen: list[str] = []  # request lines as the proxy received them
        self.port = 0

    async def start(self) -> asyncio.base_events.Server:
        server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        return server

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
        self.seen.append(lines[0])
        headers = [h for h in lines[1:] if h and not h.lower().startswith(("connection:", "proxy-"))]
        length = next((int(h.split(":")[1]) for h in headers if h.lower().startswith("content-length:")), 0)
        body = await reader.readexactly(length)
        parts = urllib.parse.urlsplit(target)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        forwarded = "\r\n".join([f"{method} {path} {version}", *headers, "Connection: close", "", ""])
        up_writer.write(forwarded.encode("latin-1") + body)
        answer = await up_reader.read()  # the upstream closes after its answer
        up_writer.close()
        writer.write(answer)
        await writer.drain()
        writer.close()


async def test_a_call_through_a_proxy(openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = urllib.parse.urlsplit(openai_server.base_url)
    proxy = ForwardProxy((upstream.hostname or "127.0.0.1", upstream.port or 80))
    server = await proxy.start()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    openai_server.script("through the proxy")
    # A name that does not resolve here: only the proxy can carry the call (loopback never goes through one).
    client = ChatClient("m", base_url="http://chat.evalnb.invalid/v1", api_key="sk-proxied", retries=0)
    reply = await client.complete("hi")
    assert reply.text == "through the proxy"
    assert proxy.seen == ["POST http://chat.evalnb.invalid/v1/chat/completions HTTP/1.1"]
    assert openai_server.requests[-1].headers["Authorization"] == "Bearer sk-proxied"

    # A proxy that refuses: the same error as a direct call that cannot connect, the key nowhere in it.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    refused = ChatClient("m", base_url="http://chat.evalnb.invalid/v1", api_key="sk-proxied", retries=0)
    with pytest.raises(ChatError, match="connection failed: ClientProxyConnectionError") as caught:
        await refused.complete("hi")
    assert "sk-proxied" not in str(caught.value)
    server.close()
