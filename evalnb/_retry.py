"""Backoff between retries: the one rule agents, the chat client and the store wait by.

Exponential backoff with jitter, capped: attempt ``n`` (0-based) waits about ``base * 2**n`` seconds, never more
than ``cap``. "Equal jitter" keeps half of the wait fixed and randomises the other half, so retries of many
callers spread out without ever retrying at once. A server's hint (``Retry-After``, a ``retry_after`` on an
agent's error) is a lower bound, itself capped.

Example::

    from evalnb._retry import backoff
    await asyncio.sleep(backoff(attempt, base=0.5, cap=20.0, hint=retry_after))
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["backoff", "retry_until"]

_T = TypeVar("_T")


def backoff(attempt: int, *, base: float, cap: float, hint: float | None = None) -> float:
    """Seconds to wait before retry ``attempt + 1``: capped exponential backoff with equal jitter.

    ``hint`` (seconds a server or an agent asked for) raises the wait to at least that much, up to ``cap``.
    """
    full = min(cap, base * (2 ** max(0, attempt)))
    delay = full / 2 + random.uniform(0, full / 2)
    if isinstance(hint, (int, float)) and not isinstance(hint, bool) and hint > 0:
        delay = max(delay, min(cap, float(hint)))
    return float(delay)


def retry_until(
    fn: Callable[[], _T],
    *,
    transient: Callable[[BaseException], bool],
    seconds: float,
    base: float = 0.02,
    cap: float = 0.5,
    on_timeout: Callable[[BaseException], BaseException] | None = None,
) -> _T:
    """Call ``fn`` until it returns, retrying errors ``transient`` accepts for up to ``seconds`` (blocking).

    A non-transient error propagates at once; when the time is up the last transient error is raised, or what
    ``on_timeout`` makes of it.
    """
    deadline = time.monotonic() + seconds
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as exc:
            if not transient(exc):
                raise
            if time.monotonic() > deadline:
                if on_timeout is not None:
                    raise on_timeout(exc) from exc
                raise
            time.sleep(backoff(attempt, base=base, cap=cap))
            attempt += 1
