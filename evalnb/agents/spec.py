"""Build an agent from a text spec, as the command line gives it: ``module:function`` or ``file.py:function``.

Example:
    >>> from evalnb.agents.spec import load_agent
    >>> agent = load_agent("my_project.agents:answer")        # a module on the import path (or the cwd)
    >>> agent = load_agent("agents/echo.py:echo")              # a file, loaded by path
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from evalnb.errors import ConfigError

__all__ = ["load_agent", "split_spec"]


def split_spec(spec: str) -> tuple[str, str]:
    """Split ``target:attr`` at the last colon (so ``C:\\agents\\a.py:f`` keeps its drive).

    Raises:
        ConfigError: when there is no ``:attr`` part.
    """
    target, sep, attr = spec.strip().rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(
            f"agent spec {spec!r} must be 'module:function' or 'path/to/file.py:function'",
            code="BAD_AGENT_SPEC",
        )
    return target, attr


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise ConfigError(f"agent file {str(path)!r} does not exist", code="BAD_AGENT_SPEC")
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    name = f"evalnb_agent_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigError(f"cannot load agent file {str(path)!r}", code="BAD_AGENT_SPEC")
    module = importlib.util.module_from_spec(module_spec)
    # Let the file import its siblings, as `python file.py` would.
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ConfigError(
            f"agent file {str(path)!r} failed to import: {type(exc).__name__}: {exc}", code="BAD_AGENT_SPEC"
        ) from exc
    return module


def _import_module(name: str) -> Any:
    # `evalnb run` is usually started from a project's root: make its modules importable like `python -m`.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise ConfigError(
                f"agent module {name!r} not found (looked on the import path and in {cwd})",
                code="BAD_AGENT_SPEC",
            ) from exc
        raise ConfigError(
            f"agent module {name!r} failed to import: {type(exc).__name__}: {exc}", code="BAD_AGENT_SPEC"
        ) from exc
    except Exception as exc:
        raise ConfigError(
            f"agent module {name!r} failed to import: {type(exc).__name__}: {exc}", code="BAD_AGENT_SPEC"
        ) from exc


def load_agent(spec: str) -> Any:
    """Resolve ``module:function`` or ``path/to/file.py:function`` to the object it names.

    A spec without a colon is the name of an agent configured in ``evalnb.toml`` (``evalnb.config``).

    The attribute may be dotted (``module:Class.method``). The returned object is whatever the module
    defines (a callable or an agent object); the runner adapts it with ``evalnb.agents.as_agent``.

    Raises:
        ConfigError: when the spec is malformed, the module or file cannot be imported, or the name is missing.

    Example:
        >>> load_agent("tests/agents_for_cli.py:echo")("hi")
        'hi'
    """
    if ":" not in spec:
        # A bare name is an agent configured in evalnb.toml or [tool.evalnb] (named agents).
        from evalnb.config import named_agent

        return named_agent(spec.strip())
    target, attr = split_spec(spec)
    looks_like_file = target.endswith(".py") or "/" in target or "\\" in target
    module = _import_file(Path(target)) if looks_like_file else _import_module(target)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise ConfigError(f"{target!r} has no attribute {attr!r}", code="BAD_AGENT_SPEC") from exc
    if not callable(obj) and not hasattr(obj, "respond"):
        raise ConfigError(
            f"{spec!r} names a {type(obj).__name__}, not a callable or an agent", code="BAD_AGENT_SPEC"
        )
    return obj
