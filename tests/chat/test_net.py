"""What every HTTP caller shares (evalnb/chat/_net.py), against a real local server: bodies read up to a limit,
requests sent through :func:`send`, and the start-up probe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from evalnb.chat._net import read_body, send
from tests.support.openai_server import OpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[2]


async def _read(server: OpenAIServer, limit: int) -> tuple[bytes, bool, bool]:
    """The body of one answer read with ``limit``, whether it was cut, and whether it had arrived whole when
    its reading began (so which way it was read)."""
    async with (
        aiohttp.ClientSession() as session,
        send(
            session, "POST", f"{server.base_url}/chat/completions", headers={}, data="{}", timeout=5
        ) as sent,
    ):
        whole = sent.response.content.is_eof()
        raw, cut = await read_body(sent.response, limit=limit)
        return raw, cut, whole


@pytest.mark.parametrize("size", [0, 99, 100, 101, 300])
async def test_an_answer_that_arrived_whole_is_cut_at_the_limit(
    openai_server: OpenAIServer, size: int
) -> None:
    openai_server.script(Reply(body="x" * size))
    raw, cut, whole = await _read(openai_server, limit=100)
    assert whole  # a small answer comes in one piece with its head: taken at once
    assert (raw, cut) == (b"x" * min(size, 100), size > 100)


@pytest.mark.parametrize(("times", "limit"), [(10, 100), (300_000, 100), (300_000, 200_000)])
async def test_an_answer_still_arriving_is_cut_at_the_limit_alike(
    openai_server: OpenAIServer, times: int, limit: int
) -> None:
    # Streamed in pieces without a length: read piece by piece, and cut the same way.
    openai_server.script(Reply(repeat=("ab", times), body_only=True))
    raw, cut, _ = await _read(openai_server, limit=limit)
    size = 2 * times
    assert (raw, cut) == (b"ab" * (min(size, limit) // 2), size > limit)


def test_a_reachable_endpoint_has_its_http_library_loaded_at_start_up(openai_server: OpenAIServer) -> None:
    # A fresh process: the run's first call must not import aiohttp beside the frames' imports.
    code = (
        "import asyncio, json, sys\n"
        "from evalnb.agents import OpenAIChat\n"
        f"agent = OpenAIChat('m', base_url={openai_server.base_url!r})\n"
        "before = 'aiohttp' in sys.modules\n"
        "asyncio.run(agent.preflight())\n"
        "print(json.dumps([before, 'aiohttp' in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALNB_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [False, True]
