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
from evalnb.results import Result
from evalnb.results._deferred import case_ids

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "COMPARED_COLUMNS",
    "UNANSWERED",
    "Cells",
    "Side",
    "build_cells",
    "label_of",
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

UNANSWERED = "not checked:"
"""How the reason of a degraded score of a turn without an answer starts (``running/_case_run.py`` writes it;
``results/_report.py`` reads it too)."""


def scores_of(x: Any) -> pd.DataFrame:
    """The scores frame of a ``Result``, or the frame itself."""
    import pandas as pd

    if isinstance(x, pd.DataFrame):
        return x
    scores = getattr(x, "scores", None)
    if isinstance(scores, pd.DataFrame):
        return scores
    raise TypeError(f"compare() needs a Result or a scores DataFrame, got {type(x).__name__}")


def label_of(x: Any, default: str) -> str:
    """What a result is called in a report: its version, run id, model or agent."""
    meta = getattr(x, "meta", None)
    if isinstance(meta, Mapping):  # a Result's RunMeta (or an older object's dict)
        for key in ("version", "run_id", "model", "agent"):
            if meta.get(key):
                return str(meta[key])
    return default


def suite_of(x: Any) -> str | None:
    """The suite name of a Result, or of a scores frame holding one suite; None when unknown."""
    import pandas as pd

    if isinstance(x, pd.DataFrame):
        names = x["suite"].dropna().unique() if "suite" in x else []
        return str(names[0]) if len(names) == 1 else None
    name = x.suite_name if isinstance(x, Result) else getattr(getattr(x, "suite", None), "name", None)
    return None if name is None else str(name)


def suite_case_ids(x: Any) -> list[str] | None:
    """The case ids of the suite of ``x`` in order (a stored run's suite is not built for them:
    results/_deferred.py); None when it has no suite."""
    if isinstance(x, Result):
        return _texts(case_ids(x._suite))
    suite = getattr(x, "suite", None)
    return None if suite is None else [str(c.id) for c in getattr(suite, "cases", None) or []]


def _texts(values: Any) -> list[str]:
    """The values as text, read in one call where they can be (a stored run's ids are an Arrow array, whose
    values taken one by one cost 0.7 s per million)."""
    plain = values.tolist() if hasattr(values, "tolist") else list(values)
    return plain if all(type(v) is str for v in plain) else [str(v) for v in plain]


def _case_order(x: Any, scores: pd.DataFrame) -> list[str]:
    """The suite's case order for a Result, then any other case of its frame in first-appearance order."""
    import pandas as pd

    seen: dict[str, None] = dict.fromkeys(() if isinstance(x, pd.DataFrame) else suite_case_ids(x) or ())
    # distinct ids first, then their text: the text of every row cost seconds at a million cases
    for cid in _texts(scores["case_id"].unique()):
        seen.setdefault(cid, None)
    return list(seen)


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


def _group_mean(key: np.ndarray, x: np.ndarray, size: int) -> np.ndarray:
    import numpy as np

    ok = ~np.isnan(x)
    cnt = np.bincount(key[ok], minlength=size).astype(float)
    tot = np.bincount(key[ok], weights=x[ok], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return tot / cnt


def _side(
    s: pd.DataFrame,
    check: np.ndarray,
    case: np.ndarray,
    n_check: int,
    n_case: int,
    pass_only: np.ndarray,
    worst: np.ndarray,
    weighted: np.ndarray,
) -> Side:
    import numpy as np

    value = _column(s, "value")
    # the judge's probability-weighted score where the check is compared on it (see the module docstring)
    value = np.where(weighted[check], _column(s, "weighted"), value)
    pass_f = s["passed"].astype("boolean").to_numpy(dtype="float64", na_value=np.nan)
    degraded, unanswered = _degraded(s)
    # a check that could not run says nothing of the agent: left out (docs/comparison.md, degraded scores)
    value = np.where(degraded & ~unanswered, np.nan, value)
    pass_f = np.where(degraded & ~unanswered, np.nan, pass_f)
    # a failed score without a value is the worst outcome of the check's scale, not a missing value
    y = np.where(np.isnan(value), np.where(pass_f == 0.0, worst[check], np.nan), value)
    # a check that only says pass or fail is measured by that, or a case going from always passing to
    # always failing would not count as changed
    y = np.where(pass_only[check], pass_f, y)
    run = (
        s["run"].to_numpy(dtype="float64", na_value=0.0).astype(np.int64) if "run" in s else np.zeros(len(s))
    )
    run = run.astype(np.int64)
    width = int(run.max(initial=0)) + 1
    cell = check.astype(np.int64) * n_case + case
    size = n_check * n_case
    uniq, inv = np.unique(cell * width + run, return_inverse=True)
    r_y = _group_mean(inv, y, len(uniq))
    r_p = _group_mean(inv, pass_f, len(uniq))
    r_cell = uniq // width
    measured = ~np.isnan(r_y)
    runs = np.bincount(r_cell[measured], minlength=size).astype(float)
    r_deg = np.bincount(inv, weights=degraded, minlength=len(uniq)) > 0
    r_unanswered = np.bincount(inv, weights=unanswered, minlength=len(uniq)) > 0
    return Side(
        runs=runs,
        y=_group_mean(r_cell[measured], r_y[measured], size),
        passed=_group_mean(r_cell[measured], r_p[measured], size),
        run_cell=r_cell[measured],
        run_y=r_y[measured],
        judge_sd=_group_mean(cell, _column(s, "spread"), size),
        degraded=np.bincount(r_cell, weights=r_deg, minlength=size),
        unanswered=np.bincount(r_cell, weights=r_unanswered, minlength=size),
    )


def _degraded(s: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per score row: degraded, and degraded because its turn got no answer (see the module docstring).

    A frame without reasons cannot tell the two apart: its degraded scores are taken as checks that could not
    run (left out and named, never counted as the agent's failure)."""
    import numpy as np

    if "status" not in s:
        none = np.zeros(len(s), dtype=bool)
        return none, none
    degraded = (s["status"].astype("string") == "degraded").to_numpy(dtype=bool, na_value=False)
    if "reason" not in s or not degraded.any():
        return degraded, np.zeros(len(s), dtype=bool)
    reason = s["reason"].astype("string").str.startswith(UNANSWERED)
    return degraded, degraded & reason.to_numpy(dtype=bool, na_value=False)


def _directions(frames: tuple[pd.DataFrame, ...], check_ids: list[str], names: list[str]) -> np.ndarray:
    """Per check: what the runs' options record (``higher_is_better``), else the registry's or scale's."""
    import json

    import numpy as np

    said: dict[str, bool] = {}
    for frame in frames:
        if "options" not in frame:
            continue
        first = frame[["check_id", "options"]].astype("string").drop_duplicates("check_id")
        for cid, text in zip(first["check_id"], first["options"], strict=True):
            if cid in said or not isinstance(text, str) or "higher_is_better" not in text:
                continue
            try:
                value = json.loads(text).get("higher_is_better")
            except (ValueError, AttributeError):
                continue
            if isinstance(value, bool):
                said[cid] = value
    return np.array(
        [said.get(c, higher_is_better(n)) for c, n in zip(check_ids, names, strict=True)], dtype=bool
    )


def _column(s: pd.DataFrame, name: str) -> np.ndarray:
    """A float column of a scores frame, NaN for NA (and everywhere when the frame lacks it)."""
    import numpy as np

    if name not in s:
        return np.full(len(s), np.nan)
    return s[name].to_numpy(dtype="float64", na_value=np.nan)


def _first_rows(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes and the row where each first appears."""
    import numpy as np

    return np.unique(code, return_index=True)


def _check_names(
    frames: tuple[pd.DataFrame, ...], checks: list[np.ndarray], check_ids: list[str]
) -> list[str]:
    """Per check id: the ``check`` of its first row (the baseline's first), else the id before any ``#``."""
    names: dict[int, str] = {}
    for frame, chk in zip(frames, checks, strict=True):
        if "check" not in frame:
            continue
        code, row = _first_rows(chk)
        for k, name in zip(code.tolist(), frame["check"].iloc[row].astype(str).tolist(), strict=True):
            names.setdefault(k, name)
    return [names.get(k, c.split("#", 1)[0]) for k, c in enumerate(check_ids)]


def _case_labels(
    frames: tuple[pd.DataFrame, ...], cases: list[np.ndarray], n_case: int
) -> tuple[list[str | None], list[str | None]]:
    """Per case: the name and category of its first row in the first frame that has it (the rows of each
    case's first appearance alone, as arrays: the text of every row cost seconds at a million cases)."""
    import numpy as np

    labels = {c: np.full(n_case, None, dtype=object) for c in ("case_name", "category")}
    filled = np.zeros(n_case, dtype=bool)
    for frame, cse in zip(frames, cases, strict=True):
        code, row = _first_rows(cse)
        new = ~filled[code]
        code, row = code[new], row[new]
        for column, out in labels.items():
            if column in frame and len(row):
                out[code] = _labels(frame[column].iloc[row])
        filled[code] = True
    return labels["case_name"].tolist(), labels["category"].tolist()


def _labels(values: pd.Series) -> list[str | None]:
    """Text per value, ``None`` for a missing one."""
    missing = values.isna().to_numpy(dtype=bool)
    plain = values.astype(object).tolist()
    return [None if m else v if type(v) is str else str(v) for v, m in zip(plain, missing, strict=True)]


def _same_judges(
    sa: pd.DataFrame, sb: pd.DataFrame, codes: list[tuple[np.ndarray, np.ndarray]], n_check: int
) -> np.ndarray:
    """Per check: whether both sides' scored rows name the same judges (True where a frame has no ``judge``).

    Continuous scores of two judges are two measurements (a model's probability-weighted score, the embedding
    judge's cosine on the 1-5 scale): compared across judges, the change of judge would read as a change of
    the agent. Then both sides are compared on the levels the judges wrote (docs/comparison.md)."""
    import numpy as np
    import pandas as pd

    same = np.ones(n_check, dtype=bool)
    if "judge" not in sa or "judge" not in sb:
        return same
    seen: list[set[tuple[int, str]]] = []
    for frame, (chk, _) in zip((sa, sb), codes, strict=True):
        numeric = ~np.isnan(_column(frame, "value"))
        # the judges' codes, not a python string per row (a million cases' scores: seconds)
        code, names = pd.factorize(frame["judge"].astype("string").fillna(""))
        width = max(len(names), 1)
        pairs = np.unique(chk[numeric].astype(np.int64) * width + code[numeric])
        seen.append({(int(k // width), str(names[k % width])) for k in pairs.tolist()})
    # a (check, judge) seen on one side only: the sides' judges of that check differ
    for k, _ in seen[0] ^ seen[1]:
        same[k] = False
    return same


def _positions(column: pd.Series, keys: list[str]) -> np.ndarray:
    """Each value's position in ``keys``, which hold every value of ``column`` as text."""
    import numpy as np
    import pandas as pd

    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc

        # Arrow's hash lookup on the column's own buffers (a dict lookup per row took 0.3 s per 800,000)
        values = column.array.__arrow_array__()  # the column's chunks as they are (the Arrow array protocol)
        found = pc.index_in(values, value_set=pa.array(keys, type=values.type))
        if not found.null_count:  # a missing id is matched as its text below, as the keys were made
            return np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray(pd.Index(keys, dtype=object).get_indexer(column.astype(str)), dtype=np.int64)


def build_cells(a: Any, b: Any) -> Cells:
    """Align two results (``Result`` objects or scores frames) by case and check."""
    import numpy as np
    import pandas as pd

    sa, sb = scores_of(a), scores_of(b)
    case_order = _case_order(a, sa)
    known = set(case_order)  # once: a set per case made this quadratic (20,000 cases: 28 s)
    case_order += [c for c in _case_order(b, sb) if c not in known]
    both = pd.concat([sa[["check_id"]].astype(str), sb[["check_id"]].astype(str)], ignore_index=True)
    check_ids = [str(c) for c in both["check_id"].unique()]
    n_check, n_case = len(check_ids), len(case_order)
    codes = []
    has_value = np.zeros(n_check, dtype=bool)
    # per check and side: scored rows, and scored rows with a weighted score
    scored = np.zeros((2, n_check))
    with_weighted = np.zeros((2, n_check))
    for side, frame in enumerate((sa, sb)):
        chk = _positions(frame["check_id"], check_ids)
        cse = _positions(frame["case_id"], case_order)
        codes.append((chk, cse))
        numeric = ~np.isnan(_column(frame, "value"))
        has_value[chk[numeric]] = True
        scored[side] = np.bincount(chk[numeric], minlength=n_check)
        with_weighted[side] = np.bincount(
            chk[numeric & ~np.isnan(_column(frame, "weighted"))], minlength=n_check
        )
    check_names = _check_names((sa, sb), [chk for chk, _ in codes], check_ids)
    scales = [scale_of(n) for n in check_names]
    pass_only = ~has_value
    weighted = ((scored > 0) & (with_weighted == scored)).all(axis=0) & _same_judges(sa, sb, codes, n_check)
    higher = _directions((sa, sb), check_ids, check_names)
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

    case_names, categories = _case_labels((sb, sa), [cse for _, cse in codes[::-1]], n_case)
    return Cells(
        check_ids=check_ids,
        check_names=check_names,
        scales=scales,
        pass_only=pass_only,
        case_ids=case_order,
        case_names=case_names,
        categories=categories,
        a=_side(sa, *codes[0], n_check, n_case, pass_only, worst, weighted),
        b=_side(sb, *codes[1], n_check, n_case, pass_only, worst, weighted),
        weighted=weighted,
        higher=higher,
    )
