"""Deprecated names: one warning, one wording, one schedule (docs/extending.md, Deprecations).

A renamed function, method, property, class or module attribute keeps its old name for a while. Using the old
name warns once per use with a :class:`FutureWarning` that names the old name, the new one, the version that
deprecated it and the version that removes it::

    evalnb.judges.Heuristic is deprecated since evalnb 0.1.0 and goes away in 0.3.0: use
    evalnb.judges.HeuristicJudge

Why ``FutureWarning`` and not ``DeprecationWarning``: evalnb's users are people in notebooks and scripts, not
library authors. Python hides a ``DeprecationWarning`` unless it is raised by code in ``__main__`` (PEP 565), so a
call from a user's own helper module, a test file or a scheduled script would be silent until the name is gone.
``FutureWarning`` is the category for deprecations meant for end users (pandas uses it for the same reason); it
is shown by default everywhere and is turned into an error by ``-W error`` like any warning.

The schedule: a name deprecated in ``X.Y`` is removed in ``X.(Y+2).0``, so one whole release warns before it goes
(:func:`removal_version`). The forms:

* :func:`warn`: the warning itself, for a code path that is deprecated (an option spelling, a CLI command);
* :func:`deprecated_function`: an old function name calling the new function;
* :func:`deprecated_method` / :func:`deprecated_property`: an old method or property name on a class;
* :func:`module_getattr`: a module's ``__getattr__`` (PEP 562) for old module attributes (classes, functions,
  constants), so ``from evalnb.judges import Heuristic`` warns and hands back the new object itself
  (``isinstance`` and subclassing keep working).

Every alias made here is listed by :func:`registered` (the tests check none outlives its removal version).
"""

from __future__ import annotations

import functools
import pkgutil
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from evalnb._version import __version__

__all__ = [
    "Renamed",
    "deprecated_function",
    "deprecated_method",
    "deprecated_property",
    "message",
    "module_getattr",
    "registered",
    "removal_version",
    "text_summary",
    "warn",
]

F = TypeVar("F", bound=Callable[..., Any])

#: How many minor releases a deprecated name lives beyond the one that deprecates it, warning.
MINORS_KEPT = 2

_REGISTERED: dict[str, Renamed] = {}


def removal_version(since: str) -> str:
    """The version that removes a name deprecated in ``since``: two minor releases later.

    Example::

        removal_version("0.1.0")   # '0.3.0'
    """
    parts = since.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a MAJOR.MINOR[.PATCH] version: {since!r}") from None
    return f"{major}.{minor + MINORS_KEPT}.0"


@dataclass(frozen=True)
class Renamed:
    """One deprecated name: what it was, what to use, and when it goes.

    ``target`` is what the old name hands back: a ``"package.module:name"`` string (resolved with
    :func:`pkgutil.resolve_name` on first use), a callable returning it, or ``None`` to resolve ``new`` itself.
    ``note`` is added to the message (why, or what changed beyond the name).

    Example::

        Renamed("evalnb.judges.Heuristic", "evalnb.judges.HeuristicJudge")
    """

    old: str
    new: str
    target: str | Callable[[], object] | None = None
    since: str = __version__
    removed_in: str | None = None
    note: str = ""

    @property
    def removal(self) -> str:
        """The version that removes the old name."""
        return self.removed_in or removal_version(self.since)

    @property
    def message(self) -> str:
        """The warning's text."""
        return message(self.old, self.new, since=self.since, removed_in=self.removal, note=self.note)

    def resolve(self) -> object:
        """What the old name stands for now."""
        target = self.target if self.target is not None else self.new
        if callable(target):
            return target()
        return pkgutil.resolve_name(target)

    def warn(self, *, stacklevel: int = 2) -> None:
        """Warn that the old name was used (``stacklevel`` as for :func:`warnings.warn`, counted from the
        caller of this method)."""
        warnings.warn(self.message, FutureWarning, stacklevel=stacklevel + 1)


def _register(renamed: Renamed) -> Renamed:
    _REGISTERED[renamed.old] = renamed
    return renamed


def registered() -> dict[str, Renamed]:
    """The deprecated names of the modules imported so far, by old name.

    Example::

        sorted(registered())   # ['Comparison.summary', 'evalnb.judges.Heuristic', ...]
    """
    return dict(_REGISTERED)


def message(
    old: str, new: str, *, since: str = __version__, removed_in: str | None = None, note: str = ""
) -> str:
    """The one wording of a deprecation.

    Example::

        message("Store.runs", "Store.history")
        # 'Store.runs is deprecated since evalnb 0.1.0 and goes away in 0.3.0: use Store.history'
    """
    gone = removed_in or removal_version(since)
    text = f"{old} is deprecated since evalnb {since} and goes away in {gone}: use {new}"
    return f"{text} ({note})" if note else text


def warn(
    old: str,
    new: str,
    *,
    since: str = __version__,
    removed_in: str | None = None,
    note: str = "",
    stacklevel: int = 2,
) -> None:
    """Warn (``FutureWarning``) that ``old`` is deprecated in favour of ``new``; ``stacklevel`` counts from the
    caller of :func:`warn`, as for :func:`warnings.warn`.

    Example::

        warn("evalnb runs", "evalnb history")
    """
    text = message(old, new, since=since, removed_in=removed_in, note=note)
    warnings.warn(text, FutureWarning, stacklevel=stacklevel + 1)


def deprecated_function(
    new: F, old: str, *, new_name: str | None = None, since: str = __version__, note: str = ""
) -> F:
    """An old function name: warns, then calls ``new`` with the same arguments.

    Example::

        write_report = deprecated_function(to_report, "evalnb.export.write_report")
    """
    shown = new_name or f"{new.__module__}.{new.__qualname__}"
    renamed = _register(Renamed(old, shown, target=lambda: new, since=since, note=note))

    @functools.wraps(new)
    def alias(*args: Any, **kwargs: Any) -> Any:
        renamed.warn()
        return new(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old.rsplit(".", 1)[-1]
    alias.__doc__ = f"Deprecated: {renamed.message}."
    return alias  # type: ignore[return-value]


def deprecated_method(new: str, old: str, *, owner: str, since: str = __version__, note: str = "") -> Any:
    """An old method name on class ``owner``: warns, then calls the method ``new`` of the same object.

    Example::

        class Comparison:
            summary = deprecated_method("headline", "summary", owner="Comparison")
    """
    renamed = _register(
        Renamed(f"{owner}.{old}", f"{owner}.{new}()", target=lambda: None, since=since, note=note)
    )

    def alias(self: Any, *args: Any, **kwargs: Any) -> Any:
        renamed.warn()
        return getattr(self, new)(*args, **kwargs)

    alias.__name__ = old
    alias.__qualname__ = f"{owner}.{old}"
    alias.__doc__ = f"Deprecated: {renamed.message}."
    return alias


def text_summary(owner: str) -> Any:
    """The old ``summary()`` of a class whose text is now ``headline()`` (docs/results.md, One word per thing:
    ``summary()`` is a DataFrame wherever it exists).

    Example::

        class Comparison:
            summary = text_summary("Comparison")
    """
    return deprecated_method(
        "headline",
        "summary",
        owner=owner,
        note="summary() is a DataFrame wherever it exists, as Result.summary(); the text is headline()",
    )


def deprecated_property(new: str, old: str, *, owner: str, since: str = __version__, note: str = "") -> Any:
    """An old property name on class ``owner``: warns, then reads the attribute ``new``.

    Example::

        class Comparison:
            has_regressions = deprecated_property("regressed", "has_regressions", owner="Comparison")
    """
    renamed = _register(
        Renamed(f"{owner}.{old}", f"{owner}.{new}", target=lambda: None, since=since, note=note)
    )

    def fget(self: Any) -> Any:
        renamed.warn()
        return getattr(self, new)

    fget.__name__ = old
    return property(fget, doc=f"Deprecated: {renamed.message}.")


def _asked_by_the_import_system() -> bool:
    caller = sys._getframe(2)  # 0: this function, 1: the module __getattr__, 2: who asked
    return (
        caller.f_code.co_filename.startswith("<frozen importlib.")
        and caller.f_code.co_name == "_handle_fromlist"
    )


def module_getattr(
    module: str, aliases: Mapping[str, Renamed], *, fallback: Callable[[str], object] | None = None
) -> Callable[[str], object]:
    """A module ``__getattr__`` (PEP 562) serving the old names ``aliases`` maps (attribute -> :class:`Renamed`),
    each with its warning; any other name goes to ``fallback`` (else the usual ``AttributeError``).

    Example::

        __getattr__ = module_getattr(__name__, {
            "Heuristic": Renamed("evalnb.judges.Heuristic", "evalnb.judges.HeuristicJudge"),
        }, fallback=lambda name: submodule(__name__, name))
    """
    for renamed in aliases.values():
        _register(renamed)

    def __getattr__(name: str) -> object:
        renamed = aliases.get(name)
        if renamed is not None:
            # ``from package import Old`` asks twice: the import system's hasattr (for a submodule of that name),
            # then the import itself. Warn once, on the user's line.
            if not _asked_by_the_import_system():
                renamed.warn()
            return renamed.resolve()
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
