"""Working directories of case runs: made only when used, removed when the run passed, a bounded number kept
when it failed (docs/results.md, working directories).

``workdir=None`` gives every case run a directory of its own, made the first time the agent reads
``Request.workdir`` (a ``Command`` agent always does) or a check that looks at files runs (``file_exists``, a
check registered with ``needs={"workdir"}``); a case run that uses none leaves nothing behind. A passing run's
directory is emptied for the next run or removed. A failed run's directory is kept, renamed after the case
run, and its path goes to ``result.runs.workdir``: at most :data:`KEEP_FAILED` per run (the first that fail;
the others are removed and their ``workdir`` is empty), in one folder ``evalnb-*`` of the system's temporary
folder per run; the folders of the :data:`KEEP_RUNS` latest runs that kept any stay, older ones are removed
when a later run keeps one. ``workdir=PATH`` makes every case run use ``PATH`` (a suite written for a
repository, run from its root): nothing there is made, kept or removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from evalnb.agents._base import DeferredPath

__all__ = ["KEEP_FAILED", "KEEP_RUNS", "Lease", "Workdirs"]

KEEP_FAILED = 20
"""The most working directories of failed case runs one run keeps (per process running case runs)."""
KEEP_RUNS = 10
"""How many runs' folders of kept working directories stay in the temporary folder (the latest ones)."""
MARKER = ".evalnb-kept"
"""The file in a run's folder of kept directories: its run, written when the run ends (only a finished run's
folder is ever removed by another run)."""


def _safe(case_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case_id)[:80] or "case"


class Lease:
    """The working directory of one case run: made when first asked for (:meth:`path`), or never."""

    __slots__ = ("_owner", "made")

    def __init__(self, owner: Workdirs) -> None:
        self._owner: Workdirs | None = owner
        self.made: Path | None = owner.fixed

    def path(self) -> Path:
        if self.made is None:
            assert self._owner is not None, "the case run is over"
            self.made = self._owner.take()
        return self.made

    def _when_read(self) -> Path | None:
        # Read after the case run ended (a Request kept for later, an agent call abandoned at its timeout): it
        # had no directory, and none is made now.
        return self.made if self._owner is None else self.path()

    def deferred(self) -> Path | DeferredPath:
        """What ``Request.workdir`` holds: the directory, or one made when the agent first reads it."""
        return self.made if self.made is not None else DeferredPath(self._when_read)


class Workdirs:
    """Hands out and takes back the working directories of one run (one per worker process).

    Args:
        fixed: the directory every case run uses (``workdir=PATH``), or None for one of its own each.
        run: a name of the run, the same in every process running its case runs (its kept folders go together).
    """

    def __init__(self, fixed: Path | None, *, run: str = "") -> None:
        self.fixed = fixed
        self.run = run
        self._parent: Path | None = None
        self._free: list[Path] = []
        self._made = 0
        self.kept = 0
        self.removed = 0
        # a sync agent reads Request.workdir in its own thread: the directory is made there
        self._lock = threading.Lock()

    def lease(self) -> Lease:
        return Lease(self)

    def _root(self) -> Path:
        if self._parent is None:
            self._parent = Path(tempfile.mkdtemp(prefix="evalnb-"))
        return self._parent

    def take(self) -> Path:
        """A directory for a case run: the fixed one, or a fresh empty one."""
        if self.fixed is not None:
            return self.fixed  # checked when the run started (running/_setup.py, fixed_workdir)
        with self._lock:
            if self._free:
                return self._free.pop()
            self._made += 1
            path = self._root() / f"run-{self._made}"
        path.mkdir()
        return path

    def give_back(self, lease: Lease, case_id: str, run: int, passed: bool) -> str | None:
        """Take back a case run's directory; returns what ``runs.workdir`` says (the kept directory, or None).

        A passing run's directory is freed (an empty one is handed to the next run instead of being deleted:
        directory creation and removal cost more than the whole per-call overhead on some filesystems at
        thousands of runs). A failed run's is kept under a name that says which case run it was, up to
        :data:`KEEP_FAILED`; past that it is removed.
        """
        path, lease._owner = lease.made, None
        if path is None:
            return None  # never made: nothing to look at, nothing kept
        if self.fixed is not None:
            return str(path)
        if passed or self.kept >= KEEP_FAILED:
            self.removed += not passed
            with os.scandir(path) as entries:
                empty = next(entries, None) is None
            if empty:
                with self._lock:
                    self._free.append(path)
            else:
                shutil.rmtree(path, ignore_errors=True)
            return None
        self.kept += 1
        target = path.with_name(f"{_safe(case_id)}-run{run + 1}")
        try:
            path.rename(target)
        except OSError:
            return str(path)
        return str(target)

    def cleanup(self) -> None:
        """Remove the free directories; a folder that keeps some is marked, and older runs' are removed."""
        for path in self._free:
            shutil.rmtree(path, ignore_errors=True)
        self._free.clear()
        if self._parent is None:
            return
        try:
            self._parent.rmdir()  # only when nothing was kept
            return
        except OSError:
            pass
        with contextlib.suppress(OSError):
            (self._parent / MARKER).write_text(f"{self.run}\n", encoding="utf-8")
        with contextlib.suppress(OSError):
            prune(self._parent.parent, keep_runs=KEEP_RUNS)


def prune(folder: Path, *, keep_runs: int) -> list[Path]:
    """Remove the kept-directory folders of all but the ``keep_runs`` latest finished runs in ``folder``;
    returns what was removed. Only folders evalnb made (``evalnb-*`` holding its marker, owned by this user,
    not links) are looked at; a run still going has no marker yet and is never touched."""
    runs: dict[str, float] = {}
    found: list[tuple[Path, str, float]] = []
    for entry in folder.glob("evalnb-*"):
        marker = entry / MARKER
        try:
            if entry.is_symlink() or not entry.is_dir():
                continue
            info = marker.stat()
            if hasattr(os, "getuid") and entry.stat().st_uid != os.getuid():
                continue
            run = marker.read_text(encoding="utf-8").strip() or entry.name
        except OSError:
            continue
        found.append((entry, run, info.st_mtime))
        runs[run] = max(runs.get(run, 0.0), info.st_mtime)
    latest = set(sorted(runs, key=runs.__getitem__, reverse=True)[:keep_runs])
    removed = [entry for entry, run, _ in found if run not in latest]
    for entry in removed:
        shutil.rmtree(entry, ignore_errors=True)
    return removed


def run_name() -> str:
    """A name for a run, the same in all of its processes: when it started, and where."""
    return f"{time.time():.6f}-{os.getpid()}"
