"""A Result's suite built when something first asks for it (docs/results.md, the store).

A stored run of a million cases reads back its frames in seconds; building its suite's million cases from the
stored definition took as long again and most of the memory, and a notebook that looks at the frames, the
cases, the failures or the counts never needs them: those need the case ids, names and categories in suite
order, which the store keeps beside the run. :class:`DeferredSuite` holds those and the way to build the
Suite; ``Result.suite`` builds it once, on first use, and every Result sharing the holder shares that Suite.

Example::

    later = DeferredSuite("support", ids, names, categories, build=lambda: read_suite())
    result = Result.from_frames(suite=later, runs=runs, scores=scores)
    result.cases            # from ids, names and categories alone
    result.suite.cases[0]   # built now, once
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.suite import Suite

__all__ = ["DeferredSuite", "case_columns", "case_count", "case_ids"]


class DeferredSuite:
    """A suite's name and its cases' ids, names and categories (in suite order), and ``build`` for the rest."""

    __slots__ = ("_build", "_lock", "_suite", "categories", "ids", "name", "names")

    def __init__(
        self,
        name: str,
        ids: Sequence[Any],
        names: Sequence[Any],
        categories: Sequence[Any],
        *,
        build: Callable[[], Suite],
    ) -> None:
        if not len(ids) == len(names) == len(categories):
            raise ValueError("a deferred suite needs one name and one category per case id")
        self.name = name
        self.ids, self.names, self.categories = ids, names, categories
        self._build: Callable[[], Suite] | None = build
        self._suite: Suite | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> Suite | None:
        """The Suite once built, else None."""
        return self._suite

    def get(self) -> Suite:
        """The Suite, built on the first call (a failed build is tried again on the next)."""
        with self._lock:
            if self._suite is None:
                assert self._build is not None
                self._suite = self._build()
                self._build = None  # what it held (a store, a definition's id) is not needed again
            return self._suite


def _unbuilt(suite: Suite | DeferredSuite) -> DeferredSuite | None:
    return suite if isinstance(suite, DeferredSuite) and suite.built is None else None


def _cases(suite: Suite | DeferredSuite) -> Any:
    built = suite.built if isinstance(suite, DeferredSuite) else suite
    assert built is not None
    return built.cases


def case_columns(suite: Suite | DeferredSuite) -> tuple[Sequence[Any], Sequence[Any], Sequence[Any]]:
    """The suite's case ids, names and categories in order, without building a deferred one."""
    later = _unbuilt(suite)
    if later is not None:
        return later.ids, later.names, later.categories
    cases = _cases(suite)
    return [c.id for c in cases], [c.name for c in cases], [c.category for c in cases]


def case_ids(suite: Suite | DeferredSuite) -> Sequence[Any]:
    """The suite's case ids in order, without building a deferred one."""
    later = _unbuilt(suite)
    return later.ids if later is not None else [c.id for c in _cases(suite)]


def case_count(suite: Suite | DeferredSuite) -> int:
    """How many cases the suite has, without building a deferred one."""
    later = _unbuilt(suite)
    return len(later.ids) if later is not None else len(_cases(suite))
