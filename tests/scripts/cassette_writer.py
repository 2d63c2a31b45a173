"""Appends answers to a cassette from its own process: ``cassette_writer.py PATH WORKER N``.

Several of these at once check that concurrent processes never interleave cassette lines.
"""

from __future__ import annotations

import asyncio
import sys

from evalnb.agents._base import Request
from evalnb.agents._record import Record


async def main(path: str, worker: str, n: int) -> None:
    rec = Record(lambda prompt: "z" * 10_000 + prompt, path)
    for i in range(n):
        await rec.respond(Request(prompt=f"{worker}-{i}", case="c"))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
