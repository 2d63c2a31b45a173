"""``Result``: what a run returns, as long and tidy pandas DataFrames plus wide views and reports.

A Result holds the :class:`~evalnb.suite.Suite` it ran, a ``meta`` dict (agent, model, judge, started_at,
finished_at, elapsed_ms, options, checks) and four long frames with explicit dtypes and a stable column order
(see ``docs/results.md``):

* ``runs``: one row per case x run x turn (what was asked, what came back, status, latency, tokens);
* ``scores``: one row per case x run x turn x check (value, passed, status, reason, judge, cost);
* ``cases``: one row per case, derived from the two above (status, pass rate, latency);
* ``mismatches``: one row per row-comparison mismatch of ``rows`` checks (cube spec paths).

Wide views are methods: :meth:`Result.summary`, :meth:`Result.by_category`.

Example:
    >>> result = evalnb.run(suite, agent)
    >>> result.cases[["case_id", "status", "pass_rate"]]
    >>> print(result.report())
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.agents.base import Response
from evalnb.errors import FailuresError

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.suite import Suite

__all__ = [
    "CASES_COLUMNS",
    "MISMATCH_COLUMNS",
    "RUNS_COLUMNS",
    "SCHEMA_VERSION",
    "SCORES_COLUMNS",
    "STATUSES",
    "Result",
    "read_results",
]

SCHEMA_VERSION = 1
"""Version of the JSON written by :meth:`Result.to_json` (and of the frame shapes)."""

STATUSES = ("passed", "failed", "degraded", "skipped")

RUNS_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "run": "Int64",
    "turn": "Int64",
    "prompt": "string",
    "expected": "string",
    "response": "string",
    "stdout": "string",
    "exit_code": "Int64",
    "intent": "string",
    "refusal": "string",
    "insight": "string",
    "context": "string",
    "status": "string",
    "error": "string",
    "latency_ms": "float64",
    "model": "string",
    "agent": "string",
    "workdir": "string",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
}

SCORES_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "run": "Int64",
    "turn": "Int64",
    "check": "string",
    "check_id": "string",
    "value": "float64",
    "passed": "boolean",
    "status": "string",
    "reason": "string",
    "judge": "string",
    "options": "string",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "cost": "float64",
}

CASES_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "status": "string",
    "runs": "Int64",
    "passed_runs": "Int64",
    "pass_rate": "float64",
    "latency_ms": "float64",
}

MISMATCH_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "run": "Int64",
    "turn": "Int64",
    "row": "Int64",
    "key": "string",
    "expected": "string",
    "actual": "string",
    "tolerance": "string",
    "reason": "string",
}

# Worst first: a case takes the worst status of its runs (a degraded run outranks a failed one).
_RANK = {"degraded": 3, "failed": 2, "skipped": 1, "passed": 0}


def make_frame(rows: Iterable[Mapping[str, Any]] | None, schema: Mapping[str, str]) -> pd.DataFrame:
    """A DataFrame with exactly ``schema``'s columns, in order, with its dtypes (missing columns are NA)."""
    from operator import itemgetter

    rows = list(rows or [])
    cols = list(schema)
    try:
        pick = itemgetter(*cols)
        columns = list(zip(*map(pick, rows), strict=True)) if rows else [() for _ in cols]
        data = {c: list(v) for c, v in zip(cols, columns, strict=True)}
    except KeyError:
        data = {c: [r.get(c) for r in rows] for c in cols}
    return _typed_frame(data, schema)


def frame_from_tuples(rows: Iterable[tuple[Any, ...]], schema: Mapping[str, str]) -> pd.DataFrame:
    """Like :func:`make_frame` for rows that are tuples holding every column of ``schema``, in its order.

    The runner builds its score rows this way: no dict per row, and the columns come from one transpose.
    """
    rows = list(rows)
    cols = list(schema)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in cols]
    if len(columns) != len(cols):
        raise ValueError(f"rows hold {len(columns)} columns, the schema {len(cols)}")
    return _typed_frame({c: list(v) for c, v in zip(cols, columns, strict=True)}, schema)


def _typed_frame(data: dict[str, list[Any]], schema: Mapping[str, str]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    cols = list(schema)
    try:
        # Typed arrays straight from the values: several times faster than inferring then casting,
        # which shows at the tens of thousands of score rows a large run produces.
        arrays: dict[str, Any] = {}
        for col, dtype in schema.items():
            values = data[col]
            if dtype == "float64":
                arrays[col] = np.array(values, dtype="float64")  # None -> NaN
            else:
                arrays[col] = pd.array(values, dtype=dtype)
        return pd.DataFrame(arrays, columns=cols, copy=False)
    except (TypeError, ValueError):
        return conform(pd.DataFrame(data, columns=cols), schema)


def conform(frame: pd.DataFrame, schema: Mapping[str, str]) -> pd.DataFrame:
    """Reorder, add missing columns as NA, and cast to the schema's dtypes (extra columns are kept last)."""
    import pandas as pd

    frame = frame.copy()
    for col in schema:
        if col not in frame.columns:
            frame[col] = pd.NA
    extra = [c for c in frame.columns if c not in schema]
    frame = frame[list(schema) + extra]
    casts: dict[str, Any] = {}
    for col, dtype in schema.items():
        if dtype == "float64":
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        elif dtype == "Int64":
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
        elif dtype == "boolean":
            frame[col] = frame[col].astype("object").where(frame[col].notna(), None).astype("boolean")
        else:
            casts[col] = dtype
    if casts:
        frame = frame.astype(casts)
    return frame.reset_index(drop=True)


def _na(value: Any) -> bool:
    if value is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _plain(value: Any) -> Any:
    """A JSON-friendly python value (NA -> None, numpy scalars -> python)."""
    if _na(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    cols = list(frame.columns)
    return [
        {c: _plain(v) for c, v in zip(cols, row, strict=False)}
        for row in frame.itertuples(index=False, name=None)
    ]


class Result:
    """The outcome of running a suite: tidy DataFrames, wide views, a text report and an exit code.

    Build one with :func:`evalnb.run`, or rebuild one from saved frames with :meth:`from_frames`.

    Attributes:
        suite: the Suite that ran.
        meta: agent, model, judge, started_at, finished_at, elapsed_ms, options, checks, interrupted.
        runs: one row per case x run x turn.
        scores: one row per case x run x turn x check.
        mismatches: one row per row mismatch of ``rows`` checks.
        responses: the agent's Response objects keyed by ``(case_id, run, turn)`` (in memory only).

    Example:
        >>> result = evalnb.run(suite, lambda prompt: "42")
        >>> result.passed, result.exit_code
        (True, 0)
        >>> result.summary()[["check_id", "n", "pass_rate"]]
    """

    def __init__(
        self,
        *,
        suite: Suite,
        runs: pd.DataFrame,
        scores: pd.DataFrame,
        mismatches: pd.DataFrame | None = None,
        meta: Mapping[str, Any] | None = None,
        responses: Mapping[tuple[str, int, int], Response] | None = None,
    ) -> None:
        self.suite = suite
        self.runs = runs
        self.scores = scores
        self.mismatches = mismatches if mismatches is not None else make_frame([], MISMATCH_COLUMNS)
        self.meta: dict[str, Any] = dict(meta or {})
        self.responses: dict[tuple[str, int, int], Response] = dict(responses or {})
        self._cases: pd.DataFrame | None = None

    # -- construction --------------------------------------------------------------------------------

    @classmethod
    def from_frames(
        cls,
        *,
        suite: Suite,
        runs: pd.DataFrame,
        scores: pd.DataFrame,
        mismatches: pd.DataFrame | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Result:
        """Rebuild a Result from its frames (as a store or a saved file holds them).

        Columns are conformed to the documented shapes: missing ones become NA, dtypes are cast.

        Example:
            >>> again = Result.from_frames(suite=r.suite, runs=r.runs, scores=r.scores, meta=r.meta)
            >>> again.cases.equals(r.cases)
            True
        """
        return cls(
            suite=suite,
            runs=conform(runs, RUNS_COLUMNS),
            scores=conform(scores, SCORES_COLUMNS),
            mismatches=conform(mismatches, MISMATCH_COLUMNS) if mismatches is not None else None,
            meta=meta,
        )

    # -- derived frames ------------------------------------------------------------------------------

    @property
    def cases(self) -> pd.DataFrame:
        """One row per case: status, runs, passed_runs, pass_rate and mean latency per run (ms).

        A run takes the worst status of its turns and checks (degraded > failed > skipped > passed), and a
        case the worst status of its runs. A case with no runs is ``skipped``.
        """
        if self._cases is None:
            self._cases = self._build_cases()
        return self._cases

    def _build_cases(self) -> pd.DataFrame:
        runs = self.runs
        per_run: dict[tuple[str, int], str] = {}
        latency: dict[tuple[str, int], float] = {}
        for cid, run, status, lat in zip(
            runs["case_id"].tolist(),
            runs["run"].tolist(),
            runs["status"].tolist(),
            runs["latency_ms"].tolist(),
            strict=False,
        ):
            key = (cid, run)
            st = status if isinstance(status, str) else "skipped"
            prev = per_run.get(key)
            if prev is None or _RANK.get(st, 0) > _RANK.get(prev, 0):
                per_run[key] = st
            if lat is not None and not _na(lat):
                latency[key] = latency.get(key, 0.0) + float(lat)
        # A check that degraded makes its run degraded even when the agent answered (api contract).
        sc = self.scores
        for cid, run, status in zip(
            sc["case_id"].tolist(), sc["run"].tolist(), sc["status"].tolist(), strict=False
        ):
            if status == "degraded":
                per_run[(cid, run)] = "degraded"
            elif status == "failed" and _RANK.get(per_run.get((cid, run), "passed"), 0) < _RANK["failed"]:
                per_run[(cid, run)] = "failed"

        by_case: dict[str, list[str]] = {}
        lat_case: dict[str, list[float]] = {}
        for (cid, run), st in per_run.items():
            by_case.setdefault(cid, []).append(st)
            if (cid, run) in latency and st != "skipped":
                lat_case.setdefault(cid, []).append(latency[(cid, run)])

        order: list[tuple[str, str, str | None]] = [(c.id, c.name, c.category) for c in self.suite.cases]
        known = {c[0] for c in order}
        if len(runs):
            extra = runs.drop_duplicates("case_id")
            for cid, name, cat in zip(extra["case_id"], extra["case_name"], extra["category"], strict=False):
                if cid not in known:
                    order.append((cid, name, None if _na(cat) else cat))
        rows = []
        for cid, name, cat in order:
            statuses = by_case.get(cid, [])
            status = max(statuses, key=lambda s: _RANK.get(s, 0)) if statuses else "skipped"
            n = len(statuses)
            ok = sum(1 for s in statuses if s == "passed")
            lats = lat_case.get(cid, [])
            rows.append(
                {
                    "suite": self.suite.name,
                    "case_id": cid,
                    "case_name": name,
                    "category": cat,
                    "status": status,
                    "runs": n,
                    "passed_runs": ok,
                    "pass_rate": ok / n if n else None,
                    "latency_ms": sum(lats) / len(lats) if lats else None,
                }
            )
        return make_frame(rows, CASES_COLUMNS)

    def counts(self) -> dict[str, int]:
        """Number of cases per status: ``{"passed": 9, "failed": 1, "degraded": 0, "skipped": 0}``."""
        vc = self.cases["status"].value_counts()
        return {s: int(vc.get(s, 0)) for s in STATUSES}

    # -- wide views ----------------------------------------------------------------------------------

    def summary(self) -> pd.DataFrame:
        """Per check: n (scored rows), mean value, pass rate, degraded count; judge, tokens and cost when present.

        ``n`` counts rows that were checked (not ``not_checked`` or ``skipped``); ``pass_rate`` is over them.

        Example:
            >>> result.summary()
              check_id        check  n  mean  pass_rate  degraded
            0    regex        regex  3   1.0        1.0         0
        """
        import pandas as pd

        sc = self.scores
        checked = sc[~sc["status"].isin(["not_checked", "skipped"])]
        order = list(dict.fromkeys(sc["check_id"].tolist()))
        rows = []
        for cid in order:
            part = checked[checked["check_id"] == cid]
            allp = sc[sc["check_id"] == cid]
            passed = part["passed"].astype("boolean")
            rows.append(
                {
                    "check_id": cid,
                    "check": allp["check"].iloc[0],
                    "n": len(part),
                    "mean": part["value"].mean() if part["value"].notna().any() else float("nan"),
                    "pass_rate": float(passed.fillna(False).mean()) if len(part) else float("nan"),
                    "degraded": int((part["status"] == "degraded").sum()),
                    "judge": ", ".join(sorted(set(allp["judge"].dropna().tolist()))) or None,
                    "prompt_tokens": allp["prompt_tokens"].sum()
                    if allp["prompt_tokens"].notna().any()
                    else None,
                    "completion_tokens": allp["completion_tokens"].sum()
                    if allp["completion_tokens"].notna().any()
                    else None,
                    "cost": allp["cost"].sum() if allp["cost"].notna().any() else None,
                }
            )
        schema = {
            "check_id": "string",
            "check": "string",
            "n": "Int64",
            "mean": "float64",
            "pass_rate": "float64",
            "degraded": "Int64",
            "judge": "string",
            "prompt_tokens": "Int64",
            "completion_tokens": "Int64",
            "cost": "float64",
        }
        frame = make_frame(rows, schema)
        # judge/token/cost columns only when some check has them (keeps the deterministic view small).
        drop = [c for c in ("judge", "prompt_tokens", "completion_tokens", "cost") if frame[c].isna().all()]
        return pd.DataFrame(frame.drop(columns=drop))

    def by_category(self, value: str = "pass_rate") -> pd.DataFrame:
        """Category x check: the pass rate (or ``value="mean"``: the mean value) of each check per category.

        Example:
            >>> result.by_category()
            check_id       ExactMatch  PartialMatch
            category
            knowledge             1.0           0.5
        """
        if value not in ("pass_rate", "mean"):
            raise ValueError("value must be 'pass_rate' or 'mean'")
        sc = self.scores[~self.scores["status"].isin(["not_checked", "skipped"])].copy()
        sc["category"] = sc["category"].fillna("(none)")
        if value == "pass_rate":
            sc["_v"] = sc["passed"].astype("boolean").fillna(False).astype("float64")
        else:
            sc["_v"] = sc["value"]
        wide = sc.pivot_table(index="category", columns="check_id", values="_v", aggfunc="mean", sort=False)
        wide.columns.name = "check_id"
        return wide

    # -- gates ---------------------------------------------------------------------------------------

    @property
    def passed(self) -> bool:
        """True when no case failed or was degraded and the run was not interrupted."""
        if self.meta.get("interrupted"):
            return False
        return not self.cases["status"].isin(["failed", "degraded"]).any()

    @property
    def exit_code(self) -> int:
        """0 when :attr:`passed`, else 1 (api contract; 2 is for runs that could not start)."""
        return 0 if self.passed else 1

    def raise_for_failures(self) -> Result:
        """Raise :class:`evalnb.errors.FailuresError` when a case failed or was degraded; else return self.

        Example:
            >>> evalnb.run(suite, agent).raise_for_failures()
        """
        if not self.passed:
            c = self.counts()
            bad = self.cases[self.cases["status"].isin(["failed", "degraded"])]["case_id"].tolist()
            raise FailuresError(
                f"{c['failed']} failed, {c['degraded']} degraded, {c['skipped']} skipped "
                f"in suite {self.suite.name!r}: {', '.join(bad[:10])}{' ...' if len(bad) > 10 else ''}"
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
        hit = r[(r["case_id"] == case_id) & (r["run"] == run) & (r["turn"] == turn)]
        if hit.empty:
            raise KeyError(key)
        row = {k: _plain(v) for k, v in hit.iloc[0].items()}
        usage = {k: row[k] for k in ("prompt_tokens", "completion_tokens") if row.get(k) is not None} or None
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
        )

    # -- reports -------------------------------------------------------------------------------------

    def report(self) -> str:
        """The text report of the cube spec, for a suite of any format.

        Example:
            >>> print(result.report())
            Suite: foodmart-sales-evals
            9/10 passed, 1 failed, 0 degraded, 0 skipped (elapsed 12483ms)
            <BLANKLINE>
            PASS: sales-by-country (854ms, intent=QUERY, model=claude-sonnet-4-6)
            FAIL: top-3-product-families (1024ms, intent=QUERY, model=claude-sonnet-4-6)
              rows[0].productFamily: expected "Food", got "Drink"
        """
        c = self.counts()
        total = sum(c.values())
        elapsed = self.meta.get("elapsed_ms")
        lines = [f"Suite: {self.suite.name}"]
        if self.suite.description:
            lines.append(f"Description: {' '.join(self.suite.description.split())}")
        head = f"{c['passed']}/{total} passed, {c['failed']} failed, {c['degraded']} degraded, {c['skipped']} skipped"
        if elapsed is not None:
            head += f" (elapsed {round(float(elapsed))}ms)"
        lines += [head, ""]
        runs = self.runs
        first: dict[str, dict[str, Any]] = {}
        for row in _records(runs[["case_id", "intent", "model", "status"]]):
            first.setdefault(row["case_id"], {"intent": None, "model": None})
            for k in ("intent", "model"):
                if first[row["case_id"]][k] is None and row[k] is not None:
                    first[row["case_id"]][k] = row[k]
        detail = self._failure_lines()
        label = {"passed": "PASS", "failed": "FAIL", "degraded": "DEGRADED", "skipped": "SKIPPED"}
        for case in _records(self.cases):
            parts = []
            if case["latency_ms"] is not None:
                parts.append(f"{round(case['latency_ms'])}ms")
            if (case["runs"] or 0) > 1:
                parts.append(f"{case['passed_runs']}/{case['runs']} runs passed")
            info = first.get(case["case_id"], {})
            if info.get("intent"):
                parts.append(f"intent={info['intent']}")
            if info.get("model"):
                parts.append(f"model={info['model']}")
            suffix = f" ({', '.join(parts)})" if parts else ""
            lines.append(f"{label.get(case['status'], case['status'].upper())}: {case['case_id']}{suffix}")
            if case["status"] in ("failed", "degraded"):
                lines += [f"  {d}" for d in detail.get(case["case_id"], [])]
        return "\n".join(lines) + "\n"

    def _failure_lines(self) -> dict[str, list[str]]:
        """Indented lines under a FAIL/DEGRADED case: mismatch paths for rows, else ``check: reason``.

        The same line from several runs is written once, prefixed with the runs it happened in.
        """
        # The runs that happened, not the suite's count: `runs=1` overrides a task's default of 3.
        multi_run = set(self.cases.loc[self.cases["runs"] > 1, "case_id"].tolist())
        multi_turn = {c.id for c in self.suite.cases if len(c.turns) > 1}
        # case -> (turn label, message) -> runs, in first-seen order
        grouped: dict[str, dict[tuple[str, str], list[int]]] = {}

        def add(cid: str, run: Any, turn: Any, message: str) -> None:
            label = f"turn {turn + 1}" if cid in multi_turn and turn is not None else ""
            runs = grouped.setdefault(cid, {}).setdefault((label, message), [])
            if run is not None and run not in runs:
                runs.append(run)

        for r in _records(self.runs[self.runs["status"] == "degraded"]):
            if r["error"]:
                add(r["case_id"], r["run"], r["turn"], f"error: {r['error']}")
        with_mm: set[tuple[Any, Any, Any]] = set()
        for m in _records(self.mismatches):
            with_mm.add((m["case_id"], m["run"], m["turn"]))
            add(m["case_id"], m["run"], m["turn"], _mismatch_line(m))
        sc = self.scores
        bad = sc[(sc["status"] == "degraded") | (sc["passed"] == False)]  # noqa: E712 - boolean NA-aware
        for s in _records(bad):
            if s["check"] == "rows" and (s["case_id"], s["run"], s["turn"]) in with_mm:
                continue
            if s["status"] == "degraded" and (s["reason"] or "").startswith("not checked: the agent failed"):
                continue  # the run's error line already says why
            add(s["case_id"], s["run"], s["turn"], f"{s['check_id']}: {s['reason'] or s['status']}")

        out: dict[str, list[str]] = {}
        for cid, lines in grouped.items():
            for (label, message), runs in lines.items():
                bits = []
                if cid in multi_run and runs:
                    nums = ", ".join(str(r + 1) for r in sorted(runs))
                    bits.append(f"run{'s' if len(runs) > 1 else ''} {nums}")
                if label:
                    bits.append(label)
                prefix = f"[{', '.join(bits)}] " if bits else ""
                out.setdefault(cid, []).append(prefix + message)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-able data (what :meth:`to_json` writes)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "suite": {
                "name": self.suite.name,
                "format": self.suite.format,
                "description": self.suite.description,
                "path": self.suite.path,
                "content_hash": self.suite.content_hash(),
            },
            "meta": json.loads(json.dumps(self.meta, default=str)),
            "counts": self.counts(),
            "passed": self.passed,
            "cases": _records(self.cases),
            "runs": _records(self.runs),
            "scores": _records(self.scores),
            "mismatches": _records(self.mismatches),
            "definition": self.suite.model_dump(mode="json"),
        }

    def to_json(self, path: str | Path | None = None, *, indent: int = 2) -> str:
        """Pretty, versioned JSON (``schema_version``) of the whole result; written to ``path`` when given.

        Example:
            >>> data = json.loads(result.to_json())
            >>> data["schema_version"], data["counts"]["passed"]
            (1, 10)
        """
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, default=str)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text + "\n", encoding="utf-8")
        return text

    def to_html(self, path: str | Path) -> Path:
        """Write a standalone HTML report (delegates to ``evalnb.export``)."""
        from evalnb import export

        out: Path = export.to_html(self, path)
        return out

    def to_csv(self, folder: str | Path) -> Path:
        """Write the frames as CSV files into ``folder`` (delegates to ``evalnb.export``)."""
        from evalnb import export

        out: Path = export.to_csv(self, folder)
        return out

    def to_excel(self, path: str | Path) -> Path:
        """Write the frames as sheets of one Excel workbook (delegates to ``evalnb.export``)."""
        from evalnb import export

        out: Path = export.to_excel(self, path)
        return out

    # -- display -------------------------------------------------------------------------------------

    def _repr_html_(self) -> str:
        c = self.counts()
        total = sum(c.values())
        esc = html.escape
        elapsed = self.meta.get("elapsed_ms")
        colour = {"passed": "#1a7f37", "failed": "#cf222e", "degraded": "#9a6700", "skipped": "#6e7781"}
        badges = " ".join(
            f'<span style="color:{colour[s]};font-weight:600">{c[s]} {esc(s)}</span>' for s in STATUSES
        )
        head = (
            f"<div><b>{esc(self.suite.name)}</b> ({esc(self.suite.format)}): "
            f"{c['passed']}/{total} passed &middot; {badges}"
            + (f" &middot; {round(float(elapsed))} ms" if elapsed is not None else "")
            + "</div>"
        )
        summary = self.summary().to_html(
            index=False, escape=True, float_format=lambda x: f"{x:.3g}", na_rep=""
        )
        cases = self.cases
        shown = cases[cases["status"] != "passed"].head(20)
        body = ""
        if len(shown):
            body = "<div>Cases not passed:</div>" + shown[
                ["case_id", "category", "status", "runs", "passed_runs", "latency_ms"]
            ].to_html(index=False, escape=True, na_rep="", float_format=lambda x: f"{x:.0f}")
        return f'<div class="evalnb-result">{head}{summary}{body}</div>'

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"Result(suite={self.suite.name!r}, cases={sum(c.values())}, passed={c['passed']}, "
            f"failed={c['failed']}, degraded={c['degraded']}, skipped={c['skipped']})"
        )


def _fmt_value(value: Any) -> str:
    if value is None:
        return "null"
    return str(value)


def _mismatch_line(m: Mapping[str, Any]) -> str:
    # cube spec: `rows[0].productFamily: expected "Food", got "Drink"`. The rows check writes the full line
    # (with the tolerance it applied) as the reason; rebuild it only for mismatches saved without one.
    if m.get("reason"):
        return str(m["reason"])
    if m.get("row") is not None and m.get("key") is not None and (m.get("expected") or m.get("actual")):
        return f"rows[{m['row']}].{m['key']}: expected {_fmt_value(m.get('expected'))}, got {_fmt_value(m.get('actual'))}"
    return str(m.get("reason") or "row mismatch")


def mismatch_value(value: Any) -> str | None:
    """How a mismatch frame stores an expected/actual cell: strings quoted (JSON), numbers bare."""
    if value is None:
        return None
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(_plain(value), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def read_results(path: str | Path) -> Result:
    """Read a Result written by :meth:`Result.to_json` (other formats go through ``evalnb.export``).

    Example:
        >>> result.to_json(".evals/results/v1.json")
        >>> evalnb.read_results(".evals/results/v1.json").cases
    """
    import pandas as pd

    from evalnb.suite import Suite

    p = Path(path)
    if p.suffix.lower() != ".json":
        from evalnb import export

        loaded: Result = export.read_results(p)
        return loaded
    from evalnb.errors import StoreError

    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise StoreError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise StoreError(
            f"{p}: a JSON {type(data).__name__}, not a result written by Result.to_json "
            "(a dataset? load it with evalnb.load)",
            code="UNKNOWN_RESULTS",
        )
    if "schema_version" not in data and isinstance(data.get("items"), list):
        # a dataset-schema output document (responses and scores per item): read by evalnb.export
        from evalnb import export as _export

        document: Result = _export.read_results(p)
        return document
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise StoreError(
            f"{p}: results schema_version {version!r} is not supported (expected {SCHEMA_VERSION})"
        )
    if not isinstance(data.get("definition"), dict):
        raise StoreError(
            f"{p}: the result has no suite 'definition' to rebuild it from", code="UNKNOWN_RESULTS"
        )
    from pydantic import ValidationError

    try:
        suite = Suite.model_validate(data["definition"])
    except ValidationError as exc:
        raise StoreError(
            f"{p}: the result's suite 'definition' is not valid: {exc}", code="UNKNOWN_RESULTS"
        ) from exc
    return Result.from_frames(
        suite=suite,
        runs=pd.DataFrame(data.get("runs") or [], columns=list(RUNS_COLUMNS)),
        scores=pd.DataFrame(data.get("scores") or [], columns=list(SCORES_COLUMNS)),
        mismatches=pd.DataFrame(data.get("mismatches") or [], columns=list(MISMATCH_COLUMNS)),
        meta=data.get("meta") or {},
    )
