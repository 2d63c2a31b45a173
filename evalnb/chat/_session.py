"""The transports of evalnb's HTTP calls, one of each per event loop and shared by every client on that loop.

Direct calls go over evalnb's own HTTP/1.1 client (evalnb/chat/_wire.py): keep-alive connections pooled per
origin, as many as the endpoint's limiter lets be in flight. Calls through a proxy go through one
``aiohttp.ClientSession`` (imported when the first such call is made), adapted to give the same
:class:`~evalnb.chat._wire.Answer` and to raise the same errors. Both close when their loop shuts down.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from evalnb._caps import MAX_BODY
from evalnb.chat._wire import Answer, Headers, Pool, _WireError

if TYPE_CHECKING:
    import aiohttp

__all__ = ["POOL_SIZE", "ViaAiohttp", "aclose", "shared_pool", "shared_session", "transport_for"]

# Per-host pool size of the proxy's session: the limiter, not the pool, decides how many calls are in flight.
POOL_SIZE = 512

_HELD: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[Any, AsyncIterator[Any]]]] = (
    weakref.WeakKeyDictionary()
)


async def _hold(transport: Any) -> AsyncIterator[Any]:
    # An async generator kept alive per loop: asyncio.run() (and pytest-asyncio) close pending async
    # generators at shutdown, which closes the transport without the caller having to remember to.
    try:
        yield transport
    finally:
        await transport.close()


async def _shared(kind: str, make: Any) -> Any:
    loop = asyncio.get_running_loop()
    held = _HELD.setdefault(loop, {}).get(kind)
    if held is not None and not held[0].closed:
        return held[0]
    made = make()
    gen = _hold(made)
    await gen.__anext__()
    _HELD[loop][kind] = (made, gen)
    return made


async def shared_pool() -> Pool:
    """The running loop's pool of direct connections (made on first use; closed when the loop shuts down)."""
    return await _shared("pool", Pool)


def _aiohttp_session() -> aiohttp.ClientSession:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=POOL_SIZE, limit_per_host=0, ttl_dns_cache=300)
    # trust_env=True would look proxies up in the environment on every request; each client resolves its
    # proxy once instead (ChatClient._proxy) and passes it.
    return aiohttp.ClientSession(connector=connector, trust_env=False)


async def shared_session() -> aiohttp.ClientSession:
    """The running loop's aiohttp session, for calls through a proxy (made on first use; closed with the loop)."""
    return await _shared("aiohttp", _aiohttp_session)


async def transport_for(proxy: str | None) -> Pool | ViaAiohttp:
    """What a call goes over: the loop's pool when it goes direct, its aiohttp session through ``proxy``."""
    if proxy is None:
        return await shared_pool()
    return ViaAiohttp(await shared_session(), proxy)


class ViaAiohttp:
    """An aiohttp session sending through ``proxy`` that answers as :class:`Pool` does: an :class:`Answer` read
    whole (at most ``limit`` bytes of body), ``asyncio.TimeoutError`` for a timeout, :class:`_WireError` for any
    other failure."""

    __slots__ = ("proxy", "session")

    def __init__(self, session: aiohttp.ClientSession, proxy: str | None) -> None:
        self.session = session
        self.proxy = proxy

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
        import aiohttp

        try:
            async with self.session.request(
                method,
                url,
                headers=headers,
                data=data,
                proxy=self.proxy,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=max(timeout, 0.001)),
            ) as resp:
                body, cut = await _read_capped(resp, limit)
                found = Headers()
                for name, value in resp.headers.items():
                    low = name.lower()
                    found[low] = f"{found[low]}, {value}" if low in found else value
                return Answer(resp.status, found, body, cut)
        except asyncio.TimeoutError:
            raise
        except aiohttp.ClientError as exc:
            raise _WireError(f"{type(exc).__name__}: {exc}") from None


async def _read_capped(resp: Any, limit: int) -> tuple[bytes, bool]:
    """An aiohttp answer's body, at most ``limit`` bytes, and whether there was more (the rest is never read;
    the connection is closed instead of reused)."""
    buf = bytearray()
    async for chunk in resp.content.iter_chunked(64 * 1024):
        room = limit - len(buf)
        if len(chunk) > room:
            buf += chunk[:room]
            resp.close()
            return bytes(buf), True
        buf += chunk
    return bytes(buf), False


async def aclose() -> None:
    """Close the running loop's transports (optional: they are closed when the loop shuts down)."""
    loop = asyncio.get_running_loop()
    for _, gen in _HELD.pop(loop, {}).values():
        await gen.aclose()  # type: ignore[attr-defined]
