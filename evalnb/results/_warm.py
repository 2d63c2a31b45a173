"""What a run's end needs, imported while the run waits on its agents.

A run's Result is built of pandas frames when the last case run is in; importing pandas (and pyarrow, which
pandas uses for text columns where it is installed) took ~0.5 s then, after the last answer, of a run that spent
most of its time waiting on the network. Started when the run begins, in a daemon thread, the import happens
while the event loop waits (imports hold the GIL in short steps); `import evalnb` itself imports none of it.
"""

from __future__ import annotations

import sys
import threading

__all__ = ["warm_frames"]

_started = threading.Event()


def warm_frames() -> None:
    """Import what building the Result's frames needs, in a daemon thread, once per process (nothing when it is
    imported already)."""
    if _started.is_set() or "pyarrow" in sys.modules or "pandas" in sys.modules:
        return
    _started.set()
    threading.Thread(target=_import, name="evalnb-warm", daemon=True).start()


def _import() -> None:
    try:
        from evalnb.results._frames import RUNS_COLUMNS, frame_from_tuples

        frame_from_tuples([], RUNS_COLUMNS)  # a typed empty frame: pandas' text storage loaded too
    except Exception:  # a failure here shows again where the frames are built, in the run's own thread
        return
