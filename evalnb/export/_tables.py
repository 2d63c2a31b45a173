"""The tables the exports share: the per-category view with plain column names, and the per-case table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.results._frames import first_failing

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result

__all__ = ["FORMULA_STARTS", "case_table", "category_table", "starts_formula"]

#: What a spreadsheet reads as the start of a formula (OWASP, CSV injection): a text cell that starts with one of
#: these is written as text, never as a live formula (``=HYPERLINK(...)`` in a case id, ``=1+2`` in an answer).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def starts_formula(value: object) -> bool:
    """Whether a cell is text a spreadsheet would take for a formula (see :data:`FORMULA_STARTS`).

    Example::

        starts_formula("=1+2"), starts_formula("-3"), starts_formula(-3), starts_formula("ok")
        # (True, True, False, False)
    """
    return isinstance(value, str) and value.startswith(FORMULA_STARTS)


def category_table(result: Result) -> pd.DataFrame:
    """``result.by_category()`` as a flat frame: the category a column, every column name a string."""
    wide = result.by_category().reset_index()
    wide.columns = [str(c) for c in wide.columns]
    return wide


def case_table(result: Result) -> pd.DataFrame:
    """One row per case with its status, pass rate, latency, the response of its first run x turn that did
    not pass (else its first: ``response_run``, ``response_turn``, 1-based) and what failed (5 reasons).

    Example::

        case_table(result)[["case_id", "status", "reasons"]]
    """
    import pandas as pd

    cases = result.cases.copy()
    sc = result.scores
    bad = sc[(sc["status"] == "degraded") | (sc["passed"].astype("boolean") == False)]  # noqa: E712
    reasons = (
        bad.assign(_r=bad["check_id"].astype(str) + ": " + bad["reason"].fillna(bad["status"]).astype(str))
        .drop_duplicates(["case_id", "_r"])
        .groupby("case_id", sort=False)["_r"]
        .agg(lambda x: "; ".join(x.tolist()[:5]))
    )
    # a case that failed on turn 2 shows turn 2's answer, not turn 1's that passed
    runs = result.runs
    shown = (
        first_failing(runs)
        .merge(runs, on=["case_id", "run", "turn"], how="left")
        .drop_duplicates("case_id")
        .set_index("case_id")
    )
    cases["response"] = cases["case_id"].map(shown["response"])
    cases["response_run"] = cases["case_id"].map(shown["run"] + 1).astype("Int64")
    cases["response_turn"] = cases["case_id"].map(shown["turn"] + 1).astype("Int64")
    # A dict lookup, not Series.map: with no failures the mapped column would be float NaN, not text.
    found = reasons.to_dict()
    cases["reasons"] = pd.array([found.get(c, "") for c in cases["case_id"]], dtype="string")
    return cases
