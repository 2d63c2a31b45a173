"""Submodules as attributes of their package, imported when first asked for (PEP 562).

``import evalnb`` stays light (no pandas, plotly, SQLAlchemy), yet every documented dotted name resolves after
it alone: ``evalnb.export.to_document``, ``evalnb.judges.labels.compare_judges``. A package's module
``__getattr__`` hands a name it does not define to :func:`submodule`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["home", "homes", "submodule"]


def submodule(package: str, name: str) -> ModuleType:
    """The public submodule ``package.name``, imported now if it was not.

    Raises:
        AttributeError: when ``package`` has no public submodule of that name (private ``_name`` modules are
            not attributes; ``hasattr`` and tab completion see the usual error).

    Example::

        def __getattr__(name):
            return submodule(__name__, name)
    """
    missing = AttributeError(f"module {package!r} has no attribute {name!r}")
    if not name.isidentifier() or name.startswith("_"):
        raise missing
    try:
        found = importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise missing
    return importlib.import_module(f"{package}.{name}")


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def homes(package: str, namespace: Mapping[str, Any], names: Iterable[str]) -> None:
    """Give the classes and functions ``package`` exports from its private modules their public home: their
    ``__module__`` becomes ``package``, so reprs, tracebacks and docs show ``evalnb.judges.OpenAIJudge``, not a
    private path (httpx does the same). An object that already has a public home keeps it; pickles name the
    public path, which resolves.

    Example::

        homes(__name__, globals(), __all__)   # at the end of a package's __init__
    """
    for name in names:
        obj = namespace.get(name)
        if obj is not None and getattr(obj, "__name__", None) == name:  # an alias keeps its own home
            home(package, obj)


def home(package: str, obj: Any) -> Any:
    """One object's public home (see :func:`homes`); ``obj`` itself, for lazily resolved names."""
    module = getattr(obj, "__module__", None)
    if (isinstance(obj, type) or callable(obj)) and isinstance(module, str) and _private(module):
        with contextlib.suppress(AttributeError, TypeError):  # a builtin or a slotted object: leave it
            obj.__module__ = package
    return obj
