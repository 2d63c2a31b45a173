"""Version labels: a label names one run of a suite, whatever the timing of the runs that claim it.

docs/results.md, the store: every change to which runs carry a label happens in a transaction that first takes
the label's lock, so that the check and the write that follows it are one step for every other process:

- SQLite: every write transaction takes the database's write lock up front (``BEGIN IMMEDIATE``,
  ``store/_sqlite.py``), which serialises claims already;
- PostgreSQL: a transaction-level advisory lock keyed by the suite and the label (other labels go on);
- another database: a row lock on the store's ``meta`` row (``SELECT ... FOR UPDATE``), one claim at a time.

Under that lock a run **claims** the label (``store.save``, or a streamed run as it starts): without
``replace`` a label some run of the suite already carries is refused (``VERSION_EXISTS``), an interrupted run
included; the new run is inserted with the label in the same transaction. A run that **replaces** deletes,
when it completes (``store.save(replace=True)`` at once), the runs that carried the label before it claimed
it (a smaller row id); a run that claimed the label after it is left alone, so the last claim wins. A run
whose row was deleted while it ran (a later claim replaced it, or ``store.delete``) stops with
``RUN_REPLACED`` instead of writing rows for a run that is gone.

Example::

    with engine.begin() as conn:
        lock(conn, "kb", "v2")
        older = taken(conn, t, "kb", "v2", replace=True, where="team.db")
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from evalnb.errors import StoreError

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

__all__ = ["delete_runs", "lock", "replaced", "taken"]

_NAMESPACE = 72310513
"""The first key of the PostgreSQL advisory locks of labels (the migrations' lock is 72310512, a one-key lock)."""


def lock(conn: Connection, suite: str, version: str | None, *, meta: Table | None = None) -> None:
    """Hold the lock of ``suite``'s label ``version`` until the transaction ends (nothing for no label)."""
    if version is None:
        return
    dialect = conn.dialect.name
    if dialect == "sqlite":
        return  # the transaction holds the database's write lock (BEGIN IMMEDIATE)
    if dialect == "postgresql":
        digest = hashlib.sha256(f"{suite}\x00{version}".encode("utf-8", "surrogatepass")).digest()
        key = int.from_bytes(digest[:4], "big", signed=True)
        from sqlalchemy import text

        conn.execute(text("SELECT pg_advisory_xact_lock(:a, :b)"), {"a": _NAMESPACE, "b": key})
        return
    if meta is not None:
        from sqlalchemy import select

        conn.execute(select(meta.c.value).where(meta.c.key == "schema_version").with_for_update()).fetchall()


def taken(
    conn: Connection,
    runs: Table,
    suite: str,
    version: str | None,
    *,
    replace: bool,
    where: str,
    excluding: int | None = None,
    before: int | None = None,
) -> list[int]:
    """The row ids of the runs of ``suite`` labelled ``version`` (other than ``excluding``; with ``before``,
    only those that claimed it before that row): what ``replace`` deletes.

    Raises:
        StoreError: ``VERSION_EXISTS`` when there are some and ``replace`` is false.
    """
    from sqlalchemy import select

    if version is None:
        return []
    r = runs
    q = select(r.c.id, r.c.run_id, r.c.status, r.c.saved_at).where(r.c.suite == suite, r.c.version == version)
    if before is not None:
        q = q.where(r.c.id < before)
    rows = [x for x in conn.execute(q.order_by(r.c.id)).fetchall() if x[0] != excluding]
    if rows and not replace:
        _pk, run_id, status, saved_at = rows[-1]
        state = "" if status == "complete" else f", {status}"
        when = str(saved_at)[:16].replace("T", " ")
        raise StoreError(
            f"suite {suite!r} already has version {version!r} (run {run_id}, saved {when} UTC{state}) in "
            f"{where}: replace it with replace=True (--replace on the command line), or choose "
            "another version label",
            code="VERSION_EXISTS",
        )
    return [int(x[0]) for x in rows]


def replaced(
    conn: Connection, runs: Table, *, pk: int, run_id: str, suite: str, version: str | None
) -> StoreError:
    """The error of a run whose row is gone: which later run carries its label now, if one does."""
    from sqlalchemy import select

    label = f" (version {version!r})" if version is not None else ""
    now = None
    if version is not None:
        q = select(runs.c.run_id).where(runs.c.suite == suite, runs.c.version == version, runs.c.id > pk)
        now = conn.execute(q.order_by(runs.c.id.desc())).scalars().first()
    why = (
        f"run {now}, which claimed the label after it, replaced it"
        if now is not None
        else "it was deleted (evalnb delete, store.delete, or a run that replaced its label)"
    )
    return StoreError(
        f"run {run_id} of suite {suite!r}{label} is no longer in the store: {why}; nothing more of it is saved",
        code="RUN_REPLACED",
    )


def delete_runs(conn: Connection, tables: dict[str, Any], pks: list[int]) -> None:
    """Delete these runs and every row they own (within the caller's transaction)."""
    if not pks:
        return
    for name in (
        "segments",
        "run_summaries",
        "run_check_stats",
        "tool_calls",
        "mismatches",
        "scores",
        "run_rows",
    ):
        if name in tables:  # segments: schema 8
            conn.execute(tables[name].delete().where(tables[name].c.run_pk.in_(pks)))
    conn.execute(tables["runs"].delete().where(tables["runs"].c.id.in_(pks)))
