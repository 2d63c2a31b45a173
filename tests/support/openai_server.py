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
* ``Reply``: full control (status, headers, delay before answering, raw body, usage, model, tool calls);
* ``callable(request) -> str | Reply``: computed from the :class:`Recorded` request.

Tool calls: ``Reply(tool_calls=[("zava_get-claim", {"claim": "C-1"})])`` answers with the chat API's
``message.tool_calls`` (ids ``call_1``, ``call_2`` ..., arguments as JSON text, ``finish_reason: tool_calls``);
``Recorded.tools`` is the ``tools`` a request declared and ``Recorded.tool_results`` the ``role: tool`` messages
it sent back, so a callable can script the round after the calls::

    server.default = lambda req: "Claim C-1 is approved." if req.tool_results else Reply(tool_calls=[...])

``server.delay`` adds a delay to every answer (seconds). Every request is logged before it is answered.

Token probabilities: a ``Reply`` with ``logprobs`` (OpenAI's ``choices[0].logprobs.content`` list) sends them
when the request asks for them (``"logprobs": true``), as real servers do. :func:`score_reply` builds a judge's
answer whose score is drawn from a seeded distribution, with that distribution's logprobs on the score token::

    rng = random.Random(7)
    server.default = lambda req: score_reply({3: 0.4, 4: 0.6}, rng, jitter=0.3)

``OpenAIServer(rate_limit=(20, 1.0))`` answers at most 20 requests in any 1.0 s window, as a rate-limited
provider does: a request above the rate gets HTTP 429 with ``Retry-After`` (the seconds until the window has
room), counted in ``server.rejected``; ``server.accepted`` holds the times of the answered ones.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

__all__ = ["OpenAIServer", "Recorded", "Reply", "openai_server", "score_reply", "score_tokens"]


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: assistant message content (for status 200).
        status: HTTP status.
        headers: response headers (e.g. ``{"Retry-After": "1"}``).
        delay: seconds to wait before answering (a value past the client's timeout simulates a hang).
        body: a raw body sent verbatim instead of the chat-completions JSON (bytes: as they are, even bytes that
            are not UTF-8, with ``Content-Type: application/json``).
        usage: the ``usage`` object (default: 10 prompt tokens, 5 completion tokens).
        model: the ``model`` reported (default: the model asked for).
        repeat: ``(piece, times)``: the content is ``piece`` repeated ``times`` times, streamed in pieces so
            that a huge answer (hundreds of MB) never sits in the server's memory; or, with ``body_only``, the
            raw body is.
        body_only: with ``repeat``, send the repeated text as the whole body (``text/plain``), not as content.
        logprobs: the ``logprobs.content`` list, sent when the request asks for logprobs.
        logprobs_form: ``"content"`` (OpenAI's, the default) or ``"legacy"`` (the completions form:
            ``tokens``, ``token_logprobs``, ``top_logprobs`` as dicts), as some servers still send.
        tool_calls: calls the assistant asks for, as ``(name, arguments)`` pairs or full chat API entries.
    """

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: str | bytes | None = None
    usage: dict[str, int] | None = None
    model: str | None = None
    repeat: tuple[str, int] | None = None
    body_only: bool = False
    logprobs: list[dict[str, Any]] | None = None
    logprobs_form: str = "content"
    tool_calls: list[Any] | None = None

    def chat_tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls as the chat API writes them."""
        out = []
        for i, call in enumerate(self.tool_calls or []):
            if isinstance(call, dict):
                out.append(call)
                continue
            name, arguments = call
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            out.append(
                {"id": f"call_{i + 1}", "type": "function", "function": {"name": name, "arguments": text}}
            )
        return out


def score_tokens(score: int, reason: str, probs: Mapping[int, float]) -> list[dict[str, Any]]:
    """The tokens of ``{"score": N, "reason": "..."}`` with logprobs: certain everywhere except the score
    token, whose alternatives are the scores 1..5 with the probabilities ``probs``."""
    top = [{"token": str(k), "logprob": math.log(p)} for k, p in sorted(probs.items(), key=lambda kv: -kv[1])]
    sure: list[dict[str, Any]] = []
    return [
        {"token": '{"score": ', "logprob": 0.0, "top_logprobs": sure},
        {"token": str(score), "logprob": math.log(probs[score]), "top_logprobs": top},
        {"token": f', "reason": {json.dumps(reason)}' + "}", "logprob": 0.0, "top_logprobs": sure},
    ]


def score_reply(
    dist: Mapping[int, float], rng: random.Random, *, jitter: float = 0.0, reason: str = "scored"
) -> Reply:
    """A judge's answer sampled from ``dist`` (score -> probability), with the logprobs it was sampled from.

    ``jitter`` perturbs the log probabilities by Gaussian noise of that SD before sampling, as a real model's
    probabilities move a little from call to call (batching, hardware); the answer's logprobs are the
    perturbed ones, so the sampled score and its reported distribution agree.
    """
    logits = {k: math.log(p) + (rng.gauss(0.0, jitter) if jitter else 0.0) for k, p in dist.items() if p > 0}
    top = max(logits.values())
    weights = {k: math.exp(v - top) for k, v in logits.items()}
    total = sum(weights.values())
    probs = {k: w / total for k, w in weights.items()}
    draw, acc, score = rng.random(), 0.0, max(probs)
    for k in sorted(probs):
        acc += probs[k]
        if draw < acc:
            score = k
            break
    tokens = score_tokens(score, reason, probs)
    return Reply(content="".join(t["token"] for t in tokens), logprobs=tokens)


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
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions the request declared."""
        return list(self.json.get("tools") or [])

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        """The ``role: tool`` messages of the request (results of earlier tool calls)."""
        return [m for m in self.messages if m.get("role") == "tool"]

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
        if isinstance(reply.body, bytes):
            headers = {"Content-Type": "application/json", **reply.headers}
            return web.Response(body=reply.body, status=reply.status, headers=headers)
        if reply.body is not None:
            return web.Response(text=reply.body, status=reply.status, headers=reply.headers)
        if reply.repeat is not None:
            return await self._stream(request, reply, body)
        if reply.status != 200:
            err = {"error": {"message": f"scripted status {reply.status}", "type": "scripted"}}
            return web.json_response(err, status=reply.status, headers=reply.headers)
        choice: dict[str, Any] = {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": reply.content,
                **({"tool_calls": reply.chat_tool_calls()} if reply.tool_calls else {}),
            },
            "finish_reason": "tool_calls" if reply.tool_calls else "stop",
        }
        if reply.logprobs is not None and body.get("logprobs"):
            # Only the alternatives asked for, as a real server sends them.
            n = int(body.get("top_logprobs") or 0)
            content = [{**t, "top_logprobs": list(t.get("top_logprobs") or [])[:n]} for t in reply.logprobs]
            if reply.logprobs_form == "legacy":
                choice["logprobs"] = {
                    "tokens": [t["token"] for t in content],
                    "token_logprobs": [t["logprob"] for t in content],
                    "top_logprobs": [{a["token"]: a["logprob"] for a in t["top_logprobs"]} for t in content],
                }
            else:
                choice["logprobs"] = {"content": content}
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model", "test-model"),
            "choices": [choice],
            "usage": reply.usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return web.json_response(payload, headers=reply.headers)

    async def _stream(self, request: web.Request, reply: Reply, body: dict[str, Any]) -> web.StreamResponse:
        assert reply.repeat is not None
        piece, times = reply.repeat
        resp = web.StreamResponse(status=reply.status, headers=reply.headers)
        resp.content_type = "text/plain" if reply.body_only else "application/json"
        await resp.prepare(request)
        head, tail = "", ""
        if not reply.body_only:
            envelope = json.dumps(
                {
                    "model": body.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "@"}}],
                }
            )
            head, tail = envelope.split('"@"')
            head += '"'
            tail = '"' + tail
            piece = json.dumps(piece)[1:-1]
        await resp.write(head.encode())
        chunk = (piece * max(1, 65536 // max(1, len(piece)))).encode()
        per_chunk = max(1, 65536 // max(1, len(piece)))
        sent = 0
        try:
            while sent < times:
                n = min(per_chunk, times - sent)
                await resp.write(chunk if n == per_chunk else (piece * n).encode())
                sent += n
            await resp.write(tail.encode())
            await resp.write_eof()
        except (ConnectionError, RuntimeError):
            pass  # the client read what it wanted and closed the connection
        return resp


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A started :class:`OpenAIServer`, stopped after the test (import it into a conftest to use it)."""
    with OpenAIServer() as server:
        yield server
