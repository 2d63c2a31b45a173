"""What a store says across its versions: trends, costs, comparisons and pairwise verdicts of saved runs.

Kept apart from :mod:`evalnb.store._store` (saving, loading, deleting runs): these read saved runs and hand them
to the comparison (below the store) or, for pairwise verdicts, to ``evalnb.preference`` through the slot
``store.pairwise`` that evalnb/__init__.py fills (docs/architecture.md, layers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from evalnb import _hooks
from evalnb.errors import StoreError

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    import pandas as pd

    from evalnb.comparison import Comparison, Comparisons
    from evalnb.comparison._aggregates import Aggregates
    from evalnb.preference import Pairwise
    from evalnb.results import Result
    from evalnb.store._store import Store

__all__ = ["Views"]


class Views:
    """The methods of :class:`~evalnb.store.Store` that look across saved versions."""

    if TYPE_CHECKING:  # what they use of the Store they are part of
        _t: dict[str, Any]
        engine: Any

        def load(
            self,
            run_id_or_version: str,
            *,
            suite: str | None = None,
            columns: list[str] | None = None,
            where: Any = None,
        ) -> Result: ...
        def suites(self) -> list[str]: ...
        def _unknown_suite(self, suite: str) -> StoreError: ...
        def _resolve(
            self, key: str, *, by_version: bool = True, suite: str | None = None
        ) -> dict[str, Any]: ...
        def _reading(self) -> AbstractContextManager[Any]: ...
        @property
        def schema_version(self) -> int: ...

    def trend(
        self, suite: str, *, confidence: float = 0.95, include_incomplete: bool = False
    ) -> pd.DataFrame:
        """Per saved run (in run order) x check: n, cases, mean and pass rate with intervals, latency, cost.

        Aggregated in SQL from per-case sums written at save time, so it stays fast over many versions.
        The standard error is cluster-robust (cases are the clusters: a case's runs and turns are not
        independent), and the intervals stay inside each check's scale (``evalnb.checks.scales``): a pass rate
        or a 0-1 value gets a Wilson interval with the design-effect sample size, a 1-5 score the same on its
        range, a count an interval on the log scale (see ``evalnb.comparison._stats.bounded_interval``).

        Columns: ``order, run_id, version, started_at, check_id, n, cases, mean, ci_low, ci_high, pass_rate,
        pass_ci_low, pass_ci_high, latency_ms, cost, prompt_tokens, completion_tokens``. ``mean`` is over every
        scored row (case x run x turn with a value), ``pass_rate`` over every checked row; a comparison's means
        are per case over the paired cases, so they can differ (``evalnb.comparison._trend.MEAN_WORDS``).

        Raises:
            StoreError: when the suite has no saved run (``UNKNOWN_SUITE``, naming the suites there are).

        Example::

            store.trend("foodmart-sales-evals").pivot(index="version", columns="check_id", values="mean")
        """
        from evalnb.comparison._trend import trend

        if suite not in self.suites():
            raise self._unknown_suite(suite)
        return trend(cast("Store", self), suite, confidence=confidence, include_incomplete=include_incomplete)

    def costs(self, suite: str, *, include_incomplete: bool = False) -> pd.DataFrame:
        """Per saved version of ``suite`` (in run order): ``version, cases, prompt_tokens, completion_tokens,
        cost, cost_per_case, latency_p50_ms, latency_p90_ms``, agent and judge calls together; cost ``NA`` for a
        version with a call that had no price (docs/costs.md). ``include_incomplete`` adds interrupted runs
        (one a budget stopped).

        Example::

            store.costs("knowledge-base")[["version", "cost_per_case", "latency_p90_ms"]]
        """
        from evalnb.store._costs import costs

        if suite not in self.suites():
            raise self._unknown_suite(suite)
        return costs(cast("Store", self), suite, include_incomplete=include_incomplete)

    def compare(self, a: str, b: str, *, suite: str | None = None, **options: Any) -> Comparison:
        """Compare two saved runs of one suite (run ids or version labels): ``b`` against the baseline ``a``.

        A version label shared by suites needs ``suite``; :meth:`compare_all` compares every suite the two
        versions share. ``options`` go to ``evalnb.compare`` (``margin``, ``confidence``, ``fail_on_missing``,
        ``fail_on_degraded``, ``cost_margin``, ``latency_margin``).

        The runs' sums per case x check x run, kept when each was saved, are what is compared: not their rows,
        so two versions of a million cases compare in seconds; its numbers are those of comparing the two whole
        Results. A run saved by an evalnb before the sums were kept, or a candidate the sequential gate ran, is
        read from the columns the comparison needs (``evalnb.comparison._frames.COMPARED_COLUMNS``: no
        answers, prompts or outputs). ``explore()`` loads the whole runs when it is called (docs/comparison.md,
        comparing stored versions).

        Example::

            store.compare("v1", "v2").checks[["check_id", "diff", "verdict", "words"]]
        """
        from evalnb.comparison import compare
        from evalnb.comparison._core import compare_aggregates
        from evalnb.comparison._frames import COMPARED_COLUMNS

        runs = [self._resolve(x, suite=suite) for x in (a, b)]
        ids = [str(r["run_id"]) for r in runs]
        labels = (str(runs[0]["version"] or a), str(runs[1]["version"] or b))
        if _sequential(runs[1]):  # its verdicts replay its design over its rows (docs/comparison.md)
            ra, rb = (self.load(i, columns=list(COMPARED_COLUMNS)) for i in ids)
            cmp = compare(ra, rb, labels=labels, **options)
        else:
            cmp = compare_aggregates(*(self._sums(run) for run in runs), labels=labels, **options)
        # the browser shows the answers: the whole runs, read when it opens (the run ids: the same runs)
        cmp._results = lambda: (self.load(ids[0]), self.load(ids[1]))
        return cmp

    def _sums(self, run: dict[str, Any]) -> Aggregates:
        """A stored run's sums per case x check x run: kept when it was saved, else made from its columns."""
        from evalnb.comparison._aggregates import aggregates_of
        from evalnb.comparison._frames import COMPARED_COLUMNS
        from evalnb.store import _aggregates as stored
        from evalnb.store._loading import check_readable

        table = self._t.get("segments")
        if table is not None and self.schema_version >= 9:
            # a run that does not read back is refused as a load refuses it
            check_readable(cast("Store", self), run)
            sums = stored.read(self._reading, table, int(run["id"]), run)
            if sums is not None:
                return sums
        return aggregates_of(self.load(str(run["run_id"]), columns=list(COMPARED_COLUMNS)))

    def pairwise(self, a: str, b: str, *, suite: str | None = None, judge: Any, **options: Any) -> Pairwise:
        """A judge compares two saved runs' answers side by side (run ids or version labels): ``evalnb.pairwise``.

        A version label shared by suites needs ``suite``. ``options`` go to ``evalnb.pairwise`` (``rubric``,
        ``orderings``, ``confidence``, ``seed``, ``concurrency``, ``cache``, ``base_url``).

        Example::

            pw = store.pairwise("v1", "v2", judge="openai:gpt-4o-mini")
            pw.win_rate, pw.exit_code
        """
        # evalnb.preference sits above the store: it is reached through the slot evalnb/__init__.py fills
        pairwise = _hooks.implementation("store.pairwise")
        ra, rb = self.load(a, suite=suite), self.load(b, suite=suite)
        options.setdefault("labels", (str(ra.meta.get("version") or a), str(rb.meta.get("version") or b)))
        return pairwise(ra, rb, judge=judge, **options)

    def compare_all(self, a: str, b: str, *, suite: str | None = None, **options: Any) -> Comparisons:
        """Compare every suite that both ``a`` and ``b`` have, gated as one (``evalnb compare A B``).

        One family of tests over all their checks keeps the gate's false-alarm rate at ``1 - confidence``
        however many suites there are. Suites that only one side has are named in the report (a suite the
        candidate lost gates with ``fail_on_missing=True``).

        Raises:
            StoreError: when either is unknown (``RUN_NOT_FOUND``) or they share no suite (``NO_SHARED_SUITE``).

        Example::

            g = store.compare_all("main", "candidate", margin=0.02)
            g.exit_code, print(g.report())
        """
        from evalnb.comparison import gate

        if suite is not None:
            return gate({suite: self.compare(a, b, suite=suite, **options)})
        in_a, in_b = self._suites_of(a), self._suites_of(b)
        shared = [name for name in in_a if name in in_b]
        if not shared:
            raise StoreError(
                f"{a!r} and {b!r} share no suite: {a!r} has {', '.join(in_a)}; {b!r} has {', '.join(in_b)}",
                code="NO_SHARED_SUITE",
            )
        missing = {name: "baseline only" for name in in_a if name not in in_b}
        missing.update({name: "candidate only" for name in in_b if name not in in_a})
        return gate(
            {name: self.compare(a, b, suite=name, **options) for name in shared}, missing_suites=missing
        )

    def _suites_of(self, key: str) -> list[str]:
        """The suites a run id or version label names, in the order they were first saved."""
        from sqlalchemy import select

        r = self._t["runs"]
        with self.engine.connect() as conn:
            row = conn.execute(select(r.c.suite).where(r.c.run_id == key)).fetchone()
            if row is not None:
                return [str(row[0])]
            rows = conn.execute(select(r.c.suite).where(r.c.version == key).order_by(r.c.id)).fetchall()
        if not rows:
            raise StoreError(f"no saved run with run id or version {key!r} in {self!r}", code="RUN_NOT_FOUND")
        return list(dict.fromkeys(str(x[0]) for x in rows))


def _sequential(run: dict[str, Any]) -> bool:
    """Whether a stored run was run by the sequential gate (its meta holds its design)."""
    import json

    from evalnb.comparison._stopping import design_in

    try:
        meta = json.loads(run.get("meta") or "{}")
    except ValueError:
        return False
    return design_in(meta) is not None
