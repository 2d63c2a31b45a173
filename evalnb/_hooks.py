"""Implementations a lower layer calls but may not import: each one a slot, filled from the top of the package.

The packages of evalnb are layered (docs/architecture.md, layers): each imports only the packages below it, at
top level and inside functions alike. A few conveniences live on low objects and are carried out by a higher
package: ``result.explore()`` and ``comparison.explore()`` by :mod:`evalnb.browser`, ``result.to_html(...)``,
``to_csv``, ``to_excel`` and ``comparisons.to_html(...)`` by the writers of :mod:`evalnb.export`, the labelled
pairs of :mod:`evalnb.judges.offline` judged through ``evalnb.run``, a suite's format name checked against the
formats of :mod:`evalnb.formats`. The lower package asks :func:`implementation` for its slot; the top of the
package (``evalnb/__init__.py``, above every layer and imported before any of them) names the implementation of
every slot with :func:`provide`, as a dotted string resolved with :func:`pkgutil.resolve_name` on first use.
So the arrow in the code points down, ``import evalnb`` imports nothing for it, and every method works after a
plain ``import evalnb``. (pandas' plotting backends work the same way: ``DataFrame.plot`` names a backend, it
does not import one.)

Example::

    from evalnb import _hooks

    _hooks.provide("result.explore", "evalnb.browser:explore_result")   # in evalnb/__init__.py
    _hooks.implementation("result.explore")(result)                      # in Result.explore
"""

from __future__ import annotations

import pkgutil
import threading
from typing import Any

__all__ = ["implementation", "provide", "provided"]

_lock = threading.Lock()
_targets: dict[str, str] = {}
_resolved: dict[str, Any] = {}


def provide(slot: str, target: str, *, replace: bool = False) -> None:
    """Name ``target`` (``"package.module:attribute"``, or a module) as the implementation of ``slot``.

    Raises:
        ValueError: when ``slot`` already has another implementation and ``replace`` is false.

    Example::

        provide("result.explore", "evalnb.browser:explore_result")
    """
    with _lock:
        if not replace and _targets.get(slot, target) != target:
            raise ValueError(f"{slot!r} is implemented by {_targets[slot]!r} already (give replace=True)")
        _targets[slot] = target
        _resolved.pop(slot, None)


def implementation(slot: str) -> Any:
    """What implements ``slot``: the object its dotted name names, imported on first use.

    Raises:
        LookupError: when nothing was provided for ``slot`` (``evalnb/__init__.py`` provides every slot the
            package uses).

    Example::

        explore = implementation("result.explore")
    """
    try:
        return _resolved[slot]
    except KeyError:
        pass
    with _lock:
        target = _targets.get(slot)
    if target is None:
        raise LookupError(f"nothing implements {slot!r}; evalnb/__init__.py provides the package's slots")
    found = pkgutil.resolve_name(target)  # an import: never while holding the lock
    with _lock:
        if _targets.get(slot) == target:
            _resolved[slot] = found
    return found


def provided() -> dict[str, str]:
    """Every slot and the dotted name of its implementation (what docs/architecture.md lists)."""
    with _lock:
        return dict(_targets)
