"""A lean async client for OpenAI-compatible chat completions (OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp).

Failure handling (judges and agents must survive what real endpoints do):

* HTTP 429 honours ``Retry-After`` (seconds or an HTTP date) and halves the endpoint's concurrency (AIMD);
* 5xx, 408, timeouts and dropped connections are retried with exponential backoff and jitter
  (:func:`evalnb._retry.backoff`; a server's ``Retry-After`` is a lower bound, capped by ``max_backoff``);
* other 4xx fail at once (a wrong model name or key does not get better by retrying);
* the API key never appears in a ``repr``, an exception or a log line.

The official ``openai`` package is not needed (it is only compared against in the benchmarks).

Example::

    client = ChatClient("gpt-4o-mini", base_url="http://127.0.0.1:11434/v1")
    reply = await client.complete("Say hi")
    reply.text, reply.usage, reply.model
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalnb._caps import MAX_ANSWER, MAX_BODY, cap, note
from evalnb._numbers import count, seconds
from evalnb._retry import backoff as retry_wait
from evalnb._secrets import scrub, url_secrets
from evalnb.chat._limiter import learn, limiter_for
from evalnb.chat._net import (
    PREFLIGHT_TIMEOUT,
    parse_retry_after,
    proxy_for,
    require_reachable,
    safe_url,
    send,
)
from evalnb.chat._session import transport_for
from evalnb.chat._wire import _WireError
from evalnb.errors import ChatError, ConfigError

__all__ = ["DEFAULT_AZURE_API_VERSION", "DEFAULT_BASE_URL", "ChatClient", "ChatReply", "decoding_note"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AZURE_API_VERSION = "2024-10-21"


@dataclass(frozen=True)
class ChatReply:
    """One chat-completions answer.

    Attributes:
        text: the first choice's message content (``""`` when the server sent none).
        usage: token usage as the server reported it (``prompt_tokens``, ``completion_tokens`` ...).
        model: the model name the server reported, else the one asked for.
        latency_ms: wall time of the successful attempt.
        attempts: attempts made, including the successful one.
        truncated: True when the answer was cut (its head kept, ending in a note): more than
            ``MAX_ANSWER`` characters of content, or a body over ``MAX_BODY`` bytes.
        logprobs: when the request asked for them (``logprobs=True``) and the server sent them, one entry
            per token of the answer: ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}``
            (OpenAI's ``choices[0].logprobs.content``; the older ``tokens`` / ``top_logprobs`` form is
            converted to it); None otherwise.
        tool_calls: the first choice's ``message.tool_calls`` as the server sent them (the calls the model asks
            for; nothing is executed here).
        replaced: how many byte sequences of the body were not UTF-8 and became U+FFFD (the answer is kept, as
            the HTTP agent keeps one; :attr:`note` says so).
    """

    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    latency_ms: float = 0.0
    attempts: int = 1
    truncated: bool = False
    logprobs: list[dict[str, Any]] | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    replaced: int = 0

    @property
    def note(self) -> str | None:
        """What a reason should say about the answer's bytes (None: they were all UTF-8)."""
        return decoding_note(self.replaced)


def decoding_note(replaced: int) -> str | None:
    """``"N invalid UTF-8 byte sequence(s) in the answer were replaced by U+FFFD"``, or None for 0."""
    if not replaced:
        return None
    return f"{replaced} invalid UTF-8 byte sequence(s) in the answer were replaced by U+FFFD"


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
        headers: extra HTTP headers (e.g. an organisation).
        secret_headers: headers whose values are secret (a gateway token): sent like ``headers``, scrubbed from
            every error (with the API key and the URL's password and query values), never in a ``repr``.
        temperature: sampling temperature, 0 by default (judges should be as repeatable as possible).
        max_tokens: completion token cap, if any.
        timeout: seconds per attempt.
        retries: retries after the first attempt for 429, 5xx, timeouts and connection errors.
        backoff: base of the exponential backoff in seconds (``backoff * 2**attempt``, with jitter).
        max_backoff: cap of one wait, including a server's ``Retry-After``.
        concurrency: initial concurrency limit of this endpoint (adapted by AIMD afterwards).
        extra_body: extra JSON fields sent with every request (``seed``, ``response_format`` ...).

    Example::

        client = ChatClient("llama3.1", base_url="http://127.0.0.1:11434/v1")
        (await client.complete([{"role": "user", "content": "2+2?"}])).text
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
        secret_headers: Mapping[str, str] | None = None,
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
        self.deployment: str | None
        self.api_version: str | None
        if azure_endpoint is not None:
            env = self._azure(azure_endpoint, model, deployment, api_version, api_key_env)
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
        self._secret_headers = {str(k): str(v) for k, v in (secret_headers or {}).items()}
        # Everything a server's error body may echo back that must not reach a reason, a report or the store.
        self._secrets = [self._api_key, *self._secret_headers.values(), *url_secrets(self.base_url)]
        self.temperature = temperature
        self._limits(max_tokens, timeout, retries, backoff, max_backoff, concurrency)
        self.extra_body = dict(extra_body or {})
        self._check_one_authorization(given_key=api_key is not None)
        self._proxy = proxy_for(self.url)

    def _azure(
        self,
        endpoint: str,
        model: str | None,
        deployment: str | None,
        api_version: str | None,
        api_key_env: str | None,
    ) -> str:
        """An Azure OpenAI resource: its deployment, API version and endpoint; returns the key's variable."""
        if not deployment:
            raise ConfigError("an Azure OpenAI client needs deployment=NAME")
        self.deployment = deployment
        self.api_version = api_version or os.environ.get("OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
        self.base_url = endpoint.rstrip("/")
        self.model = model or deployment
        return api_key_env or "AZURE_OPENAI_API_KEY"

    def _limits(
        self,
        max_tokens: int | None,
        timeout: float,
        retries: int,
        backoff: float,
        max_backoff: float,
        concurrency: int,
    ) -> None:
        # evalnb._numbers: the one rule for durations and counts (a NaN timeout would be no timeout at all)
        self.max_tokens = count("max_tokens", max_tokens, minimum=1, none=True)
        self.timeout = float(seconds("timeout", timeout) or 0.0)
        self.retries = int(count("retries", retries) or 0)
        self.backoff = float(seconds("backoff", backoff, zero=True) or 0.0)
        self.max_backoff = float(seconds("max_backoff", max_backoff, zero=True) or 0.0)
        self.concurrency = int(count("concurrency", concurrency, minimum=1) or 1)

    def _check_one_authorization(self, *, given_key: bool) -> None:
        """A URL's ``user:password@`` is sent as HTTP Basic auth in the Authorization header, which an API key
        (``Bearer``) or an Authorization header of one's own needs too: every call would fail, so refuse at
        start-up."""
        import urllib.parse

        parts = urllib.parse.urlsplit(self.base_url)
        if parts.username is None and parts.password is None:
            return
        if self._api_key and not self.azure:
            where = "given as api_key" if given_key else f"from ${self.api_key_env}"
            clash = f"an API key is set ({where})"
        elif any(k.lower() == "authorization" for k in [*self.headers, *self._secret_headers]):
            clash = "an Authorization header is given"
        else:
            return
        raise ConfigError(
            f"the endpoint {safe_url(self.base_url)} has a user name and password in its URL and {clash}: both "
            "go in the one Authorization header; remove user:password@ from the URL, or send no key "
            '(api_key="" or an unset api_key_env)'
        )

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

        Example::

            await client.preflight(role="judge", elsewhere="base_url=...")
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
        h.update(self._secret_headers)
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

    async def complete(self, messages: str | Sequence[Mapping[str, Any]], **overrides: Any) -> ChatReply:
        """Send one chat-completions request, retrying what is worth retrying.

        Args:
            messages: a prompt string (sent as one user message) or a list of ``{role, content}`` dicts.
            **overrides: request fields that replace the client's defaults for this call.

        Returns:
            The first choice's text, the usage and the model.

        Raises:
            ChatError: a non-retryable HTTP error, or retries exhausted (``transient=True``).

        Example::

            reply = await ChatClient("m", base_url=url).complete("hi")
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        payload = json.dumps(self._body(messages, overrides))
        headers = self._request_headers()
        shared = await transport_for(self._proxy)
        limiter = limiter_for(self.endpoint, initial=self.concurrency)
        last = ""
        status: int | None = None
        attempts = self.retries + 1
        for attempt in range(attempts):
            wait: float | None = None
            async with limiter.slot() as started:
                t0 = time.perf_counter()
                try:
                    # Redirects are followed; the key and every configured header stay with their origin.
                    sent = await send(
                        shared, "POST", self.url, data=payload, headers=headers, timeout=self.timeout
                    )
                    resp = sent.response
                    status = resp.status
                    raw, cut = resp.body, resp.cut
                    if status == 200:
                        reply = self._parse(raw, t0, attempt + 1, cut=cut)
                        limiter.on_success()
                        learn(self.endpoint, limiter.limit)
                        return reply
                    snippet = scrub(_snippet(raw), self._secrets) + sent.note()
                    if status == 429:
                        limiter.on_rate_limited(started)
                        learn(self.endpoint, limiter.limit)
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
                except asyncio.TimeoutError:
                    status = None
                    last = f"timed out after {self.timeout:g} s"
                except _WireError as exc:
                    status = None
                    last = f"connection failed: {scrub(str(exc), self._secrets)}"
            if attempt + 1 >= attempts:
                break
            # The slot is released while we wait, so other calls (and other clients) can proceed.
            await asyncio.sleep(retry_wait(attempt, base=self.backoff, cap=self.max_backoff, hint=wait))
        raise ChatError(
            f"chat completion failed at {self._where()} after {attempts} attempt(s): {last}",
            status=status,
            transient=True,
            attempts=attempts,
        )

    def _where(self) -> str:
        # Messages reach results and logs: never the user:password of a gateway URL.
        return f"{safe_url(self.endpoint)} (model {self.model})"

    def _parse(self, raw: bytes, t0: float, attempts: int, *, cut: bool = False) -> ChatReply:
        if cut:
            return self._head(raw, t0, attempts)
        replaced = 0
        try:
            try:
                data = json.loads(raw)  # bytes: UTF-8, -16 or -32, as JSON allows
            except UnicodeDecodeError:
                # One bad byte does not make the answer unusable: decoded with U+FFFD, as the HTTP agent does.
                text = raw.decode("utf-8", "replace")
                replaced = max(1, text.count("\ufffd") - raw.count("\ufffd".encode()))
                data = json.loads(text)
            message = data["choices"][0]["message"]
            if not isinstance(message, dict):  # a proxy's own shape ({"message": "..."}): not a chat answer
                raise TypeError("message is not an object")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatError(
                f"chat completion at {self._where()} returned an unexpected body: {scrub(_snippet(raw), self._secrets)}",
                status=200,
                transient=False,
                attempts=attempts,
            ) from exc
        content = message.get("content")
        if isinstance(content, list):  # some servers send content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        calls = message.get("tool_calls")
        text, truncated = cap(content if isinstance(content, str) else "", "the answer")
        return ChatReply(
            text=text,
            usage=dict(usage) if isinstance(usage := data.get("usage"), dict) else {},
            model=data.get("model") or self.model,
            latency_ms=(time.perf_counter() - t0) * 1000,
            attempts=attempts,
            truncated=truncated,
            logprobs=token_logprobs(data["choices"][0].get("logprobs")),
            tool_calls=tuple(c for c in calls if isinstance(c, dict)) if isinstance(calls, list) else (),
            replaced=replaced,
        )

    def _head(self, raw: bytes, t0: float, attempts: int) -> ChatReply:
        """A body cut at ``MAX_BODY`` bytes is no JSON any more: the head of its message content is kept."""
        head = _content_head(raw)
        if head is None:
            raise ChatError(
                f"chat completion at {self._where()} answered more than {MAX_BODY} bytes, and its first bytes "
                f"hold no message content: {scrub(_snippet(raw), self._secrets)}",
                status=200,
                transient=False,
                attempts=attempts,
            )
        return ChatReply(
            text=head[:MAX_ANSWER] + note("the answer", MAX_BODY, None, unit="bytes of the response body"),
            model=self.model,
            latency_ms=(time.perf_counter() - t0) * 1000,
            attempts=attempts,
            truncated=True,
        )


def _content_head(raw: bytes) -> str | None:
    """The start of the first ``"content": "..."`` string of a chat-completions body cut short, or None."""
    import re

    m = re.search(rb'"content"\s*:\s*"', raw)
    if m is None:
        return None
    rest = raw[m.end() :].decode("utf-8", "ignore")  # a character cut in half is dropped
    # An escape cut in half ("\\", "\\u00"): drop it. An even run of backslashes is whole escapes.
    tail = re.search(r"(\\+)(u[0-9a-fA-F]{0,3})?$", rest)
    if tail is not None and len(tail.group(1)) % 2:
        rest = rest[: tail.start() + len(tail.group(1)) - 1]
    try:
        # raw_decode reads one JSON string and stops at its closing quote, wherever that is.
        text, _ = json.JSONDecoder().raw_decode('"' + rest + '"')
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def token_logprobs(raw: Any) -> list[dict[str, Any]] | None:
    """A choice's ``logprobs`` as one list of ``{"token", "logprob", "top_logprobs"}`` per token, or None.

    OpenAI, Azure, vLLM, llama.cpp and Ollama send ``{"content": [{"token", "logprob", "top_logprobs":
    [...]}, ...]}``; some servers still send the completions form ``{"tokens": [...], "token_logprobs":
    [...], "top_logprobs": [{token: logprob}, ...]}``. Anything else, or entries that are not numbers, is
    treated as no logprobs at all (the answer is still used, without its distribution).
    """
    if not isinstance(raw, dict):
        return None
    content = raw.get("content")
    out: list[dict[str, Any]] = []
    try:
        if isinstance(content, list):
            for entry in content:
                top = [
                    {"token": str(alt["token"]), "logprob": float(alt["logprob"])}
                    for alt in entry.get("top_logprobs") or []
                ]
                out.append(
                    {"token": str(entry["token"]), "logprob": float(entry["logprob"]), "top_logprobs": top}
                )
            return out
        tokens, logprobs, tops = raw.get("tokens"), raw.get("token_logprobs"), raw.get("top_logprobs")
        if isinstance(tokens, list) and isinstance(logprobs, list) and len(tokens) == len(logprobs):
            tops = tops if isinstance(tops, list) and len(tops) == len(tokens) else [None] * len(tokens)
            for token, lp, top in zip(tokens, logprobs, tops, strict=True):
                alts = [{"token": str(k), "logprob": float(v)} for k, v in (top or {}).items()]
                out.append({"token": str(token), "logprob": float(lp), "top_logprobs": alts})
            return out
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return None


def _snippet(raw: bytes, limit: int = 300) -> str:
    text = raw.decode("utf-8", "replace").strip().replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."
