"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests, with scripted answers.

It runs aiohttp in a background thread on a random port and speaks ``POST /v1/chat/completions`` and Azure's
``POST /openai/deployments/{deployment}/chat/completions?api-version=...``. Answers come from a queue, then
from a default (a string, a :class:`Reply`, or a function of the request)::

    from tests.support.openai_server import OpenAIServer, Reply

    with OpenAIServer() as server:                      # or use the ``openai_server`` fixture
        server.script("first answer", Reply(status=429, headers={"Retry-After": "1"}), "after the 429")
        server.default = lambda req: f"echo: {req.last_user}"
        client = ChatClient("m", base_url=server.base_url)
        ...
        server.requests                                  # every request received, in order
        server.requests[0].json["messages"], server.requests[0].headers["Authorization"]

A queued item or the default may be:

* ``str``: the assistant message content of a 200 answer;
* ``Reply``: full control (status, headers, delay before answering, raw body, usage, model);
* ``callable(request) -> str | Reply``: computed from the :class:`Recorded` request.

``server.delay`` adds a delay to every answer (seconds). Every request is logged before it is answered.

``OpenAIServer(rate_limit=(20, 1.0))`` answers at most 20 requests in any 1.0 s window, as a rate-limited
provider does: a request above the rate gets HTTP 429 with ``Retry-After`` (the seconds until the window has
room), counted in ``server.rejected``; ``server.accepted`` holds the times of the answered ones.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

__all__ = ["OpenAIServer", "Recorded", "Reply", "openai_server"]


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: assistant message content (for status 200).
        status: HTTP status.
        headers: response headers (e.g. ``{"Retry-After": "1"}``).
        delay: seconds to wait before answering (a value past the client's timeout simulates a hang).
        body: a raw body sent verbatim instead of the chat-completions JSON.
        usage: the ``usage`` object (default: 10 prompt tokens, 5 completion tokens).
        model: the ``model`` reported (default: the model asked for).
    """

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: str | None = None
    usage: dict[str, int] | None = None
    model: str | None = None


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: dict[str, Any]
    time: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.json.get("messages") or [])

    @property
    def last_user(self) -> str:
        """The content of the last user message (the prompt, for a one-message judge call)."""
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return str(m.get("content") or "")
        return ""


Answer = str | Reply | Callable[[Recorded], "str | Reply"]


class OpenAIServer:
    """A scriptable chat-completions server (see the module docstring)."""

    def __init__(
        self, *, default: Answer = "OK", delay: float = 0.0, rate_limit: tuple[int, float] | None = None
    ) -> None:
        self.default: Answer = default
        self.delay = delay
        self.rate_limit = rate_limit
        self.accepted: list[float] = []
        self.rejected = 0
        self.requests: list[Recorded] = []
        self._queue: deque[Answer] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0

    # -- scripting --------------------------------------------------------------------------------

    def script(self, *answers: Answer) -> OpenAIServer:
        """Queue answers, used in order before the default."""
        with self._lock:
            self._queue.extend(answers)
        return self

    def clear(self) -> None:
        """Forget queued answers and the request log."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``)."""
        return f"{self.url}/v1"

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> OpenAIServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the test OpenAI server did not start")
        return self

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        fut.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # -- answering --------------------------------------------------------------------------------

    def _over_rate(self, now: float) -> float | None:
        """With the lock held: None when the request may be answered (it is counted), else the seconds until
        the window has room."""
        if self.rate_limit is None:
            return None
        count, window = self.rate_limit
        recent = [t for t in self.accepted[-count:] if t > now - window]
        if len(recent) >= count:
            self.rejected += 1
            return max(0.001, recent[0] + window - now)
        self.accepted.append(now)
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        rec = Recorded(
            path=request.path,
            query=dict(request.query),
            headers=dict(request.headers),
            json=body,
            time=time.monotonic(),
        )
        with self._lock:
            self.requests.append(rec)
            wait = self._over_rate(rec.time)
            if wait is None:
                answer = self._queue.popleft() if self._queue else self.default
        if wait is not None:
            err = {"error": {"message": "rate limit reached", "type": "rate_limit"}}
            return web.json_response(err, status=429, headers={"Retry-After": f"{wait:.3f}"})
        if callable(answer):
            answer = answer(rec)
        reply = Reply(content=answer) if isinstance(answer, str) else answer
        delay = self.delay + reply.delay
        if delay:
            await asyncio.sleep(delay)
        if reply.body is not None:
            return web.Response(text=reply.body, status=reply.status, headers=reply.headers)
        if reply.status != 200:
            err = {"error": {"message": f"scripted status {reply.status}", "type": "scripted"}}
            return web.json_response(err, status=reply.status, headers=reply.headers)
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": reply.usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return web.json_response(payload, headers=reply.headers)


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A started :class:`OpenAIServer`, stopped after the test (import it into a conftest to use it)."""
    with OpenAIServer() as server:
        yield server
