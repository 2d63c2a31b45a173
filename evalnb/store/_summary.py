"""A run's summary rows: written when the run ends, read by ``Store.summary`` without the run's rows.

``run_summaries`` holds per run its case counts by status (``Result.counts()``), its number of cases and
``Result.summary()`` (per check: n, mean, pass rate, degraded, judge, tokens, cost), computed by the Result
itself, so the stored summary is the loaded run's, rule for rule. The run's cost, tokens and mean latency are
in its ``runs`` row (``refresh_stats``). A run saved before the table existed has no summary row: its summary
is computed from its rows (as slow as a load, and the same answer).

Example::

    write(conn, tables, run_pk, result)          # in the transaction that ends the run
    store.summary("v1").checks                   # == store.load("v1").summary()
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.results._deferred import case_count

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection

    from evalnb.results import Result
    from evalnb.store._store import Store

__all__ = ["RunSummary", "read", "write"]


@dataclass(frozen=True)
class RunSummary:
    """A stored run's summary (``Store.summary``): what a notebook looks at first, read from one row.

    Attributes:
        run_id, suite, version, status: the run (``status``: ``complete`` or ``interrupted``).
        cases: the cases of the run's suite; ``counts``: cases per status (``Result.counts()``).
        checks: per check, as ``Result.summary()`` gives it.
        cost, prompt_tokens, completion_tokens, latency_ms: the run's totals (agent and judge calls; latency:
            the mean per turn), ``None`` when nothing reported them.
    """

    run_id: str
    suite: str
    version: str | None
    status: str
    cases: int
    counts: dict[str, int]
    checks: pd.DataFrame = field(repr=False)
    cost: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None

    @property
    def pass_rate(self) -> float:
        """The share of cases that passed (every run, turn and check)."""
        return self.counts.get("passed", 0) / self.cases if self.cases else math.nan

    def _repr_html_(self) -> str:
        head = (
            f"<p><b>{self.suite}</b> {self.version or self.run_id} ({self.status}): {self.cases:,} cases, "
            + ", ".join(f"{n:,} {s}" for s, n in self.counts.items())
            + "</p>"
        )
        return head + str(self.checks._repr_html_())


def _frame_json(frame: pd.DataFrame) -> str:
    rows = [[None if _missing(v) else _plain(v) for v in row] for row in frame.itertuples(index=False)]
    return json.dumps(
        {"columns": list(frame.columns), "dtypes": {c: str(d) for c, d in frame.dtypes.items()}, "rows": rows}
    )


def _missing(v: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and not isinstance(v, str) else v


def _frame(text: str) -> pd.DataFrame:
    import pandas as pd

    doc = json.loads(text)
    frame = pd.DataFrame(doc["rows"], columns=doc["columns"])
    for c, dt in doc["dtypes"].items():
        frame[c] = frame[c].astype(dt)
    return frame


def write(conn: Connection, tables: dict[str, Any], run_pk: int, result: Result) -> None:
    """Store ``result``'s summary as run ``run_pk``'s (replacing one written before: a resumed run's end)."""
    t = tables["run_summaries"]
    conn.execute(t.delete().where(t.c.run_pk == run_pk))
    listed = listed_cases(result.runs) if "ran_cases" in t.c else {}
    conn.execute(
        t.insert().values(
            run_pk=run_pk,
            cases=case_count(result._suite),
            counts=json.dumps(result.counts()),
            checks=_frame_json(result.summary()),
            **listed,
        )
    )


def listed_cases(runs: pd.DataFrame) -> dict[str, int]:
    """What the history lists of a run (store/_listing.py): the cases with rows, and those every row of which
    passed (a row's status is its turn's, checks included)."""
    if not len(runs):
        return {"ran_cases": 0, "passed_cases": 0}
    import numpy as np
    import pandas as pd

    ok = (runs["status"] == "passed").fillna(False).to_numpy(dtype=bool)
    # by codes (a missing id is a case of its own, as a group of its own was): grouping a million ids as
    # objects took a second at a run's end
    codes, ids = pd.factorize(runs["case_id"], sort=False, use_na_sentinel=False)
    every = np.ones(len(ids), dtype=bool)
    np.logical_and.at(every, codes, ok)
    return {"ran_cases": len(ids), "passed_cases": int(every.sum())}


def read(store: Store, run: dict[str, Any]) -> RunSummary:
    """The summary of the stored run ``run`` (its ``runs`` row): its summary row, else computed from its rows."""
    from sqlalchemy import select

    t = store._t["run_summaries"]
    with store._reading() as conn:
        row = conn.execute(select(t.c.cases, t.c.counts, t.c.checks).where(t.c.run_pk == run["id"])).first()
    if row is not None:
        cases, counts, checks = int(row[0]), json.loads(row[1]), _frame(row[2])
    else:
        from evalnb.store._loading import load

        result = load(store, run)
        cases, counts, checks = case_count(result._suite), result.counts(), result.summary()
    return RunSummary(
        run_id=str(run["run_id"]),
        suite=str(run["suite"]),
        version=run["version"],
        status=str(run["status"]),
        cases=cases,
        counts={str(k): int(v) for k, v in counts.items()},
        checks=checks,
        cost=run.get("cost"),
        prompt_tokens=run.get("prompt_tokens"),
        completion_tokens=run.get("completion_tokens"),
        latency_ms=run.get("latency_ms"),
    )
