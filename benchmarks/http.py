"""Chat-call throughput against a local OpenAI-compatible server that answers after 20 ms.

Two measurements, each of 2,000 calls at concurrency 64:

* **Whole process** (``--processes``, the default): each client is a fresh Python process, timed from its
  start to its exit: a bare aiohttp loop (the reference: the client most Python tools build on), and
  ``evalnb.run`` of a 2,000-item dataset file against the endpoint through ``OpenAIChat`` (load, start-up
  checks, the calls, the checks, the Result's frames, the interpreter's exit). The server notes when the first
  request arrives and the last answer leaves, so the process time splits into before the first request, the
  calls, and after the last answer.
* **In process** (``--in-process``): the calls alone, timed inside one process after a first call connected:
  evalnb's judge client, the bare aiohttp loop and the official openai SDK's ``AsyncOpenAI`` with a semaphore.

The server runs in its own process so that it is not the bottleneck of the client being measured.

    python benchmarks/http.py [--calls 2000] [--concurrency 64] [--delay 0.02] [--in-process] [--no-sdk]

Prints wall times, the ideal (ceil(calls / concurrency) x delay) and their ratios. Aim: evalnb's whole process
within 1.8x of the ideal.
"""

from __future__ import annotations

import os
import sys

# This file is named like the standard library's ``http`` package: run as a script, its folder comes first on
# sys.path and would shadow it for aiohttp. Drop that folder before anything imports ``http``.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))  # the repository root, for evalnb without installing it

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing as mp  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

ANSWER = json.dumps({"score": 4, "reason": "benchmark"})


class _ChatProtocol(asyncio.Protocol):
    """A minimal HTTP/1.1 keep-alive server speaking just enough of chat completions.

    Written on asyncio's protocol layer rather than aiohttp.web so that, on a 2-core machine, the server
    spends as little CPU as possible and the client under test is what gets measured.
    """

    def __init__(self, delay: float, response: bytes, clock: Any = None) -> None:
        self.delay = delay
        self.response = response
        self.clock = clock  # (first request in, last answer out) as shared doubles, or None
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        loop = asyncio.get_running_loop()
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            length = 0
            for line in self.buf[:head_end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            total = head_end + 4 + length
            if len(self.buf) < total:
                return
            self.buf = self.buf[total:]
            if self.clock is not None and not self.clock[0].value:
                self.clock[0].value = time.time()
            loop.call_later(self.delay, self._answer)

    def _answer(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(self.response)
            if self.clock is not None:
                self.clock[1].value = time.time()


def serve(port: int, delay: float, ready: Any, clock: Any = None) -> None:
    """The server process: answers every chat completion after ``delay`` seconds."""
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }
    payload = json.dumps(body).encode()
    response = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
        + f"Content-Length: {len(payload)}\r\n\r\n".encode()
        + payload
    )

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: _ChatProtocol(delay, response, clock), "127.0.0.1", port, backlog=1024
        )
        ready.set()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def run_evalnb(base_url: str, calls: int, concurrency: int) -> float:
    from evalnb.judges import OpenAIJudge

    judge = OpenAIJudge("bench-model", base_url=base_url, cache=False, concurrency=concurrency, api_key="x")
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> str:
        async with sem:
            return (await judge.complete(f"grade answer {i}")).text

    await one(-1)  # connect once, outside the timing, as a real run would have by then
    t0 = time.perf_counter()
    out = await asyncio.gather(*(one(i) for i in range(calls)))
    wall = time.perf_counter() - t0
    assert all(o == ANSWER for o in out)
    return wall


async def run_bare(base_url: str, calls: int, concurrency: int) -> float:
    """A bare aiohttp loop with no retries, limiter or parsing: the reference for this machine and server
    (evalnb's calls go over its own client, evalnb/chat/_wire.py)."""
    import aiohttp

    body = json.dumps({"model": "bench-model", "messages": [{"role": "user", "content": "x"}]})
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency * 2)) as session:
        sem = asyncio.Semaphore(concurrency)

        async def one(i: int) -> str:
            async with sem, session.post(f"{base_url}/chat/completions", data=body, headers=headers) as r:
                return str(json.loads(await r.read())["choices"][0]["message"]["content"])

        await one(-1)
        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(calls)))
        return time.perf_counter() - t0


async def run_sdk(base_url: str, calls: int, concurrency: int) -> float:
    import httpx
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        base_url=base_url,
        api_key="x",
        max_retries=0,
        http_client=httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency * 2)),
    )
    sem = asyncio.Semaphore(concurrency)

    async def one(i: int) -> str:
        async with sem:
            r = await client.chat.completions.create(
                model="bench-model",
                messages=[{"role": "user", "content": f"grade answer {i}"}],
                temperature=0,
            )
            return r.choices[0].message.content or ""

    await one(-1)
    t0 = time.perf_counter()
    out = await asyncio.gather(*(one(i) for i in range(calls)))
    wall = time.perf_counter() - t0
    await client.close()
    assert all(o == ANSWER for o in out)
    return wall


# What each measured process runs: nothing of this file (its imports are not the client's).
BARE_PROCESS = """
import asyncio, json, sys
import aiohttp

async def main(url, calls, concurrency):
    body = json.dumps({"model": "bench-model", "messages": [{"role": "user", "content": "x"}]})
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency * 2)) as session:
        sem = asyncio.Semaphore(concurrency)

        async def one(i):
            async with sem, session.post(url + "/chat/completions", data=body, headers=headers) as r:
                return json.loads(await r.read())["choices"][0]["message"]["content"]

        await asyncio.gather(*(one(i) for i in range(calls)))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
"""

EVALNB_PROCESS = """
import sys
import evalnb
from evalnb.agents import OpenAIChat

agent = OpenAIChat("bench-model", base_url=sys.argv[1], api_key="x")
result = evalnb.run(sys.argv[4], agent, concurrency=int(sys.argv[3]), progress=False)
assert result.passed and len(result.runs) == int(sys.argv[2]), result.counts()
"""


def write_suite(path: str, calls: int) -> None:
    """A dataset of ``calls`` items whose expected answer is the server's: every case passes ExactMatch."""
    items = [
        {"testId": f"c{i}", "prompt": f"grade answer {i}", "expected_response": ANSWER} for i in range(calls)
    ]
    doc = {"schemaVersion": "1.1.0", "default_evaluators": {"ExactMatch": {}}, "items": items}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def client_env(pycache: str) -> dict[str, str]:
    """The clients' environment: evalnb from this checkout, its bytecode cached in ``pycache``.

    An installed package has its bytecode compiled at install (pip does it), as aiohttp's is here; a checkout
    run with PYTHONDONTWRITEBYTECODE set would compile evalnb's modules from source in every process (~0.2 s on
    a 2-core machine) and time that against a bare client that compiles nothing.
    """
    env = dict(os.environ, PYTHONPATH=os.path.dirname(_HERE), PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def time_process(
    code: str, args: list[str], clock: Any, env: dict[str, str]
) -> tuple[float, float, float, float]:
    """A fresh Python process running ``code``: (before the first request, the calls, after the last answer,
    the CPU time it used)."""
    import resource

    clock[0].value = clock[1].value = 0.0
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True)
    end = time.time()
    if done.returncode != 0:
        sys.exit(f"the client process failed:\n{done.stderr[-3000:]}")
    first, last = clock[0].value, clock[1].value
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
    return first - start, last - first, end - last, cpu


def processes(base_url: str, args: Any, clock: Any, ideal: float) -> None:
    """Each client as a fresh process, the best of ``args.repeat`` (the machine may be shared)."""
    with tempfile.TemporaryDirectory() as tmp:
        suite = os.path.join(tmp, "calls.json")
        write_suite(suite, args.calls)
        common = [base_url, str(args.calls), str(args.concurrency)]
        env = client_env(os.path.join(tmp, "pycache"))
        start = time.time()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        print(f"python -c pass: {time.time() - start:.3f} s (the interpreter's own start and exit)")
        print(
            f"{'whole process':<16}{'total s':>8}{'/ideal':>7}  {'before 1st':>10}{'calls':>7}{'after last':>11}"
            f"{'CPU s':>7}"
        )
        totals = {}
        for name, code, extra in (
            ("bare aiohttp", BARE_PROCESS, []),
            ("evalnb.run", EVALNB_PROCESS, [suite]),
        ):
            time_process(code, common + extra, clock, env)  # a first run writes the bytecode cache
            runs = [time_process(code, common + extra, clock, env) for _ in range(args.repeat)]
            before, calls, after, cpu = min(runs, key=lambda r: r[0] + r[1] + r[2])
            totals[name] = total = before + calls + after
            print(
                f"{name:<16}{total:>8.3f}{total / ideal:>7.2f}  {before:>10.3f}{calls:>7.3f}{after:>11.3f}"
                f"{cpu:>7.2f}"
            )
        ratio = totals["evalnb.run"] / ideal
        print(
            f"evalnb's whole process: {ratio:.2f}x the ideal {ideal:.2f} s "
            f"({'within' if ratio <= 1.8 else 'over'} the aim of 1.8x), "
            f"{totals['evalnb.run'] / totals['bare aiohttp']:.2f}x the bare aiohttp process"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--delay", type=float, default=0.020)
    ap.add_argument("--no-sdk", action="store_true", help="skip the openai SDK comparison")
    ap.add_argument("--in-process", action="store_true", help="time the calls alone, inside one process")
    ap.add_argument("--repeat", type=int, default=3, help="whole-process runs per client (the best is shown)")
    args = ap.parse_args()

    port = free_port()
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    clock = (ctx.Value("d", 0.0, lock=False), ctx.Value("d", 0.0, lock=False))
    proc = ctx.Process(target=serve, args=(port, args.delay, ready, clock), daemon=True)
    proc.start()
    try:
        if not ready.wait(20):
            sys.exit("the benchmark server did not start")
        base_url = f"http://127.0.0.1:{port}/v1"
        ideal = math.ceil(args.calls / args.concurrency) * args.delay
        print(
            f"{args.calls} chat calls, concurrency {args.concurrency}, server delay {args.delay * 1000:.0f} ms, "
            f"ideal {ideal:.2f} s; load average {os.getloadavg()[0]:.1f}"
        )
        if not args.in_process:
            processes(base_url, args, clock, ideal)
            return
        print(f"{'client':<28}{'wall s':>8}{'ideal s':>9}{'ratio':>7}{'calls/s':>9}")
        rows = [
            ("bare aiohttp (reference)", asyncio.run(run_bare(base_url, args.calls, args.concurrency))),
            ("evalnb OpenAIJudge", asyncio.run(run_evalnb(base_url, args.calls, args.concurrency))),
        ]
        if not args.no_sdk:
            try:
                rows.append(
                    ("openai SDK AsyncOpenAI", asyncio.run(run_sdk(base_url, args.calls, args.concurrency)))
                )
            except ImportError:
                print("(openai not installed: pip install 'evalnb[judge]' to compare)")
        for name, wall in rows:
            print(f"{name:<28}{wall:>8.3f}{ideal:>9.3f}{wall / ideal:>7.2f}{args.calls / wall:>9.0f}")
    finally:
        proc.terminate()
        proc.join(5)


if __name__ == "__main__":
    main()
