"""What every HTTP caller shares, against a real local server: bodies read up to a limit over either transport
(evalnb's own pool, aiohttp for proxies), and the start-up probe (evalnb/chat/_net.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalnb.chat._session import ViaAiohttp, shared_pool, shared_session
from tests.support.openai_server import OpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[2]


TRANSPORTS = ["pool", "aiohttp"]


async def _read(server: OpenAIServer, limit: int, transport: str) -> tuple[bytes, bool]:
    """The body of one answer read with ``limit`` over ``transport``, and whether it was cut."""
    carrier = await shared_pool() if transport == "pool" else ViaAiohttp(await shared_session(), None)
    answer = await carrier.request(
        "POST", f"{server.base_url}/chat/completions", headers={}, data="{}", timeout=5, limit=limit
    )
    return answer.body, answer.cut


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("size", [0, 99, 100, 101, 300])
async def test_an_answer_is_cut_at_the_limit(openai_server: OpenAIServer, size: int, transport: str) -> None:
    openai_server.script(Reply(body="x" * size))
    raw, cut = await _read(openai_server, 100, transport)
    assert (raw, cut) == (b"x" * min(size, 100), size > 100)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(("times", "limit"), [(10, 100), (300_000, 100), (300_000, 200_000)])
async def test_an_answer_still_arriving_is_cut_at_the_limit_alike(
    openai_server: OpenAIServer, times: int, limit: int, transport: str
) -> None:
    # Streamed in pieces without a length (chunked): read piece by piece, and cut the same way.
    openai_server.script(Reply(repeat=("ab", times), body_only=True))
    raw, cut = await _read(openai_server, limit, transport)
    size = 2 * times
    assert (raw, cut) == (b"ab" * (min(size, limit) // 2), size > limit)


def test_direct_calls_need_no_aiohttp(openai_server: OpenAIServer) -> None:
    # A fresh process: a direct endpoint's start-up check and calls go over evalnb's own client; aiohttp (about
    # a tenth of a second to import) is for calls through a proxy only.
    code = (
        "import asyncio, json, sys\n"
        "from evalnb.agents import OpenAIChat, Request\n"
        f"agent = OpenAIChat('m', base_url={openai_server.base_url!r})\n"
        "async def main():\n"
        "    await agent.preflight()\n"
        "    return (await agent.respond(Request(prompt='hi'))).text\n"
        "text = asyncio.run(main())\n"
        "print(json.dumps([text, 'aiohttp' in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALNB_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["OK", False]
