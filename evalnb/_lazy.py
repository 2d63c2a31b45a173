"""Submodules as attributes of their package, imported when first asked for (PEP 562).

``import evalnb`` stays light (no pandas, plotly, SQLAlchemy), yet every documented dotted name resolves after
it alone: ``evalnb.export.to_document``, ``evalnb.judges.labels.compare_judges``. A package's module
``__getattr__`` hands a name it does not define to :func:`submodule`.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

__all__ = ["submodule"]


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
