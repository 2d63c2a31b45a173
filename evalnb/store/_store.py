"""``Store``: saved runs per version, a history to compare and trend (SQLAlchemy Core; SQLite by default).

``Store()`` opens ``.evals/evalnb.db`` (created with its folder); a plain path is a SQLite file; any SQLAlchemy
URL works (``postgresql+psycopg://...`` for a team). The tables are described in :mod:`evalnb.store._schema`.

SQLite runs in WAL mode with a busy timeout, transactions take the write lock up front (``BEGIN IMMEDIATE``)
and a write retries while the database is locked, so two processes saving at once both succeed. On PostgreSQL
migrations hold an advisory lock, a suite definition is inserted with ``ON CONFLICT DO NOTHING`` and a write
retries on deadlocks and serialisation failures; the SQL is otherwise the same for both (no PRAGMAs outside
the SQLite connect hook, text columns without a length limit).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from evalnb._canonical import packed
from evalnb._deprecation import deprecated_method
from evalnb._numbers import seconds
from evalnb._retry import retry_until
from evalnb.errors import ConfigError, StoreError
from evalnb.store import _case_index as case_index
from evalnb.store import _labels as labels
from evalnb.store import _sqlite as sqlite
from evalnb.store import _summary as summary_rows
from evalnb.store._codec import column_values
from evalnb.store._schema import SCHEMA_VERSION, frame_stats, migrate, tables
from evalnb.store._schema import schema_version as schema_version_of
from evalnb.store._segments import write_frame
from evalnb.store._views import Views

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection

    from evalnb.results import Result
    from evalnb.results._deferred import DeferredSuite
    from evalnb.suite import Suite

__all__ = ["DEFAULT_PATH", "Store", "as_store"]

DEFAULT_PATH = Path(".evals") / "evalnb.db"
READ_ONLY_OLDEST = 7
"""The oldest schema a read-only store (which cannot be migrated) is read at: the one before segments."""
_T = TypeVar("_T")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _git_commit(where: Path) -> str | None:
    """The commit of the repository ``where`` is in, or None (not a repository, no git)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and len(sha) >= 7 else None


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


# --------------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------------


class Store(Views):
    """Saved runs per version.

    Args:
        url_or_path: ``None`` for ``.evals/evalnb.db``; a path for a SQLite file (parents created); or any
            SQLAlchemy URL (``sqlite:///x.db``, ``postgresql+psycopg://user@host/db``).
        retry_seconds: how long a write keeps retrying while another process holds the database.
        create: make the store (its file, folder and tables) when it is not there. ``False`` (what the
            reading commands use) raises ``STORE_NOT_FOUND`` instead, so a mistyped path creates nothing.

    Example::

        store = evalnb.Store("team.db")
        run_id = store.save(result, version="v2")
        store.load("v2").summary()
    """

    def __init__(
        self,
        url_or_path: str | os.PathLike[str] | None = None,
        *,
        retry_seconds: float = 60.0,
        create: bool = True,
    ) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        self.retry_seconds = float(seconds("retry_seconds", retry_seconds, zero=True) or 0.0)
        target = DEFAULT_PATH if url_or_path is None else url_or_path
        text_target = os.fspath(target)
        if "://" in text_target:
            url = make_url(text_target)
        else:
            path = Path(text_target).expanduser()
            if create and not path.parent.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
            url = make_url(f"sqlite:///{path.resolve()}")
        self.url = url
        self.is_sqlite = url.get_backend_name() == "sqlite"
        #: True when the store can only be read here (its file or folder is not writable): ``save`` refuses.
        self.read_only = False
        self._where = url.render_as_string(hide_password=True)  # how messages name the store
        if self.is_sqlite:
            db = url.database
            file = Path(db) if db and db != ":memory:" and not db.startswith("file:") else None
            if file is not None:
                self._where = str(file)
                # A damaged file is reported before SQLite opens it, so nothing of it changes.
                sqlite.check_file(file)
                if not create and not (file.is_file() and file.stat().st_size):
                    raise self._not_there(
                        "the file does not exist" if not file.exists() else "the file is empty"
                    )
                if not create and not sqlite.holds_store(file):
                    raise self._not_there("the database holds no evalnb tables")
                self.read_only = sqlite.is_read_only(file)
                if not self.read_only and not file.parent.exists():
                    file.parent.mkdir(parents=True, exist_ok=True)
            self.engine = sqlite.make_engine(file, url, read_only=self.read_only)
        else:
            self.engine = create_engine(url)
        if not create and not self.is_sqlite:
            self._check_exists()
        self._t = tables(SCHEMA_VERSION)[1]
        if self.read_only:
            self._check_readable()
        else:
            self._retry(lambda: migrate(self.engine))
        #: suites parsed by recent loads, by suite row id (store/_loading.py)
        self._suites_read: dict[int, Suite | DeferredSuite] = {}

    def _not_there(self, why: str) -> StoreError:
        """The error of a reading command given a store that is not there: it never creates one."""
        return StoreError(
            f"no store at {self._where}: {why}; check the path (--store), or save a run there first "
            "(evalnb run --version LABEL, store.save)",
            code="STORE_NOT_FOUND",
        )

    def _check_exists(self) -> None:
        """``create=False``: the database must already hold an evalnb store (its tables are not made here)."""

        def read() -> int:
            with self.engine.connect() as conn:
                return schema_version_of(conn)

        try:
            version = self._retry(read)
        except StoreError:
            self.engine.dispose()
            raise
        if version == 0:
            self.engine.dispose()
            raise self._not_there("the database holds no evalnb tables")

    def _check_readable(self) -> None:
        """A read-only store is read as it is: its schema must be this evalnb's (it cannot be migrated)."""
        with self._reading() as conn:
            version = schema_version_of(conn)
        if version == SCHEMA_VERSION:
            return
        if version == READ_ONLY_OLDEST:
            # schema 7 differs by what schema 8 adds alone: read as it is (no run of it has segments)
            self._t = tables(version)[1]
            return
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"the store has schema version {version}; this evalnb knows up to {SCHEMA_VERSION}: upgrade evalnb",
                code="STORE_SCHEMA_TOO_NEW",
            )
        what = "is not an evalnb store" if version == 0 else f"has the older schema version {version}"
        raise StoreError(
            f"the store {self._where} is read-only and {what}; open it once where it can be written "
            f"(evalnb migrates it to version {SCHEMA_VERSION})",
            code="STORE_READ_ONLY",
        )

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(
                f"the store {self._where} is read-only here (the file or its folder cannot be written): it can "
                "be read (report, trend, compare), not saved into; give --store a writable path",
                code="STORE_READ_ONLY",
            )

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A connection for reading; a damaged or unusable database is a StoreError naming the store."""
        from sqlalchemy.exc import DatabaseError

        try:
            with self.engine.connect() as conn:
                yield conn
        except DatabaseError as exc:
            raise sqlite.describe(exc, self._where) or StoreError(
                f"the store {self._where} could not be read: {getattr(exc, 'orig', exc)}",
                code="STORE_UNAVAILABLE",
            ) from exc

    def __repr__(self) -> str:
        return f"Store({self.url.render_as_string(hide_password=True)!r})"

    @property
    def schema_version(self) -> int:
        """The schema version of the database (after migrations: ``SCHEMA_VERSION``)."""
        with self._reading() as conn:
            return schema_version_of(conn)

    # -- retries -------------------------------------------------------------------------------------

    def _retry(self, fn: Callable[[], _T]) -> _T:
        """Run ``fn`` (a whole transaction), retrying while the database is locked or busy."""
        from sqlalchemy.exc import DatabaseError, OperationalError

        def transient(exc: BaseException) -> bool:
            # SQLite: "database is locked" / "busy"; PostgreSQL: deadlocks and serialisation failures.
            msg = str(exc).lower()
            return isinstance(exc, OperationalError) and any(
                w in msg for w in ("locked", "busy", "deadlock", "could not serialize")
            )

        def busy(exc: BaseException) -> StoreError:
            orig = getattr(exc, "orig", exc)
            return StoreError(f"the store stayed busy for {self.retry_seconds:g}s: {orig}", code="STORE_BUSY")

        try:
            return retry_until(fn, transient=transient, seconds=self.retry_seconds, on_timeout=busy)
        except DatabaseError as exc:
            # a damaged file, a read-only one; a server that refuses the connection, a file that cannot be opened
            raise sqlite.describe(exc, self._where) or StoreError(
                f"the store {self._where} could not be used: {exc.orig}", code="STORE_UNAVAILABLE"
            ) from exc

    # -- writing -------------------------------------------------------------------------------------

    def _suite_id(self, conn: Connection, suite: Suite) -> int:
        from sqlalchemy import select

        t = self._t["suites"]
        # The definition is the canonical JSON the content hash is taken over (made in the same pass), so a
        # load can tell it is what evalnb wrote and build the suite without validating it again (_trusted.py),
        # compressed (docs/results.md, the store). A store written to is at this evalnb's schema (migrated).
        h, data = packed(suite)
        where = select(t.c.id).where(t.c.name == suite.name, t.c.content_hash == h)
        row = conn.execute(where).fetchone()
        if row:
            return int(row[0])
        values = {
            "name": suite.name,
            "format": suite.format,
            "content_hash": h,
            "definition": None,
            "packed": data,
            "created_at": _now(),
        }
        # The values go with the execution, not into the statement: a statement's own values stay referenced by
        # SQLAlchemy's cache of compiled statements (a million cases' definition, 300 MB, for the process).
        if conn.dialect.name in ("sqlite", "postgresql"):
            # Another process may insert the same suite meanwhile (PostgreSQL does not serialise writers as
            # SQLite's BEGIN IMMEDIATE does): insert unless present, then read the id whoever inserted it.
            from sqlalchemy.dialects import postgresql, sqlite

            dml = sqlite if conn.dialect.name == "sqlite" else postgresql
            insert = dml.insert(t).on_conflict_do_nothing()
            conn.execute(insert, values)
            if conn.dialect.name == "sqlite":
                # SQLite keeps a copy of the value bound to a cached prepared statement until it is bound again:
                # the same insert without the definition (the row is there: nothing is written) lets it go
                conn.execute(insert, {**values, "packed": None})
            return int(conn.execute(where).scalar_one())
        res = conn.execute(t.insert(), values)
        return int(res.inserted_primary_key[0])  # type: ignore[index]

    def _insert_run(
        self, conn: Connection, suite: Suite, *, version: str | None, meta: Mapping[str, Any], status: str
    ) -> tuple[int, str]:
        run_id = uuid.uuid4().hex[:12]
        suite_id = self._suite_id(conn, suite)
        where = Path(suite.path).resolve().parent if suite.path else Path.cwd()
        res = conn.execute(
            self._t["runs"]
            .insert()
            .values(
                run_id=run_id,
                suite_id=suite_id,
                suite=suite.name,
                version=version,
                git_commit=_git_commit(where),
                status=status,
                saved_at=_now(),
                **self._run_fields(meta),
            )
        )
        return int(res.inserted_primary_key[0]), run_id  # type: ignore[index]

    @staticmethod
    def _run_fields(meta: Mapping[str, Any]) -> dict[str, Any]:
        agent = meta.get("agent")
        return {
            "agent": agent if agent is None or isinstance(agent, str) else _dumps(agent),
            "model": meta.get("model"),
            "judge": meta.get("judge"),
            "checks": _dumps(meta.get("checks") or {}),
            "options": _dumps(meta.get("options") or {}),
            "meta": _dumps({k: v for k, v in meta.items() if k not in ("run_id", "version")}),
            "started_at": meta.get("started_at"),
            "finished_at": meta.get("finished_at"),
        }

    def _write_frames(self, conn: Connection, run_pk: int, result: Result) -> None:
        """The result's frames as segments (store/_segments.py): every column, those beyond the stored ones
        included, each frame in blocks of ``SEGMENT_ROWS`` rows."""
        for name, frame in (
            ("runs", result.runs),
            ("scores", result.scores),
            ("mismatches", result.mismatches),
            ("tool_calls", result.tool_calls),
        ):
            if len(frame):
                columns = {str(c): column_values(frame[c]) for c in frame.columns if c != "suite"}
                dtypes = {str(c): str(d) for c, d in frame.dtypes.items()}
                write_frame(conn, self._t["segments"], run_pk, name, columns, dtypes)

    @staticmethod
    def _dtypes(result: Result) -> dict[str, dict[str, str]]:
        return {
            "runs": {c: str(d) for c, d in result.runs.dtypes.items()},
            "scores": {c: str(d) for c, d in result.scores.dtypes.items()},
            "mismatches": {c: str(d) for c, d in result.mismatches.dtypes.items()},
            "tool_calls": {c: str(d) for c, d in result.tool_calls.dtypes.items()},
        }

    def save(self, result: Result, *, version: str | None = None, replace: bool = False) -> str:
        """Save a finished result under a version label; returns its new ``run_id``.

        A version label names one run of a suite: saving a label the suite already has is refused
        (``VERSION_EXISTS``) unless ``replace=True``, which saves the new run and deletes the old ones in one
        transaction (a reader sees the old run or the new one, never neither).

        Raises:
            StoreError: the suite already has this version and ``replace`` is false (code ``VERSION_EXISTS``).

        Example::

            run_id = store.save(result, version="gpt-4o-2026-11")
            store.save(rerun, version="gpt-4o-2026-11", replace=True)   # the label now names the rerun
        """
        self._writable()
        meta = dict(result.meta)
        meta["frame_dtypes"] = self._dtypes(result)
        status = "interrupted" if meta.get("interrupted") else "complete"
        ended = self._ended(result)

        def tx() -> str:
            with self.engine.begin() as conn:
                # the check and the insert are one step for every other process (store/_labels.py)
                self._lock_label(conn, result.suite.name, version)
                old = self._taken(conn, result.suite.name, version, replace=replace)
                pk, run_id = self._insert_run(conn, result.suite, version=version, meta=meta, status=status)
                self._write_frames(conn, pk, result)
                ended(conn, pk)
                self._delete_pks(conn, old)
                return run_id

        run_id = self._retry(tx)
        result.meta = result.meta.replace(run_id=run_id, version=version)  # a RunMeta is read-only
        return run_id

    def _ended(self, result: Result) -> Callable[[Connection, int], None]:
        """What a run keeps beside its rows when it ends (``store.save`` and a streamed run's end alike): its
        check statistics, summary rows, case index and sums, written by the returned function into the caller's
        transaction. The sums are made here, once, outside it: a retried transaction writes the same."""
        from evalnb.comparison._aggregates import aggregates_of
        from evalnb.store import _aggregates as aggregates

        sums = aggregates_of(result)

        def write(conn: Connection, pk: int) -> None:
            frame_stats(conn, self._t, pk, result.runs, result.scores)
            summary_rows.write(conn, self._t, pk, result)
            case_index.write(conn, self._t["segments"], pk, result)
            aggregates.write(conn, self._t["segments"], pk, sums)

        return write

    def _taken(
        self,
        conn: Connection,
        suite: str,
        version: str | None,
        *,
        replace: bool,
        excluding: int | None = None,
        before: int | None = None,
    ) -> list[int]:
        """The runs of ``suite`` labelled ``version``: what ``replace`` deletes (see :func:`labels.taken`).

        Raises:
            StoreError: ``VERSION_EXISTS`` when there are some and ``replace`` is false.
        """
        return labels.taken(
            conn,
            self._t["runs"],
            suite,
            version,
            replace=replace,
            where=self.where,
            excluding=excluding,
            before=before,
        )

    def _lock_label(self, conn: Connection, suite: str, version: str | None) -> None:
        """Hold the lock of a label for the rest of the transaction (store/_labels.py)."""
        labels.lock(conn, suite, version, meta=self._t["meta"])

    def _delete_pks(self, conn: Connection, pks: list[int]) -> None:
        """Delete these runs and every row they own (within the caller's transaction)."""
        labels.delete_runs(conn, self._t, pks)

    def delete(
        self, run_id_or_version: str, *, suite: str | None = None, all_suites: bool = False
    ) -> list[str]:
        """Delete a saved run by its run id, or every run of a version label; returns the run ids deleted.

        A version label saved for several suites names a run of each: ``suite`` picks one, ``all_suites=True``
        deletes it from every suite.

        Raises:
            StoreError: when nothing matches (``RUN_NOT_FOUND``), or a label shared by suites is given without
                ``suite`` or ``all_suites`` (``AMBIGUOUS_VERSION``).

        Example::

            store.delete("3f2a9c1b7d4e")
            store.delete("previous", suite="knowledge-base")
        """
        self._writable()
        from sqlalchemy import select

        r = self._t["runs"]
        key = run_id_or_version

        def tx() -> list[str]:
            with self.engine.begin() as conn:
                q = select(r.c.id, r.c.run_id, r.c.suite)
                rows = conn.execute(q.where(r.c.run_id == key)).fetchall()
                if not rows:
                    rows = conn.execute(q.where(r.c.version == key).order_by(r.c.id)).fetchall()
                named = list(dict.fromkeys(str(x[2]) for x in rows))
                if suite is not None:
                    rows = [x for x in rows if x[2] == suite]
                elif len(named) > 1 and not all_suites:
                    raise StoreError(
                        f"version {key!r} is saved for several suites: {', '.join(named)}; name the suite "
                        "(suite=... in Python, --suite on the command line), or delete it from all of them "
                        "(all_suites=True, --all-suites)",
                        code="AMBIGUOUS_VERSION",
                    )
                if not rows:
                    where = f" of suite {suite!r}" if suite is not None else ""
                    raise StoreError(
                        f"no saved run with run id or version {key!r}{where} in {self.where}"
                        + (f" (it names runs of {', '.join(named)})" if named else ""),
                        code="RUN_NOT_FOUND",
                    )
                self._delete_pks(conn, [int(x[0]) for x in rows])
                return [str(x[1]) for x in rows]

        return self._retry(tx)

    @property
    def where(self) -> str:
        """Where the store is, as a person would name it: a SQLite file's path (relative to the current folder
        when inside it), else the URL with any password hidden."""
        database = self.url.database if self.is_sqlite else None
        if not database or database == ":memory:":
            return self.url.render_as_string(hide_password=True)
        path = Path(database)
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    # -- reading -------------------------------------------------------------------------------------

    def history(self, suite: str | None = None) -> pd.DataFrame:
        """The store's history: one row per saved run, oldest first: run_id, suite, version, agent, model, judge, status, times, git commit,
        format, suite hash, latency, cost, checks, then ``saved_at``, ``cases`` (cases with rows),
        ``passed_cases`` (cases every run and turn of which passed) and ``pass_rate`` (their share).

        Example::

            store.history(suite="foodmart-sales-evals")[["run_id", "version", "status", "cases", "pass_rate"]]
        """
        from evalnb.store._listing import runs

        return runs(self, suite)

    # docs/results.md, One word per thing: "runs" are a case's repetitions (Result.runs); the store's listing is
    # its history.
    runs = deprecated_method("history", "runs", owner="Store", note="Result.runs are a case's repetitions")

    def suites(self) -> list[str]:
        """The names of the suites with saved runs, in the order they were first saved.

        Example::

            store.suites()
            # ['foodmart-sales-evals', 'my-validation-suite', 'knowledge-base']
        """
        from sqlalchemy import select

        r = self._t["runs"]
        with self.engine.connect() as conn:
            names = conn.execute(select(r.c.suite).order_by(r.c.id)).scalars().all()
        return list(dict.fromkeys(str(n) for n in names))

    def _unknown_suite(self, suite: str) -> StoreError:
        """The error for a suite with no saved run, naming the suites there are."""
        known = self.suites()
        have = f"its suites: {', '.join(known)}" if known else "it has no saved runs"
        return StoreError(f"no saved run of suite {suite!r} in {self.where}; {have}", code="UNKNOWN_SUITE")

    def _resolve(self, key: str, *, by_version: bool = True, suite: str | None = None) -> dict[str, Any]:
        """The runs row for a run id, else the latest complete run with that version label."""
        from sqlalchemy import select

        r = self._t["runs"]
        with self._reading() as conn:
            row = conn.execute(select(r).where(r.c.run_id == key)).mappings().fetchone()
            if row is None and by_version:
                q = select(r).where(r.c.version == key)
                if suite is not None:
                    q = q.where(r.c.suite == suite)
                rows = conn.execute(q.order_by(r.c.id)).mappings().fetchall()
                latest = {str(x["suite"]): str(x["run_id"]) for x in rows}
                if len(latest) > 1:
                    # a label shared by suites names no single run: picking the latest would silently load
                    # (or compare against) another suite's run
                    named = ", ".join(f"{name!r} (latest run {rid})" for name, rid in latest.items())
                    raise StoreError(
                        f"version {key!r} is saved for several suites: {named}; "
                        "name the suite (suite=... in Python, --suite on the command line) or use a run id",
                        code="AMBIGUOUS_VERSION",
                    )
                complete = [x for x in rows if x["status"] == "complete"]
                row = (complete or rows)[-1] if rows else None
            elif row is None:
                # delete() takes run ids only: a version label may name several runs
                labelled = conn.execute(
                    select(r.c.run_id).where(r.c.version == key).order_by(r.c.id)
                ).fetchall()
                if labelled:
                    ids = ", ".join(str(x[0]) for x in labelled)
                    raise StoreError(
                        f"{key!r} is a version label, not a run id; its runs: {ids}", code="RUN_NOT_FOUND"
                    )
        if row is None:
            what = "run id or version" if by_version else "run id"
            raise StoreError(f"no saved run with {what} {key!r} in {self!r}", code="RUN_NOT_FOUND")
        return dict(row)

    def load(
        self,
        run_id_or_version: str,
        *,
        suite: str | None = None,
        columns: list[str] | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> Result:
        """A saved run as a Result whose frames equal the saved ones (columns, order and dtypes).

        ``run_id_or_version`` is a run id, or a version label (its latest complete run; ``suite`` narrows
        the search when several suites share labels).

        ``columns`` and ``where`` read part of a large run (docs/results.md, large runs): only
        those columns (the keys ``case_id``, ``run``, ``turn``, ``check_id``, ``status``, ``passed`` always;
        the others are NA) and only the case runs with a row that matches ``where``, a mapping of column to a
        value, a list of values or a comparison (``{"latency_ms": {">": 1000}}``), never SQL text.

        Raises:
            StoreError: when nothing matches (code ``RUN_NOT_FOUND``); when the stored run does not read back
                (``STORED_RUN_INVALID``: its suite definition or meta was edited, damaged, or written by
                another evalnb version), naming the run and what did not validate; a ``where`` or ``columns``
                that names no stored column, or is not a mapping (``INVALID_WHERE``, ``INVALID_COLUMNS``).

        Example::

            store.load("gpt-4o-2026-11").summary()
            failed = store.load("gpt-4o-2026-11", where={"passed": False}, columns=["response", "reason"])
        """
        from evalnb.store._loading import load

        return load(self, self._resolve(run_id_or_version, suite=suite), columns=columns, where=where)

    def summary(self, run_id_or_version: str, *, suite: str | None = None) -> summary_rows.RunSummary:
        """A saved run's summary, read from the summary rows written when it ended (not its rows): its cases,
        ``counts`` per status, ``checks`` (as ``Result.summary()``), cost, tokens and mean latency.

        Equal to what ``store.load(...)`` gives (``counts()``, ``summary()``); a run saved by an evalnb
        without summary rows is read whole once to compute it.

        Raises:
            StoreError: when nothing matches (code ``RUN_NOT_FOUND``).

        Example::

            s = store.summary("gpt-4o-2026-11")
            s.counts, s.cost, s.checks[["check_id", "pass_rate"]]
        """
        return summary_rows.read(self, self._resolve(run_id_or_version, suite=suite))

    # -- resume support ------------------------------------------------------------------------------

    def stored_case_runs(self, run_pk: int) -> set[tuple[str, int]]:
        """The ``(case id, run)`` pairs a run has rows for (what a resumed run need not run again): in its
        segments, and in the row tables for a run stored before schema 8."""
        from sqlalchemy import select

        from evalnb.store._segments import column_of, segments

        t = self._t["run_rows"]
        q = select(t.c.case_id, t.c.run).where(t.c.run_pk == run_pk).distinct()
        with self._reading() as conn:
            keys = {(str(c), int(r)) for c, r in conn.execute(q)}
            if "segments" in self._t:
                run = {"id": run_pk, "run_id": str(run_pk), "suite": "", "version": None}
                for seg in segments(conn, self._t["segments"], run_pk, "runs", run):
                    ids, runs = column_of(seg, "case_id", run), column_of(seg, "run", run)
                    keys.update((str(c), int(r)) for c, r in zip(ids, runs, strict=True))
        return keys


def as_store(store: Any) -> Store:
    """A Store from a Store, a path or a URL (``None``: the default store)."""
    if isinstance(store, Store):
        return store
    if store is None or isinstance(store, (str, os.PathLike)):
        return Store(store)
    raise ConfigError(f"store must be an evalnb.Store, a path or a URL, not {type(store).__name__}")
