"""A small real "ask" service on 127.0.0.1 for the HTTP agent tests (aiohttp in a background thread).

``POST /ai/ask`` answers ``{intent, rows, insight: {markdown}, refusalReason}`` from the question; special
questions script failures: ``"boom"`` -> 500, ``"slow"`` -> waits, ``"bad"`` -> 400, ``"teapot"`` -> not JSON,
``"limit"`` -> 429. ``POST /echo`` returns the JSON body it received and the request headers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web


class AskServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> AskServer:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        assert ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        asyncio.run_coroutine_threadsafe(self._cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _cleanup(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    def _serve(self, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application()
        app.router.add_post("/ai/ask", self._ask)
        app.router.add_post("/echo", self._echo)
        app.router.add_get("/echo", self._echo)
        self._runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _ask(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        q = str(body.get("question", ""))
        if q == "boom":
            return web.json_response({"error": "internal"}, status=500)
        if q == "limit":
            return web.json_response({"error": "slow down"}, status=429, headers={"Retry-After": "1"})
        if q == "bad":
            auth = request.headers.get("Authorization", "")
            return web.json_response({"error": f"bad request, got header {auth}"}, status=400)
        if q == "slow":
            await asyncio.sleep(1)
        if q == "teapot":
            return web.Response(text="<html>I am a teapot</html>", content_type="text/html")
        if "weather" in q:
            return web.json_response(
                {
                    "intent": "REFUSED",
                    "rows": [],
                    "insight": None,
                    "refusalReason": "off-topic: not about sales",
                }
            )
        if "trend" in q:
            return web.json_response(
                {"intent": "INSIGHT", "insight": {"markdown": "Sales grew 12% in Q4."}, "refusalReason": None}
            )
        turns = len(body.get("history") or [])
        return web.json_response(
            {
                "intent": "QUERY",
                "rows": [
                    {"Country": "USA", "Store Sales": 565238.13},
                    {"Country": "Mexico", "Store Sales": 1.5},
                ],
                "insight": {"markdown": f"Two countries (history of {turns} messages)."},
                "refusalReason": None,
                "model": "ask-model-1",
            }
        )

    async def _echo(self, request: web.Request) -> web.StreamResponse:
        body = await request.json() if request.can_read_body else None
        return web.json_response({"received": body, "headers": dict(request.headers), "answer": "echoed"})


@pytest.fixture
def ask_server() -> Iterator[AskServer]:
    with AskServer() as server:
        yield server
