"""evalnb's package data and cache folder: the files shipped in :mod:`evalnb.examples` as paths on disk.

Below every layer, so that the judges (the labelled pairs), the data sources (the cube model) and the demo read
the shipped files without importing :mod:`evalnb.examples`, which loads suites (it sits above ``formats``).
``evalnb.examples`` re-exports :func:`resource`, :func:`cache_dir` and :data:`CACHE_ENV`.
"""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from evalnb.errors import ConfigError

__all__ = ["CACHE_ENV", "PACKAGE", "cache_dir", "on_disk", "resource", "writable"]

PACKAGE = "evalnb.examples"
"""The package that holds the shipped files (read with :mod:`importlib.resources`)."""

CACHE_ENV = "EVALNB_CACHE_DIR"
"""The environment variable that names evalnb's cache folder (default ``$XDG_CACHE_HOME/evalnb`` or
``~/.cache/evalnb``)."""


def resource(relative: str) -> Path:
    """Any shipped file (``"kb/handbook.md"``, ``"labels/pairs.csv"``), as a path on disk.

    Raises:
        ConfigError: ``MISSING_FIELD`` when the package holds no such file (an installation that lost its
            package data).

    Example::

        evalnb.examples.resource("kb/handbook.md").read_text()[:30]
    """
    found = resources.files(PACKAGE)
    for part in relative.split("/"):  # one part at a time: Traversable.joinpath takes one on Python 3.10
        found = found.joinpath(part)
    if not found.is_file():
        raise ConfigError(
            f"evalnb's package data lacks {relative} (looked in {found}); reinstall evalnb",
            code="MISSING_FIELD",
        )
    return on_disk(found, relative)


def on_disk(found: Traversable, relative: str) -> Path:
    """A shipped file as a path that stays valid: itself when the package is a folder, else (a zipped package)
    a copy in the cache folder, written once per evalnb version (``importlib.resources.as_file`` would give a
    temporary copy that is gone when its context ends)."""
    if isinstance(found, Path):
        return found
    from evalnb._files import atomic_write
    from evalnb._version import __version__

    data = found.read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:12]
    target = cache_dir() / "examples" / f"{__version__}-{digest}" / relative
    if not target.is_file():
        writable(target.parent)
        atomic_write(target, data)
    return target


def cache_dir() -> Path:
    """evalnb's cache folder: ``$EVALNB_CACHE_DIR``, else ``$XDG_CACHE_HOME/evalnb``, else ``~/.cache/evalnb``
    (``%LOCALAPPDATA%\\evalnb\\Cache`` on Windows). Nothing is created here until something is cached.

    Example::

        evalnb.examples.cache_dir()
        # PosixPath('/home/me/.cache/evalnb')
    """
    own = os.environ.get(CACHE_ENV)
    if own:
        return Path(own).expanduser()
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "evalnb" / "Cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "evalnb"


def writable(folder: Path) -> None:
    """Create ``folder`` (and its parents) for the cache, or say which variable to set."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the cache folder {folder}: {exc.strerror or exc}; set ${CACHE_ENV} to a folder "
            "evalnb may write",
            code="INVALID_VALUE",
        ) from exc
