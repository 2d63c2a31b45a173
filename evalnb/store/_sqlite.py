"""SQLite store files: checked before they are opened, opened read-only when they cannot be written, and what
SQLite's errors mean for a store.

A file that is not a SQLite database (random bytes, a text file) or is cut short (a copy that stopped part-way)
is a :class:`~evalnb.errors.StoreError` (``STORE_CORRUPT``) naming the file, raised before SQLite opens it, so
the file is left exactly as it was. A store whose file or folder this process cannot write (a shared read-only
folder, a CI artefact) is opened read-only: it can be read (``report``, ``trend``, ``compare``), and saving into
it is ``STORE_READ_ONLY``.

Example::

    check_file(Path("team.db"))            # raises StoreError(STORE_CORRUPT) for a damaged file
    engine = make_engine(Path("team.db"), read_only=is_read_only(Path("team.db")))
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.errors import StoreError

if TYPE_CHECKING:
    from sqlalchemy import Engine

__all__ = ["MAGIC", "check_file", "describe", "holds_store", "is_read_only", "make_engine"]

MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (SQLite file format, section 1.3)."""


def check_file(path: Path) -> None:
    """Raise ``STORE_CORRUPT`` when ``path`` exists and is not a whole SQLite database; never writes to it.

    An absent or empty file is a new store. The header gives the page size and, when valid, the page count: a
    file shorter than that was truncated (unless a write-ahead log still holds its pages).
    """
    try:
        if path.is_dir():
            raise StoreError(f"the store {path} is a folder, not a SQLite file", code="STORE_UNAVAILABLE")
        size = path.stat().st_size
        if size == 0:
            return
        with open(path, "rb") as fh:
            head = fh.read(100)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(
            f"the store {path} cannot be read: {exc.strerror or exc}", code="STORE_UNAVAILABLE"
        ) from None
    if not head.startswith(MAGIC):
        raise StoreError(
            f"the store {path} is not a SQLite database (its first bytes are not the SQLite header); "
            "give the path of an evalnb store, or move this file away",
            code="STORE_CORRUPT",
        )
    if len(head) < 100:
        raise _truncated(path, size, 100)
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):
        raise StoreError(
            f"the store {path} has a damaged SQLite header (page size {page_size})", code="STORE_CORRUPT"
        )
    pages = int.from_bytes(head[28:32], "big")
    counted = head[24:28] == head[92:96]  # the page count is valid only when written with the change counter
    wal = path.with_name(path.name + "-wal")
    if counted and pages and size < pages * page_size and not (wal.exists() and wal.stat().st_size):
        raise _truncated(path, size, pages * page_size)


def _truncated(path: Path, size: int, want: int) -> StoreError:
    return StoreError(
        f"the store {path} is truncated: {size:,} bytes of the {want:,} its header says; restore it from a copy",
        code="STORE_CORRUPT",
    )


def is_read_only(path: Path) -> bool:
    """Whether an existing store file can only be read here (the file, or its folder, is not writable)."""
    return path.exists() and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def _read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` read-only: ``mode=ro``, or ``immutable=1`` when SQLite cannot make the
    shared-memory file of a write-ahead-log database beside it (a folder it cannot write)."""
    base = "file:" + urllib.parse.quote(str(path))
    try:
        probe = sqlite3.connect(f"{base}?mode=ro", uri=True)
        try:
            probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            probe.close()
        return f"{base}?mode=ro"
    except sqlite3.OperationalError:
        return f"{base}?immutable=1"  # nobody can write the folder, so nobody changes the file meanwhile


def holds_store(path: Path) -> bool:
    """Whether the SQLite file ``path`` holds evalnb's tables, found without writing to it (a read-only
    connection: the engine's WAL switch would change the header of a database that is not a store)."""
    try:
        con = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            row = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:  # a damaged file: pages overwritten behind a valid header
        raise describe(exc, str(path)) or StoreError(
            f"the store {path} could not be read: {exc}", code="STORE_UNAVAILABLE"
        ) from None
    return row is not None


def make_engine(path: Path | None, url: Any, *, read_only: bool) -> Engine:
    """The engine of a SQLite store: WAL, a busy timeout and write transactions that take the lock up front; or,
    ``read_only``, a connection that never writes (no WAL switch, deferred transactions)."""
    from sqlalchemy import create_engine, event
    from sqlalchemy.pool import QueuePool

    if read_only and path is not None:
        uri = _read_only_uri(path)
        engine = create_engine(
            "sqlite://",
            creator=lambda: sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False),
            poolclass=QueuePool,
        )
    else:
        engine = create_engine(url, connect_args={"timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, decide when transactions begin (SQLAlchemy's SQLite recipe).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA busy_timeout = 30000")
        if not read_only:
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Take the write lock up front: two writers that both start by reading would otherwise deadlock on the
        # upgrade from a shared to a write lock (SQLITE_BUSY without waiting). A read-only store only reads.
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def describe(exc: BaseException, where: str) -> StoreError | None:
    """The StoreError a database error stands for (a damaged file, a read-only one, a full disk), or None for
    others."""
    orig = getattr(exc, "orig", exc)
    msg = str(orig).lower()
    if any(w in msg for w in ("not a database", "malformed", "corrupt")):
        return StoreError(
            f"the store {where} is damaged: {orig}; restore it from a copy", code="STORE_CORRUPT"
        )
    if "database or disk is full" in msg or "no space left" in msg:
        return StoreError(
            f"the store {where} is full: its disk (or the database's size limit) has no room left ({orig}); "
            "free some space",
            code="STORE_FULL",
        )
    if "readonly" in msg or "read-only" in msg:
        return StoreError(f"the store {where} is read-only: {orig}", code="STORE_READ_ONLY")
    return None
