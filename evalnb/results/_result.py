"""``Result``: what a run returns, as long and tidy pandas DataFrames plus wide views, gates and reports.

A Result holds the :class:`~evalnb.suite.Suite` it ran, a ``meta`` (:class:`~evalnb.results.RunMeta`: agent, model, judge, started_at,
finished_at, elapsed_ms, options, checks) and four long frames with explicit dtypes and a stable column order
(see ``docs/results.md``): ``runs`` (case x run x turn), ``scores`` (case x run x turn x check),
``mismatches`` (row mismatches of ``rows`` checks) and ``tool_calls`` (the tool calls agents reported). Everything else is derived from them each time it is asked
for: ``cases``, ``passed``, ``exit_code``, ``counts()``, ``summary()``, ``by_category()``, ``report()``. A frame
you filter or reassign (``result.scores = result.scores[...]``) is what those views then describe: they can
never disagree with the frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._scoring import RANK, STATUSES
from evalnb.agents._base import Response, ToolCall
from evalnb.errors import FailuresError
from evalnb.results import _report as report
from evalnb.results import outputs
from evalnb.results._deferred import DeferredSuite, case_columns, case_ids
from evalnb.results._frames import (
    CASES_COLUMNS,
    MISMATCH_COLUMNS,
    RUNS_COLUMNS,
    SCORES_COLUMNS,
    TOOL_CALLS_COLUMNS,
    conform,
    make_frame,
    plain,
)
from evalnb.results._frames import records as records_of
from evalnb.results._meta import RunMeta

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalnb.suite import Suite

__all__ = ["Result"]


def _tool_call(row: Mapping[str, Any]) -> ToolCall:
    import json

    def value(cell: Any) -> Any:
        return None if cell is None else json.loads(cell)

    return ToolCall(
        tool=row["tool"],
        arguments=value(row.get("arguments")),
        status=row.get("status") or "requested",
        plugin=row.get("plugin") if row.get("function") is not None else None,
        function=row.get("function") if row.get("plugin") is not None else None,
        id=row.get("call_id"),
        http_status=row.get("http_status"),
        output=value(row.get("output")),
    )


class Result:
    """The outcome of running a suite: tidy DataFrames, wide views, a text report and an exit code.

    Build one with :func:`evalnb.run`, or rebuild one from saved frames with :meth:`from_frames`.

    Attributes:
        suite: the Suite that ran.
        meta: a :class:`~evalnb.results.RunMeta`: agent, model, judge, started_at, finished_at, elapsed_ms,
            options, checks, interrupted, run_id, version ... (attributes, or read as a mapping).
        runs: one row per case x run x turn.
        scores: one row per case x run x turn x check.
        mismatches: one row per row mismatch of ``rows`` checks.
        tool_calls: one row per tool call an agent reported (``Response.tool_calls``), in call order.
        responses: the agent's Response objects keyed by ``(case_id, run, turn)`` (in memory only).

    Example::

        result = evalnb.run(suite, lambda prompt: "42")
        result.passed, result.exit_code         # (True, 0)
        result.summary()[["check_id", "n", "pass_rate"]]
    """

    def __init__(
        self,
        *,
        suite: Suite | DeferredSuite,
        runs: pd.DataFrame,
        scores: pd.DataFrame,
        mismatches: pd.DataFrame | None = None,
        meta: Mapping[str, Any] | None = None,
        responses: Mapping[tuple[str, int, int], Response] | None = None,
        tool_calls: pd.DataFrame | None = None,
    ) -> None:
        # A DeferredSuite (a stored run's: results/_deferred.py) becomes the Suite when something asks for it.
        self._suite: Suite | DeferredSuite = suite
        self.runs = runs
        self.scores = scores
        self.mismatches = mismatches if mismatches is not None else make_frame([], MISMATCH_COLUMNS)
        self.tool_calls = tool_calls if tool_calls is not None else make_frame([], TOOL_CALLS_COLUMNS)
        self._meta = RunMeta.from_mapping(meta)
        self.responses: dict[tuple[str, int, int], Response] = dict(responses or {})
        # per frame attribute: (the frame indexed, its length then, row positions by (case_id, run, turn))
        self._indexes: dict[str, tuple[pd.DataFrame, int, dict[tuple[str, int, int], list[int]]]] = {}

    @property
    def suite(self) -> Suite:
        """The Suite that ran (a stored run's is built from its definition on first use: docs/results.md,
        the store)."""
        suite = self._suite
        if isinstance(suite, DeferredSuite):
            suite = self._suite = suite.get()
        return suite

    @suite.setter
    def suite(self, value: Suite) -> None:
        self._suite = value

    @property
    def suite_name(self) -> str:
        """The suite's name (known without building a stored run's suite)."""
        return self._suite.name

    def __getstate__(self) -> dict[str, Any]:
        # pickled (an executor, a copy) with its Suite: what builds a deferred one (a store) stays here
        state = self.__dict__.copy()
        state["_suite"] = self.suite
        return state

    @property
    def meta(self) -> RunMeta:
        """What the run recorded about itself (:class:`~evalnb.results.RunMeta`: attributes, or a read-only
        mapping ``meta["run_id"]``); assign a mapping to replace it."""
        return self._meta

    @meta.setter
    def meta(self, value: Mapping[str, Any] | None) -> None:
        self._meta = RunMeta.from_mapping(value)

    # -- construction --------------------------------------------------------------------------------

    @classmethod
    def from_frames(
        cls,
        *,
        suite: Suite | DeferredSuite,
        runs: pd.DataFrame,
        scores: pd.DataFrame,
        mismatches: pd.DataFrame | None = None,
        meta: Mapping[str, Any] | None = None,
        tool_calls: pd.DataFrame | None = None,
        copy: bool = True,
    ) -> Result:
        """Rebuild a Result from its frames (as a store or a saved file holds them).

        Columns are conformed to the documented shapes: missing ones become NA, dtypes are cast. ``copy=False``
        conforms frames made for this Result alone in place (a store's million-row frames are not copied).

        Example::

            again = Result.from_frames(suite=r.suite, runs=r.runs, scores=r.scores, meta=r.meta)
            again.cases.equals(r.cases)         # True
        """
        return cls(
            suite=suite,
            runs=conform(runs, RUNS_COLUMNS, copy=copy),
            scores=conform(scores, SCORES_COLUMNS, copy=copy),
            mismatches=conform(mismatches, MISMATCH_COLUMNS, copy=copy) if mismatches is not None else None,
            meta=meta,
            tool_calls=conform(tool_calls, TOOL_CALLS_COLUMNS, copy=copy) if tool_calls is not None else None,
        )

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "the data") -> Result:
        """A Result from what :meth:`to_dict` wrote (``where`` names the source in errors).

        Raises:
            StoreError: when ``data`` is not such a result, or a version this evalnb does not read.
        """
        import pandas as pd
        from pydantic import ValidationError

        from evalnb._validation import describe
        from evalnb.errors import StoreError
        from evalnb.results import _files as files
        from evalnb.suite import Suite

        files.check_readable(data, where)
        try:
            suite = Suite.model_validate(data["definition"])
        except ValidationError as exc:
            raise StoreError(
                f"{where}: the result's suite 'definition' is not valid: "
                f"{describe(exc, whole='the whole definition')}",
                code="UNKNOWN_RESULTS",
            ) from exc
        return cls.from_frames(
            suite=suite,
            runs=pd.DataFrame(data.get("runs") or [], columns=list(RUNS_COLUMNS)),
            scores=pd.DataFrame(data.get("scores") or [], columns=list(SCORES_COLUMNS)),
            mismatches=pd.DataFrame(data.get("mismatches") or [], columns=list(MISMATCH_COLUMNS)),
            meta=data.get("meta") or {},
            # a result written before tool calls were recorded has none
            tool_calls=pd.DataFrame(data.get("tool_calls") or [], columns=list(TOOL_CALLS_COLUMNS)),
        )

    # -- derived frames ------------------------------------------------------------------------------

    @property
    def cases(self) -> pd.DataFrame:
        """One row per case: status, runs, passed_runs, pass_rate and mean latency per run (ms).

        A run takes the worst status of its turns and checks (degraded > failed > skipped > passed), and a
        case the worst status of its runs (the rule of :mod:`evalnb._scoring`). A case with no runs is
        ``skipped``. Derived from ``runs`` and ``scores`` each time: it always describes those frames.
        """
        import numpy as np
        import pandas as pd

        runs, sc = self.runs, self.scores
        n_runs = len(runs)
        rank, codes, ids = self._row_ranks()
        run_no = pd.concat([runs["run"], sc["run"]], ignore_index=True).astype("Int64").fillna(-1)
        latency = np.concatenate([runs["latency_ms"].to_numpy(dtype="float64"), np.full(len(sc), np.nan)])
        rows = pd.DataFrame({"c": codes, "r": run_no.to_numpy(dtype="int64"), "rank": rank, "lat": latency})
        rows = rows[codes >= 0]  # a row without a case id is no case's (factorize's -1)
        per_run = rows.groupby(["c", "r"], sort=False).agg(rank=("rank", "max"), lat=("lat", "sum"))
        has_lat = rows["lat"].notna().groupby([rows["c"], rows["r"]], sort=False).any()
        # a run's latency is the sum over its turns; a skipped run (never called) has none
        per_run["lat"] = per_run["lat"].where(
            has_lat.reindex(per_run.index) & (per_run["rank"] != RANK["skipped"])
        )
        per_run["ok"] = per_run["rank"] == RANK["passed"]
        per_case = per_run.groupby(level="c", sort=False).agg(
            rank=("rank", "max"), runs=("rank", "size"), ok=("ok", "sum"), lat=("lat", "mean")
        )
        # Cases in suite order, then any case the frames hold that the suite does not; built column by column
        # (a million cases must not become a million tuples and dicts).
        # (a stored run's suite is not built for them: results/_deferred.py)
        case_ids, names, cats = case_columns(self._suite)
        index = pd.Index(ids)
        code = index.get_indexer(case_ids) if len(ids) else np.full(len(case_ids), -1)
        hit = np.zeros(len(ids), dtype=bool)
        hit[code[code >= 0]] = True
        if n_runs and not hit.all():  # the frames hold cases the suite does not (rare: looked for only then)
            extra = runs.drop_duplicates("case_id")
            extra = extra[extra["case_id"].isin(ids[~hit])]
            added = extra["case_id"].tolist()
            case_ids = [*case_ids, *added]
            names = [*names, *extra["case_name"].tolist()]
            cats = [*cats, *(plain(c) for c in extra["category"].tolist())]
            code = np.concatenate([code, index.get_indexer(added)])
        # per_case is indexed by code; a case with a code but no row there, or no code, was never run
        at = per_case.index.get_indexer(code) if len(per_case) else np.full(len(code), -1)
        ran = at >= 0
        pick = np.where(ran, at, 0)

        def gathered(name: str, dtype: str, fill: Any) -> np.ndarray:
            values = per_case[name].to_numpy(dtype=dtype) if len(per_case) else np.zeros(1, dtype=dtype)
            return np.where(ran, values[pick] if len(per_case) else fill, fill)

        n_of = gathered("runs", "int64", 0)
        ok_of = gathered("ok", "int64", 0)
        by_rank = np.array([k for k, _ in sorted(RANK.items(), key=lambda kv: kv[1])], dtype=object)
        ranks = gathered("rank", "int64", RANK["skipped"])
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(ran, ok_of / np.maximum(n_of, 1), np.nan)
        frame = pd.DataFrame(
            {
                "suite": pd.array([self.suite_name] * len(case_ids), dtype="string"),
                "case_id": pd.array(case_ids, dtype="string"),
                "case_name": pd.array(names, dtype="string"),
                "category": pd.array(cats, dtype="string"),
                "status": pd.array(by_rank[ranks], dtype="string"),
                "runs": pd.array(n_of, dtype="Int64"),
                "passed_runs": pd.array(ok_of, dtype="Int64"),
                "pass_rate": rate.astype("float64"),
                "latency_ms": gathered("lat", "float64", np.nan).astype("float64"),
            },
            columns=list(CASES_COLUMNS),
        )
        return frame

    def _row_ranks(self) -> tuple[np.ndarray, np.ndarray, pd.Index]:
        """Per row of ``runs`` then ``scores``: its rank, and its case's code in ``ids`` (-1: no case id).

        A run row that is not a status counts as skipped; a score row only makes its run failed or degraded
        (a moot check does not make an answered run skipped: scoring.turn_status).
        """
        import numpy as np
        import pandas as pd

        runs, sc = self.runs, self.scores
        rank = np.concatenate(
            [
                _ranked(runs["status"], RANK, RANK["skipped"]),
                _ranked(sc["status"], {"failed": RANK["failed"], "degraded": RANK["degraded"]}, 0),
            ]
        )
        codes, ids = pd.factorize(pd.concat([runs["case_id"], sc["case_id"]], ignore_index=True))
        return rank, codes, ids

    def counts(self) -> dict[str, int]:
        """Number of cases per status: ``{"passed": 9, "failed": 1, "degraded": 0, "skipped": 0}``.

        The statuses of :attr:`cases`, counted without building it: a case's status is the worst rank of its
        rows (the worst of its runs' worst), a suite case without rows is skipped.
        """
        import numpy as np
        import pandas as pd

        rank, codes, ids = self._row_ranks()
        mine = codes >= 0
        worst = np.full(len(ids), -1, dtype="int64")
        np.maximum.at(worst, codes[mine], rank[mine])
        suite_ids = case_ids(self._suite)
        # looked up as objects on both sides: an Index of Arrow text looking up a list took 1 s at a million cases
        code = (
            pd.Index(np.asarray(ids, dtype=object), dtype=object).get_indexer(
                pd.Index(suite_ids, dtype=object)
            )
            if len(ids)
            else np.full(len(suite_ids), -1)
        )
        hit = np.zeros(len(ids), dtype=bool)
        hit[code[code >= 0]] = True
        # the frames' other cases, as `cases` lists them: those with a run row
        in_runs = np.zeros(len(ids), dtype=bool)
        of_runs = codes[: len(self.runs)]
        in_runs[of_runs[of_runs >= 0]] = True
        listed = np.where(code >= 0, worst[np.maximum(code, 0)], RANK["skipped"])
        ranks = np.concatenate([listed, worst[~hit & in_runs]])
        per_rank = np.bincount(ranks, minlength=len(RANK))
        return {s: int(per_rank[RANK[s]]) for s in STATUSES}

    # -- wide views ----------------------------------------------------------------------------------

    def summary(self) -> pd.DataFrame:
        """Per check: n (scored rows), mean value, pass rate, degraded count; judge, tokens and cost when present.

        ``n`` counts rows that were checked (not ``skipped``); ``pass_rate`` is over them.

        Example::

            result.summary()
            #   check_id  check  n  mean  pass_rate  degraded
            # 0    regex  regex  3   1.0        1.0         0
        """
        return report.summary(self.scores)

    def by_category(self, value: str = "pass_rate") -> pd.DataFrame:
        """Category x check: the pass rate (or ``value="mean"``: the mean value) of each check per category.

        Example::

            result.by_category()
            # check_id   ExactMatch  PartialMatch
            # category
            # knowledge         1.0           0.5
        """
        return report.by_category(self.scores, value)

    def failures(self) -> pd.DataFrame:
        """The failed and degraded case x run x turn x check rows, with the prompt, expected answer, response,
        reason, error and the number of row mismatches (``docs/results.md``).

        Example::

            result.failures()[["case_id", "check_id", "reason", "response"]]
        """
        return report.failures(self)

    def costs(self) -> pd.DataFrame:
        """What the run cost: one row per source (``agent``, ``judge``) and model, with calls, the four token
        counts, ``cost`` (USD; NA where a call had no price), ``cost_per_case`` and ``cost_per_passed_case``
        (docs/costs.md). Failed and degraded case runs count: they were paid for.

        Example::

            result = evalnb.run(suite, agent, prices={"gpt-4o-mini": {"input": 0.15, "output": 0.6}})
            result.costs()[["source", "model", "calls", "cost", "cost_per_case"]]
        """
        from evalnb.results._costs import costs

        return costs(self)

    @property
    def budget_exhausted(self) -> bool:
        """True when the run's budget (``budget=evalnb.Budget(...)``) stopped it: the case runs it did not
        start are ``skipped`` with the reason, and ``meta["budget"]`` says what was spent."""
        budget = self.meta.budget
        return bool(isinstance(budget, Mapping) and budget.get("exhausted"))

    def explore(self) -> Any:
        """An interactive failure browser for a notebook (ipywidgets): pick a case (filter by status, check,
        category) and see its prompt, expected and actual answers side by side with the difference marked,
        each check's value and reason, and mismatched rows marked.

        Raises:
            ImportError: without ipywidgets (``pip install "evalnb[notebooks]"``).

        Example::

            result.explore()    # the last line of a cell
        """
        from evalnb import _hooks

        # evalnb.browser sits above results: it is reached through the slot evalnb/__init__.py fills
        return _hooks.implementation("result.explore")(self)

    # -- stopping early --------------------------------------------------------------------------------

    @property
    def stopped_early(self) -> bool:
        """True when a stop rule (the sequential gate: ``evalnb.run(..., baseline=..., stop="decided")``) ended the
        run before every case ran; the case runs not run are ``skipped`` with its reason."""
        return bool(self.meta.stopped_early)

    @property
    def calls_saved(self) -> int:
        """The case runs not run because the run stopped early (0 when it did not)."""
        return int(self.meta.calls_saved or 0)

    # -- gates ---------------------------------------------------------------------------------------

    @property
    def passed(self) -> bool:
        """True when no case failed or was degraded and the run was not interrupted."""
        if self.meta.interrupted:
            return False
        # A case is failed or degraded exactly when one of its run or score rows is (the rank rule of
        # `cases`): asked of the two status columns, without building the per-case frame.
        bad = ["failed", "degraded"]
        return not (self.runs["status"].isin(bad).any() or self.scores["status"].isin(bad).any())

    @property
    def exit_code(self) -> int:
        """0 when :attr:`passed`, else 1 (docs/results.md, statuses; 2 is for runs that could not start)."""
        return 0 if self.passed else 1

    def raise_for_failures(self) -> Result:
        """Raise :class:`evalnb.errors.FailuresError` when a case failed or was degraded; else return self.

        Example::

            evalnb.run(suite, agent).raise_for_failures()
        """
        if not self.passed:
            cases = self.cases
            c = {s: int((cases["status"] == s).sum()) for s in STATUSES}
            bad = cases[cases["status"].isin(["failed", "degraded"])]["case_id"].tolist()
            raise FailuresError(
                f"{c['failed']} failed, {c['degraded']} degraded, {c['skipped']} skipped "
                f"in suite {self.suite_name!r}: {', '.join(bad[:10])}{' ...' if len(bad) > 10 else ''}"
            )
        return self

    # -- responses -----------------------------------------------------------------------------------

    def response_for(self, case_id: str, run: int, turn: int) -> Response:
        """The agent's Response for one case x run x turn (rebuilt from ``runs`` when not in memory).

        Raises:
            KeyError: when there is no such row.
        """
        key = (case_id, int(run), int(turn))
        if key in self.responses:
            return self.responses[key]
        r = self.runs
        at = self._row_index("runs").get(key)
        if at is None:
            raise KeyError(key)
        row = {k: plain(v) for k, v in r.iloc[at[0]].items()}
        usage = {k: row[k] for k in ("prompt_tokens", "completion_tokens") if row.get(k) is not None} or None
        tc = self.tool_calls
        calls = tc.iloc[self._row_index("tool_calls").get(key, [])]
        return Response(
            text=row.get("response"),
            stdout=row.get("stdout"),
            exit_code=row.get("exit_code"),
            intent=row.get("intent"),
            insight=row.get("insight"),
            refusal=row.get("refusal"),
            context=row.get("context"),
            model=row.get("model"),
            usage=usage,
            latency_ms=row.get("latency_ms"),
            # rows of the tool_calls frame, in call order; a turn without rows reported none (or no evidence)
            tool_calls=[_tool_call(c) for c in records_of(calls.sort_values("order"))]
            if len(calls)
            else None,
        )

    def _row_index(self, name: str) -> dict[tuple[str, int, int], list[int]]:
        """Row positions of one frame by ``(case_id, run, turn)``, made once per frame object (and again when
        rows were added to it in place): looking rows up one at a time (``rescore`` rebuilds every judged
        response) stays linear in the frame's length, not quadratic."""
        frame = getattr(self, name)
        hit = self._indexes.get(name)
        if hit is not None and hit[0] is frame and hit[1] == len(frame):
            return hit[2]
        index: dict[tuple[str, int, int], list[int]] = {}
        runs = frame["run"].to_numpy(dtype="float64", na_value=-1).astype("int64").tolist()
        turns = frame["turn"].to_numpy(dtype="float64", na_value=-1).astype("int64").tolist()
        for i, key in enumerate(zip(frame["case_id"].tolist(), runs, turns, strict=True)):
            index.setdefault(key, []).append(i)
        self._indexes[name] = (frame, len(frame), index)
        return index

    # -- reports and files ---------------------------------------------------------------------------

    def report(self, *, passes: bool | None = None) -> str:
        """The text report (docs/results.md, the text report), for a suite of any format.

        ``passes=True`` lists every passing case, ``False`` none; by default they are listed when the suite has
        at most 1,000 cases (beyond that one line counts them).

        Example::

            print(result.report())
            # Suite: foodmart-sales-evals
            # 9/10 passed, 1 failed, 0 degraded, 0 skipped (elapsed 12483ms)
            #
            # PASS: sales-by-country (854ms, intent=QUERY, model=claude-sonnet-4-6)
            # FAIL: top-3-product-families (1024ms, intent=QUERY, model=claude-sonnet-4-6)
            #   rows[0].productFamily: expected "Food", got "Drink"
        """
        return report.text(self, passes=passes)

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-able data (what :meth:`to_json` writes)."""
        from evalnb.results import _files as files

        return files.to_dict(self)

    def to_json(self, path: str | Path | None = None, *, indent: int = 2) -> str:
        """Pretty, versioned JSON (``schema_version``) of the whole result; written to ``path`` when given.

        Example::

            data = json.loads(result.to_json())
            data["schema_version"], data["counts"]["passed"]        # (1, 10)
        """
        from evalnb.results import _files as files

        return files.to_json(self, path, indent=indent)

    def to_html(self, path: str | Path, *, plotlyjs: str = "inline") -> Path:
        """Write a standalone HTML scorecard (the ``html`` writer of ``evalnb.export``); ``plotlyjs="file"``
        or ``"cdn"`` links plotly's JavaScript instead of inlining it (``evalnb.export._html``)."""
        return outputs.writer("html")(self, path, plotlyjs=plotlyjs)

    def to_csv(self, folder: str | Path) -> Path:
        """Write the frames as CSV files into ``folder`` (the ``csv`` writer of ``evalnb.export``)."""
        return outputs.writer("csv")(self, folder)

    def to_parquet(self, folder: str | Path) -> Path:
        """Write ``runs``, ``scores``, ``cases``, ``tool_calls`` and ``mismatches`` as Parquet files into ``folder``,
        with their dtypes (the ``parquet`` writer of ``evalnb.export``; ``pip install "evalnb[parquet]"``);
        :func:`evalnb.read_results` reads the folder back.

        Example::

            result.to_parquet("results/v1")
            evalnb.read_results("results/v1").scores.dtypes["passed"]     # boolean
        """
        return outputs.writer("parquet")(self, folder)

    def to_excel(self, path: str | Path) -> Path:
        """Write the frames as sheets of one Excel workbook (the ``xlsx`` writer of ``evalnb.export``)."""
        return outputs.writer("xlsx")(self, path)

    # -- display -------------------------------------------------------------------------------------

    def _repr_html_(self) -> str:
        return report.html(self)

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"Result(suite={self.suite_name!r}, cases={sum(c.values())}, passed={c['passed']}, "
            f"failed={c['failed']}, degraded={c['degraded']}, skipped={c['skipped']})"
        )


def _ranked(status: pd.Series, ranks: Mapping[str, int], other: int) -> np.ndarray:
    """Each row's rank by its status (``other`` for any other status or none): the few distinct statuses
    looked up once, not a dict lookup per row."""
    import numpy as np
    import pandas as pd

    codes, uniques = pd.factorize(status, use_na_sentinel=True)
    table = np.array(
        [ranks.get(u, other) if isinstance(u, str) else other for u in uniques] + [other], dtype=np.int64
    )
    ranked: np.ndarray = table[codes]  # a missing status (code -1) takes the table's last entry
    return ranked
