"""The one rule for duration and count options: a number of seconds is a finite number above zero, a count
is a whole number at or above its minimum (booleans are neither).

``float("nan")`` passes every ``timeout <= 0`` test (every comparison with NaN is false) and ``float("inf")``
is no limit at all: both are refused here, for every option that is a duration (a run's ``timeout``, an
agent's, a judge's, a store's retry time) or a count (``runs``, ``concurrency``, ``retries``, ``max_tokens``).
The error is a :class:`~evalnb.errors.ConfigError` (exit 2 on the command line) naming the option and the value.

Example::

    seconds("timeout", 120.0)            # 120.0
    seconds("timeout", None, none=True)  # None: no limit, where the option allows it
    count("concurrency", 8, minimum=1)   # 8
    seconds("timeout", float("nan"))     # ConfigError: timeout must be a finite number of seconds above 0 ...
    positive("Ray num_cpus", 0.5)        # 0.5
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from evalnb.errors import ConfigError

__all__ = ["count", "positive", "seconds"]


def seconds(name: str, value: Any, *, none: bool = False, zero: bool = False) -> float | None:
    """``value`` as a duration in seconds: a finite number above 0 (``zero=True``: at or above 0);
    ``None`` only where ``none`` says that means no limit.

    Raises:
        ConfigError: naming ``name`` and the value.
    """
    return positive(name, value, unit="seconds", none=none, zero=zero)


def positive(
    name: str, value: Any, *, unit: str = "", none: bool = False, zero: bool = False
) -> float | None:
    """``value`` as a finite number above 0 (``zero=True``: at or above 0) of ``unit``; ``None`` where ``none``
    allows it (as :func:`seconds`, for amounts other than durations: CPUs, money).

    Raises:
        ConfigError: naming ``name`` and the value.
    """
    if value is None and none:
        return None
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if ok and (value > 0 or (zero and value == 0)):
        return float(value)
    bound = "0 or more" if zero else "above 0"
    alternative = " or None (no limit)" if none else ""
    of = f" of {unit}" if unit else ""
    raise ConfigError(
        f"{name} must be a finite number{of} {bound}{alternative}, not {value!r}", code="INVALID_VALUE"
    )


def count(name: str, value: Any, *, minimum: int = 0, none: bool = False) -> int | None:
    """``value`` as a count: an integer (not a float, not a boolean) at or above ``minimum``; ``None`` only
    where ``none`` allows it.

    Raises:
        ConfigError: naming ``name`` and the value.
    """
    if value is None and none:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= minimum:
        return int(value)
    what = f"a whole number, {minimum} or more"
    alternative = " or None" if none else ""
    raise ConfigError(f"{name} must be {what}{alternative}, not {value!r}", code="INVALID_VALUE")
