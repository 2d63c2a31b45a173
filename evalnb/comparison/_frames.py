"""From two results to per-case cells: what the comparison's tests and tables are computed from.

A *cell* is one case x check. A run's value for a check is its mean over the conversation's turns; a
failed score without a value counts as the worst value of the check's scale (0 for a pass rate, 1 for a 1-5
score), so a case that stops answering is a regression, not a missing value. A *degraded* score is one of two
things, told apart by its reason: a turn without an answer (the agent raised, timed out or called a tool it may
not: ``not checked: ...``), which is the agent's failure and counts as the worst value; or a check that could not
run (a judge outage, a check that raised), which says nothing about the agent and is left out: the run is
measured on its other turns, and a case with nothing left on a side is not compared (``degraded``; see
``docs/comparison.md``). A check that never has a value (it only passes or fails) is measured by its outcome
(1 or 0). A case's value is the mean of its runs: the case is the unit (the cluster) of every per-check test.

Each check has a direction (``higher_is_better``): what its run's options record (a spec or registration that
said ``higher_is_better: false``), else :func:`evalnb.checks.scales.higher_is_better`. Values stay in the check's
units here; the tests and the triage orient them.

A judged 1-5 check with a continuous score (the ``weighted`` column) for every scored row on both sides, from
the same judge(s) on both sides, is compared on the continuous scores: a model judge's probability-weighted
score (the score it writes is one draw from that distribution, and its draw-to-draw noise would otherwise be
read as a change of the agent: the weighted score's run-to-run SD is a fraction of it), or the embedding
judge's measure on the 1-5 scale (a change within one level is still a change). When either side lacks them,
or the judges differ, both sides are compared on the plain scores, like with like (``docs/comparison.md``). Each cell also keeps the judge's mean ``spread`` (how
unsure the judge was), which the triage list shows beside a change.

Cases keep the suite's order (the ``Result``'s suite; first appearance in a scores frame otherwise), the
baseline's cases first, then the ones only the candidate has; checks keep their first appearance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import Scale, higher_is_better, scale_of
from evalnb.comparison._aggregates import (
    UNANSWERED,
    Aggregates,
    aggregates_of,
    scores_of,
    suite_case_ids,
    suite_of,
)

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "COMPARED_COLUMNS",
    "UNANSWERED",
    "Cells",
    "Side",
    "build_cells",
    "cells_of",
    "label_of",
    "merged",
    "scores_of",
    "suite_case_ids",
    "suite_of",
]

COMPARED_COLUMNS = (
    *("case_id", "case_name", "category", "run", "turn", "status", "check", "check_id", "passed", "value"),
    *("weighted", "spread", "reason", "judge", "options", "cost", "prompt_tokens", "latency_ms"),
)
"""Every column of ``result.scores`` and ``result.runs`` a comparison reads (the cells here, the cost and
latency rows in ``_spend.py``): ``store.compare`` loads these alone (docs/comparison.md, comparing stored
versions), and a comparison of Results holding only these gives the same numbers as of the whole Results."""


def label_of(x: Any, default: str) -> str:
    """What a result is called in a report: its version, run id, model or agent."""
    meta = getattr(x, "meta", None)
    if isinstance(meta, Mapping):  # a Result's RunMeta (or an older object's dict)
        for key in ("version", "run_id", "model", "agent"):
            if meta.get(key):
                return str(meta[key])
    return default


@dataclass
class Side:
    """One result's cells: dense arrays over ``check x case`` (``cell = check * n_case + case``).

    Attributes:
        runs: runs with a measurable value per cell (0: the case lacks the check on this side).
        y: mean value per cell (NaN where ``runs`` is 0).
        passed: mean pass rate per cell.
        run_cell: the cell of every measured run (sorted).
        run_y: that run's value.
        judge_sd: the mean ``spread`` of the judge's score distribution per cell (NaN without one).
        degraded: runs with a degraded score per cell (either kind: see the module docstring).
        unanswered: runs with a turn without an answer per cell (counted as the worst value).
    """

    runs: np.ndarray
    y: np.ndarray
    passed: np.ndarray
    run_cell: np.ndarray
    run_y: np.ndarray
    judge_sd: np.ndarray
    degraded: np.ndarray
    unanswered: np.ndarray

    @property
    def left_out(self) -> np.ndarray:
        """Cells with degraded scores and nothing left to compare: the check could not run on any run."""
        return (self.runs == 0) & (self.degraded > 0)

    def run_values(self) -> list[np.ndarray]:
        """The run values of every cell, in cell order (an empty array for an absent cell)."""
        bounds = self._bounds()
        return [self.run_y[bounds[i] : bounds[i + 1]] for i in range(len(self.runs))]

    def _bounds(self) -> np.ndarray:
        import numpy as np

        return np.concatenate([[0], np.cumsum(self.runs.astype(np.int64))])

    def runs_of(self, cells: np.ndarray, runs: int) -> np.ndarray:
        """The run values of ``cells`` that each have ``runs`` measured runs, as a ``cells x runs`` array (one
        gather, not a slice per cell: a million cells took seconds that way)."""
        import numpy as np

        start = self._bounds()[cells]
        return np.asarray(self.run_y[start[:, None] + np.arange(runs)])


@dataclass
class Cells:
    """Both sides of a comparison, aligned by case and check."""

    check_ids: list[str]
    check_names: list[str]
    scales: list[Scale | None]
    pass_only: np.ndarray
    case_ids: list[str]
    case_names: list[str | None]
    categories: list[str | None]
    a: Side
    b: Side
    weighted: np.ndarray
    """Per check: whether it is compared on the probability-weighted scores (both sides have them)."""
    higher: np.ndarray
    """Per check: whether a higher value is better."""

    @property
    def n_case(self) -> int:
        return len(self.case_ids)

    def check_slice(self, k: int) -> slice:
        return slice(k * self.n_case, (k + 1) * self.n_case)


def build_cells(a: Any, b: Any) -> Cells:
    """Align two results (``Result`` objects or scores frames) by case and check."""
    return cells_of(aggregates_of(a), aggregates_of(b))


def cells_of(ga: Aggregates, gb: Aggregates) -> Cells:
    """Align the sums of two results (comparison/_aggregates.py) by case and check: the baseline's cases and checks
    first, then the ones only the candidate has."""
    import numpy as np

    case_ids, case_map = merged(ga.case_ids, gb.case_ids)
    check_ids, check_map = merged(ga.check_ids, gb.check_ids)
    n_check, n_case = len(check_ids), len(case_ids)
    # per check and side: scored rows, and scored rows with a weighted score
    scored = np.zeros((2, n_check))
    with_weighted = np.zeros((2, n_check))
    for side, (g, cmap) in enumerate(((ga, check_map[0]), (gb, check_map[1]))):
        np.add.at(scored[side], cmap, g.numeric)
        np.add.at(with_weighted[side], cmap, g.with_weighted)
    check_names = _check_names((ga, gb), check_map, check_ids)
    scales = [scale_of(n) for n in check_names]
    pass_only = np.asarray((scored == 0).all(axis=0), dtype=bool)
    weighted = ((scored > 0) & (with_weighted == scored)).all(axis=0) & _same_judges(
        ga, gb, check_map, n_check
    )
    higher = _directions((ga, gb), check_map, check_ids, check_names)
    # the worst value of the scale; a lower-is-better count has none (its unanswered turns are not measured)
    worst = np.array(
        [
            (sc.low if up else sc.high) if sc is not None else (0.0 if up else np.nan)
            for sc, up in zip(scales, higher, strict=True)
        ],
        dtype=float,
    )
    worst[~np.isfinite(worst)] = np.nan
    worst[pass_only] = 0.0
    case_names, categories = _case_labels((gb, ga), case_map[::-1], n_case)
    rules = (n_check, n_case, pass_only, worst, weighted)
    return Cells(
        check_ids=check_ids,
        check_names=check_names,
        scales=scales,
        pass_only=pass_only,
        case_ids=case_ids,
        case_names=case_names,
        categories=categories,
        a=_side(ga, check_map[0], case_map[0], *rules),
        b=_side(gb, check_map[1], case_map[1], *rules),
        weighted=weighted,
        higher=higher,
    )


def merged(first: list[str], second: list[str]) -> tuple[list[str], tuple[np.ndarray, np.ndarray]]:
    """``first`` then what only ``second`` has; each side's positions in it (two runs of one suite: the same
    list, compared at C speed, not looked up value by value)."""
    import numpy as np

    if first == second:
        same = np.arange(len(first))
        return list(first), (same, same)
    place = {v: i for i, v in enumerate(first)}  # once: a set per case made this quadratic
    both = list(first)
    for v in second:
        if v not in place:
            place[v] = len(both)
            both.append(v)
    return both, (np.arange(len(first)), np.fromiter((place[v] for v in second), np.int64, len(second)))


def _side(
    g: Aggregates,
    check_map: np.ndarray,
    case_map: np.ndarray,
    n_check: int,
    n_case: int,
    pass_only: np.ndarray,
    worst: np.ndarray,
    weighted: np.ndarray,
) -> Side:
    """One side's cells from its sums under both sides' rules (see the module docstring), a chunk of entries
    at a time (a chunk never splits a cell: each cell's sums are made in one chunk, in its runs' order)."""
    import numpy as np

    size = n_check * n_case
    sums = {name: np.zeros(size) for name in ("runs", "y", "passed", "passed_n", "sd", "sd_n", "deg", "ans")}
    run_cell: list[np.ndarray] = []
    run_y: list[np.ndarray] = []
    rules = (check_map, case_map, n_case, pass_only, worst, weighted)
    for chunk in g.entries:
        cell, r_y, r_p = _run_values(chunk, *rules)
        if not len(cell):
            continue
        # summed over the chunk's own span of cells (a stored run's chunk covers a sliver of a million cells)
        lo, hi = int(cell.min()), int(cell.max()) + 1
        local, span = cell - lo, hi - lo
        measured = ~np.isnan(r_y)
        at, y, p = local[measured], r_y[measured], r_p[measured]
        has_p = ~np.isnan(p)
        for name, where, weights in (
            ("runs", at, None),
            ("y", at, y),
            ("passed", at[has_p], p[has_p]),
            ("passed_n", at[has_p], None),
            ("sd", local, chunk["s_sum"]),
            ("sd_n", local, chunk["s_n"]),
            ("deg", local, chunk["degraded"]),
            ("ans", local, chunk["unanswered"]),
        ):
            sums[name][lo:hi] += np.bincount(where, weights=weights, minlength=span)
        run_cell.append(cell[measured])
        run_y.append(y)
    cells, ys = (
        np.concatenate(x) if x else np.zeros(0, dtype=t) for x, t in ((run_cell, np.int64), (run_y, float))
    )
    if len(cells) and np.any(cells[1:] < cells[:-1]):  # the candidate's own order: by cell, runs in order
        order = np.argsort(cells, kind="stable")
        cells, ys = cells[order], ys[order]
    with np.errstate(invalid="ignore", divide="ignore"):
        return Side(
            runs=sums["runs"],
            y=sums["y"] / sums["runs"],
            passed=sums["passed"] / sums["passed_n"],
            run_cell=cells,
            run_y=ys,
            judge_sd=sums["sd"] / sums["sd_n"],
            degraded=sums["deg"],
            unanswered=sums["ans"],
        )


def _run_values(
    e: Mapping[str, np.ndarray],
    check_map: np.ndarray,
    case_map: np.ndarray,
    n_case: int,
    pass_only: np.ndarray,
    worst: np.ndarray,
    weighted: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per entry (a case x check x run): its cell, its value and its pass rate (NaN where it has none)."""
    import numpy as np

    chk = check_map[e["check"]]
    cell = chk * n_case + case_map[e["case"]]
    wt, wv = weighted[chk], worst[chk]
    n = np.where(wt, e["w_n"], e["v_n"])
    # a failed score without a value is the worst outcome of the check's scale, not a missing value
    fails = np.where(np.isnan(wv), 0, np.where(wt, e["w_fail"], e["v_fail"]))
    total = np.where(wt, e["w_sum"], e["v_sum"]) + fails * np.nan_to_num(wv)
    with np.errstate(invalid="ignore", divide="ignore"):
        r_p = e["p_sum"] / e["p_n"]
        # a check that only says pass or fail is measured by that, or a case going from always passing to
        # always failing would not count as changed
        r_y = np.where(pass_only[chk], r_p, total / (n + fails))
    return cell, r_y, r_p


def _check_names(
    sides: tuple[Aggregates, Aggregates], maps: tuple[np.ndarray, np.ndarray], check_ids: list[str]
) -> list[str]:
    """Per check id: the ``check`` of its first row (the baseline's first), else the id before any ``#``."""
    names: dict[int, str] = {}
    for g, cmap in zip(sides, maps, strict=True):
        for k, name in zip(cmap.tolist(), g.check_names, strict=True):
            if name is not None:
                names.setdefault(k, name)
    return [names.get(k, c.split("#", 1)[0]) for k, c in enumerate(check_ids)]


def _directions(
    sides: tuple[Aggregates, Aggregates],
    maps: tuple[np.ndarray, np.ndarray],
    check_ids: list[str],
    names: list[str],
) -> np.ndarray:
    """Per check: what the runs' options record (``higher_is_better``), else the registry's or scale's."""
    import numpy as np

    said: dict[int, bool] = {}
    for g, cmap in zip(sides, maps, strict=True):
        for k, value in zip(cmap.tolist(), g.said_higher, strict=True):
            if value is not None:
                said.setdefault(k, value)
    return np.array([said.get(k, higher_is_better(n)) for k, n in enumerate(names)], dtype=bool)


def _case_labels(
    sides: tuple[Aggregates, Aggregates], maps: tuple[np.ndarray, np.ndarray], n_case: int
) -> tuple[list[str | None], list[str | None]]:
    """Per case: the name and category of its first row in the first side that has it (the candidate's first)."""
    import numpy as np

    labels = {c: np.full(n_case, None, dtype=object) for c in ("case_name", "category")}
    filled = np.zeros(n_case, dtype=bool)
    for g, cmap in zip(sides, maps, strict=True):
        at = np.flatnonzero(g.scored_cases)  # the cases with a score row on this side
        place = cmap[at]
        new = ~filled[place]
        at, place = at[new], place[new]
        labels["case_name"][place] = np.asarray(g.case_names, dtype=object)[at]
        labels["category"][place] = np.asarray(g.categories, dtype=object)[at]
        filled[place] = True
    return labels["case_name"].tolist(), labels["category"].tolist()


def _same_judges(
    ga: Aggregates, gb: Aggregates, maps: tuple[np.ndarray, np.ndarray], n_check: int
) -> np.ndarray:
    """Per check: whether both sides' scored rows name the same judges (True where a side names none).

    Continuous scores of two judges are two measurements (a model's probability-weighted score, the embedding
    judge's cosine on the 1-5 scale): compared across judges, the change of judge would read as a change of
    the agent. Then both sides are compared on the levels the judges wrote (docs/comparison.md)."""
    import numpy as np

    same = np.ones(n_check, dtype=bool)
    if ga.judges is None or gb.judges is None:
        return same
    seen = [
        {(int(maps[0][k]), name) for k, name in ga.judges},
        {(int(maps[1][k]), name) for k, name in gb.judges},
    ]
    # a (check, judge) seen on one side only: the sides' judges of that check differ
    for k, _ in seen[0] ^ seen[1]:
        same[k] = False
    return same
