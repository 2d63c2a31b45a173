"""The cyclic garbage collector around evalnb's bulk work.

Loading a large suite and running it allocate millions of objects that live as long as the run, and almost none
form reference cycles. CPython's collector scans every tracked object on each full collection, so at a million
case runs collection took ~40% of the time. Two measured remedies, each undone when the work ends:

* :func:`paused` while a document becomes a suite, or a stored run a Result: nothing they build is cyclic
  garbage;
* :func:`frozen` while a run lasts: what existed before the run (the suite, the caller's data) moves to the
  permanent generation (``gc.freeze``) and is not scanned again; it goes back at the end (``gc.unfreeze``), so
  cycles the caller drops later are still collected. Young collections come every :data:`YOUNG` allocations
  instead of 700 meanwhile (the thresholds are put back at the end).

Example::

    with paused():
        suite = build(document)
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG", "frozen", "paused"]

YOUNG = 20_000
"""Allocations between young collections while a run lasts (CPython's default is 700)."""


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection while it lasts (objects are still freed by reference counting)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """Objects that exist now are left out of collections while it lasts (see the module docstring).

    A process that froze objects itself (a pre-forking server) keeps its own freeze: nothing is done then.
    """
    if gc.get_freeze_count():
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    # A case run allocates a few hundred objects that die with it: young collections every 700 allocations
    # examined each of them several times (a quarter of the driver's time at 50,000 records a second).
    gc.set_threshold(YOUNG, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
