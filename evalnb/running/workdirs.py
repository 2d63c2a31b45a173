"""Working directories of case runs: a fresh one per run, kept when the run failed (api contract).

``workdir=None`` gives every run a fresh temporary directory under one parent (``evalnb-*`` in the system's
temporary folder); a passing run's directory is removed, a failed run's is kept under a name that says which
case run it was and its path goes to ``result.runs.workdir``. ``workdir=PATH`` makes every run use ``PATH``
(a suite written for a repository, run from its root).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["Workdirs"]


def _safe(case_id: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in case_id)[:80] or "case"


class Workdirs:
    """Hands out and takes back the working directories of one run (one per worker process)."""

    def __init__(self, fixed: Path | None) -> None:
        self.fixed = fixed
        self._parent: Path | None = None
        self._free: list[Path] = []
        self._made = 0

    def _root(self) -> Path:
        if self._parent is None:
            self._parent = Path(tempfile.mkdtemp(prefix="evalnb-"))
        return self._parent

    def take(self) -> Path:
        """A directory for a case run: the fixed one, or a fresh empty one."""
        if self.fixed is not None:
            return self.fixed  # checked when the run started (running/setup.py, fixed_workdir)
        if self._free:
            return self._free.pop()
        self._made += 1
        path = self._root() / f"run-{self._made}"
        path.mkdir()
        return path

    def give_back(self, path: Path, case_id: str, run: int, passed: bool) -> str | None:
        """Free a passing run's directory; keep a failed one and return its path for ``runs.workdir``.

        An empty directory left by a passing run is handed to the next run instead of being deleted: it is
        as fresh as a new one, and directory creation and removal cost more than the whole per-call
        overhead budget on some filesystems at thousands of runs.
        """
        if self.fixed is not None:
            return str(path)
        if passed:
            with os.scandir(path) as entries:
                empty = next(entries, None) is None
            if empty:
                self._free.append(path)
            else:
                shutil.rmtree(path, ignore_errors=True)
            return None
        target = path.with_name(f"{_safe(case_id)}-run{run + 1}")
        try:
            path.rename(target)
        except OSError:
            return str(path)
        return str(target)

    def keep_unused(self, case_id: str, run: int) -> str:
        """The kept directory of a failed run that never needed one: empty, as the run left it untouched."""
        target = self._root() / f"{_safe(case_id)}-run{run + 1}"
        try:
            target.mkdir()
        except OSError:
            # The name is taken (two case ids with the same safe form): a fresh run directory, as when
            # renaming a used one fails.
            self._made += 1
            target = self._root() / f"run-{self._made}"
            target.mkdir()
        return str(target)

    def cleanup(self) -> None:
        for path in self._free:
            shutil.rmtree(path, ignore_errors=True)
        self._free.clear()
        if self._parent is not None:
            with contextlib.suppress(OSError):
                self._parent.rmdir()  # only when every run passed (nothing kept)
