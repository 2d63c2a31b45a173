"""What the failure browser shows, read from a Result's frames: the cases a filter keeps, and one case x run x
turn with its prompt, expected and actual answers, checks, row mismatches and rows.

Pure pandas, no widgets: the views and the tests use it directly.

Example::

    from evalnb.browser._data import case_ids, case_view
    case_ids(result, status="failed", check="rows")
    view = case_view(result, "top-3-product-families")
    view.checks[0]["reason"], view.mismatches
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb._scoring import RANK
from evalnb.results._frames import first_failing as first_turns
from evalnb.results._frames import records

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["ALL", "NOT_PASSED", "CaseView", "case_ids", "case_label", "case_view", "categories", "check_ids"]

ALL = "all"
NOT_PASSED = "not passed"
"""The status filter of failed and degraded cases together (the browser's default)."""


@dataclass
class CaseView:
    """One case x run x turn as the browser shows it.

    Attributes:
        case_id: the case.
        case_name: its display name.
        category: its category (or None).
        status: the case's status over all its runs (``passed``, ``failed``, ``degraded``, ``skipped``).
        run: the run shown (0-based).
        turn: the turn shown (0-based).
        runs: the runs recorded for the case.
        turns: the turns of the run shown.
        turn_status: this run x turn's status.
        prompt: what was sent.
        expected: the expected answer, if the suite gives one.
        response: the answer's text.
        error: why the turn degraded, if it did.
        checks: one dict per check of the turn: check_id, check, status, value, passed, reason, judge.
        mismatches: one dict per row mismatch of the turn: row, key, expected, actual, tolerance, reason.
        expected_rows: the rows a ``rows`` check expected (None for a reference query or no rows check).
        actual_rows: the rows the agent answered (None when the Response is not in memory).
        order_matters: whether the rows check compares row i with row i.
    """

    case_id: str
    case_name: str
    category: str | None
    status: str
    run: int
    turn: int
    runs: list[int]
    turns: list[int]
    turn_status: str | None
    prompt: str | None
    expected: str | None
    response: str | None
    error: str | None
    checks: list[dict[str, Any]] = field(default_factory=list)
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    expected_rows: list[dict[str, Any]] | None = None
    actual_rows: list[dict[str, Any]] | None = None
    order_matters: bool = True


def check_ids(result: Result) -> list[str]:
    """The result's check ids in the order of its scores."""
    return [str(c) for c in dict.fromkeys(result.scores["check_id"].dropna().tolist())]


def categories(result: Result) -> list[str]:
    """The result's categories in case order (cases without one are not listed)."""
    return [str(c) for c in dict.fromkeys(result.cases["category"].dropna().tolist())]


def _check_status(result: Result, check: str) -> dict[str, str]:
    """Per case, the worst status of one check over its runs and turns (``failed`` beats ``passed``)."""
    sc = result.scores[result.scores["check_id"] == check]
    by_rank = {v: k for k, v in RANK.items()}
    worst = sc.assign(_r=sc["status"].map(RANK).fillna(RANK["skipped"])).groupby("case_id")["_r"].max()
    return {str(cid): by_rank[int(r)] for cid, r in worst.items()}


def case_ids(result: Result, *, status: str = NOT_PASSED, check: str = ALL, category: str = ALL) -> list[str]:
    """The cases a filter keeps, in suite order.

    Args:
        result: the Result browsed.
        status: a case status, :data:`NOT_PASSED` (failed or degraded) or :data:`ALL`. With a ``check``, it is
            that check's worst status in the case (``failed`` + ``rows``: the cases whose rows check failed).
        check: a check id, or :data:`ALL`.
        category: a category, or :data:`ALL`.

    Example::

        case_ids(result, status="failed", check="rows")
        # ['top-3-product-families']
    """
    cases = result.cases
    if category != ALL:
        cases = cases[cases["category"] == category]
    wanted = {"failed", "degraded"} if status == NOT_PASSED else None if status == ALL else {status}
    if check == ALL:
        keep = cases if wanted is None else cases[cases["status"].isin(wanted)]
        return [str(c) for c in keep["case_id"]]
    of_check = _check_status(result, check)
    return [
        str(cid)
        for cid in cases["case_id"]
        if str(cid) in of_check and (wanted is None or of_check[str(cid)] in wanted)
    ]


_MARKS = {"passed": "PASS", "failed": "FAIL", "degraded": "DEGRADED", "skipped": "SKIP"}


def case_label(result: Result, case_id: str, *, check: str = ALL) -> str:
    """How the case list names a case: ``FAIL · top-3-product-families · Top 3 product families``; with a
    ``check``, by that check's status in the case (the one the filter chose it by): ``PASS [rows] · ...``."""
    row = result.cases[result.cases["case_id"] == case_id]
    if row.empty:
        return case_id
    r = records(row)[0]
    name = f" · {r['case_name']}" if r["case_name"] and r["case_name"] != case_id else ""
    if check != ALL:
        status = _check_status(result, check).get(case_id)
        mark = _MARKS.get(status, "?") if status else "NOT CHECKED"
        return f"{mark} [{check}] · {case_id}{name}"
    return f"{_MARKS.get(r['status'], '?')} · {case_id}{name}"


def runs_of(result: Result, case_id: str) -> list[int]:
    """The run numbers recorded for a case."""
    r = result.runs
    return sorted({int(x) for x in r.loc[r["case_id"] == case_id, "run"].dropna()})


def turns_of(result: Result, case_id: str, run: int) -> list[int]:
    """The turn numbers recorded for a case's run."""
    r = result.runs
    at = (r["case_id"] == case_id) & (r["run"] == run)
    return sorted({int(x) for x in r.loc[at, "turn"].dropna()})


def first_failing(result: Result, case_id: str, *, check: str = ALL) -> tuple[int, int]:
    """The first run and turn of a case that did not pass (else the first there is); with a ``check``, the
    first where that check did not pass (else the case's first that did not pass)."""
    r = result.runs[result.runs["case_id"] == case_id]
    if r.empty:
        return 0, 0
    if check != ALL:
        sc = result.scores
        bad = sc[
            (sc["case_id"] == case_id) & (sc["check_id"] == check) & sc["status"].isin(["failed", "degraded"])
        ]
        if len(bad):
            row = bad.sort_values(["run", "turn"]).iloc[0]
            return int(row["run"]), int(row["turn"])
    row = first_turns(r).iloc[0]
    return int(row["run"]), int(row["turn"])


def case_view(result: Result, case_id: str, run: int | None = None, turn: int | None = None) -> CaseView:
    """One case x run x turn of ``result`` (by default the first run and turn that did not pass).

    Raises:
        KeyError: for a case the result does not have.
    """
    cases = result.cases
    hit = cases[cases["case_id"] == case_id]
    if hit.empty:
        raise KeyError(case_id)
    case = records(hit)[0]
    if run is None or turn is None:
        run, turn = first_failing(result, case_id)
    runs, turns = runs_of(result, case_id), turns_of(result, case_id, run)
    r = result.runs
    row = r[(r["case_id"] == case_id) & (r["run"] == run) & (r["turn"] == turn)]
    one = records(row)[0] if len(row) else {}
    sc = result.scores
    at = (sc["case_id"] == case_id) & (sc["run"] == run) & (sc["turn"] == turn)
    cols = ["check_id", "check", "status", "value", "passed", "reason", "judge"]
    mm = result.mismatches
    m_at = (mm["case_id"] == case_id) & (mm["run"] == run) & (mm["turn"] == turn)
    mcols = ["row", "key", "expected", "actual", "tolerance", "reason"]
    expected_rows, order_matters = _expected_rows(result, case_id, turn)
    response = result.responses.get((case_id, run, turn))
    actual = getattr(response, "rows", None)
    return CaseView(
        case_id=case_id,
        case_name=str(case["case_name"] or case_id),
        category=case["category"],
        status=str(case["status"]),
        run=run,
        turn=turn,
        runs=runs,
        turns=turns,
        turn_status=one.get("status"),
        prompt=one.get("prompt"),
        expected=one.get("expected"),
        response=one.get("response"),
        error=one.get("error"),
        checks=records(sc.loc[at, cols]),
        mismatches=records(mm.loc[m_at, mcols]),
        expected_rows=expected_rows,
        actual_rows=_plain_rows(actual),
        order_matters=order_matters,
    )


def _expected_rows(result: Result, case_id: str, turn: int) -> tuple[list[dict[str, Any]] | None, bool]:
    """The expected rows of the turn's first ``rows`` check, from the suite (None for a reference query)."""
    case = next((c for c in result.suite.cases if c.id == case_id), None)
    if case is None or turn >= len(case.turns):
        return None, True
    for spec in case.turns[turn].checks:
        if spec.name == "rows":
            expected = getattr(spec, "expected", None)
            return (list(expected) if expected is not None else None), bool(
                getattr(spec, "order_matters", True)
            )
    return None, True


def _plain_rows(rows: Any) -> list[dict[str, Any]] | None:
    """An answer's rows as a list of dicts (a DataFrame answer too)."""
    if rows is None:
        return None
    if hasattr(rows, "to_dict"):
        return [dict(r) for r in rows.to_dict(orient="records")]
    try:
        return [dict(r) for r in rows]
    except (TypeError, ValueError):
        return None
