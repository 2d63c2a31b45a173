"""The adaptive concurrency limit of an endpoint: additive increase, multiplicative decrease (AIMD).

One limiter per endpoint (base URL) and event loop, shared by every client of that endpoint, so agent calls
and judge calls to the same server back off together; the limit an endpoint settled at outlives the loop, so
the next run starts there. On a cluster, a worker's loop may get its limiters from elsewhere
(:func:`share_limits`): the Ray executor's make every worker's calls to an endpoint count against one limit.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import Callable

__all__ = ["AIMDLimiter", "learn", "limiter_for", "share_limits"]


class AIMDLimiter:
    """Additive-increase / multiplicative-decrease concurrency limit for one endpoint.

    ``acquire()`` waits while ``limit`` calls are in flight. A rate limit (429) halves the limit, at most once
    per burst: only a call started after the previous decrease can cause another, so 30 calls refused at once
    halve it once, not 30 times. Each success adds ``1 / limit``, i.e. about one slot per window of successes.

    Example::

        lim = AIMDLimiter(initial=8)
        async with lim.slot() as started: ...
    """

    def __init__(self, *, initial: float = 64, minimum: float = 1, maximum: float = 512) -> None:
        self.minimum = float(minimum)
        self.maximum = float(maximum)
        self.limit = float(min(max(initial, minimum), maximum))
        self.in_flight = 0
        self.decreases = 0
        self._last_decrease = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def capacity(self) -> int:
        return max(1, int(self.limit))

    async def acquire(self) -> float:
        """Wait for a slot; returns the start time (monotonic) to pass to :meth:`on_rate_limited`."""
        while self.in_flight >= self.capacity:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if not fut.cancelled() and fut.done():
                    self._wake()  # we were woken but will not take the slot: pass it on
                raise
            finally:
                if fut in self._waiters:
                    self._waiters.remove(fut)
        self.in_flight += 1
        return time.monotonic()

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        free = self.capacity - self.in_flight
        while free > 0 and self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                free -= 1

    def on_success(self) -> None:
        self.limit = min(self.maximum, self.limit + 1.0 / self.limit)
        self._wake()

    def on_rate_limited(self, started: float) -> None:
        if started < self._last_decrease:
            return  # this call was already in flight when we last backed off: same burst
        self.limit = max(self.minimum, self.limit / 2)
        self._last_decrease = time.monotonic()
        self.decreases += 1

    def slot(self) -> _Slot:
        return _Slot(self)

    def __repr__(self) -> str:
        return f"AIMDLimiter(limit={self.limit:.1f}, in_flight={self.in_flight})"


class _Slot:
    def __init__(self, limiter: AIMDLimiter) -> None:
        self.limiter = limiter
        self.started = 0.0

    async def __aenter__(self) -> float:
        self.started = await self.limiter.acquire()
        return self.started

    async def __aexit__(self, *exc: object) -> None:
        self.limiter.release()


# Limiters hold futures bound to a loop, so there is one per (loop, endpoint); the learned limit of an endpoint
# outlives the loop so that the next run starts where the last one settled.
_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AIMDLimiter]] = (
    weakref.WeakKeyDictionary()
)
_LEARNED: dict[str, float] = {}
_FACTORIES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Callable[[str, float], AIMDLimiter]] = (
    weakref.WeakKeyDictionary()
)


def share_limits(factory: Callable[[str, float], AIMDLimiter]) -> None:
    """Make :func:`limiter_for` on the running loop build each endpoint's limiter with
    ``factory(endpoint, initial)`` (a limiter whose state lives elsewhere, shared with other processes)."""
    _FACTORIES[asyncio.get_running_loop()] = factory


def limiter_for(endpoint: str, *, initial: float = 64) -> AIMDLimiter:
    """The limiter shared by every client of ``endpoint`` (a base URL) on the running event loop.

    Example::

        limiter_for("http://127.0.0.1:8000/v1").limit
        # 64.0
    """
    loop = asyncio.get_running_loop()
    per_loop = _LIMITERS.setdefault(loop, {})
    key = endpoint.rstrip("/")
    lim = per_loop.get(key)
    if lim is None:
        start = _LEARNED.get(key, initial)
        make = _FACTORIES.get(loop)
        lim = per_loop[key] = make(key, start) if make is not None else AIMDLimiter(initial=start)
    return lim


def learn(endpoint: str, limit: float) -> None:
    """Remember the limit ``endpoint`` settled at, for the limiters of later event loops."""
    _LEARNED[endpoint.rstrip("/")] = limit
