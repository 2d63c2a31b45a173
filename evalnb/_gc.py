"""The cyclic garbage collector around evalnb's bulk work.

Loading a large suite and running it allocate millions of objects that live as long as the run, and almost none
form reference cycles. CPython's collector scans every tracked object on each full collection, so at a million
case runs collection took ~40% of the time. Measured remedies, each undone when the work ends:

* :func:`paused` while a document becomes a suite, or a stored run a Result, and while a run is set up (its
  store's imports made full collections over the suite: 3 s at a million cases): nothing they build is cyclic
  garbage;
* :func:`frozen` while a run lasts, from its recorders' begin to their finish: what existed before the run (the suite, the caller's data) moves to the
  permanent generation (``gc.freeze``) and is not scanned again; it goes back at the end (``gc.unfreeze``), so
  cycles the caller drops later are still collected. Young collections come every :data:`YOUNG` allocations
  instead of 700 meanwhile (the thresholds are put back at the end);
* :func:`imported` around the frames' imports a run makes in a thread while it waits on its agents: their
  objects live as long as the process, and the run's young collections examined them as they came;
* :func:`no_collection_at_exit` once a process has run: at interpreter exit, what is still alive is left out of
  the collections the interpreter makes while it tears its modules down (``gc.freeze`` in an atexit handler).
  With pandas, pyarrow and a Result loaded, those collections took 0.3-0.4 s after the last answer of a 2,000-call
  run; objects are still freed by reference counting as the modules go.

Example::

    with paused():
        suite = build(document)
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG", "frozen", "imported", "no_collection_at_exit", "paused"]

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

    A process that froze objects itself (a pre-forking server) keeps its own freeze: nothing is done then; nor
    inside a freeze of this function's (a run's executor inside the run), which is known without asking the
    collector: ``gc.get_freeze_count`` walks every frozen object (4 ms of a run's start with its imports frozen).
    """
    global _ours
    if _ours or gc.get_freeze_count():
        yield
        return
    thresholds = gc.get_threshold()
    with _lock:
        gc.freeze()
        _ours = True
    # A case run allocates a few hundred objects that die with it: young collections every 700 allocations
    # examined each of them several times (a quarter of the driver's time at 50,000 records a second).
    gc.set_threshold(YOUNG, *thresholds[1:])
    try:
        yield
    finally:
        with _lock:
            _ours = False
            gc.set_threshold(*thresholds)
            gc.unfreeze()


_ours = False  # a freeze made by frozen() is in force
_lock = threading.Lock()  # held while it starts or ends, so that imported() never freezes after its end


@contextmanager
def imported() -> Iterator[None]:
    """No cyclic collection while a large import beside a run lasts (the frames' libraries, imported in a thread
    while the run waits on its agents); afterwards what exists then is frozen too while the run's freeze is in
    force (:func:`frozen`), or collected as usual once it is not.

    The hundreds of thousands of objects an import makes live as long as the process; the run's young
    collections examined them as they came, a dozen collections of 3 ms each on the event loop's time (a
    2,000-call run), for nothing.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        with _lock:
            if _ours:
                gc.freeze()
        if was:
            gc.enable()


_exit_registered = threading.Event()


def no_collection_at_exit() -> None:
    """At interpreter exit, leave every object still alive out of the final cyclic collections (once per process).

    Python does not promise to run the finalizers of objects alive at exit; with this, those of reference cycles
    alive at exit are not run. A process that needs them calls ``gc.unfreeze()`` in an atexit handler registered
    before its first run (atexit handlers run last registered first). README.md, Performance.
    """
    if _exit_registered.is_set():
        return
    _exit_registered.set()
    atexit.register(gc.freeze)
