"""Name -> entry registries (formats, agent types, judge strings) and the plugins that fill them.

A registry is filled by modules that register themselves when imported. The built-in entries are declared
like entry points, name -> module, and a module is imported the first time one of its names is looked up:
``import evalnb`` stays light, and loading a ``.toml`` suite never imports the YAML parser. Plugins are the
modules named in the environment variable ``EVALNB_PLUGINS`` (comma-separated, ``module`` or
``path/to/file.py``, like ``PYTEST_PLUGINS``), imported before the first lookup; they are how the command
line learns a format, agent type or judge string that a notebook registers by importing its module.

Example::

    FORMATS: Registry[Format] = Registry("format", builtins={"tasks-toml": "evalnb.formats._tasks_toml"})
    FORMATS.register("tasks-toml", entry)     # in evalnb/formats/_tasks_toml.py
    FORMATS.get("tasks-toml")                 # imports that module on first use
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import threading
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

__all__ = ["PLUGINS_ENV", "Registry", "load_plugins"]

T = TypeVar("T")

PLUGINS_ENV = "EVALNB_PLUGINS"

# Guards the registries' dicts and the plugin state. Never held while importing: a module being imported
# registers itself, and a lock held across an import could deadlock with Python's own import locks.
_lock = threading.Lock()
_plugins_loaded = False
_plugins_loader: int | None = None  # the thread importing the plugins right now
_plugins_done = threading.Condition(_lock)


def load_plugins() -> None:
    """Import the modules named in ``$EVALNB_PLUGINS``, once per process.

    Raises:
        ConfigError: ``PLUGIN_ERROR`` when a named module or file does not import (it is tried again at the
            next lookup, so the error is never swallowed).
    """
    global _plugins_loaded, _plugins_loader
    me = threading.get_ident()
    with _lock:
        while not _plugins_loaded and _plugins_loader not in (None, me):
            _plugins_done.wait()  # another thread is importing them
        if _plugins_loaded or _plugins_loader == me:
            return  # loaded, or a plugin looks something up while it registers
        _plugins_loader = me
    loaded = False
    try:
        names = [n.strip() for n in os.environ.get(PLUGINS_ENV, "").split(",") if n.strip()]
        if names:
            from evalnb._usercode import import_target

            for name in names:
                import_target(name, what=f"${PLUGINS_ENV} plugin", code="PLUGIN_ERROR")
        loaded = True
    finally:
        with _lock:
            _plugins_loaded, _plugins_loader = loaded, None
            _plugins_done.notify_all()


def _origin(entry: object) -> str | None:
    """The module an entry comes from: that of its first function (a parser, a builder)."""
    values = (
        [getattr(entry, f.name) for f in dataclasses.fields(entry)] if dataclasses.is_dataclass(entry) else []
    )
    for value in [*values, entry]:
        module = getattr(value, "__module__", None)
        if callable(value) and module not in (None, "builtins", __name__):
            return str(module)
    return None


class Registry(Generic[T]):
    """Entries by name: the built-ins in their declared order, then the others in registration order.

    Args:
        kind: what an entry is, for messages (``"format"``).
        builtins: name -> module that registers that name when imported.
    """

    def __init__(self, kind: str, *, builtins: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self._builtins = dict(builtins or {})
        self._entries: dict[str, T] = {}

    def _load(self, name: str | None = None) -> None:
        """Import the plugins, and the module of built-in ``name`` (of every built-in when None)."""
        load_plugins()
        names = list(self._builtins) if name is None else [name] if name in self._builtins else []
        for key in names:
            if key not in self._entries:
                # A module already being imported (it is registering itself right now) comes back at once.
                importlib.import_module(self._builtins[key])

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Add ``entry`` under ``name``; a name another module took is an error unless ``replace``.

        The module that registered the name may register it again (a module reloaded in a notebook).

        Raises:
            ValueError: when the name is taken by another module's entry (and ``replace`` is false).
        """
        if name in self._builtins:
            self._load(name)  # a built-in name is taken once its module has loaded
        with _lock:
            old = self._entries.get(name)
            if old is not None and _origin(old) != _origin(entry) and not replace:
                raise ValueError(
                    f"{self.kind} {name!r} is already registered (pass replace=True to replace it)"
                )
            self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> T | None:
        """Remove the entry under ``name`` (a test's toy entry, say); the entry, or None."""
        with _lock:
            return self._entries.pop(name, None)

    def get(self, name: str) -> T | None:
        """The entry under ``name``, or None."""
        self._load(name)
        return self._entries.get(name)

    def __contains__(self, name: object) -> bool:
        # A built-in name is known without importing its module.
        if isinstance(name, str) and name in self._builtins:
            return True
        load_plugins()
        return name in self._entries

    def names(self) -> tuple[str, ...]:
        """Every registered name: the built-ins in their declared order, then the rest as registered."""
        self._load()
        with _lock:
            known = [n for n in self._builtins if n in self._entries]
            return (*known, *(n for n in self._entries if n not in self._builtins))

    def values(self) -> list[T]:
        """Every entry, in the order of :meth:`names`."""
        return [self._entries[n] for n in self.names()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self.names())})"
