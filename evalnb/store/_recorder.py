"""The store's writer as a recorder: every case run saved as it finishes, so a crash loses nothing that was
written and ``resume`` runs only what is missing.

``evalnb.run(..., store=store, version=...)`` starts a run row (``interrupted`` until it finishes), writes each
case run in a transaction of its own or with others that finished meanwhile, and marks the run ``complete`` at
the end; ``evalnb.run(..., store=store, resume=run_id)`` (``evalnb run --resume``) reads which case runs are
stored and the runner runs the others. The writes happen in a writer thread, off the event loop: the case runs
in flight go on while a transaction commits, and at high rates the writer takes everything that finished
since its last transaction began, at most :data:`LINGER` seconds before, as one (``StoreRecorder._gap``).

The rows come from the run's collector (``ResultRecorder``), which gathers them column by column anyway: the
recorder subscribes to its batches of whole case runs and makes each into segments of those typed columns
(store/_segments.py, ``encode_chunk``), and the writer thread inserts them. A case run waits at most
:data:`LINGER` seconds in the collector before it is handed over.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import threading
import time
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb.errors import ConfigError, StoreError
from evalnb.results._columns import REPEATED
from evalnb.results._frames import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, TOOL_CALLS_COLUMNS
from evalnb.results._recorders import Batch, Prior, ResultRecorder, RunInfo
from evalnb.store._segments import FRAMES, Deferred, deferred_chunk, insert, next_seq
from evalnb.store._store import Store, as_store

if TYPE_CHECKING:
    from evalnb.results import Result
    from evalnb.results._records import CaseRunRecord
    from evalnb.suite import Suite

__all__ = ["StoreRecorder"]

_DTYPES = {
    "runs": RUNS_COLUMNS,
    "scores": SCORES_COLUMNS,
    "mismatches": MISMATCH_COLUMNS,
    "tool_calls": TOOL_CALLS_COLUMNS,
}

MAX_PENDING = 20_000
"""Case runs waiting for the writer before a finished case run waits for it (memory stays bounded)."""

MAX_PENDING_BYTES = 64 * 2**20
"""Bytes of segments waiting for the writer before a finished case run waits for it (long answers fill memory
before many case runs wait)."""

COMPRESSORS = 2
"""Threads that compress a streamed run's larger columns (see :meth:`StoreRecorder._take`)."""

LINGER = 0.5
"""Seconds between two hand-overs of the collector's rows to the writer at most: a case run finished that long
after the last one is handed over at once, one finished sooner when that long has passed (at high rates the
collector's chunks come sooner: ``evalnb.results._columns.CHUNK`` rows)."""


class StoreRecorder:
    """Saves a run's records into a :class:`~evalnb.store.Store` as they arrive (see the module docstring).

    Args:
        store: a Store, a path or a URL (``None``: the default store).
        version: the version label to save under (on resume: the stored one unless given).
        resume: the run id of an interrupted stored run to continue.
        replace: replace the suite's run of ``version`` when this one completes (else a label the suite
            already has is refused by :meth:`claim`); a resumed run remembers it.

    Raises:
        ConfigError: when ``resume`` names a run that is complete (there is nothing to resume).
    """

    def __init__(
        self, store: Any, *, version: str | None = None, resume: str | None = None, replace: bool = False
    ) -> None:
        self.store: Store = as_store(store)
        self.store._writable()  # a read-only store refuses before any agent is called
        self.version = version
        self.resume = resume
        self.replace = replace
        self._suite_name: str | None = None
        self.run_pk: int | None = None
        self.run_id: str | None = None
        self._info: dict[str, Any] | None = None
        self._prior: Result | None = None
        if resume is not None:
            info = self.store._resolve(resume, by_version=False)
            if info["status"] == "complete":
                raise ConfigError(f"run {resume!r} is complete; there is nothing to resume")
            self._info = info
            self.run_pk, self.run_id = int(info["id"]), str(info["run_id"])
            if version is None:
                self.version = info["version"]
            self.replace = replace or bool((json.loads(info["options"] or "{}") or {}).get("replace"))
        self._lock = threading.Lock()
        self._pending: list[_Encoded] = []
        self._pending_runs = 0  # case runs in the pending batches
        self._pending_bytes = 0  # and the bytes their columns hold
        self._busy = False
        self._error: BaseException | None = None
        self._future: asyncio.Future[None] | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._zlib: ThreadPoolExecutor | None = None  # compresses the larger columns (_take)
        self._began = 0.0  # when the writer's last transaction began (time.monotonic)
        self._hurry = threading.Event()  # the run waits for room or for its end: the writer waits no more
        self._ending = False  # finish or close began: the writer never waits again
        self._seq = 0
        self._saved = 0  # case runs this recorder committed
        self._prior_keys: set[tuple[str, int]] = set()
        self._planned: int | None = None
        self._waiting: list[asyncio.Future[None]] = []  # finished case runs waiting for room (record)
        self._collector: ResultRecorder | None = None
        self._timer: asyncio.TimerHandle | None = None  # hands the collector's rows over after LINGER
        self._handed = 0.0  # when the collector last handed rows over (time.monotonic)
        self._deferred: BaseException | None = None  # what a hand-over in a timer raised
        # record() has something to do: a timer to start, room running short, an error to raise
        self._alert = True

    @property
    def saved(self) -> int:
        """The case runs the store holds for this run so far (a resumed run's earlier ones included)."""
        return self._saved + len(self._prior_keys)

    # -- resuming ------------------------------------------------------------------------------------

    @property
    def resuming(self) -> bool:
        return self._info is not None

    def resumed_suite(self, given: Suite | None) -> Suite:
        """The suite the resumed run started with; a ``given`` suite must be that very suite."""
        prior = self._prior = self.store.load(str(self.run_id))
        if given is not None and given.content_hash() != prior.suite.content_hash():
            raise ConfigError(
                f"run {self.resume!r} was made with a different version of suite {prior.suite.name!r}; "
                "resume it with the suite it started with"
            )
        return prior.suite

    def resumed_runs(self) -> int | None:
        """The ``runs=`` the resumed run was started with (``None``: each case's own count)."""
        assert self._info is not None
        runs = (json.loads(self._info["options"] or "{}") or {}).get("runs")
        return None if runs is None else int(runs)

    def claim(self, suite: Suite) -> None:
        """Check, before the run starts, that ``suite`` does not have this version label already.

        Raises:
            StoreError: ``VERSION_EXISTS`` when it does and ``replace`` is false.
        """
        self._suite_name = suite.name
        with self.store.engine.connect() as conn:
            self.store._taken(conn, suite.name, self.version, replace=self.replace, excluding=self.run_pk)

    # -- the recorder protocol -----------------------------------------------------------------------

    def begin(self, info: RunInfo) -> None:
        """Insert the run's row (``interrupted`` until it finishes), claiming its label.

        The check that the label is free and the insert are one transaction under the label's lock
        (store/_labels.py): of two runs that passed :meth:`claim` at once (a slow executor start-up between),
        one gets the label and the other stops here, before any case runs.
        """
        self._planned = info.planned
        if self.resuming:
            with self.store.engine.connect() as conn:  # its segments go on after the stored ones
                self._seq = next_seq(conn, self.store._t["segments"], int(self.run_pk))  # type: ignore[arg-type]
            self._writer()
            return
        meta = {**info.meta, "row_order": "suite"}
        name = self._suite_name = info.suite.name

        def tx() -> tuple[int, str]:
            with self.store.engine.begin() as conn:
                self.store._lock_label(conn, name, self.version)
                if not self.replace:
                    self.store._taken(conn, name, self.version, replace=False)
                return self.store._insert_run(
                    conn, info.suite, version=self.version, meta=meta, status="interrupted"
                )

        self.run_pk, self.run_id = self.store._retry(tx)
        self._writer()

    def completed(self) -> Prior | None:
        if not self.resuming:
            return None
        assert self.run_pk is not None
        self._prior_keys = self.store.stored_case_runs(self.run_pk)
        return Prior(keys=self._prior_keys, result=self._prior)

    def attach(self, collector: ResultRecorder) -> None:
        """Take the run's rows from its collector, in batches of whole case runs (see the module docstring)."""
        self._collector = collector
        collector.subscribe(self._take)

    def record(self, record: CaseRunRecord) -> Awaitable[None] | None:
        """Note a finished case run: its rows come with the collector's next batch, at most :data:`LINGER`
        seconds from now; a run whose writer is :data:`MAX_PENDING` case runs behind waits for it here, and one
        whose writer failed stops with its error. Most calls have nothing to do: one flag says when there is."""
        return self._noted() if self._alert else None

    def _noted(self) -> Awaitable[None] | None:
        if self._error is not None:
            if not isinstance(self._error, MemoryError):
                self.close()  # short of memory, the writer stays: finish writes what is pending once memory is freed
            # the same error for every case run still arriving: its traceback is the latest raise alone
            raise self._error.with_traceback(None)
        if self._deferred is not None:
            deferred, self._deferred = self._deferred, None
            raise deferred
        if self._timer is None and self._collector is not None:
            # at most LINGER seconds after the last hand-over: at once when that long has passed (a slow run's
            # case runs are written as they finish), else when it has
            left = self._handed + LINGER - time.monotonic()
            if left <= 0:
                self._collector.flush()
            else:
                self._timer = asyncio.get_running_loop().call_later(left, self._due)
        if self._full() and self._future is not None:
            return self._room(self._future)
        # nothing to do until a hand-over, a timer, room running out or an error says so
        self._alert = self._timer is None or self._error is not None
        return None

    def _full(self) -> bool:
        return self._pending_runs >= MAX_PENDING or self._pending_bytes >= MAX_PENDING_BYTES

    def _due(self) -> None:
        """The collector's waiting rows handed over (to :meth:`_take`); what that raised (the run short of
        memory) is raised by the next :meth:`record` in the run's own call chain, not lost in the event loop."""
        self._timer = None
        self._alert = True
        if self._collector is not None:
            try:
                self._collector.flush()
            except BaseException as exc:
                self._deferred = exc

    def _take(self, batch: Batch) -> None:
        """A batch of the collector's rows made into segments for the writer (in the event loop's thread).

        Encoded here, not in the writer thread: compressing a column lets the interpreter lock go, and a writer
        thread taking it back after each column waited the run's switch interval every time (5 ms), fell
        behind and held the run at :data:`MAX_PENDING` (a million case runs: 3,000 waits, 10 s); the writer
        thread only inserts what is made. The larger columns are compressed by threads of their own
        (:data:`COMPRESSORS`; store/_segments.py, ``Deferred``): their waits for the lock overlap, and the run's
        thread no longer spends its time in zlib (a million case runs: 1.7 s)."""
        self._handed = time.monotonic()
        self._alert = True  # the next case run starts a timer again
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        made = _Encoded(batch.case_runs, [
            (name, deferred_chunk(chunk, cols, _DTYPES[name], REPEATED[name], self._compressors()), chunk.n)
            for (name, cols), chunk in zip(FRAMES.items(), batch.frames, strict=True)
            if chunk is not None and chunk.n
        ])  # fmt: skip
        with self._lock:
            self._pending.append(made)
            self._pending_runs += made.case_runs
            self._pending_bytes += made.nbytes
            start = not self._busy
            self._busy = True
            if self._full():
                self._hurry.set()
        if start:
            self._future = asyncio.get_running_loop().run_in_executor(self._writer(), self._drain)

    async def _room(self, writer: asyncio.Future[None]) -> None:
        """Wait until the writer has taken what is pending (it writes it meanwhile), or has stopped."""
        taken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            if not self._full():
                return
            self._waiting.append(taken)
        self._hurry.set()
        await asyncio.wait((taken, writer), return_when=asyncio.FIRST_COMPLETED)

    def _compressors(self) -> ThreadPoolExecutor:
        if self._zlib is None:
            self._zlib = ThreadPoolExecutor(max_workers=COMPRESSORS, thread_name_prefix="evalnb-zlib")
        return self._zlib

    def _writer(self) -> ThreadPoolExecutor:
        """The writer thread, started with the run: a run short of memory later still has it."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalnb-store")
            try:
                self._pool.submit(int).result()
            except RuntimeError as exc:  # "can't start new thread"
                raise MemoryError(f"no memory for the store's writer thread ({exc})") from None
        return self._pool

    async def finish(self, result: Result) -> None:
        if self._timer is not None:  # the collector handed its last rows over when the Result was built
            self._timer.cancel()
            self._timer = None
        if isinstance(self._error, MemoryError):
            self._error = None  # the rows it could not write are still pending: memory may have been freed
        self._ending = True
        self._hurry.set()
        try:
            await self._flushed()
        except BaseException:
            self.close()
            raise
        meta = dict(result.meta)
        meta["frame_dtypes"] = Store._dtypes(result)
        meta["row_order"] = "suite"
        interrupted = bool(meta.get("interrupted"))
        t = self.store._t
        from sqlalchemy import update

        name = self._suite_name or result.suite.name
        pk = int(self.run_pk)  # type: ignore[arg-type]
        ended = self.store._ended(result)

        def tx() -> None:
            with self.store.engine.begin() as conn:
                self.store._lock_label(conn, name, self.version)
                done = conn.execute(
                    update(t["runs"])
                    .where(t["runs"].c.id == pk)
                    .values(status="interrupted" if interrupted else "complete", **Store._run_fields(meta))
                )
                if done.rowcount == 0:  # a later run claimed the label and replaced this one meanwhile
                    raise self._replaced(conn)
                ended(conn, pk)
                if self.replace and not interrupted:
                    # Only a complete run replaces: until then the old one stays what the label loads. Runs that
                    # claimed the label after this one are left alone: the last claim wins (store/_labels.py).
                    old = self.store._taken(conn, name, self.version, replace=True, before=pk)
                    self.store._delete_pks(conn, old)

        try:
            await asyncio.get_running_loop().run_in_executor(self._writer(), self.store._retry, tx)
        except StoreError as exc:
            raise self._stopped(exc) from None
        finally:
            self.close()
        result.meta = result.meta.replace(run_id=self.run_id, version=self.version)  # a RunMeta is read-only

    # -- the writer thread ---------------------------------------------------------------------------

    async def _flushed(self) -> None:
        """Wait until everything recorded so far is written (and raise what the writer raised)."""
        while True:
            with self._lock:
                idle = not self._busy
                if idle and (not self._pending or self._error is not None):
                    break
                if idle:  # rows the writer left (it stopped on an error of its own): it takes them now
                    self._busy = True
            if idle:
                self._future = asyncio.get_running_loop().run_in_executor(self._writer(), self._drain)
            future = self._future
            if future is not None:
                await asyncio.shield(future)
        if self._error is not None:
            raise self._error.with_traceback(None)

    def _drain(self) -> None:
        """Write what is pending, batch after batch, until nothing is; the first error stops the writing.

        It never raises: the error is kept for the run to raise (record, finish), never left in the future (a
        future whose error nobody reads is printed at exit with its traceback, "Future exception was never
        retrieved"); and whatever happens, the writer is marked idle, so nothing waits for it forever.
        """
        try:
            while True:
                self._gap()
                with self._lock:
                    if not self._pending or self._error is not None:
                        self._busy = False
                        return
                    self._began = time.monotonic()
                    if not self._ending:
                        self._hurry.clear()  # room is made now
                    batch, self._pending = self._pending, []
                    runs, self._pending_runs = self._pending_runs, 0
                    held, self._pending_bytes = self._pending_bytes, 0
                    waiting, self._waiting = self._waiting, []
                for taken in waiting:
                    _set_soon(taken)
                try:
                    self.store._retry(functools.partial(self._write, batch))
                except MemoryError as exc:
                    self._fail(exc)
                    # kept for another try once memory is freed (finish): a run that runs out of memory keeps
                    # every case run it finished
                    with contextlib.suppress(BaseException), self._lock:
                        self._pending = batch + self._pending
                        self._pending_runs += runs
                        self._pending_bytes += held
                    return
                except BaseException as exc:
                    error: BaseException = exc
                    with contextlib.suppress(BaseException):
                        error = self._stopped(exc)
                    self._fail(error)  # once, whole: the run raises it as soon as it is set
                    return
                self._saved += runs
        except BaseException as exc:  # short of memory even for the bookkeeping
            if self._error is None:
                self._fail(exc)
        finally:
            if self._busy:
                with self._lock:
                    self._busy = False

    def _gap(self) -> None:
        """Wait, without the interpreter lock, until :data:`LINGER` seconds have passed since the last
        transaction began, unless the run waits for room or for its end.

        At high rates the run hands a batch over every few tenths of a second, and each transaction costs the
        run's thread its share of the interpreter lock (the writer takes it back after every database call):
        one transaction for what a linger brings is a few hundred commits fewer at a million case runs. A slow
        run's case runs still reach the store within twice the linger of finishing."""
        left = self._began + LINGER - time.monotonic()
        if left > 0 and not self._hurry.is_set():
            self._hurry.wait(left)

    def _fail(self, exc: BaseException) -> None:
        """The writer's error, for the next :meth:`record` to raise (it is told to look)."""
        self._error, self._alert = exc, True

    def _write(self, batches: list[_Encoded]) -> None:
        """One transaction: every case run of the batches, whole (its turns, scores, row mismatches and tool
        calls), one segment per frame and batch (store/_segments.py)."""
        assert self.run_pk is not None
        rows = []
        seq = self._seq
        for batch in batches:
            for name, data, n in batch.parts:
                rows.append((name, seq, data if isinstance(data, bytes) else data.result(), n))
                seq += n  # a frame's rows take consecutive numbers, in the order they were recorded
        segments = self.store._t["segments"]
        with self.store.engine.begin() as conn:
            insert(conn, segments, self.run_pk, rows)
        self._seq = seq  # only once committed: a retried transaction numbers its rows the same way

    # -- when the store fails mid-run ------------------------------------------------------------------

    def _replaced(self, conn: Any) -> StoreError:
        from evalnb.store._labels import replaced

        return replaced(
            conn,
            self.store._t["runs"],
            pk=int(self.run_pk),  # type: ignore[arg-type]
            run_id=str(self.run_id),
            suite=str(self._suite_name),
            version=self.version,
        )

    def _gone(self) -> StoreError | None:
        """``RUN_REPLACED`` when this run's row is no longer in the store, else None (or unknown)."""
        from sqlalchemy import select

        r = self.store._t["runs"]
        try:
            with self.store.engine.connect() as conn:
                there = conn.execute(select(r.c.id).where(r.c.id == self.run_pk)).first()
                return None if there is not None else self._replaced(conn)
        except Exception:  # the store cannot be read either: the write's own error says why
            return None

    def _stopped(self, exc: BaseException) -> BaseException:
        """The error the run stops with when a write failed: the store's reason, then what is saved and how to
        go on (docs/results.md, the store). A run whose row is gone says so instead."""
        if isinstance(exc, StoreError) and exc.code == "RUN_REPLACED":
            return exc
        if self.run_pk is not None and not isinstance(exc, MemoryError):
            gone = self._gone()
            if gone is not None:
                return gone
        if not isinstance(exc, StoreError):
            return exc
        of = f" of {self._planned:,}" if self._planned is not None else ""
        return StoreError(
            f"{exc.message}; the run stopped: {self.saved:,}{of} case runs are saved in it as run {self.run_id} "
            f"(interrupted); once the store can be written, `evalnb run --resume {self.run_id}` "
            f"(resume={self.run_id!r} in Python) runs the others",
            code=exc.code,
        )

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        if self._zlib is not None:
            self._zlib.shutdown(wait=False)
            self._zlib = None
        self._ending = True
        self._hurry.set()


@dataclass(frozen=True)
class _Encoded:
    """A batch of case runs made into segments: per frame ``(frame, data, rows)``; the suite's name, each
    frame's first column, is the run's and is not stored."""

    case_runs: int
    parts: list[tuple[str, bytes | Deferred, int]]

    @property
    def nbytes(self) -> int:
        return sum(len(data) if isinstance(data, bytes) else data.nbytes for _, data, _ in self.parts)


def _set_soon(taken: asyncio.Future[None]) -> None:
    """Resolve ``taken`` from the writer thread, in its event loop's own thread."""
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
        taken.get_loop().call_soon_threadsafe(_resolve, taken)


def _resolve(taken: asyncio.Future[None]) -> None:
    if not taken.done():
        taken.set_result(None)
