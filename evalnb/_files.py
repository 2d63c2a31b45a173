"""Writing files atomically: the one helper every file evalnb writes goes through.

A reader (or a crash) sees the old file or the new one, never half of one: the data goes to a temporary file in
the target's folder, is flushed to disk, then replaces the target with ``os.replace`` (atomic on POSIX and
Windows within one filesystem). An existing file's permission bits are kept.

Example::

    from evalnb._files import atomic_write
    atomic_write("results/v1.json", text)
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from evalnb._unicode import clean

__all__ = ["atomic_write", "atomic_writer"]


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike[str], *, binary: bool = False, encoding: str = "utf-8", durable: bool = True
) -> Iterator[IO[Any]]:
    """A file object whose content replaces ``path`` atomically when the ``with`` block ends without error.

    Parent folders are created. On an error inside the block the target is left as it was. ``durable=False``
    skips the fsync before the rename: still atomic for readers and crashes of the process, but after a power
    cut the file may be empty; for caches, where an unreadable entry is a miss (an fsync costs ten times the
    write of a small file).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        fh: IO[Any] = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="")
        with fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        # mkstemp makes the file 0600: keep the target's bits, or give a new file what open() would.
        try:
            bits = target.stat().st_mode & 0o7777
        except OSError:
            bits = 0o666 & ~_umask()
        with contextlib.suppress(OSError):
            os.chmod(tmp, bits)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    # Read once: setting and restoring the mask is not thread-safe, and it does not change while a run lasts.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(
    path: str | os.PathLike[str],
    data: str | bytes | Callable[[IO[Any]], None],
    *,
    encoding: str = "utf-8",
    durable: bool = True,
) -> Path:
    """Write ``data`` (text, bytes, or a function that writes into the open file) to ``path`` atomically.

    A function is called with a binary file object (for writers such as openpyxl's or zipfile's that need
    one); text is written with ``encoding`` and no newline translation, a lone surrogate in it as U+FFFD
    (:mod:`evalnb._unicode`: never an encoding error after a run). ``durable`` as for :func:`atomic_writer`.
    Returns the path.
    """
    binary = not isinstance(data, str)
    with atomic_writer(path, binary=binary, encoding=encoding, durable=durable) as fh:
        if callable(data):
            data(fh)
        else:
            fh.write(clean(data) if isinstance(data, str) else data)
    return Path(path)
