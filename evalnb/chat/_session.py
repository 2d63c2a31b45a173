"""One ``aiohttp.ClientSession`` per event loop, shared by every client on that loop.

Its connection pool is sized for high concurrency: the endpoint's limiter, not the pool, decides how many calls
are in flight. aiohttp is imported when the first session is made.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp

__all__ = ["POOL_SIZE", "aclose", "shared_session"]

# Per-host pool size: the limiter, not the pool, decides how many calls are in flight.
POOL_SIZE = 512

_SESSIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, AsyncIterator[Any]]] = (
    weakref.WeakKeyDictionary()
)


async def _hold(client_session: aiohttp.ClientSession) -> AsyncIterator[aiohttp.ClientSession]:
    # An async generator kept alive per loop: asyncio.run() (and pytest-asyncio) close pending async
    # generators at shutdown, which closes the session without the caller having to remember to.
    try:
        yield client_session
    finally:
        await client_session.close()


async def shared_session() -> aiohttp.ClientSession:
    """The running loop's shared session (made on first use; closed when the loop shuts down)."""
    import aiohttp

    loop = asyncio.get_running_loop()
    held = _SESSIONS.get(loop)
    if held is not None and not held[0].closed:
        return held[0]  # type: ignore[no-any-return,unused-ignore]
    connector = aiohttp.TCPConnector(limit=POOL_SIZE, limit_per_host=0, ttl_dns_cache=300)
    # trust_env=True would look proxies up in the environment on every request (a third of the client's CPU
    # at 2,000 calls); each client resolves its proxy once instead (ChatClient._proxy).
    made = aiohttp.ClientSession(connector=connector, trust_env=False)
    gen = _hold(made)
    await gen.__anext__()
    _SESSIONS[loop] = (made, gen)
    return made


async def aclose() -> None:
    """Close the running loop's shared session (optional: it is closed when the loop shuts down)."""
    loop = asyncio.get_running_loop()
    held = _SESSIONS.pop(loop, None)
    if held is not None:
        await held[1].aclose()  # type: ignore[attr-defined]
