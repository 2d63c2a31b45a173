"""Name -> entry registries and the plugins that fill them: the one mechanism behind formats, checks, agent
types, judge strings, executors, fact kinds and output writers.

A registry is filled by modules that register themselves when imported. The built-in entries are declared
like entry points, name -> module, and a module is imported the first time one of its names is looked up
(or, for a registry whose built-ins come from a few modules together, ``modules=``, all of them at the first
lookup of any name): ``import evalnb`` stays light, and loading a ``.toml`` suite never imports the YAML
parser.

Plugins are loaded once per process, before the first lookup of any registry (docs/extending.md, plugins):

* the entry points of the group ``evalnb.plugins`` of every installed distribution (a third-party package
  declares ``[project.entry-points."evalnb.plugins"] name = "module"`` or ``"module:function"``: the module
  is imported, the function, when named, called with no arguments); ``EVALNB_DISABLE_PLUGIN_AUTOLOAD=1``
  skips them, as ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` does for pytest;
* then the modules named in the environment variable ``EVALNB_PLUGINS`` (comma-separated, ``module`` or
  ``path/to/file.py``, like ``PYTEST_PLUGINS``).

They are how the command line learns a format, check, agent type or judge string that a notebook registers
by importing its module.

Example::

    FORMATS: Registry[Format] = Registry("format", builtins={"tasks-toml": "evalnb.formats._tasks_toml"})
    FORMATS.register("tasks-toml", entry)     # in evalnb/formats/_tasks_toml.py
    FORMATS.get("tasks-toml")                 # imports that module on first use
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

__all__ = ["ENTRY_POINT_GROUP", "NO_AUTOLOAD_ENV", "PLUGINS_ENV", "Registry", "load_plugins"]

T = TypeVar("T")
D = TypeVar("D")

PLUGINS_ENV = "EVALNB_PLUGINS"
ENTRY_POINT_GROUP = "evalnb.plugins"
PYDANTIC_GROUP = "pydantic"  # pydantic's own plugins (a validator's first build looks them up)
NO_AUTOLOAD_ENV = "EVALNB_DISABLE_PLUGIN_AUTOLOAD"

# Guards the registries' dicts and the plugin state. Never held while importing: a module being imported
# registers itself, and a lock held across an import could deadlock with Python's own import locks.
_lock = threading.Lock()
_plugins_loaded = False
_plugins_loader: int | None = None  # the thread importing the plugins right now
_plugins_done = threading.Condition(_lock)


def load_plugins() -> None:
    """Load the plugins of the entry-point group ``evalnb.plugins``, then those of ``$EVALNB_PLUGINS``,
    once per process.

    Raises:
        ConfigError: ``PLUGIN_ERROR`` when an entry point, a named module or a file does not load (it is tried
            again at the next lookup, so the error is never swallowed); an entry point's error names its
            distribution.
    """
    global _plugins_loaded, _plugins_loader
    if _plugins_loaded:
        return  # the common case, without the lock: every registry lookup asks
    me = threading.get_ident()
    with _lock:
        while not _plugins_loaded and _plugins_loader not in (None, me):
            _plugins_done.wait()  # another thread is importing them
        if _plugins_loaded or _plugins_loader == me:
            return  # loaded, or a plugin looks something up while it registers
        _plugins_loader = me
    loaded = False
    try:
        declared = _may_declare((ENTRY_POINT_GROUP, PYDANTIC_GROUP))
        if PYDANTIC_GROUP not in declared:
            _no_pydantic_plugins()
        if ENTRY_POINT_GROUP in declared and os.environ.get(NO_AUTOLOAD_ENV, "").strip() in ("", "0"):
            _load_entry_points()
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


def _forget_plugins() -> None:
    """Load the plugins again at the next lookup (a test that installs a distribution uses it)."""
    global _plugins_loaded
    with _lock:
        _plugins_loaded = False


def _load_entry_points() -> None:
    from importlib.metadata import entry_points

    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
            if point.attr is not None and callable(loaded):
                loaded()  # `module:function`: the function registers
        except Exception as exc:
            raise _plugin_error(point, exc) from exc


def _may_declare(groups: tuple[str, ...]) -> frozenset[str]:
    """The entry-point groups of ``groups`` that a distribution on ``sys.path`` may declare.

    The ``entry_points.txt`` files are searched for the groups' headers: a few milliseconds, where
    ``importlib.metadata`` reading every distribution took ~13 ms of each process's start among 200 installed
    ones (most environments declare no evalnb plugin and no pydantic plugin); it looks where ``importlib.metadata``
    does (``*.dist-info``, ``*.egg-info``, an egg's ``EGG-INFO``). What this search cannot see counts as a yes for
    every group: an entry of ``sys.path`` that is a file (a zip), a folder it cannot list, a finder of
    distributions other than the standard one."""
    import importlib.machinery

    every = frozenset(groups)
    if any(
        hasattr(finder, "find_distributions") and finder is not importlib.machinery.PathFinder
        for finder in sys.meta_path
    ):
        return every
    header = re.compile(r"^\s*\[\s*(" + "|".join(map(re.escape, groups)) + r")\s*\]", re.MULTILINE)
    found: set[str] = set()
    for entry in sys.path:
        folder = entry or "."
        if not os.path.isdir(folder):
            if os.path.exists(folder):
                return every
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            return every
        egg = folder.lower().endswith(".egg")  # an egg on sys.path holds its metadata in EGG-INFO
        for name in names:
            low = name.lower()
            if low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info"):
                found.update(m.group(1) for m in header.finditer(_text(folder, name)))
        if found == every:
            break
    return frozenset(found)


def _no_pydantic_plugins() -> None:
    """Tell pydantic that no distribution declares a plugin of its own, the answer its first validator would find
    by reading every distribution's metadata (~13 ms of each process's start). It keeps that answer in its cache
    of plugins; a pydantic that keeps it elsewhere, or has looked already, is left as it is."""
    try:
        from pydantic.plugin import _loader
    except ImportError:
        return
    if getattr(_loader, "_plugins", ()) is None and getattr(_loader, "_loading_plugins", None) is False:
        _loader._plugins = {}


def _text(folder: str, dist: str) -> str:
    try:
        with open(os.path.join(folder, dist, "entry_points.txt"), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:  # none (most distributions), or an egg-info file
        return ""


def _plugin_error(point: Any, exc: BaseException) -> Exception:
    from evalnb.errors import ConfigError

    dist = getattr(point, "dist", None)
    name = getattr(dist, "name", None) or "an unknown distribution"
    version = getattr(dist, "version", None)
    where = f"{name} {version}" if version else name
    return ConfigError(
        f"plugin {point.name!r} ({point.value}) of the distribution {where!r}, entry point group "
        f"{ENTRY_POINT_GROUP!r}, failed to load: {type(exc).__name__}: {exc}. Upgrade or reinstall "
        f"{name!r} (pip install --upgrade {name}), uninstall it (pip uninstall {name}), or set "
        f"{NO_AUTOLOAD_ENV}=1 to skip installed plugins",
        code="PLUGIN_ERROR",
    )


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

    A read-only mapping of name -> entry besides (``registry["name"]``, ``len``, ``items()``), every built-in and
    plugin loaded first.

    Args:
        kind: what an entry is, for messages (``"format"``).
        builtins: name -> module that registers that name when imported.
        modules: modules that register built-ins between them, all imported at the first lookup of any name
            (the check modules register many spec types each).
        loader: called once before the first lookup, for built-ins a higher layer registers (the writers of
            ``evalnb.export``, reached through :mod:`evalnb._hooks`).
    """

    def __init__(
        self,
        kind: str,
        *,
        builtins: Mapping[str, str] | None = None,
        modules: Sequence[str] = (),
        loader: Callable[[], object] | None = None,
    ) -> None:
        self.kind = kind
        self._builtins = dict(builtins or {})
        self._modules = tuple(modules)
        self._loader = loader
        self._bulk_loaded = not self._modules and loader is None
        self._entries: dict[str, T] = {}

    def _load(self, name: str | None = None) -> None:
        """Import the plugins, the modules of ``modules`` and ``loader``, and the module of built-in ``name``
        (of every built-in when None)."""
        load_plugins()
        self._load_bulk()
        names = list(self._builtins) if name is None else [name] if name in self._builtins else []
        for key in names:
            if key not in self._entries:
                # A module already being imported (it is registering itself right now) comes back at once.
                importlib.import_module(self._builtins[key])

    def _load_bulk(self) -> None:
        if self._bulk_loaded:
            return
        # Every one exists: a failing import is a broken install and must surface. Marked loaded only
        # afterwards, so a later lookup raises the same error again instead of finding nothing.
        for module in self._modules:
            importlib.import_module(module)
        if self._loader is not None:
            self._loader()
        self._bulk_loaded = True

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

    @overload
    def get(self, name: str) -> T | None: ...
    @overload
    def get(self, name: str, default: D) -> T | D: ...
    def get(self, name: str, default: object = None) -> object:
        """The entry under ``name``, or ``default`` (None)."""
        self._load(name)
        return self._entries.get(name, default)

    def __getitem__(self, name: str) -> T:
        self._load(name)
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(name) from None

    def __contains__(self, name: object) -> bool:
        # A built-in name is known without importing its module.
        if isinstance(name, str) and name in self._builtins:
            return True
        load_plugins()
        self._load_bulk()
        return name in self._entries

    def registered(self) -> dict[str, T]:
        """The entries registered so far, in registration order: the plugins are loaded first, but no built-in's
        module is imported (for a caller that knows what the built-ins declare, such as the formats' file
        suffixes, and imports only the one it needs)."""
        load_plugins()
        self._load_bulk()
        with _lock:
            return dict(self._entries)

    def names(self) -> tuple[str, ...]:
        """Every registered name: the built-ins in their declared order, then the rest as registered."""
        self._load()
        with _lock:
            known = [n for n in self._builtins if n in self._entries]
            return (*known, *(n for n in self._entries if n not in self._builtins))

    def keys(self) -> tuple[str, ...]:
        """The same as :meth:`names`."""
        return self.names()

    def values(self) -> list[T]:
        """Every entry, in the order of :meth:`names`."""
        return [self._entries[n] for n in self.names()]

    def items(self) -> list[tuple[str, T]]:
        """Every (name, entry), in the order of :meth:`names`."""
        return [(n, self._entries[n]) for n in self.names()]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self.names())})"
