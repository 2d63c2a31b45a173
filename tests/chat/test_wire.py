"""evalnb's HTTP/1.1 client (evalnb/chat/_wire.py) against a real TCP server on 127.0.0.1 that answers with
scripted raw bytes: framing, keep-alive, connections closed by the server, timeouts, TLS."""

from __future__ import annotations

import asyncio
import gzip
import ssl
import subprocess
import zlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalnb.chat import _wire
from evalnb.chat._wire import Pool, _WireError


@dataclass
class Step:
    """One scripted answer: raw pieces written with ``gap`` seconds between them; then the connection is kept
    (default), closed (``close``), or left silent (``hang``). ``drop``: close without answering."""

    pieces: tuple[bytes, ...] = ()
    gap: float = 0.0
    close: bool = False
    hang: bool = False
    drop: bool = False


def ok(body: bytes = b"{}", *extra: str, status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class RawServer:
    """A real server on 127.0.0.1: each request (head and Content-Length body) is recorded and answered with the
    next :class:`Step`."""

    def __init__(self) -> None:
        self.steps: deque[Step] = deque()
        self.requests: list[tuple[int, bytes, bytes]] = []  # (connection number, head, body)
        self.connections = 0
        self.port = 0
        self._server: asyncio.base_events.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    def url(self, path: str = "/v1/x") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def script(self, *steps: Step | bytes) -> None:
        self.steps.extend(s if isinstance(s, Step) else Step((s,)) for s in steps)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                self.requests.append((number, head, body))
                step = self.steps.popleft()
                if step.drop:
                    break
                for piece in step.pieces:
                    writer.write(piece)
                    await writer.drain()
                    if step.gap:
                        await asyncio.sleep(step.gap)
                if step.hang:
                    await asyncio.sleep(3600)
                if step.close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        writer.close()


@pytest.fixture
async def server() -> AsyncIterator[RawServer]:
    async with RawServer() as s:
        yield s


async def get(pool: Pool, server: RawServer, method: str = "POST", **kw: object) -> _wire.Answer:
    kw.setdefault("headers", {"Content-Type": "application/json"})
    kw.setdefault("data", "{}" if method == "POST" else None)
    kw.setdefault("timeout", 5)
    return await pool.request(method, server.url(), **kw)  # type: ignore[arg-type]


async def test_answers_on_one_kept_alive_connection(server: RawServer) -> None:
    server.script(ok(b'{"a": 1}', "Content-Type: application/json; charset=utf-8"), ok(b"second"))
    pool = Pool()
    first = await get(pool, server)
    second = await get(pool, server, data='{"x": "é"}')
    assert (first.status, first.body, first.charset, first.cut) == (200, b'{"a": 1}', "utf-8", False)
    assert (
        first.headers["CONTENT-TYPE"]
        == first.headers.get("content-type")
        == "application/json; charset=utf-8"
    )
    assert second.body == b"second" and second.charset is None
    assert server.connections == 1
    head = server.requests[1][1].decode()
    assert head.startswith("POST /v1/x HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n" in head and "User-Agent: evalnb/" in head
    assert "Content-Length: 11\r\n" in head and server.requests[1][2] == '{"x": "é"}'.encode()
    await pool.close()


async def test_chunked_answers_arriving_a_byte_at_a_time(server: RawServer) -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n"
    )
    server.script(Step(tuple(bytes([b]) for b in raw)), ok(b"next"))
    pool = Pool()
    assert (await get(pool, server)).body == b"hello world"
    assert (await get(pool, server)).body == b"next"
    assert server.connections == 1  # the trailer read, the connection carried the next exchange
    await pool.close()


async def test_a_body_without_a_length_ends_with_the_connection(server: RawServer) -> None:
    server.script(Step((b"HTTP/1.0 200 OK\r\n\r\npart one, ", b"part two"), gap=0.02, close=True), ok(b"x"))
    pool = Pool()
    assert (await get(pool, server)).body == b"part one, part two"
    assert (await get(pool, server)).body == b"x"
    assert server.connections == 2
    await pool.close()


async def test_interim_answers_are_skipped_and_bodiless_answers_read_none(server: RawServer) -> None:
    server.script(
        b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"after"),
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n",  # the answer to a HEAD: a length, no body
        ok(b"last"),
    )
    pool = Pool()
    assert (await get(pool, server)).body == b"after"
    assert (await get(pool, server)).status == 204
    head = await get(pool, server, method="HEAD")
    assert (head.status, head.body) == (200, b"")
    assert (await get(pool, server)).body == b"last"
    assert server.connections == 1
    await pool.close()


@pytest.mark.parametrize(
    ("coding", "pack"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send it
    ],
)
async def test_compressed_answers_are_decoded(server: RawServer, coding: str, pack: object) -> None:
    text = b'{"choices": []}' * 100
    server.script(ok(pack(text), f"Content-Encoding: {coding}"))  # type: ignore[operator]
    pool = Pool()
    answer = await get(pool, server)
    assert (answer.body, answer.cut) == (text, False)
    assert b"Accept-Encoding: gzip, deflate" in server.requests[0][1]
    await pool.close()


async def test_a_compressed_answer_is_cut_at_the_limit_once_decoded(server: RawServer) -> None:
    server.script(ok(gzip.compress(b"z" * 1_000_000), "Content-Encoding: gzip"))
    pool = Pool()
    answer = await get(pool, server, limit=1000)
    assert (answer.body, answer.cut) == (b"z" * 1000, True)
    await pool.close()


@pytest.mark.parametrize("chunked", [False, True])
async def test_a_long_answer_is_cut_and_its_connection_closed(server: RawServer, chunked: bool) -> None:
    body = b"ab" * 100_000
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(
            b"%x\r\n%s\r\n" % (len(p), p) for p in (body[i : i + 5000] for i in range(0, len(body), 5000))
        )
        + b"0\r\n\r\n"
        if chunked
        else ok(body)
    )
    server.script(Step((raw[:70_000], raw[70_000:]), gap=0.02), ok(b"fresh"))
    pool = Pool()
    answer = await get(pool, server, limit=1000)
    assert (answer.body, answer.cut) == (body[:1000], True)
    assert (await get(pool, server)).body == b"fresh"
    assert server.connections == 2  # the rest of the long answer was never read: its connection went
    await pool.close()


async def test_a_connection_closed_while_idle_is_replaced(server: RawServer) -> None:
    # The server answers, keeps the connection, then drops it when the next request comes: the request goes
    # once more over a new connection.
    server.script(ok(b"one"), Step(drop=True), ok(b"two"))
    pool = Pool()
    assert (await get(pool, server)).body == b"one"
    assert (await get(pool, server)).body == b"two"
    assert [n for n, _, _ in server.requests] == [1, 1, 2]
    await pool.close()


async def test_a_connection_closed_while_idle_is_noticed_before_use(server: RawServer) -> None:
    server.script(Step((ok(b"one"),), close=True), ok(b"two"))
    pool = Pool()
    assert (await get(pool, server)).body == b"one"
    await asyncio.sleep(0.05)  # the server's close arrives
    assert (await get(pool, server)).body == b"two"
    assert [n for n, _, _ in server.requests] == [1, 2]
    await pool.close()


@pytest.mark.parametrize(
    ("step", "said"),
    [
        (Step(drop=True), "ServerDisconnectedError"),  # a new connection: not tried again
        (Step((b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf",), close=True), "before the answer was"),
        (Step((b"SSH-2.0-OpenSSH_9.6\r\n\r\n",)), "BadHttpMessage: the answer is not HTTP/1.x"),
        (Step((b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",)), "invalid Content-Length"),
        # digits of latin-1 that Python's isdigit() takes (a superscript two)
        (Step((b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\n\r\n",)), "invalid Content-Length"),
        (Step((b"HTTP/1.1 2\xb200 OK\r\n\r\n",)), "not HTTP/1.x"),
        (Step((b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000,)), "head longer than"),
        (Step((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",)), "invalid chunk size"),
        (Step((ok(b"not gzip", "Content-Encoding: gzip"),)), "not valid gzip"),
    ],
)
async def test_no_http_answer_is_a_wire_error_that_says_why(server: RawServer, step: Step, said: str) -> None:
    server.script(step, ok(b"after"))
    pool = Pool()
    with pytest.raises(_WireError, match=said):
        await get(pool, server)
    assert (await get(pool, server)).body == b"after"  # the broken connection is not used again
    assert server.connections == 2
    await pool.close()


async def test_a_silent_server_times_out_and_its_connection_is_dropped(server: RawServer) -> None:
    server.script(Step(hang=True), ok(b"after"))
    pool = Pool()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(asyncio.TimeoutError):
        await get(pool, server, timeout=0.3)
    assert 0.25 < loop.time() - started < 2
    assert (await get(pool, server)).body == b"after"
    assert server.connections == 2
    await pool.close()


async def test_a_cancelled_call_does_not_leave_its_connection_to_others(server: RawServer) -> None:
    server.script(Step((b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n", b"late"), gap=0.3), ok(b"mine"))
    pool = Pool()
    task = asyncio.ensure_future(get(pool, server))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await get(pool, server)).body == b"mine"  # not "late", the cancelled call's answer
    assert server.connections == 2
    await pool.close()


async def test_refused_and_unresolvable_and_invalid_urls_are_wire_errors() -> None:
    pool = Pool()
    with pytest.raises(_WireError, match=r"ConnectionRefusedError: cannot connect to 127\.0\.0\.1:9"):
        await pool.request("GET", "http://127.0.0.1:9/x", headers={}, timeout=5)
    with pytest.raises(_WireError, match="gaierror"):
        await pool.request("GET", "http://no-such-host.invalid/x", headers={}, timeout=5)
    with pytest.raises(_WireError, match=r"InvalidURL.*ftp://example\.com/x$"):
        await pool.request("GET", "ftp://u:secret@example.com/x?k=secret", headers={}, timeout=5)
    await pool.close()


async def test_a_urls_password_is_sent_as_basic_auth_and_headers_are_checked(server: RawServer) -> None:
    server.script(ok(), ok())
    pool = Pool()
    url = f"http://me:p%40ss@127.0.0.1:{server.port}/v1/x?q=1 2"
    await pool.request("GET", url, headers={}, timeout=5)
    head = server.requests[0][1].decode()
    assert head.startswith("GET /v1/x?q=1%202 HTTP/1.1\r\n")
    assert "Authorization: Basic bWU6cEBzcw==\r\n" in head  # base64 of "me:p@ss"
    await pool.request("GET", url, headers={"authorization": "Bearer k"}, timeout=5)
    assert "Basic" not in server.requests[1][1].decode()  # the caller's own Authorization wins
    with pytest.raises(ValueError, match="line break"):
        await pool.request("GET", url, headers={"X-Evil": "a\r\nInjected: 1"}, timeout=5)
    await pool.close()


# -- TLS --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_https_with_a_trusted_certificate_and_one_that_is_not(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = certificate
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    answered: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with_head = await reader.readuntil(b"\r\n\r\n")
        answered.append(with_head)
        writer.write(ok(b"secure"))
        await writer.drain()
        writer.close()

    tls_server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=served)
    url = f"https://127.0.0.1:{tls_server.sockets[0].getsockname()[1]}/v1"
    pool = Pool()
    # The system's certificates do not vouch for this one: the call fails, saying so.
    with pytest.raises(_WireError, match="SSLCertVerificationError"):
        await pool.request("GET", url, headers={}, timeout=5)
    trusting = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(_wire, "tls_context", lambda: trusting)
    answer = await pool.request("GET", url, headers={}, timeout=5)
    assert (answer.status, answer.body) == (200, b"secure")
    assert answered and f"Host: 127.0.0.1:{url.split(':')[2].split('/')[0]}".encode() in answered[-1]
    await pool.close()
    tls_server.close()


async def test_a_chat_client_over_https_trusting_ssl_cert_file(certificate: tuple[Path, Path]) -> None:
    # README.md, Agents: https is verified against the system's certificates, and SSL_CERT_FILE points
    # elsewhere. A fresh process (the TLS settings are made once per process): start-up check, then two calls
    # over one kept-alive TLS connection.
    import json
    import os
    import sys

    cert, key = certificate
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    connections: list[int] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                asked = json.loads(await reader.readexactly(length))["messages"][-1]["content"]
                body = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": f"tls: {asked}"}}]}
                )
                writer.write(ok(body.encode(), "Content-Type: application/json"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    tls_server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=served)
    url = f"https://127.0.0.1:{tls_server.sockets[0].getsockname()[1]}/v1"
    code = (
        "import asyncio, json\n"
        "from evalnb.chat import ChatClient\n"
        f"client = ChatClient('m', base_url={url!r}, retries=0)\n"
        "async def main():\n"
        "    await client.preflight(role='judge', elsewhere='base_url=...')\n"
        "    return [(await client.complete(q)).text for q in ('one', 'two')]\n"
        "print(json.dumps(asyncio.run(main())))\n"
    )
    root = Path(__file__).resolve().parents[2]
    trust = {"SSL_CERT_FILE": str(cert)}
    env = {**os.environ, "PYTHONPATH": str(root), "EVALNB_DISABLE_PLUGIN_AUTOLOAD": "1", **trust}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    tls_server.close()
    assert proc.returncode == 0, err.decode()
    assert json.loads(out) == ["tls: one", "tls: two"]
    # Both calls over one TLS connection (the start-up check opens a TCP connection only: no handshake, so the
    # server never sees it as a connection of its own).
    assert len(connections) == 1


# -- the standard library's server, as another implementation than the scripted one -----------------


@pytest.mark.parametrize("version", ["HTTP/1.0", "HTTP/1.1"])
async def test_the_standard_librarys_http_server(version: str) -> None:
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = version

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            answer = b'{"echo": ' + body + b', "path": "' + self.path.encode() + b'"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pool = Pool()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/ask?x=1"
        for i in range(3):
            answer = await pool.request("POST", url, headers={}, data=f'"{i}"', timeout=5)
            assert (answer.status, answer.body) == (200, b'{"echo": "%d", "path": "/v1/ask?x=1"}' % i)
        # HTTP/1.0 answers close their connection; HTTP/1.1 ones keep it for the next call.
        assert sum(map(len, pool._idle.values())) == (1 if version == "HTTP/1.1" else 0)
    finally:
        await pool.close()
        server.shutdown()
        server.server_close()
