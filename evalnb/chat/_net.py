"""What every HTTP caller of evalnb shares (chat client, HTTP agent): URLs fit for messages, ``Retry-After``,
the start-up reachability probe, the proxy of a URL, and requests that follow redirects without carrying
secrets to another origin.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalnb._secrets import safe_url
from evalnb.chat._wire import DEFAULT_PORTS, Answer, _WireError, tls_context
from evalnb.errors import ConfigError

__all__ = [
    "MAX_REDIRECTS",
    "PREFLIGHT_TIMEOUT",
    "Sent",
    "origin_of",
    "parse_retry_after",
    "probe",
    "proxy_for",
    "require_reachable",
    "safe_url",
    "send",
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
        port = parts.port or DEFAULT_PORTS[parts.scheme]
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

    What a reachable endpoint's calls need is loaded here, at start-up, rather than by the first call (TLS's
    certificates for an https endpoint, aiohttp for calls through a proxy): a run begins importing its frames'
    libraries in a thread as its case runs start (results/_warm.py), and the two sharing one interpreter lock
    would delay every first request.

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
        if proxy is not None:
            import aiohttp  # noqa: F401  (see above)
        elif url.lower().startswith("https:"):
            tls_context()
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


# --------------------------------------------------------------------------------------------------
# Redirects: followed, without the caller's headers once they lead to another origin
# --------------------------------------------------------------------------------------------------

MAX_REDIRECTS = 10
"""Redirects one request follows before it fails."""

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Headers that say what the body is and what answer is wanted: the only ones kept on another origin.
_NEUTRAL = frozenset({"content-type", "accept"})


def origin_of(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the default port filled in: two URLs share an origin when these match.

    Example::

        origin_of("https://API.example.com/v1") == origin_of("https://api.example.com:443/other")
        # True
    """
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or DEFAULT_PORTS.get(scheme)


@dataclass
class Sent:
    """The final answer of :func:`send`.

    Attributes:
        response: the final :class:`~evalnb.chat._wire.Answer`, read whole (``body``, and ``cut`` when it was
            longer than the transports read: ``MAX_BODY`` bytes).
        url: the URL that answered (the request's own unless it was redirected).
        elsewhere: the first URL of another origin the request was redirected to (shown without secrets), which
            was sent none of the caller's headers; None when every hop stayed on the request's origin.
    """

    response: Answer
    url: str
    elsewhere: str | None = None

    def note(self) -> str:
        """`` (redirected to another origin, URL, which was sent none of the configured headers)``, or ``""``."""
        if self.elsewhere is None:
            return ""
        return f" (redirected to another origin, {self.elsewhere}, which was sent none of the configured headers)"


async def send(
    transport: Any,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str],
    data: str | bytes | None = None,
    timeout: float,
    max_redirects: int = MAX_REDIRECTS,
) -> Sent:
    """Send one request, following redirects as a browser does, and give the final answer, read whole.

    Secrets stay with their origin: once a redirect leads to another origin (scheme, host or port), every
    header the caller gave is dropped (an API key's ``Authorization``, Azure's ``api-key``, gateway tokens,
    plain extra headers), as browsers and ``requests`` drop ``Authorization``; only ``Content-Type`` and
    ``Accept`` go on, and they do not come back if a later redirect returns to the first origin (nor does the
    URL's ``user:password`` go to another origin). 301/302 of a POST and 303 continue as a GET without the body;
    307 and 308 repeat the request. ``timeout`` covers the whole chain.

    Args:
        transport: what carries the request (:func:`evalnb.chat._session.transport_for`): the loop's pool of
            direct connections, or its aiohttp session through a proxy.

    Raises:
        _WireError: a connection failure, a redirect to a URL that is not http(s), or more than
            ``max_redirects`` redirects.
        asyncio.TimeoutError: no final answer within ``timeout``.

    Example::

        sent = await send(pool, "POST", url, headers={"Authorization": "Bearer k"}, data=body, timeout=60)
        sent.response.status, sent.response.body, sent.response.cut
    """
    started = asyncio.get_running_loop().time()
    resp = await transport.request(method, url, headers=headers, data=data, timeout=timeout)
    if resp.status in _REDIRECTS and resp.headers.get("Location"):
        # Only a redirect needs the bookkeeping (the URL's origin, a copy of the headers).
        first = (method, url, headers, data)
        return await _follow(transport, resp, first, deadline=started + timeout, max_redirects=max_redirects)
    return Sent(resp, url)


async def _follow(
    transport: Any,
    resp: Answer,
    first: tuple[str, str, Mapping[str, str], str | bytes | None],
    *,
    deadline: float,
    max_redirects: int,
) -> Sent:
    """The redirects after the first answer ``resp`` (a redirect) of the request ``first``, to the final answer."""
    import urllib.parse

    loop = asyncio.get_running_loop()
    method, url, headers, data = first
    home = origin_of(url)
    current = dict(headers)
    elsewhere: str | None = None
    for hop in range(max_redirects + 1):  # each redirect answered, the first one's too
        target = urllib.parse.urljoin(url, resp.headers["Location"].strip())
        if urllib.parse.urlsplit(target).scheme.lower() not in ("http", "https"):
            raise _WireError(f"InvalidURL: redirected to {safe_url(target)!r}, which is not an http(s) URL")
        if (resp.status == 303 and method != "HEAD") or (resp.status in (301, 302) and method == "POST"):
            method, data = "GET", None
            current = {
                k: v for k, v in current.items() if k.lower() not in ("content-type", "content-length")
            }
        if elsewhere is None and origin_of(target) != home:
            elsewhere = safe_url(target)
            current = {k: v for k, v in current.items() if k.lower() in _NEUTRAL}
        url = target
        if hop == max_redirects:
            break
        timeout = max(deadline - loop.time(), 0.001)
        resp = await transport.request(method, url, headers=current, data=data, timeout=timeout)
        if resp.status not in _REDIRECTS or not resp.headers.get("Location"):
            return Sent(resp, url, elsewhere)
    raise _WireError(f"TooManyRedirects: more than {max_redirects} redirects")
