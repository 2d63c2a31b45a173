"""Per case x check: what changed (descriptive) and whether the case's own runs show it is beyond noise.

``change`` describes, it does not test: ``regressed`` when the case's value went down (a pass -> fail flip
at one run is ``regressed``), ``improved`` when it went up, ``changed`` when the value and the pass rate moved
in opposite directions (a 1-5 score whose mean fell while more runs passed its threshold: no one direction
applies), ``same``, ``new`` (only the candidate has the case), ``gone`` (only the baseline has it) and
``degraded`` (the check could not run on one side, a judge outage say, so there is nothing to compare). Up and
down follow the check's direction: a lower-is-better check whose value rose ``regressed``.

``significant`` tests the change against the case's own run-to-run noise, and only where there is noise to
measure: both sides need at least two runs, else it is ``<NA>`` (untested, never ``True``). Pass/fail runs get
the two-sided Fisher exact test; other values the exact permutation test of the runs (suited to bounded
scores: no normality, no variance borrowed from other cases). Holm's procedure across every tested case and
check keeps the family-wise error at ``1 - confidence``. How many runs a flag needs at all: with ``r`` runs a
side the smallest possible p-value is ``2 / C(2r, r)``: 0.1 at 3 runs, 0.0079 at 5, 0.00058 at 7 (so p < 0.001
needs 7 runs a side, before the correction for the number of cases). The per-case list is a triage aid, sorted by how sure it is; it never gates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalnb.comparison._frames import Cells
from evalnb.comparison._stats import fisher_exact, holm, permutation_p

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import pandas as pd

__all__ = ["CASE_COLUMNS", "CHANGES", "case_table", "check_counts", "triage_order"]

CHANGES = ("regressed", "improved", "changed", "same", "new", "gone", "degraded")

#: The per-case table's columns and dtypes, in order.
CASE_COLUMNS: dict[str, str] = {
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "check_id": "string",
    "a": "float64",
    "b": "float64",
    "delta": "float64",
    "pass_rate_a": "float64",
    "pass_rate_b": "float64",
    "runs_a": "Int64",
    "runs_b": "Int64",
    "p_value": "float64",
    "p_adjusted": "float64",
    "significant": "boolean",
    "change": "string",
    "judge_sd_a": "float64",
    "judge_sd_b": "float64",
    "degraded_a": "Int64",
    "degraded_b": "Int64",
}


def _p_values(cells: Cells, tested: np.ndarray, *, draws: int, seed: int) -> np.ndarray:
    """Raw two-sided p-values of the tested cells (NaN elsewhere)."""
    import numpy as np

    p = np.full(len(tested), np.nan)
    size = len(tested)
    # a cell is pass/fail when every run of both sides is 0 or 1
    other = np.zeros(size)
    for side in (cells.a, cells.b):
        other += np.bincount(side.run_cell, weights=~np.isin(side.run_y, (0.0, 1.0)), minlength=size)
    wins_a = np.bincount(cells.a.run_cell, weights=cells.a.run_y, minlength=size)
    wins_b = np.bincount(cells.b.run_cell, weights=cells.b.run_y, minlength=size)
    na, nb = cells.a.runs.astype(np.int64), cells.b.runs.astype(np.int64)
    counted = np.flatnonzero(tested & (other == 0))
    tables = np.stack([np.rint(wins_a[counted]), na[counted], np.rint(wins_b[counted]), nb[counted]], axis=1)
    # a few tables recur over a million cells: each is computed once
    uniq, which = _distinct_rows(tables.astype(np.int64))
    exact = np.array([fisher_exact(*map(int, t)) for t in uniq], dtype=float)
    p[counted] = exact[which]
    scored = np.flatnonzero(tested & (other != 0))
    pairs = np.stack([na[scored], nb[scored]], axis=1)
    kinds, group = _distinct_rows(pairs)
    first = np.full(len(kinds), len(group), dtype=np.int64)
    np.minimum.at(first, group, np.arange(len(group)))
    rng = np.random.default_rng(seed)
    for k in np.argsort(first, kind="stable"):  # the run counts in cell order: the draws' order as before
        idx = scored[group == k]
        ra, rb = (int(x) for x in kinds[k])
        p[idx] = permutation_p(cells.a.runs_of(idx, ra), cells.b.runs_of(idx, rb), draws=draws, rng=rng)
    return p


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a table of counts (sorted) and each row's place among them: the rows packed into one
    integer each where they fit (``np.unique`` over rows sorts them as records: seconds at a million cells)."""
    import numpy as np

    if not len(rows):
        return rows.reshape(0, rows.shape[1]), np.zeros(0, dtype=np.int64)
    low, high = rows.min(axis=0), rows.max(axis=0)
    widths = [int(w) for w in high - low + 1]
    if int(np.prod(np.array(widths, dtype=object))) >= 2**62:  # too wide to pack: as records
        uniq, which = np.unique(rows, axis=0, return_inverse=True)
        return uniq, np.asarray(which).reshape(-1)
    key = np.zeros(len(rows), dtype=np.int64)
    for k, width in enumerate(widths):  # the first column the most significant: the rows' order
        key = key * width + (rows[:, k] - low[k])
    packed, which = np.unique(key, return_inverse=True)
    uniq = np.empty((len(packed), rows.shape[1]), dtype=rows.dtype)
    rest = packed.copy()
    for k in range(len(widths) - 1, -1, -1):
        uniq[:, k] = rest % widths[k] + low[k]
        rest //= widths[k]
    return uniq, np.asarray(which).reshape(-1)


_SELECTED = ("degraded", "new", "gone", "changed", "regressed", "improved")
"""The changes the table's conditions select, in the order they are tried (else ``same``)."""


def _text(values: Sequence[str | None], at: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """``values`` taken at ``at`` as a ``string`` column: the distinct texts made into the column's array once,
    then taken (a million cases' rows of python strings made into text took seconds)."""
    import numpy as np
    import pandas as pd

    return pd.array(np.asarray(values, dtype=object), dtype="string").take(at)


def case_table(cells: Cells, *, confidence: float, draws: int = 9999, seed: int = 0) -> pd.DataFrame:
    """One row per case x check present on either side, in case order then check order."""
    import numpy as np
    import pandas as pd

    n_case = cells.n_case
    n_cell = len(cells.check_ids) * n_case
    ra, rb = cells.a.runs, cells.b.runs
    has_a, has_b = ra > 0, rb > 0
    delta = cells.b.y - cells.a.y
    pdelta = np.nan_to_num(cells.b.passed - cells.a.passed)
    span = np.repeat([s.span if s is not None and s.bounded else 1.0 for s in cells.scales] or [1.0], n_case)[
        :n_cell
    ]
    eps = 1e-9 * span
    # oriented: a lower-is-better check whose value rose went the worse way
    sign = np.repeat(np.where(cells.higher, 1.0, -1.0), n_case)[:n_cell] if n_cell else np.ones(0)
    dv = np.where(np.abs(np.nan_to_num(delta)) > eps, np.sign(np.nan_to_num(delta)), 0.0) * sign
    dp = np.where(np.abs(pdelta) > 1e-9, np.sign(pdelta), 0.0)
    direction = np.where(dv != 0, dv, dp)
    left_a, left_b = cells.a.left_out, cells.b.left_out
    change = np.select(
        [
            (left_a & (has_b | left_b)) | (left_b & has_a),
            ~has_a,
            ~has_b,
            dv * dp < 0,
            direction < 0,
            direction > 0,
        ],
        range(len(_SELECTED)),
        default=len(_SELECTED),
    )  # codes into _SELECTED and "same": made text once per row of the table, in its column
    tested = (ra >= 2) & (rb >= 2)
    p = _p_values(cells, tested, draws=draws, seed=seed)
    adjusted = np.full(n_cell, np.nan)
    adjusted[tested] = holm(p[tested])
    alpha = 1.0 - confidence
    significant = pd.array(np.where(tested, adjusted <= alpha, False), dtype="boolean")
    significant[~tested] = pd.NA

    keep = np.flatnonzero(has_a | has_b | left_a | left_b)
    check_of, case_of = keep // max(n_case, 1), keep % max(n_case, 1)
    keep = keep[np.lexsort((check_of, case_of))]
    check_of, case_of = keep // max(n_case, 1), keep % max(n_case, 1)
    frame = pd.DataFrame(
        {
            "case_id": _text(cells.case_ids, case_of),
            "case_name": _text(cells.case_names, case_of),
            "category": _text(cells.categories, case_of),
            "check_id": _text(cells.check_ids, check_of),
            "a": np.where(has_a, cells.a.y, np.nan)[keep],
            "b": np.where(has_b, cells.b.y, np.nan)[keep],
            "delta": delta[keep],
            "pass_rate_a": cells.a.passed[keep],
            "pass_rate_b": cells.b.passed[keep],
            "runs_a": np.where(has_a, ra, np.nan)[keep],
            "runs_b": np.where(has_b, rb, np.nan)[keep],
            "p_value": p[keep],
            "p_adjusted": adjusted[keep],
            "significant": significant[keep],
            "change": _text([*_SELECTED, "same"], change[keep]),
            "judge_sd_a": np.where(has_a, cells.a.judge_sd, np.nan)[keep],
            "judge_sd_b": np.where(has_b, cells.b.judge_sd, np.nan)[keep],
            "degraded_a": cells.a.degraded[keep],
            "degraded_b": cells.b.degraded[keep],
        }
    )
    return frame.astype(CASE_COLUMNS)


def check_counts(cases: pd.DataFrame) -> pd.DataFrame:
    """Per check: how many cases regressed, improved, and changed significantly."""
    import pandas as pd

    if cases.empty:
        return pd.DataFrame(columns=["check_id", "regressed", "improved", "significant"])
    g = cases.assign(
        _r=cases["change"].eq("regressed"),
        _i=cases["change"].eq("improved"),
        _s=cases["significant"].fillna(False).astype(bool),
    ).groupby("check_id", sort=False)
    return pd.DataFrame(
        {"regressed": g["_r"].sum(), "improved": g["_i"].sum(), "significant": g["_s"].sum()}
    ).reset_index()


def triage_order(cases: pd.DataFrame) -> pd.DataFrame:
    """The rows that changed, surest first: significant ones, then by adjusted and raw p, then the changes
    larger than the judge's own uncertainty before those within it, then by size."""
    import numpy as np

    part = cases[cases["change"] != "same"]
    # a judged change no larger than the judge's spread on either side is one the judge itself was unsure of
    unsure = part["delta"].abs() <= part[["judge_sd_a", "judge_sd_b"]].max(axis=1)
    keys = part.assign(
        _sig=~part["significant"].fillna(False).astype(bool),
        _padj=part["p_adjusted"].fillna(np.inf),
        _p=part["p_value"].fillna(np.inf),
        _unsure=unsure.fillna(False).astype(bool),
        _size=-part["delta"].abs().fillna(0.0),
    )
    order = keys.sort_values(["_sig", "_padj", "_p", "_unsure", "_size"], kind="stable").index
    return cases.loc[order].reset_index(drop=True)
