"""What every HTTP caller of evalnb shares (chat client, HTTP agent): URLs fit for messages, ``Retry-After``,
the start-up reachability probe and the proxy of a URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import time
from typing import Any

from evalnb._caps import MAX_BODY
from evalnb._secrets import safe_url
from evalnb.errors import ConfigError

__all__ = [
    "PREFLIGHT_TIMEOUT",
    "parse_retry_after",
    "probe",
    "proxy_for",
    "read_body",
    "require_reachable",
    "safe_url",
]

PREFLIGHT_TIMEOUT = 5.0
"""Seconds a start-up reachability probe waits for a TCP connection before it calls the endpoint unreachable."""


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110 10.2.3).

    Example::

        parse_retry_after("1.5")
        # 1.5
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
        # 10.0
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


async def read_body(resp: Any, limit: int = MAX_BODY) -> tuple[bytes, bool]:
    """An HTTP answer's body, at most ``limit`` bytes, and whether there was more (the rest is never read: a
    200 MB answer costs ``limit`` bytes of memory, not 200 MB; the connection is closed instead of reused).

    Example::

        async with session.post(url, json=body) as resp:
            raw, cut = await read_body(resp)
    """
    buf = bytearray()
    async for chunk in resp.content.iter_chunked(64 * 1024):
        room = limit - len(buf)
        if len(chunk) > room:
            buf += chunk[:room]
            return bytes(buf), True
        buf += chunk
    return bytes(buf), False


async def probe(url: str, *, timeout: float = PREFLIGHT_TIMEOUT, proxy: str | None = None) -> str | None:
    """Whether a TCP connection to ``url``'s host and port (or to ``proxy``'s) opens within ``timeout``.

    Only the connection is tried, no HTTP request: an endpoint that answers at all counts as reachable, and a
    wrong key or model is reported later, per call, with the server's own message.

    Returns:
        ``None`` when the connection opened, else a short reason (``"connection refused"``, ...).

    Example::

        await probe("http://127.0.0.1:9/v1", timeout=1.0)
        # 'connection refused'
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

    Example::

        await require_reachable("http://127.0.0.1:9/v1", what="judge endpoint", hint="start the server")
        # Traceback (most recent call last):
        # evalnb.errors.ConfigError: judge endpoint http://127.0.0.1:9/v1 is not reachable: connection refused; ...
    """
    reason = await probe(url, timeout=timeout, proxy=proxy)
    if reason is None:
        return
    via = f" through the proxy {safe_url(proxy)}" if proxy else ""
    raise ConfigError(f"{what} {safe_url(url)} is not reachable{via}: {reason}; {hint}", code="UNREACHABLE")


def proxy_for(url: str) -> str | None:
    """The proxy for ``url`` from HTTP(S)_PROXY / NO_PROXY, resolved once per client; never for loopback."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if host in ("127.0.0.1", "localhost", "::1") or urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(parts.scheme)
