"""A lean async client for OpenAI-compatible chat completions (OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp).

One ``aiohttp.ClientSession`` per event loop, shared by every client on that loop (its connection pool is
sized for high concurrency), and one adaptive concurrency limiter per endpoint (base URL), shared by every
client of that endpoint, so agent calls and judge calls to the same server back off together.

Failure handling (issue: judges must survive what real endpoints do):

* HTTP 429 honours ``Retry-After`` (seconds or an HTTP date) and halves the endpoint's concurrency (AIMD);
* 5xx, 408, timeouts and dropped connections are retried with exponential backoff and jitter;
* other 4xx fail at once (a wrong model name or key does not get better by retrying);
* the API key never appears in a ``repr``, an exception or a log line.

aiohttp is imported inside the functions that use it, so importing this module stays light. The official
``openai`` package is not needed (it is the optional extra ``evalnb[judge]``).

Example:
    >>> client = ChatClient("gpt-4o-mini", base_url="http://127.0.0.1:11434/v1")
    >>> reply = await client.complete("Say hi")
    >>> reply.text, reply.usage, reply.model
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import math
import os
import random
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.errors import ChatError, ConfigError

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "AIMDLimiter",
    "ChatClient",
    "ChatError",
    "ChatReply",
    "aclose",
    "limiter_for",
    "parse_retry_after",
    "probe",
    "require_reachable",
    "safe_url",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AZURE_API_VERSION = "2024-10-21"
# Per-host pool size: the limiter, not the pool, decides how many calls are in flight.
POOL_SIZE = 512
PREFLIGHT_TIMEOUT = 5.0
"""Seconds a start-up reachability probe waits for a TCP connection before it calls the endpoint unreachable."""


@dataclass(frozen=True)
class ChatReply:
    """One chat-completions answer.

    Attributes:
        text: the first choice's message content (``""`` when the server sent none).
        usage: token usage as the server reported it (``prompt_tokens``, ``completion_tokens`` ...).
        model: the model name the server reported, else the one asked for.
        latency_ms: wall time of the successful attempt.
        attempts: attempts made, including the successful one.
    """

    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    latency_ms: float = 0.0
    attempts: int = 1


# --------------------------------------------------------------------------------------------------
# Retry-After
# --------------------------------------------------------------------------------------------------


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110 10.2.3).

    Example:
        >>> parse_retry_after("1.5")
        1.5
        >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
        10.0
    """
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        secs = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        secs = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(secs):
        return None
    return max(0.0, secs)


# --------------------------------------------------------------------------------------------------
# AIMD limiter
# --------------------------------------------------------------------------------------------------


class AIMDLimiter:
    """Additive-increase / multiplicative-decrease concurrency limit for one endpoint.

    ``acquire()`` waits while ``limit`` calls are in flight. A rate limit (429) halves the limit, at most once
    per burst: only a call started after the previous decrease can cause another, so 30 calls refused at once
    halve it once, not 30 times. Each success adds ``1 / limit``, i.e. about one slot per window of successes.

    Example:
        >>> lim = AIMDLimiter(initial=8)
        >>> async with lim.slot() as started: ...
    """

    def __init__(self, *, initial: float = 64, minimum: float = 1, maximum: float = 512) -> None:
        self.minimum = float(minimum)
        self.maximum = float(maximum)
        self.limit = float(min(max(initial, minimum), maximum))
        self.in_flight = 0
        self.decreases = 0
        self._last_decrease = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def capacity(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self) -> float:
        """Wait for a slot; returns the start time (monotonic) to pass to :meth:`on_rate_limited`."""
        while self.in_flight >= self.capacity:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if not fut.cancelled() and fut.done():
                    self._wake()  # we were woken but will not take the slot: pass it on
                raise
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)
        self.in_flight += 1
        return time.monotonic()

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.capacity - self.in_flight
        while free > 0 and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                free -= 1

    def on_success(self) -> None:
        self.limit = min(self.maximum, self.limit + 1.0 / self.limit)
        self._wake()

    def on_rate_limited(self, started: float) -> None:
        if started < self._last_decrease:
            return  # this call was already in flight when we last backed off: same burst
        self.limit = max(self.minimum, self.limit / 2)
        self._last_decrease = time.monotonic()
        self.decreases += 1

    def slot(self) -> _Slot:
        return _Slot(self)

    def __repr__(self) -> str:
        return f"AIMDLimiter(limit={self.limit:.1f}, in_flight={self.in_flight})"


class _Slot:
    def __init__(self, limiter: AIMDLimiter) -> None:
        self.limiter = limiter
        self.started = 0.0

    async def __aenter__(self) -> float:
        self.started = await self.limiter.acquire()
        return self.started

    async def __aexit__(self, *exc: object) -> None:
        self.limiter.release()


# Limiters hold futures bound to a loop, so there is one per (loop, endpoint); the learned limit of an endpoint
# outlives the loop so that the next run starts where the last one settled.
_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AIMDLimiter]] = (
    weakref.WeakKeyDictionary()
)
_LEARNED: dict[str, float] = {}


def limiter_for(endpoint: str, *, initial: float = 64) -> AIMDLimiter:
    """The limiter shared by every client of ``endpoint`` (a base URL) on the running event loop.

    Example:
        >>> limiter_for("http://127.0.0.1:8000/v1").limit
        64.0
    """
    loop = asyncio.get_running_loop()
    per_loop = _LIMITERS.setdefault(loop, {})
    key = endpoint.rstrip("/")
    lim = per_loop.get(key)
    if lim is None:
        lim = per_loop[key] = AIMDLimiter(initial=_LEARNED.get(key, initial))
    return lim


# --------------------------------------------------------------------------------------------------
# One session per event loop
# --------------------------------------------------------------------------------------------------

_SESSIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, AsyncIterator[Any]]] = (
    weakref.WeakKeyDictionary()
)


async def _hold(session: aiohttp.ClientSession) -> AsyncIterator[aiohttp.ClientSession]:
    # An async generator kept alive per loop: asyncio.run() (and pytest-asyncio) close pending async
    # generators at shutdown, which closes the session without the caller having to remember to.
    try:
        yield session
    finally:
        await session.close()


async def _session() -> aiohttp.ClientSession:
    import aiohttp

    loop = asyncio.get_running_loop()
    held = _SESSIONS.get(loop)
    if held is not None and not held[0].closed:
        return held[0]  # type: ignore[no-any-return,unused-ignore]
    connector = aiohttp.TCPConnector(limit=POOL_SIZE, limit_per_host=0, ttl_dns_cache=300)
    # trust_env=True would look proxies up in the environment on every request (a third of the client's CPU
    # at 2,000 calls); each client resolves its proxy once instead (ChatClient._proxy).
    session = aiohttp.ClientSession(connector=connector, trust_env=False)
    gen = _hold(session)
    await gen.__anext__()
    _SESSIONS[loop] = (session, gen)
    return session


async def aclose() -> None:
    """Close the running loop's shared session (optional: it is closed when the loop shuts down)."""
    loop = asyncio.get_running_loop()
    held = _SESSIONS.pop(loop, None)
    if held is not None:
        await held[1].aclose()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------------
# Start-up probe
# --------------------------------------------------------------------------------------------------


def safe_url(url: str) -> str:
    """``url`` fit for a message: no user name or password, no query string (either may carry a key).

    Example:
        >>> safe_url("https://user:pw@example.com/v1?code=abc")
        'https://example.com/v1'
    """
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


async def probe(url: str, *, timeout: float = PREFLIGHT_TIMEOUT, proxy: str | None = None) -> str | None:
    """Whether a TCP connection to ``url``'s host and port (or to ``proxy``'s) opens within ``timeout``.

    Only the connection is tried, no HTTP request: an endpoint that answers at all counts as reachable, and a
    wrong key or model is reported later, per call, with the server's own message.

    Returns:
        ``None`` when the connection opened, else a short reason (``"connection refused"``, ...).

    Example:
        >>> await probe("http://127.0.0.1:9/v1", timeout=1.0)
        'connection refused'
    """
    import socket
    import urllib.parse

    parts = urllib.parse.urlsplit(proxy or url)
    host = parts.hostname
    if not host or parts.scheme not in ("http", "https"):
        return f"{safe_url(proxy or url)!r} is not an http(s) URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "the URL has an invalid port"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        return f"no connection within {timeout:g} s"
    except socket.gaierror:
        return f"the host name {host!r} could not be resolved"
    except ConnectionRefusedError:
        return "connection refused"
    except OSError as exc:
        return (exc.strerror or type(exc).__name__).lower()
    writer.close()
    # Closing may race with the peer closing: the connection opened, which is all the probe asks.
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return None


async def require_reachable(
    url: str, *, what: str, hint: str, timeout: float = PREFLIGHT_TIMEOUT, proxy: str | None = None
) -> None:
    """Raise :class:`ConfigError` when :func:`probe` cannot connect to ``url``.

    Args:
        url: the endpoint (only its scheme, host and port are used; messages show it without credentials).
        what: what the endpoint is, for the message (``"judge endpoint"``).
        hint: what a person can do about it (``"start the server or pass --judge-base-url"``).
        timeout: seconds to wait for the connection.
        proxy: the proxy the calls go through, when there is one: it is the first hop, so it is probed.

    Example:
        >>> await require_reachable("http://127.0.0.1:9/v1", what="judge endpoint", hint="start the server")
        Traceback (most recent call last):
        evalnb.errors.ConfigError: judge endpoint http://127.0.0.1:9/v1 is not reachable: connection refused; ...
    """
    reason = await probe(url, timeout=timeout, proxy=proxy)
    if reason is None:
        return
    via = f" through the proxy {safe_url(proxy)}" if proxy else ""
    raise ConfigError(f"{what} {safe_url(url)} is not reachable{via}: {reason}; {hint}", code="UNREACHABLE")


# --------------------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------------------


class ChatClient:
    """An OpenAI-compatible chat-completions client: plain OpenAI, any compatible server, or Azure OpenAI.

    Args:
        model: the model name (Azure: defaults to the deployment). Falls back to ``$OPENAI_MODEL``.
        base_url: e.g. ``http://127.0.0.1:11434/v1``; falls back to ``$OPENAI_BASE_URL``, then OpenAI's.
        api_key: the key; else read from the environment variable ``api_key_env``. No key: no auth header
            (local servers rarely need one).
        api_key_env: where to read the key (default ``OPENAI_API_KEY``; ``AZURE_OPENAI_API_KEY`` for Azure).
        azure_endpoint: ``https://NAME.openai.azure.com``; switches to Azure's deployment URL and ``api-key``
            header. Falls back to ``$AZURE_OPENAI_ENDPOINT`` when ``deployment`` is given.
        deployment: the Azure deployment name.
        api_version: Azure ``api-version`` (``$OPENAI_API_VERSION`` or a recent GA version).
        headers: extra HTTP headers (e.g. an organisation or a gateway token).
        temperature: sampling temperature, 0 by default (judges should be as repeatable as possible).
        max_tokens: completion token cap, if any.
        timeout: seconds per attempt.
        retries: retries after the first attempt for 429, 5xx, timeouts and connection errors.
        backoff: base of the exponential backoff in seconds (``backoff * 2**attempt``, with jitter).
        max_backoff: cap of one wait, including a server's ``Retry-After``.
        concurrency: initial concurrency limit of this endpoint (adapted by AIMD afterwards).
        extra_body: extra JSON fields sent with every request (``seed``, ``response_format`` ...).

    Example:
        >>> client = ChatClient("llama3.1", base_url="http://127.0.0.1:11434/v1")
        >>> (await client.complete([{"role": "user", "content": "2+2?"}])).text
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        azure_endpoint: str | None = None,
        deployment: str | None = None,
        api_version: str | None = None,
        headers: Mapping[str, str] | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        timeout: float = 60.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        concurrency: int = 64,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        azure_endpoint = azure_endpoint or (os.environ.get("AZURE_OPENAI_ENDPOINT") if deployment else None)
        self.azure = azure_endpoint is not None
        if self.azure:
            assert azure_endpoint is not None
            if not deployment:
                raise ConfigError("an Azure OpenAI client needs deployment=NAME")
            self.deployment: str | None = deployment
            self.api_version: str | None = (
                api_version or os.environ.get("OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
            )
            self.base_url = azure_endpoint.rstrip("/")
            self.model = model or deployment
            env = api_key_env or "AZURE_OPENAI_API_KEY"
        else:
            self.deployment = None
            self.api_version = None
            self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
            self.model = model or os.environ.get("OPENAI_MODEL") or ""
            env = api_key_env or "OPENAI_API_KEY"
        if not self.model:
            raise ConfigError("no model given: pass model=... or set OPENAI_MODEL")
        self.api_key_env = env
        self._api_key = api_key if api_key is not None else os.environ.get(env)
        self.headers = dict(headers or {})
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.concurrency = int(concurrency)
        self.extra_body = dict(extra_body or {})
        self._proxy = _proxy_for(self.url)

    # -- identity ---------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The base URL (Azure: the resource endpoint plus deployment): the limiter and cache key."""
        if self.azure:
            return f"{self.base_url}/openai/deployments/{self.deployment}"
        return self.base_url

    @property
    def url(self) -> str:
        if self.azure:
            return f"{self.endpoint}/chat/completions?api-version={self.api_version}"
        return f"{self.base_url}/chat/completions"

    def options(self) -> dict[str, Any]:
        """The request options that change an answer (part of a judge cache key). Never the key."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
            "api_version": self.api_version,
        }

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"ChatClient(model={self.model!r}, endpoint={safe_url(self.endpoint)!r}, api_key=<{key}>)"

    async def preflight(self, *, role: str, elsewhere: str, timeout: float | None = None) -> None:
        """Raise :class:`ConfigError` when the endpoint (or its proxy) does not accept a connection.

        Only a TCP connection is opened, so this costs no tokens; a wrong key or model is reported per call.

        Args:
            role: who uses the endpoint (``"judge"``, ``"agent"``), named in the message.
            elsewhere: how to point it at another server (``"base_url=... or --judge-base-url"``).
            timeout: seconds to wait for the connection (default :data:`PREFLIGHT_TIMEOUT`).

        Example:
            >>> await client.preflight(role="judge", elsewhere="base_url=...")
        """
        hint = (
            "check the Azure endpoint (azure_endpoint=... or AZURE_OPENAI_ENDPOINT) and the network"
            if self.azure
            else f"start the server, or point the {role} elsewhere ({elsewhere})"
        )
        await require_reachable(
            self.endpoint,
            what=f"{role} endpoint",
            hint=hint,
            timeout=PREFLIGHT_TIMEOUT if timeout is None else timeout,
            proxy=self._proxy,
        )

    # -- calls ------------------------------------------------------------------------------------

    def _request_headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            if self.azure:
                h["api-key"] = self._api_key
            else:
                h["Authorization"] = f"Bearer {self._api_key}"
        h.update(self.headers)
        return h

    def _body(self, messages: Sequence[Mapping[str, Any]], overrides: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body.update(self.extra_body)
        body.update(overrides)
        return body

    def _wait(self, attempt: int) -> float:
        # Exponential backoff with "equal jitter": half fixed, half random, capped.
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base / 2 + random.uniform(0, base / 2)

    async def complete(self, messages: str | Sequence[Mapping[str, Any]], **overrides: Any) -> ChatReply:
        """Send one chat-completions request, retrying what is worth retrying.

        Args:
            messages: a prompt string (sent as one user message) or a list of ``{role, content}`` dicts.
            **overrides: request fields that replace the client's defaults for this call.

        Returns:
            The first choice's text, the usage and the model.

        Raises:
            ChatError: a non-retryable HTTP error, or retries exhausted (``transient=True``).

        Example:
            >>> reply = await ChatClient("m", base_url=url).complete("hi")
        """
        import aiohttp

        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        payload = json.dumps(self._body(messages, overrides))
        headers = self._request_headers()
        session = await _session()
        limiter = limiter_for(self.endpoint, initial=self.concurrency)
        timeout = aiohttp.ClientTimeout(total=self.timeout)
        last = ""
        status: int | None = None
        attempts = self.retries + 1
        for attempt in range(attempts):
            wait: float | None = None
            async with limiter.slot() as started:
                t0 = time.perf_counter()
                try:
                    async with session.post(
                        self.url, data=payload, headers=headers, timeout=timeout, proxy=self._proxy
                    ) as resp:
                        status = resp.status
                        raw = await resp.read()
                        if status == 200:
                            reply = self._parse(raw, t0, attempt + 1)
                            limiter.on_success()
                            _LEARNED[self.endpoint.rstrip("/")] = limiter.limit
                            return reply
                        snippet = _scrub(_snippet(raw), self._api_key)
                        if status == 429:
                            limiter.on_rate_limited(started)
                            _LEARNED[self.endpoint.rstrip("/")] = limiter.limit
                            wait = parse_retry_after(resp.headers.get("Retry-After"))
                            last = f"HTTP 429 rate limited: {snippet}"
                        elif status >= 500 or status == 408:
                            # A 503 may say when to come back; otherwise exponential backoff.
                            wait = parse_retry_after(resp.headers.get("Retry-After"))
                            last = f"HTTP {status}: {snippet}"
                        else:
                            raise ChatError(
                                f"chat completion failed at {self._where()}: HTTP {status}: {snippet}",
                                status=status,
                                transient=False,
                                attempts=attempt + 1,
                            )
                except (asyncio.TimeoutError, aiohttp.ServerTimeoutError):
                    status = None
                    last = f"timed out after {self.timeout:g} s"
                except aiohttp.ClientError as exc:
                    status = None
                    last = f"connection failed: {type(exc).__name__}: {_scrub(str(exc), self._api_key)}"
            if attempt + 1 >= attempts:
                break
            # The slot is released while we wait, so other calls (and other clients) can proceed.
            await asyncio.sleep(min(self.max_backoff, wait) if wait is not None else self._wait(attempt))
        raise ChatError(
            f"chat completion failed at {self._where()} after {attempts} attempt(s): {last}",
            status=status,
            transient=True,
            attempts=attempts,
        )

    def _where(self) -> str:
        # Messages reach results and logs: never the user:password of a gateway URL.
        return f"{safe_url(self.endpoint)} (model {self.model})"

    def _parse(self, raw: bytes, t0: float, attempts: int) -> ChatReply:
        try:
            data = json.loads(raw)
            message = data["choices"][0]["message"]
            if not isinstance(message, dict):  # a proxy's own shape ({"message": "..."}): not a chat answer
                raise TypeError("message is not an object")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(
                f"chat completion at {self._where()} returned an unexpected body: {_scrub(_snippet(raw), self._api_key)}",
                status=200,
                transient=False,
                attempts=attempts,
            ) from exc
        content = message.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return ChatReply(
            text=content or "",
            usage=dict(usage) if isinstance(usage := data.get("usage"), dict) else {},
            model=data.get("model") or self.model,
            latency_ms=(time.perf_counter() - t0) * 1000,
            attempts=attempts,
        )


def _proxy_for(url: str) -> str | None:
    """The proxy for ``url`` from HTTP(S)_PROXY / NO_PROXY, resolved once per client; never for loopback."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if host in ("127.0.0.1", "localhost", "::1") or urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _snippet(raw: bytes, limit: int = 300) -> str:
    text = raw.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."


def _scrub(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text
