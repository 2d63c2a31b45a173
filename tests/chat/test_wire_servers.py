"""evalnb's HTTP/1.1 client against servers other projects wrote: uvicorn (h11, the server of most Python model
gateways) and tornado (Jupyter's), each in a thread of its own on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from evalnb.chat._wire import Pool


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Echoes a JSON body's ``n`` as that many x's (JSON with a length), or streams 100 pieces (chunked)."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    if scope["path"] == "/stream":
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}
        )
        for i in range(100):
            await send({"type": "http.response.body", "body": b"piece%03d;" % i, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    answer = json.dumps({"content": "x" * json.loads(body)["n"]}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


@pytest.fixture(scope="module")
def uvicorn_url() -> Iterator[str]:
    import uvicorn

    port = _free_port()
    # A one-second keep-alive: the server closes idle connections soon, as gateways do.
    config = uvicorn.Config(
        _asgi, host="127.0.0.1", port=port, log_level="error", lifespan="off", timeout_keep_alive=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


async def _chat(pool: Pool, url: str, n: int) -> Any:
    headers = {"Content-Type": "application/json"}
    return await pool.request("POST", f"{url}/v1/chat", headers=headers, data=json.dumps({"n": n}), timeout=5)


async def test_uvicorn(uvicorn_url: str) -> None:
    pool = Pool()
    answer = await _chat(pool, uvicorn_url, 5)
    assert (answer.status, json.loads(answer.body)) == (200, {"content": "xxxxx"})
    streamed = await pool.request("GET", f"{uvicorn_url}/stream", headers={}, timeout=5)
    assert streamed.headers["Transfer-Encoding"] == "chunked"
    assert streamed.body == b"".join(b"piece%03d;" % i for i in range(100))
    many = await asyncio.gather(*(_chat(pool, uvicorn_url, 2) for _ in range(100)))
    assert {(a.status, a.body) for a in many} == {(200, b'{"content": "xx"}')}
    assert sum(map(len, pool._idle.values())) == 100  # every connection kept for the next calls
    await asyncio.sleep(1.6)  # past the server's keep-alive: it closes every idle connection
    again = await _chat(pool, uvicorn_url, 1)
    assert json.loads(again.body) == {"content": "x"}
    await pool.close()


@pytest.fixture(scope="module")
def tornado_url() -> Iterator[str]:
    import tornado.ioloop
    import tornado.web

    class Handler(tornado.web.RequestHandler):
        def post(self) -> None:
            self.write({"length": len(self.request.body)})

        def get(self) -> None:
            for i in range(50):
                self.write(f"t{i:02d} " * 20)
                self.flush()  # each piece sent as it is written: chunked, and gzip with compress_response

    port = _free_port()
    started = threading.Event()
    loops: list[Any] = []

    def serve() -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())
        tornado.web.Application([(r"/t", Handler)], compress_response=True).listen(port, "127.0.0.1")
        loops.append(tornado.ioloop.IOLoop.current())
        started.set()
        loops[0].start()

    threading.Thread(target=serve, daemon=True).start()
    assert started.wait(20), "tornado did not start"
    yield f"http://127.0.0.1:{port}/t"
    loops[0].add_callback(loops[0].stop)


async def test_tornado(tornado_url: str) -> None:
    pool = Pool()
    posted = await pool.request("POST", tornado_url, headers={}, data="hello", timeout=5)
    assert (posted.status, json.loads(posted.body)) == (200, {"length": 5})
    got = await pool.request("GET", tornado_url, headers={}, timeout=5)
    assert (got.headers["content-encoding"], got.headers["transfer-encoding"]) == ("gzip", "chunked")
    assert got.body == "".join(f"t{i:02d} " * 20 for i in range(50)).encode()
    await pool.close()
