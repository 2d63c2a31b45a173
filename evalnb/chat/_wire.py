"""evalnb's own HTTP/1.1 client: the connections every direct call goes over (chat endpoints, HTTP agents).

A run spends most of its time waiting on answers, and on a small machine the client's own work is what stands
between the calls: aiohttp took ~0.1 s to import and ~150 us of CPU per call (its request and response objects,
cookie jar, tracing and timers), three times what a call needs. This client does what evalnb's calls need and
no more: one request, its whole answer read into memory up to a cap, keep-alive connections pooled per origin
and event loop, TLS with the system's certificates, gzip and deflate answers. Calls through a proxy go through
aiohttp instead (evalnb/chat/_session.py), which speaks to proxies.

What it does on the wire (README.md, Agents, says it for users):

* every answer is read whole before it is handed back, at most ``limit`` bytes of its body: a longer one is cut
  there (``Answer.cut``) and its connection closed rather than read to its end;
* the body's length comes from ``Content-Length``, chunked transfer coding, or the connection's end;
* a kept-alive connection the server closed while it sat idle is noticed when the request finds it closed
  before any byte of an answer: the request goes once more over a new connection;
* ``timeout`` covers the whole exchange, the connection's opening included, and raises ``TimeoutError``;
* everything else that keeps an answer from arriving (refused, reset, a name that does not resolve, a
  certificate that does not verify, an answer that is not HTTP) raises :class:`_WireError`, whose text names
  what happened.

Example::

    pool = Pool()
    answer = await pool.request("POST", "http://127.0.0.1:8000/v1/chat/completions",
                                headers={"Content-Type": "application/json"}, data="{}", timeout=30)
    answer.status, answer.headers.get("content-type"), answer.body
    await pool.close()
"""

from __future__ import annotations

import asyncio
import base64
import functools
import urllib.parse
from dataclasses import dataclass
from typing import Any

from evalnb._caps import MAX_BODY
from evalnb._secrets import safe_url
from evalnb._version import __version__

__all__ = ["DEFAULT_PORTS", "Answer", "Headers", "Pool", "tls_context"]

DEFAULT_PORTS = {"http": 80, "https": 443}
"""The port of a URL that names none, per scheme."""

_USER_AGENT = f"evalnb/{__version__}"
_MAX_HEAD = 64 * 1024  # bytes of status line and headers; a longer head is no answer evalnb can use
_IDLE_PER_ORIGIN = 512  # idle connections kept per origin (the endpoint's limiter decides how many are busy)
_NO_BODY = frozenset({204, 304})
_OURS = frozenset({"content-length", "transfer-encoding", "connection"})  # framing is the client's to say


class _WireError(Exception):
    """A request that got no HTTP answer: the connection could not be opened or was lost, or what came back was
    not an HTTP/1.x answer. Its text starts with what happened (``ConnectionRefusedError: ...``).

    A private signal, as a parser's are (evalnb/errors.py): its callers (the chat client, the HTTP agent) turn
    it into a ChatError or a transient agent failure; it never reaches a user."""


class Headers(dict[str, str]):
    """An answer's headers, found in any case (kept lower-case; a repeated header's values joined by ``", "``)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


@dataclass(slots=True)
class Answer:
    """One HTTP answer, read whole.

    Attributes:
        status: the status code.
        headers: the headers, found in any case.
        body: the body (decoded from gzip or deflate when the server sent it so), at most the request's
            ``limit`` bytes.
        cut: True when the body was longer than ``limit`` and only its head is kept.
    """

    status: int
    headers: Headers
    body: bytes
    cut: bool = False

    @property
    def charset(self) -> str | None:
        """The ``charset`` of its ``Content-Type``, or None."""
        for param in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                return value.strip().strip('"') or None
        return None


@dataclass(frozen=True, slots=True)
class _Target:
    """What a URL says about where a request goes: the pool's key, the ``Host`` header, the request target."""

    origin: tuple[str, str, int]
    host_header: str
    path: str
    auth: str | None  # a Basic Authorization header from the URL's user:password, if it has one


_TARGETS: dict[str, _Target] = {}


def _target(url: str) -> _Target:
    """The parts of ``url`` a request needs (cached: every call of a run goes to the same few URLs)."""
    found = _TARGETS.get(url)
    if found is not None:
        return found
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise _WireError(f"InvalidURL: {exc}: {safe_url(url)}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise _WireError(f"InvalidURL: not an http(s) URL with a host: {safe_url(url)}")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise _WireError(f"InvalidURL: {exc}: {safe_url(url)}") from None
    shown = f"[{host}]" if ":" in host else host
    host_header = shown if port == DEFAULT_PORTS[scheme] else f"{shown}:{port}"
    path = urllib.parse.quote(parts.path or "/", safe="/%:@!$&'()*+,;=~")
    if parts.query:
        path += "?" + urllib.parse.quote(parts.query, safe="/%:@!$&'()*+,;=~?")
    auth = None
    if parts.username is not None or parts.password is not None:
        pair = f"{urllib.parse.unquote(parts.username or '')}:{urllib.parse.unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    found = _Target((scheme, host.lower(), port), host_header, path, auth)
    if len(_TARGETS) > 1024:  # URLs computed per call (query strings): keep the cache small
        _TARGETS.clear()
    _TARGETS[url] = found
    return found


def _request_bytes(method: str, target: _Target, headers: Any, body: bytes | None) -> bytes:
    """The request's head and body, as sent."""
    named = set()
    lines = [f"{method} {target.path} HTTP/1.1\r\n"]
    for name, value in headers.items():
        name, value = str(name), str(value)
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value or ":" in name:
            raise ValueError(f"the HTTP header {name!r} holds a line break or a colon in its name")
        low = name.lower()
        if low in _OURS:
            continue
        named.add(low)
        lines.append(f"{name}: {value}\r\n")
    if "host" not in named:
        lines.append(f"Host: {target.host_header}\r\n")
    if "user-agent" not in named:
        lines.append(f"User-Agent: {_USER_AGENT}\r\n")
    if "accept-encoding" not in named:
        lines.append("Accept-Encoding: gzip, deflate\r\n")
    if target.auth is not None and "authorization" not in named:
        lines.append(f"Authorization: {target.auth}\r\n")
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body or b'')}\r\n")
    lines.append("\r\n")
    head = "".join(lines).encode("utf-8")
    return head + body if body else head


@functools.cache
def tls_context() -> Any:
    """The TLS settings of every https connection (the system's certificates, or the file ``SSL_CERT_FILE``
    names; made once per process: loading them takes a few tens of milliseconds)."""
    import ssl

    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


class _Stale(Exception):
    """A reused connection found closed before any byte of the answer arrived."""


class _Connection(asyncio.Protocol):
    """One connection, carrying one exchange at a time; its answer is parsed as its bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reused = False
        self._waiter: asyncio.Future[tuple[Answer, bool]] | None = None
        self._reader: _Reader | None = None

    # -- asyncio's callbacks ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        if reader is None:  # bytes nobody asked for: the connection cannot carry another exchange
            self.close()
            return
        try:
            done = reader.feed(data)
        except _WireError as exc:
            self._fail(exc)
            return
        except Exception as exc:  # bytes no rule above foresaw: still no answer, and said so
            self._fail(_WireError(f"BadHttpMessage: {type(exc).__name__}: {exc}"))
            return
        if done:
            self._answered(reader)

    def eof_received(self) -> bool:
        self._ended(None)
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended(exc)

    # -- the exchange ----------------------------------------------------------------------------

    async def exchange(self, payload: bytes, *, limit: int, head_only: bool) -> tuple[Answer, bool]:
        """Send ``payload`` and wait for its answer: ``(answer, whether the connection can carry another)``."""
        assert self.transport is not None
        self._waiter = asyncio.get_running_loop().create_future()
        self._reader = _Reader(limit, head_only)
        self.transport.write(payload)
        try:
            return await self._waiter
        except BaseException:
            self.close()  # cancelled or failed: an answer may still come, so nothing else may use it
            raise
        finally:
            self._waiter = self._reader = None

    def _answered(self, reader: _Reader) -> None:
        waiter = self._waiter
        self._reader = None
        reusable = reader.keep_alive and not reader.cut and not reader.rest and not self.closed
        if waiter is not None and not waiter.done():
            try:
                waiter.set_result((reader.answer(), reusable))
            except _WireError as exc:
                waiter.set_exception(exc)

    def _fail(self, exc: BaseException) -> None:
        waiter = self._waiter
        self._reader = None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _ended(self, exc: Exception | None) -> None:
        self.closed = True
        reader = self._reader
        if reader is None:
            return
        if reader.until_close:  # a body without a length ends with its connection
            reader.keep_alive = False
            self._answered(reader)
        elif not reader.started and self.reused:
            self._fail(_Stale())
        else:
            why = f"{type(exc).__name__}: {exc}" if exc else "the server closed the connection"
            self._fail(_WireError(f"ServerDisconnectedError: {why} before the answer was complete"))

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def expire(self) -> None:
        """The exchange's time is up: it raises TimeoutError, and the connection is dropped."""
        self._fail(asyncio.TimeoutError())
        if self.transport is not None:
            self.transport.abort()


class _Reader:
    """The answer of one exchange, parsed from its bytes as they arrive (status line, headers, body framed by
    Content-Length, chunked coding or the connection's end)."""

    __slots__ = (
        "_body",
        "_buf",
        "_chunk",
        "_head_only",
        "_in_head",
        "_left",
        "_limit",
        "cut",
        "headers",
        "keep_alive",
        "rest",
        "started",
        "status",
        "until_close",
    )

    def __init__(self, limit: int, head_only: bool) -> None:
        self._limit = limit
        self._head_only = head_only
        self._buf = b""
        self._body = bytearray()
        self._in_head = True
        # bytes of the body (or of the current chunk) still to come; chunked: -2 a CRLF, -3 the trailer
        self._left = 0
        self._chunk = False
        self.status = 0
        self.headers = Headers()
        self.keep_alive = False
        self.until_close = False
        self.started = False
        self.cut = False
        self.rest = b""

    def feed(self, data: bytes) -> bool:
        """Take the next bytes; True once the answer is complete (or cut at the limit)."""
        self.started = True
        if self._in_head:
            self._buf += data
            return self._head()
        if self._chunk:
            self._buf += data
            return self._chunks()
        return self._take(data)

    def _head(self) -> bool:
        while True:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > _MAX_HEAD:
                    raise _WireError(f"BadHttpMessage: an answer's head longer than {_MAX_HEAD} bytes")
                return False
            head, self._buf = self._buf[:end], self._buf[end + 4 :]
            self._parse_head(head)
            self._in_head = False
            if self.status >= 200 or self.status == 101:
                break
            self.headers = Headers()  # an interim answer (100 Continue ...): the real one follows
            self._in_head = True
        return self._framed()

    def _parse_head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not (code.isascii() and code.isdigit()):
            raise _WireError(f"BadHttpMessage: the answer is not HTTP/1.x: {lines[0][:80]!r}")
        self.status = int(code)
        headers = self.headers
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                continue
            name, value = name.strip().lower(), value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        connection = headers.get("connection", "").lower()
        self.keep_alive = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)

    def _framed(self) -> bool:
        """Decide how the body ends, then read what arrived with the head."""
        rest, self._buf = self._buf, b""
        if self._head_only or self.status in _NO_BODY or self.status < 200:
            self._left = 0
            self.rest = rest
            return True
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            self._chunk, self._left, self._buf = True, 0, rest
            return self._chunks()
        length = self.headers.get("content-length")
        if length is None:
            self.until_close, self._left = True, 1 << 62
        elif length.strip().isascii() and length.strip().isdigit():
            self._left = int(length)
        else:
            raise _WireError(f"BadHttpMessage: an invalid Content-Length {length[:40]!r}")
        return self._take(rest)

    def _take(self, data: bytes) -> bool:
        """Body bytes of a framed (or until-close) body; True when it is complete or over the limit."""
        if len(data) > self._left:
            data, self.rest = data[: self._left], data[self._left :]
        self._left -= len(data)
        if not self._body and self._left == 0 and len(data) <= self._limit:
            self._body = data  # type: ignore[assignment]  # the whole body in one piece: no copy
            return True
        self._body += data
        if len(self._body) > self._limit:
            self.cut = True
            return True
        return self._left == 0

    def _chunks(self) -> bool:
        """Chunked coding: sizes, data and the trailer, as far as the bytes go."""
        buf = self._buf
        while True:
            if self._left > 0:
                piece = buf[: self._left]
                buf = buf[len(piece) :]
                self._left -= len(piece)
                self._body += piece
                if len(self._body) > self._limit:
                    self.cut = True
                    return True
                if self._left:
                    self._buf = b""
                    return False
                self._left = -2  # the CRLF after the data is due
            line_end = buf.find(b"\r\n")
            if line_end < 0:
                if len(buf) > _MAX_HEAD:
                    raise _WireError("BadHttpMessage: a chunk size line too long")
                self._buf = buf
                return False
            line, buf = buf[:line_end], buf[line_end + 2 :]
            if self._left == -2:
                self._left = 0
                continue
            if self._left == -3:  # the trailer: its lines up to an empty one
                if not line:
                    self.rest = buf
                    return True
                continue
            size = line.split(b";", 1)[0].strip()
            try:
                self._left = int(size, 16)
            except ValueError:
                raise _WireError(f"BadHttpMessage: an invalid chunk size {size[:20]!r}") from None
            if self._left == 0:
                self._left = -3

    def answer(self) -> Answer:
        body = bytes(self._body)
        cut = self.cut
        if len(body) > self._limit:
            body = body[: self._limit]
        coding = self.headers.get("content-encoding", "").strip().lower()
        if coding in ("gzip", "x-gzip", "deflate") and body:
            body, over = _inflate(body, coding, self._limit)
            cut = cut or over
        return Answer(self.status, self.headers, body, cut)


def _inflate(body: bytes, coding: str, limit: int) -> tuple[bytes, bool]:
    """A gzip or deflate body decoded, at most ``limit`` bytes of it (and whether there was more)."""
    import zlib

    # deflate is zlib-wrapped by the standard and raw by some servers; gzip has its own header.
    for wbits in (31,) if coding != "deflate" else (15, -15):
        inflater = zlib.decompressobj(wbits)
        try:
            out = inflater.decompress(body, limit + 1)
        except zlib.error:
            continue
        if len(out) > limit:
            return out[:limit], True
        return out, False
    raise _WireError(f"ContentEncodingError: the body is not valid {coding}")


class Pool:
    """Keep-alive connections per origin for one event loop, and the requests sent over them.

    Example::

        answer = await Pool().request("GET", "http://127.0.0.1:8000/health", headers={}, timeout=5)
    """

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self.closed = False

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Any,
        data: str | bytes | None = None,
        timeout: float,
        limit: int = MAX_BODY,
    ) -> Answer:
        """Send one request and read its answer whole (at most ``limit`` bytes of body).

        Raises:
            _WireError: no HTTP answer (see the module's docstring); TimeoutError: none within ``timeout``.
        """
        target = _target(url)
        body = data.encode("utf-8") if isinstance(data, str) else data
        payload = _request_bytes(method, target, headers, body)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            conn = self._take(target.origin) or await self._connect(target, deadline - loop.time())
            timer = loop.call_at(deadline, conn.expire)
            try:
                answer, reusable = await conn.exchange(payload, limit=limit, head_only=method == "HEAD")
            except _Stale:
                continue  # closed while idle: once more, over a connection of its own
            finally:
                timer.cancel()
            if reusable and not self.closed:
                self._give_back(target.origin, conn)
            else:
                conn.close()
            return answer

    def _take(self, origin: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if not conn.closed and conn.transport is not None and not conn.transport.is_closing():
                conn.reused = True
                return conn
        return None

    def _give_back(self, origin: tuple[str, str, int], conn: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < _IDLE_PER_ORIGIN:
            idle.append(conn)
        else:
            conn.close()

    async def _connect(self, target: _Target, timeout: float) -> _Connection:
        scheme, host, port = target.origin
        loop = asyncio.get_running_loop()
        tls = tls_context() if scheme == "https" else None
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(
                    _Connection, host, port, ssl=tls, server_hostname=host if tls is not None else None
                ),
                max(timeout, 0.0),
            )
        except (asyncio.TimeoutError, TimeoutError):
            raise asyncio.TimeoutError() from None
        except OSError as exc:
            where = f"{host}:{port}"
            raise _WireError(f"{type(exc).__name__}: cannot connect to {where}: {exc}") from None
        return conn

    async def close(self) -> None:
        """Close the idle connections; connections in use close when their exchange ends."""
        self.closed = True
        idle, self._idle = self._idle, {}
        for conns in idle.values():
            for conn in conns:
                conn.close()
        await asyncio.sleep(0)  # let the transports run their close callbacks
