"""Recorders: where the records of a run go, through one small protocol the runner owns.

The runner calls, in order: :meth:`Recorder.begin` once (what is about to run), :meth:`Recorder.completed`
(which case runs a resumed run already has: they are not run again), :meth:`Recorder.record` for every
finished case run as it arrives (in any order), and :meth:`Recorder.finish` once with the Result. A recorder
may do its work synchronously or return an awaitable; the runner awaits it.

Two ship with evalnb: :class:`ResultRecorder` builds the :class:`~evalnb.results.Result` every run returns, and
the store's writer (``evalnb.store._recorder.StoreRecorder``) saves each case run as it finishes, so an interrupted run
can be resumed.

Example::

    class Printer:
        def begin(self, info): print("running", info.suite.name)
        def completed(self): return set()
        def record(self, record): print(record.case.id, record.run, record.status)
        def finish(self, result): print(result.counts())
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalnb.results import Result
from evalnb.results._columns import REPEATED, Columns
from evalnb.results._frames import (
    MISMATCH_COLUMNS,
    RUNS_COLUMNS,
    SCORES_COLUMNS,
    TOOL_CALLS_COLUMNS,
    in_suite_order,
)
from evalnb.results._meta import RunMeta
from evalnb.results._warm import warm_frames

if TYPE_CHECKING:
    from evalnb.agents._base import Response
    from evalnb.results._records import CaseRunRecord
    from evalnb.suite import Suite

__all__ = ["Prior", "Recorder", "ResultRecorder", "RunInfo", "rebuildable"]


@dataclass
class RunInfo:
    """What a run is about to do, for :meth:`Recorder.begin`.

    Attributes:
        suite: the suite (the whole suite, also when resuming).
        meta: the run's meta so far (agent names, judge, options, checks config): a read-only
            :class:`~evalnb.results.RunMeta`.
        planned: how many case runs the run plans in all (resumed ones included).
    """

    suite: Suite
    meta: RunMeta
    planned: int


@dataclass
class Prior:
    """What a resumed run already holds: the case runs recorded before, and their rows as a Result."""

    keys: set[tuple[str, int]] = field(default_factory=set)
    result: Result | None = None


@runtime_checkable
class Recorder(Protocol):
    """Receives a run's records (see the module docstring)."""

    def begin(self, info: RunInfo) -> Awaitable[None] | None: ...

    def completed(self) -> Prior | None:
        """What a resumed run already holds (``None``: nothing, run everything)."""
        ...

    def record(self, record: CaseRunRecord) -> Awaitable[None] | None: ...

    def finish(self, result: Result) -> Awaitable[None] | None: ...


class ResultRecorder:
    """Builds the Result from the records: rows in suite order (case, then run, then turn) whatever order the
    case runs finished in, with the case runs a resumed run already had.

    Rows are gathered column by column (:class:`~evalnb.results._columns.Columns`), and only the responses that
    hold more than their ``runs`` row (result rows, citations, tool calls, meta, other usage keys) are kept in
    ``Result.responses``: :meth:`Result.response_for` rebuilds the others, so a large run does not hold a
    Response object per turn.
    """

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self._order = {c.id: i for i, c in enumerate(suite.cases)}
        self._columns = self._empty()
        self.responses: dict[tuple[str, int, int], Response] = {}

    @property
    def positions(self) -> dict[str, int]:
        """Each case id's place in the suite (read, never changed: the runner keys what finished by it)."""
        return self._order

    @staticmethod
    def _empty() -> tuple[Columns, Columns, Columns, Columns]:
        return (
            Columns(RUNS_COLUMNS, shared=REPEATED["runs"]),
            Columns(SCORES_COLUMNS, shared=REPEATED["scores"]),
            Columns(MISMATCH_COLUMNS, shared=REPEATED["mismatches"]),
            Columns(TOOL_CALLS_COLUMNS, shared=REPEATED["tool_calls"]),
        )

    def begin(self, info: RunInfo) -> None:
        warm_frames()  # the frames' imports, while the run waits on its agents

    def completed(self) -> Prior | None:
        return None

    def record(self, record: CaseRunRecord) -> None:
        position = self._order.get(record.case.id, len(self._order))
        for columns, rows in zip(self._columns, record.rows(), strict=True):
            if rows:  # most case runs have no mismatch and no tool call rows
                columns.add(rows, position=position, run=record.run)
        for tr in record.turns:
            r = tr.response
            if r is not None and not rebuildable(r):
                self.responses[(record.case.id, record.run, tr.index)] = r

    def discard(self) -> None:
        """Let go of every row recorded so far (a run that ran out of memory frees them before it stops)."""
        self._columns = self._empty()
        self.responses = {}

    def record_many(self, records: Iterable[CaseRunRecord]) -> None:
        for r in records:
            self.record(r)

    def finish(self, result: Result) -> None:
        return None

    def build(self, meta: Mapping[str, Any], prior: Prior | None = None) -> Result:
        """The Result of everything recorded, in suite order; with ``prior``, the case runs a resumed run had
        keep their place among the new ones."""
        fresh = [columns.frame() for columns in self._columns]
        if prior is not None and prior.result is not None and prior.keys:
            import pandas as pd

            old = prior.result
            # the case runs recorded before keep their place among the new ones
            fresh = [
                in_suite_order(pd.concat([before, now], ignore_index=True), self.suite)
                for before, now in zip(
                    (old.runs, old.scores, old.mismatches, old.tool_calls), fresh, strict=True
                )
            ]
        return Result(
            suite=self.suite,
            runs=fresh[0],
            scores=fresh[1],
            mismatches=fresh[2],
            meta=meta,
            responses=self.responses,
            tool_calls=fresh[3],
        )


_TOKEN_KEYS = frozenset({"prompt_tokens", "completion_tokens"})


def rebuildable(response: Response) -> bool:
    """Whether :meth:`Result.response_for` rebuilds ``response`` from its ``runs`` row as it was."""
    return (
        response.rows is None
        and response.citations is None
        and response.tool_calls is None
        and not response.meta
        and (not response.usage or set(response.usage) <= _TOKEN_KEYS)
    )
