"""The one loader of user code: ``module:attr`` and ``path/to/file.py:attr``, for agents, judges and plugins.

The module is imported first (so a failure names the module and its own error), then
:func:`pkgutil.resolve_name` resolves ``module:attr`` in it; a file is imported by path, once
(a second spec naming the same file gets the same module), with its folder on ``sys.path`` so that it can
import its siblings as ``python file.py`` would. Every failure is a :class:`~evalnb.errors.ConfigError`
naming what was looked for and where.

Example::

    load_object("my_project.agents:answer", what="agent")
    load_object("agents/echo.py:Echo.respond", what="agent")     # the attribute may be dotted
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from evalnb.errors import ConfigError

__all__ = ["FILE_MODULE_PREFIX", "import_target", "is_file_target", "load_object", "split_spec"]

FILE_MODULE_PREFIX = "evalnb_user_"
"""The start of the name a file's module gets in ``sys.modules`` (a cluster executor sends its code by value)."""


def split_spec(spec: str, *, what: str = "agent", code: str = "BAD_AGENT_SPEC") -> tuple[str, str]:
    """Split ``target:attr`` at the last colon (so ``C:\\agents\\a.py:f`` keeps its drive).

    Raises:
        ConfigError: when there is no ``:attr`` part.
    """
    target, sep, attr = spec.strip().rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(
            f"{what} spec {spec!r} must be 'module:function' or 'path/to/file.py:function'", code=code
        )
    return target, attr


def is_file_target(target: str) -> bool:
    """Whether the part before the colon names a file (``x.py``, or any path with a separator)."""
    return target.endswith(".py") or "/" in target or "\\" in target


def import_target(target: str, *, what: str, code: str, base: Path | None = None) -> ModuleType:
    """Import a module by name, or a file by path (relative paths first against ``base`` when it has them).

    Raises:
        ConfigError: with ``code`` when the module or file is missing or fails to import.
    """
    if is_file_target(target):
        path = Path(target)
        if base is not None and not path.is_absolute() and (base / path).exists():
            path = base / path  # e.g. relative to the evalnb.toml that names it
        return _import_file(path, what=what, code=code)
    return _import_module(target, what=what, code=code)


def load_object(
    spec: str, *, what: str = "agent", code: str = "BAD_AGENT_SPEC", base: Path | None = None
) -> Any:
    """The object ``module:attr`` or ``path/to/file.py:attr`` names (``attr`` may be dotted).

    Args:
        spec: the text spec.
        what: what the object is for, in messages (``"agent"``, ``"judge"``).
        code: the :class:`~evalnb.errors.ConfigCode` of every failure.
        base: the folder a relative file path is looked up in first (a configuration file's folder).

    Raises:
        ConfigError: when the spec is malformed, the module or file cannot be imported, or the name is missing.
    """
    target, attr = split_spec(spec, what=what, code=code)
    module = import_target(target, what=what, code=code, base=base)
    try:
        # The module is imported already: what can fail now is the attribute walk alone.
        return pkgutil.resolve_name(f"{module.__name__}:{attr}")
    except (AttributeError, ValueError) as exc:
        raise ConfigError(f"{target!r} has no attribute {attr!r}", code=code) from exc


def _import_file(path: Path, *, what: str, code: str) -> ModuleType:
    if not path.is_file():
        raise ConfigError(f"{what} file {str(path)!r} does not exist", code=code)
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    name = f"{FILE_MODULE_PREFIX}{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigError(f"cannot load {what} file {str(path)!r}", code=code)
    module = importlib.util.module_from_spec(module_spec)
    # Let the file import its siblings, as `python file.py` would.
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ConfigError(
            f"{what} file {str(path)!r} failed to import: {type(exc).__name__}: {exc}", code=code
        ) from exc
    return module


def _import_module(name: str, *, what: str, code: str) -> ModuleType:
    # `evalnb run` is usually started from a project's root: make its modules importable like `python -m`.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise ConfigError(
                f"{what} module {name!r} not found (looked on the import path and in {cwd})", code=code
            ) from exc
        raise ConfigError(
            f"{what} module {name!r} failed to import: {type(exc).__name__}: {exc}", code=code
        ) from exc
    except Exception as exc:
        raise ConfigError(
            f"{what} module {name!r} failed to import: {type(exc).__name__}: {exc}", code=code
        ) from exc
