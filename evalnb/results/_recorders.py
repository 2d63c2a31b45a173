"""Recorders: where the records of a run go, through one small protocol the runner owns.

The runner calls, in order: :meth:`Recorder.begin` once (what is about to run), :meth:`Recorder.completed`
(which case runs a resumed run already has: they are not run again), :meth:`Recorder.record` for every
finished case run as it arrives (in any order), and :meth:`Recorder.finish` once with the Result. A recorder
may do its work synchronously or return an awaitable; the runner awaits it.

Two ship with evalnb: :class:`ResultRecorder` builds the :class:`~evalnb.results.Result` every run returns, and
the store's writer (``evalnb.store._recorder.StoreRecorder``) saves each case run as it finishes, so an interrupted run
can be resumed.

A recorder with an ``attach(collector)`` method is handed the run's :class:`ResultRecorder` after ``begin``: it
may :meth:`ResultRecorder.subscribe` to the rows as the collector gathers them column by column (whole case runs
at a time, :class:`Batch`) instead of making them again from each record, and ask for what waits with
:meth:`ResultRecorder.flush` (the store writes the batches as they are: transposing a million case runs' rows a
second time cost the run seconds of its interpreter lock).

Example::

    class Printer:
        def begin(self, info): print("running", info.suite.name)
        def completed(self): return set()
        def record(self, record): print(record.case.id, record.run, record.status)
        def finish(self, result): print(result.counts())
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalnb.results import Result
from evalnb.results._columns import REPEATED, Chunk, Columns
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

__all__ = ["Batch", "Prior", "Recorder", "ResultRecorder", "RunInfo", "rebuildable"]


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


@dataclass(frozen=True)
class Batch:
    """Whole case runs' rows, as :meth:`ResultRecorder.flush` hands them to its listeners.

    Attributes:
        case_runs: how many case runs (records) the rows are of.
        frames: per frame (``runs``, ``scores``, ``mismatches``, ``tool_calls``) its rows as a
            :class:`~evalnb.results._columns.Chunk`, or None when the case runs made none.
    """

    case_runs: int
    frames: tuple[Chunk | None, Chunk | None, Chunk | None, Chunk | None]

    @property
    def nbytes(self) -> int:
        """The memory the batch's columns hold."""
        return sum(c.nbytes for c in self.frames if c is not None)


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
        self._listeners: list[Callable[[Batch], None]] = []
        self._waiting = 0  # case runs recorded since the last flush

    @property
    def positions(self) -> dict[str, int]:
        """Each case id's place in the suite (read, never changed: the runner keys what finished by it)."""
        return self._order

    @staticmethod
    def _empty() -> tuple[Columns, Columns, Columns, Columns]:
        # flushed together, at the end of a case run: a batch holds whole case runs (a store commits them so)
        return (
            Columns(RUNS_COLUMNS, shared=REPEATED["runs"], manual=True),
            Columns(SCORES_COLUMNS, shared=REPEATED["scores"], manual=True),
            Columns(MISMATCH_COLUMNS, shared=REPEATED["mismatches"], manual=True),
            Columns(TOOL_CALLS_COLUMNS, shared=REPEATED["tool_calls"], manual=True),
        )

    def subscribe(self, listener: Callable[[Batch], None]) -> None:
        """Have ``listener`` called with every :class:`Batch` of rows flushed from now on (in the event loop's
        thread, inside :meth:`record` or :meth:`flush`)."""
        self._listeners.append(listener)

    def unsubscribe(self) -> None:
        """What waits handed to the listeners, and no listener called again (the rows recorded after the case
        runs, for those a run never finished, are the Result's alone)."""
        self.flush()
        self._listeners = []

    def flush(self) -> None:
        """The rows of the case runs recorded since the last flush made into the columns, and handed to the
        listeners as one :class:`Batch`."""
        if not self._waiting:
            return
        # made whole before anything changes: a chunk that cannot be made (short of memory) leaves every row
        # waiting, and once made the listeners have them before the columns keep them
        chunks = tuple(columns.pieces() for columns in self._columns)
        self._emit(chunks)
        for columns, chunk in zip(self._columns, chunks, strict=True):
            if chunk is not None:
                columns.keep(chunk)

    def _emit(self, chunks: tuple[Chunk | None, ...]) -> None:
        batch = Batch(self._waiting, chunks)  # type: ignore[arg-type]
        self._waiting = 0
        for listener in self._listeners:
            listener(batch)

    def begin(self, info: RunInfo) -> None:
        warm_frames()  # the frames' imports, while the run waits on its agents

    def completed(self) -> Prior | None:
        return None

    def record(self, record: CaseRunRecord) -> None:
        position = self._order.get(record.case.id, len(self._order))
        full = False
        for columns, rows in zip(self._columns, record.rows(), strict=True):
            if rows:  # most case runs have no mismatch and no tool call rows
                full = columns.add(rows, position=position, run=record.run) or full
        self._waiting += 1
        for tr in record.turns:
            r = tr.response
            if r is not None and not rebuildable(r):
                self.responses[(record.case.id, record.run, tr.index)] = r
        if full:
            self.flush()

    def discard(self) -> None:
        """Let go of every row recorded so far (a run that ran out of memory frees them before it stops); the
        rows not flushed yet go to the listeners first, made into a batch only once the columns are gone."""
        waiting, self._columns = self._columns, self._empty()
        self.responses = {}
        if self._waiting and self._listeners:
            # still short of memory: those rows are lost to the listeners too (the store says what it holds)
            with contextlib.suppress(MemoryError):
                self._emit(tuple(columns.unkept() for columns in waiting))
        self._waiting = 0
        self._listeners = []

    def record_many(self, records: Iterable[CaseRunRecord]) -> None:
        for r in records:
            self.record(r)

    def finish(self, result: Result) -> None:
        return None

    def build(self, meta: Mapping[str, Any], prior: Prior | None = None) -> Result:
        """The Result of everything recorded, in suite order; with ``prior``, the case runs a resumed run had
        keep their place among the new ones."""
        self.unsubscribe()  # the last rows to the listeners, before the columns become frames
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
