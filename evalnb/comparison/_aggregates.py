"""A result's scores summed per case x check x run: what a comparison of two results is computed from.

A comparison (docs/comparison.md) measures each case's runs: a run's value for a check is the mean over its
turns, a failed score without a value counts as the worst value of the check's scale, a check that only says
pass or fail is measured by its outcome, and a degraded score of a check that could not run (not of a turn the
agent left unanswered: its reason starts with :data:`UNANSWERED`) is left out. Which of these applies to a check
depends on both sides (whether either side has values for it, whether both have the judge's weighted scores, the
check's direction), so a result is summed here in a form that serves every case: per entry (case x check x run)
the count and sum of its values, of its weighted scores, the failed scores without either, the pass flags, the
judge's spread, and whether a score was degraded or unanswered. Per check: what its rows name (the check, its
options' direction, its judges) and how many have values. Per case: its name and category, and what it cost and
took (docs/costs.md).

These sums are what a store keeps of a run when it ends, so ``store.compare`` of two million-case versions reads
them and not their rows (store/_aggregates.py); a comparison of two Results sums their frames the same way
(one home for the rules above, and the same numbers either way: comparison/_frames.py turns two results' sums
into the cells every test reads).

Example::

    agg = aggregates_of(result)
    agg.check_ids, next(iter(agg.entries))["v_sum"][:3]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb._scoring import UNANSWERED
from evalnb.results._deferred import case_ids

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "ENTRY_COLUMNS",
    "UNANSWERED",
    "Aggregates",
    "aggregates_of",
    "positions",
    "scores_of",
    "suite_case_ids",
    "suite_of",
]

ENTRY_COLUMNS: dict[str, str] = {
    "check": "int64",
    "case": "int64",
    "run": "int64",
    "v_n": "int64",
    "v_sum": "float64",
    "v_fail": "int64",
    "w_n": "int64",
    "w_sum": "float64",
    "w_fail": "int64",
    "p_n": "int64",
    "p_sum": "int64",
    "s_n": "int64",
    "s_sum": "float64",
    "degraded": "bool",
    "unanswered": "bool",
}
"""The entries' columns: the check's and case's positions in :attr:`Aggregates.check_ids` and
:attr:`Aggregates.case_ids`, the run; the count and sum of the values (``v_``) and weighted scores (``w_``) a
comparison measures, and of the failed scores without one (``_fail``); pass flags (``p_``: scores with a flag,
passed ones); the judge's spread (``s_``); a degraded and an unanswered score among them."""


@dataclass
class Aggregates:
    """One result's sums (see the module docstring).

    Attributes:
        suite: the suite's name (``None``: a frame of several or none).
        case_ids: the cases in order: the suite's, then others of the scores in the order they first appear.
        case_names, categories: per case, those of its first score row (``None`` without rows).
        check_ids: the checks in the order they first appear in the scores.
        check_names: per check, the ``check`` of its first row (``None``: the frame names none).
        said_higher: per check, ``higher_is_better`` of its first row's options (``None``: not said).
        judges: ``(check, judge)`` of every scored row, each pair once (``None``: the frame has no judge column).
        numeric: per check, its scores with a value.
        with_weighted: per check, its scores with a value and a weighted score.
        scored_cases: per case, whether it has a score row.
        entries: :data:`ENTRY_COLUMNS` as numpy arrays, one value per case x check x run that has a score,
            ordered by check, then case, then run, in chunks (a mapping of columns each) that never split a
            case x check: a stored run's are read a chunk at a time.
        spend: per case, ``cost`` (of its case runs, agent and judge, averaged over its runs; NaN unknown or
            unpriced), ``latency`` (mean of its agent calls) and ``ran`` (it has a case run that was not
            skipped); ``None`` for a scores frame alone, which holds neither.
    """

    suite: str | None
    case_ids: list[str]
    case_names: list[str | None]
    categories: list[str | None]
    check_ids: list[str]
    check_names: list[str | None]
    said_higher: list[bool | None]
    judges: list[tuple[int, str]] | None
    numeric: np.ndarray
    with_weighted: np.ndarray
    scored_cases: np.ndarray
    entries: Iterable[Mapping[str, np.ndarray]]
    spend: dict[str, np.ndarray] | None

    @property
    def n_case(self) -> int:
        return len(self.case_ids)


def aggregates_of(x: Any) -> Aggregates:
    """The sums of a ``Result`` (or of a scores DataFrame alone: no suite order, no cost or latency)."""
    import pandas as pd

    runs = None if isinstance(x, pd.DataFrame) else getattr(x, "runs", None)
    return _summed(scores_of(x), order=suite_case_ids(x) or [], suite=suite_of(x), runs=runs)


def scores_of(x: Any) -> pd.DataFrame:
    """The scores frame of a ``Result``, or the frame itself."""
    import pandas as pd

    if isinstance(x, pd.DataFrame):
        return x
    scores = getattr(x, "scores", None)
    if isinstance(scores, pd.DataFrame):
        return scores
    raise TypeError(f"compare() needs a Result or a scores DataFrame, got {type(x).__name__}")


def suite_of(x: Any) -> str | None:
    """The suite name of a Result, or of a scores frame holding one suite; None when unknown."""
    import pandas as pd

    from evalnb.results import Result

    if isinstance(x, pd.DataFrame):
        names = x["suite"].dropna().unique() if "suite" in x else []
        return str(names[0]) if len(names) == 1 else None
    name = x.suite_name if isinstance(x, Result) else getattr(getattr(x, "suite", None), "name", None)
    return None if name is None else str(name)


def suite_case_ids(x: Any) -> list[str] | None:
    """The case ids of the suite of ``x`` in order (a stored run's suite is not built for them:
    results/_deferred.py); None when it has no suite."""
    from evalnb.results import Result

    if isinstance(x, Result):
        return _texts(case_ids(x._suite))
    suite = getattr(x, "suite", None)
    return None if suite is None else [str(c.id) for c in getattr(suite, "cases", None) or []]


def _texts(values: Any) -> list[str]:
    """The values as text, read in one call where they can be (a stored run's ids are an Arrow array, whose
    values taken one by one cost 0.7 s per million)."""
    plain = values.tolist() if hasattr(values, "tolist") else list(values)
    return plain if set(map(type, plain)) <= {str} else [str(v) for v in plain]


def _case_codes(frames: list[pd.DataFrame], order: list[str]) -> tuple[list[str], list[np.ndarray]]:
    """The cases in order (the suite's, then the others of ``frames`` in the order they first appear) and each
    frame's rows' positions among them. The rows of a Result are its suite's cases: looked up once, nothing
    else is made (a dict of a million ids took a second)."""
    import numpy as np

    cases = list(order)
    codes = [positions(f["case_id"], cases) for f in frames]
    if all(not len(c) or c.min() >= 0 for c in codes):
        return cases, codes
    known = dict.fromkeys(cases)
    for frame, code in zip(frames, codes, strict=True):
        # distinct ids first, then their text: the text of every row cost seconds at a million cases
        for cid in _texts(frame["case_id"].iloc[np.flatnonzero(code < 0)].unique()):
            known.setdefault(cid, None)
    cases = list(known)
    return cases, [positions(f["case_id"], cases) for f in frames]


def _summed(s: pd.DataFrame, *, order: list[str], suite: str | None, runs: pd.DataFrame | None) -> Aggregates:
    import numpy as np

    cases, codes = _case_codes([s] if runs is None else [s, runs], order)
    cse = codes[0]
    checks = _texts(s["check_id"].astype("string").unique()) if len(s) else []
    chk = positions(s["check_id"], checks)
    value, weighted = _column(s, "value"), _column(s, "weighted")
    numeric = ~np.isnan(value)
    first = _first_rows(chk)
    names, categories = _case_labels(s, cse, len(cases))
    return Aggregates(
        suite=suite,
        case_ids=cases,
        case_names=names,
        categories=categories,
        check_ids=checks,
        check_names=_first_texts(s, "check", first, len(checks)),
        said_higher=_directions(s, first, len(checks)),
        judges=_judges(s, chk, numeric),
        numeric=np.bincount(chk[numeric], minlength=len(checks)),
        with_weighted=np.bincount(chk[numeric & ~np.isnan(weighted)], minlength=len(checks)),
        scored_cases=np.bincount(cse, minlength=len(cases)) > 0,
        entries=[_entries(s, chk, cse, len(checks), value, weighted)],
        spend=None if runs is None else _spend(runs, s, codes[1], cse, len(cases)),
    )


def _entries(
    s: pd.DataFrame, chk: np.ndarray, cse: np.ndarray, n_check: int, value: np.ndarray, weighted: np.ndarray
) -> dict[str, np.ndarray]:
    """The per case x check x run sums, by check, then case, then run."""
    import numpy as np

    passed = s["passed"].astype("boolean").to_numpy(dtype="float64", na_value=np.nan)
    degraded, unanswered = _degraded(s)
    # a check that could not run says nothing of the agent: left out (docs/comparison.md, degraded scores)
    left = degraded & ~unanswered
    value = np.where(left, np.nan, value)
    weighted = np.where(left, np.nan, weighted)
    passed = np.where(left, np.nan, passed)
    run = (
        s["run"].to_numpy(dtype="float64", na_value=0.0).astype(np.int64)
        if "run" in s
        else np.zeros(len(s), np.int64)
    )
    width = int(run.max(initial=0)) + 1
    # rows come case by case (a Result's order): keyed case-major they are grouped already, and only the
    # entries are then put in check order (a stable sort of small codes)
    key = (cse.astype(np.int64) * width + run) * max(n_check, 1) + chk
    uniq, inv = _groups(key)
    size = len(uniq)
    # each row's entry numbered in check order before anything is summed: the sums come out in that order,
    # rather than being made and then copied into it (at a million cases the copies were ~240 MB at a run's end)
    by_check = np.argsort(
        (uniq % max(n_check, 1)).astype(np.int16 if n_check < 2**15 else np.int64), kind="stable"
    )
    uniq = uniq[by_check]
    place = np.empty(size, np.int64)
    place[by_check] = np.arange(size)
    inv = place[inv]
    del by_check, place
    failed = passed == 0.0

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(inv, weights=mask, minlength=size).astype(np.int64)

    def total(x: np.ndarray) -> np.ndarray:
        return np.bincount(inv, weights=np.nan_to_num(x, nan=0.0), minlength=size)

    spread = _column(s, "spread")
    out = {
        "check": uniq % max(n_check, 1),
        "case": uniq // max(n_check, 1) // width,
        "run": uniq // max(n_check, 1) % width,
        "v_n": count(~np.isnan(value)),
        "v_sum": total(value),
        "v_fail": count(np.isnan(value) & failed),
        "w_n": count(~np.isnan(weighted)),
        "w_sum": total(weighted),
        "w_fail": count(np.isnan(weighted) & failed),
        "p_n": count(~np.isnan(passed)),
        "p_sum": count(passed == 1.0),
        "s_n": count(~np.isnan(spread)),
        "s_sum": total(spread),
        "degraded": count(degraded) > 0,
        "unanswered": count(unanswered) > 0,
    }
    return out


def _column(s: pd.DataFrame, name: str) -> np.ndarray:
    """A float column of a scores frame, NaN for NA (and everywhere when the frame lacks it)."""
    import numpy as np

    if name not in s:
        return np.full(len(s), np.nan)
    return np.asarray(s[name].to_numpy(dtype="float64", na_value=np.nan), dtype=np.float64)


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


def positions(column: pd.Series, keys: list[str]) -> np.ndarray:
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


def _first_rows(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes and the row where each first appears."""
    import numpy as np

    return np.unique(code, return_index=True)


def _first_texts(
    s: pd.DataFrame, column: str, first: tuple[np.ndarray, np.ndarray], n: int
) -> list[str | None]:
    """Per code, the text of ``column`` in its first row (``None`` when the frame lacks the column)."""
    out: list[str | None] = [None] * n
    if column not in s:
        return out
    code, row = first
    for k, text in zip(code.tolist(), s[column].iloc[row].astype(str).tolist(), strict=True):
        out[k] = text
    return out


def _directions(s: pd.DataFrame, first: tuple[np.ndarray, np.ndarray], n: int) -> list[bool | None]:
    """Per check, ``higher_is_better`` of its first row's options, when they say it."""
    said: list[bool | None] = [None] * n
    if "options" not in s:
        return said
    code, row = first
    texts = s["options"].iloc[row].astype("string").tolist()
    for k, text in zip(code.tolist(), texts, strict=True):
        if not isinstance(text, str) or "higher_is_better" not in text:
            continue
        try:
            value = json.loads(text).get("higher_is_better")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, bool):
            said[k] = value
    return said


def _judges(s: pd.DataFrame, chk: np.ndarray, numeric: np.ndarray) -> list[tuple[int, str]] | None:
    """The ``(check, judge)`` pairs of the scored rows, each once (the judges' codes, not a string per row)."""
    import numpy as np
    import pandas as pd

    if "judge" not in s:
        return None
    code, names = pd.factorize(s["judge"].astype("string").fillna(""))
    width = max(len(names), 1)
    pairs = np.unique(chk[numeric].astype(np.int64) * width + code[numeric])
    return [(int(k // width), str(names[k % width])) for k in pairs.tolist()]


def _case_labels(s: pd.DataFrame, cse: np.ndarray, n_case: int) -> tuple[list[str | None], list[str | None]]:
    """Per case: the name and category of its first row (the rows of each case's first appearance alone, as
    arrays: the text of every row cost seconds at a million cases)."""
    import numpy as np

    code, row = _first_rows(cse)
    out = []
    for column in ("case_name", "category"):
        labels = np.full(n_case, None, dtype=object)
        if column in s and len(row):
            labels[code] = _labels(s[column].iloc[row])
        out.append(labels.tolist())
    return out[0], out[1]


def _labels(values: pd.Series) -> list[str | None]:
    """Text per value, ``None`` for a missing one (a column of text read as it is: no check per value)."""
    import pandas as pd

    if isinstance(values.dtype, pd.StringDtype):
        out: list[str | None] = values.array.to_numpy(dtype=object, na_value=None).tolist()
        return out
    missing = values.isna().to_numpy(dtype=bool)
    plain = values.astype(object).tolist()
    return [None if m else v if type(v) is str else str(v) for v, m in zip(plain, missing, strict=True)]


def _spend(
    runs: pd.DataFrame, scores: pd.DataFrame, r_case: np.ndarray, s_case: np.ndarray, n: int
) -> dict[str, np.ndarray]:
    """Per case: cost per run (agent and judge; NaN when a call had no price or nothing was priced), mean
    latency of its agent calls, and whether it ran (docs/costs.md, cost and latency in the comparison)."""
    import numpy as np

    status = runs["status"].astype("string")
    ran_rows = (status != "skipped").to_numpy(dtype=bool, na_value=True)
    r = r_case[ran_rows]
    ran = np.zeros(n, dtype=bool)
    ran[r] = True
    latency = _column(runs, "latency_ms")[ran_rows]
    has = ~np.isnan(latency)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_latency = np.bincount(r[has], weights=latency[has], minlength=n) / np.bincount(
            r[has], minlength=n
        )
    # the calls: the agent's (runs that ran) and the judge's (every score row of a case that ran)
    call_case = np.concatenate([r, s_case])
    cost = np.concatenate([_column(runs, "cost")[ran_rows], _column(scores, "cost")])
    tokens = np.concatenate([_column(runs, "prompt_tokens")[ran_rows], _column(scores, "prompt_tokens")])
    priced = ~np.isnan(cost)
    total = np.bincount(call_case[priced], weights=cost[priced], minlength=n)
    any_priced = np.bincount(call_case[priced], minlength=n) > 0
    unpriced = np.bincount(call_case[~np.isnan(tokens) & ~priced], minlength=n) > 0
    run = runs["run"].to_numpy(dtype="float64", na_value=0.0).astype(np.int64)[ran_rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        per_run = np.where(any_priced & ~unpriced & ran, total / _runs_per_case(r, run, n), np.nan)
    return {"cost": per_run, "latency": np.where(ran, mean_latency, np.nan), "ran": ran}


def _runs_per_case(case: np.ndarray, run: np.ndarray, n: int) -> np.ndarray:
    """How many distinct runs each case has among rows ``(case, run)``: rows in a Result's order (case, run,
    turn) are counted where they change, any others through a sort."""
    import numpy as np

    width = int(run.max(initial=0)) + 1
    distinct, _ = _groups(case * width + run)
    return np.bincount(distinct // width, minlength=n)


def _groups(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys, sorted, and each row's place among them: rows in a Result's order come grouped
    already and are split where the key changes; any others go through a sort."""
    import numpy as np

    if len(key) and np.any(key[1:] < key[:-1]):
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq, inv.reshape(-1)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
    return key[starts], np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(key)]))
