"""Saved runs per version: a history to compare and trend (SQLAlchemy Core; a SQLite file by default).

* :mod:`~evalnb.store._schema`: the tables, their migrations and the per-run statistics trends read;
* :mod:`~evalnb.store._segments`: a run's frames stored by columns (schema 8), read by :mod:`~evalnb.store._columnar`;
* :mod:`~evalnb.store._codec`: frame columns as plain values, and runs stored in the row tables read back;
* :mod:`~evalnb.store._store`: :class:`Store` (save, load, runs, delete, trend, compare), with
  :mod:`~evalnb.store._listing` (the runs listing) and :mod:`~evalnb.comparison._trend` (trends) beside it;
* :mod:`~evalnb.store._recorder`: :class:`StoreRecorder`, the writer ``evalnb.run(store=...)`` records into.

Example::

    store = evalnb.Store()
    run_id = store.save(result, version="gpt-4o-2026-11")
    store.history()[["run_id", "suite", "version", "status"]]
    store.trend("foodmart-sales-evals")
    store.compare("gpt-4o-2026-10", "gpt-4o-2026-11").report()
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.store._store import Store

__all__ = ["Store"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
