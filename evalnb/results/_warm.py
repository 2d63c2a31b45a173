"""What a run's end needs, imported while the run waits on its agents.

A run's Result is built of pandas frames when the last case run is in; importing pandas (and pyarrow, which
pandas uses for text columns where it is installed) took ~0.5 s then, after the last answer, of a run that spent
most of its time waiting on the network. Started when the run begins, in a daemon thread, the import happens
while the event loop waits (imports hold the GIL in short steps); `import evalnb` itself imports none of it.

Inside a running event loop the thread starts on the loop's next turn, once the case runs the run starts with
have taken their first step (an agent's first request sent, or its connection begun): the import and those
first steps would otherwise share the interpreter lock, and every case run would wait longer for its first
answer (benchmarks/http.py: 0.34 -> 0.31 s before the first request).

The import gives way to the run's thread before each module it loads: a thread that holds the interpreter lock
keeps it until a thread waiting for it has waited the switch interval (5 ms), so the event loop, woken by a
batch of answers while a module of pandas executes, would wait that long before it could read them, at every
batch. Yielding between modules makes the import a background task that runs while the loop waits
(benchmarks/http.py: the calls of a 2,000-call run ~25 ms sooner).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from evalnb import _gc

__all__ = ["warm_frames"]

_started = threading.Event()


def warm_frames() -> None:
    """Import what building the Result's frames needs, in a daemon thread, once per process (nothing when it is
    imported already)."""
    if _started.is_set() or "pyarrow" in sys.modules or "pandas" in sys.modules:
        return
    _started.set()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _start()
        return
    # A timer, not call_soon: due timers run after the callbacks already queued, the case runs' first steps.
    loop.call_later(0, _start)


def _start() -> None:
    threading.Thread(target=_import, name="evalnb-warm", daemon=True).start()


class _GiveWay:
    """A finder that finds nothing: asked before each module an import loads, it lets a thread waiting for the
    interpreter lock have it first when the importing thread is ``thread`` (None: nobody, once the import is done).

    It stays on ``sys.meta_path`` after, doing nothing: taking it out could make an import running in another
    thread right then skip the finder after it (that import walks the list by position)."""

    def __init__(self, thread: int | None) -> None:
        self.thread = thread

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if self.thread is not None and threading.get_ident() == self.thread:
            time.sleep(0)  # releases the lock; a waiting thread takes it


def _import() -> None:
    way = _GiveWay(threading.get_ident())
    sys.meta_path.insert(0, way)  # a walk of the list right now sees a finder twice at worst
    try:
        with _gc.imported():
            from evalnb.results._frames import RUNS_COLUMNS, frame_from_tuples

            frame_from_tuples([], RUNS_COLUMNS)  # a typed empty frame: pandas' text storage loaded too
    except Exception:  # a failure here shows again where the frames are built, in the run's own thread
        return
    finally:
        way.thread = None
