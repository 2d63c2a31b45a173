"""Rules that stop a run from starting more case runs (a budget; a decision reached early).

The seam is small on purpose: before a case run starts, each rule is asked whether the run should start no more
(:meth:`StartRule.reason`, given how many case runs are in flight); every finished record is shown to each rule
(:meth:`StartRule.finished`); at the end each rule writes what it has to say into the run's meta
(:meth:`StartRule.finish`). The case runs a stop leaves out are recorded as ``skipped`` with the reason
(running/api.py). Case runs in flight when a rule stops the run finish and are kept.

Example::

    stops = Stops([BudgetRule(Budget(cost=2.0))])
    for case, run in stops.plan(todo):      # what the executor pulls
        ...
    stops.reason                            # why it stopped, or None
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from evalnb.results._records import CaseRunRecord

__all__ = ["StartRule", "Stops"]

T = TypeVar("T")


class StartRule(Protocol):
    """What :class:`Stops` asks of a rule: may another case run start?"""

    def reason(self, in_flight: int) -> str | None:
        """Why no further case run should start (None: it may start); ``in_flight`` case runs are running.
        The case runs left out are skipped with ``"skipped: " + reason``."""
        ...  # pragma: no cover - protocol

    def finished(self, record: CaseRunRecord) -> None:
        """A case run finished (called on the run's event loop, in the order records arrive)."""
        ...  # pragma: no cover - protocol

    def finish(self, meta: dict[str, Any], *, stopped: bool) -> None:
        """The run ended (``stopped``: this rule stopped it): write what the run's meta should say."""
        ...  # pragma: no cover - protocol


class Stops:
    """The stop rules of one run, around the lazy plan the executor pulls from."""

    def __init__(self, rules: Iterable[StartRule] = ()) -> None:
        self.rules = list(rules)
        self.reason: str | None = None
        self.by: StartRule | None = None
        self.in_flight = 0

    def __bool__(self) -> bool:
        return bool(self.rules)

    def plan(self, todo: Iterator[T]) -> Iterator[T]:
        """``todo`` until a rule says stop: each rule is asked before each case run starts."""
        for item in todo:
            if self.reason is None:
                for rule in self.rules:
                    why = rule.reason(self.in_flight)
                    if why is not None:
                        self.reason, self.by = why, rule
                        break
            if self.reason is not None:
                return
            self.in_flight += 1
            yield item

    def finished(self, record: CaseRunRecord) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        for rule in self.rules:
            rule.finished(record)

    def finish(self, meta: dict[str, Any]) -> None:
        for rule in self.rules:
            rule.finish(meta, stopped=rule is self.by)
