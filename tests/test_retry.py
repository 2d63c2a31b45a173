"""The backoff rule shared by agents, the chat client and the store."""

from __future__ import annotations

import pytest

from evalnb._retry import backoff, retry_until


def test_backoff_is_capped_exponential_with_equal_jitter() -> None:
    for attempt in range(8):
        full = min(4.0, 0.5 * 2**attempt)
        waits = [backoff(attempt, base=0.5, cap=4.0) for _ in range(200)]
        assert all(full / 2 <= w <= full for w in waits)
        assert max(waits) - min(waits) > full / 10  # jittered, not one value


def test_hint_is_a_lower_bound_within_the_cap() -> None:
    assert backoff(0, base=0.5, cap=20.0, hint=7.0) >= 7.0
    assert backoff(0, base=0.5, cap=20.0, hint=1e9) == 20.0
    assert backoff(0, base=0.5, cap=20.0, hint=True) <= 0.5  # a bool is no number of seconds


def test_retry_until_retries_transient_errors_only() -> None:
    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise OSError("busy")
        return "ok"

    assert retry_until(flaky, transient=lambda e: isinstance(e, OSError), seconds=5, base=0.001) == "ok"
    assert len(calls) == 3
    with pytest.raises(ValueError):
        retry_until(lambda: int("x"), transient=lambda e: isinstance(e, OSError), seconds=5)


def test_retry_until_gives_up_with_the_error_on_timeout_makes() -> None:
    def busy() -> None:
        raise OSError("locked")

    with pytest.raises(TimeoutError, match="gave up"):
        retry_until(
            busy,
            transient=lambda e: True,
            seconds=0.05,
            base=0.001,
            on_timeout=lambda e: TimeoutError(f"gave up: {e}"),
        )
