"""``agreement``: how far two judges (or a judge and people) agree, per check, before trusting a judge."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["agreement", "quadratic_kappa", "spearman"]

_KEYS = ("suite", "case_id", "run", "turn")
COLUMNS = {
    "check": "string",
    "n": "Int64",
    "exact": "float64",
    "kappa": "float64",
    "spearman": "float64",
    "left_out": "Int64",
    "note": "string",
}


def quadratic_kappa(a: np.ndarray, b: np.ndarray, categories: list[float] | None = None) -> float:
    """Cohen's kappa with quadratic weights: 1 perfect agreement, 0 chance level, negative worse than chance.

    Example:
        >>> quadratic_kappa(np.array([1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 5]))
        1.0
    """
    import numpy as np
    import pandas as pd

    cats = sorted(set(categories or []) | set(a.tolist()) | set(b.tolist()))
    if len(cats) < 2 or len(a) == 0:
        return math.nan
    # The confusion matrix over every category of the scale, including those neither side used.
    observed = pd.crosstab(
        pd.Categorical(a, categories=cats), pd.Categorical(b, categories=cats), dropna=False
    ).to_numpy(dtype=float)
    positions = np.array(cats, dtype=float)
    # Weights by distance on the scale (1..5 are equally spaced), normalised to 0..1.
    weights = np.subtract.outer(positions, positions) ** 2 / (positions[-1] - positions[0]) ** 2
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    denom = float((weights * expected).sum())
    if denom == 0:
        return math.nan  # both raters constant: agreement beyond chance is undefined
    return float(1 - (weights * observed).sum() / denom)


def spearman(a: pd.Series, b: pd.Series) -> float:
    """Spearman rank correlation (average ranks for ties), pairing values by position; NaN when either side
    is constant or there are fewer than two pairs.

    ``DataFrame.corr`` ranks in pandas itself, whereas ``Series.corr(method="spearman")`` calls scipy, which
    evalnb does not depend on.

    Example:
        >>> spearman(pd.Series([1, 2, 3, 4]), pd.Series([10, 20, 40, 30]))
        0.8
    """
    import pandas as pd

    pairs = pd.DataFrame({"a": a.to_numpy(dtype=float), "b": b.to_numpy(dtype=float)})
    return float(pairs.corr(method="spearman").iloc[0, 1])


def agreement(a: pd.DataFrame, b: pd.DataFrame, *, on: str | None = None) -> pd.DataFrame:
    """Per-check agreement between two score frames.

    Each frame is shaped like ``result.scores`` (or is a table of human labels with ``case_id``, ``turn``,
    ``check`` and ``value``; ``run`` and ``suite`` are used when both frames have them). Rows are matched on
    the shared keys and the check (``check_id`` when both frames have it, else ``check``). A row both frames
    have but one of them gives no value (a degraded judge call, a check not evaluated) cannot be compared: it
    is left out of the statistics and counted, and the check's ``note`` says so; a check none of whose rows
    can be compared is listed with ``n`` 0 and NaN statistics, never dropped (so an unreachable judge cannot
    look like perfect agreement on what is left).

    Args:
        a: the first frame (e.g. ``result.scores`` of one judge).
        b: the second frame (another judge, or human labels).
        on: the check column to match on (``"check_id"`` or ``"check"``); chosen automatically by default.

    Returns:
        One row per check: ``n`` (matched pairs), ``exact`` (share of identical values), ``kappa``
        (Cohen's quadratic-weighted kappa over the scale, 1..5 for the judged metrics), ``spearman``
        (rank correlation), ``left_out`` (rows of both frames without a value on one side) and ``note``
        (why rows were left out or the check was not compared; NA when nothing was). NaN where a statistic is
        undefined (no pairs, a constant side).

    Raises:
        ValueError: a frame lacks a needed column, or both frames have several rows for one key (each row
            would be paired with each).

    Example:
        >>> humans = pd.DataFrame({"case_id": ["q1", "q2"], "turn": [0, 0],
        ...                        "check": ["Relevance"] * 2, "value": [5, 2]})
        >>> evalnb.judges.agreement(result.scores, humans)
    """
    import numpy as np
    import pandas as pd

    check = on or ("check_id" if "check_id" in a.columns and "check_id" in b.columns else "check")
    for name, frame in (("a", a), ("b", b)):
        missing = {"case_id", "turn", check, "value"} - set(frame.columns)
        if missing:
            raise ValueError(f"frame {name} lacks column(s) {sorted(missing)}")
    keys = [k for k in _KEYS if k in a.columns and k in b.columns] + [check]

    def prep(frame: pd.DataFrame) -> pd.DataFrame:
        out = frame[[*keys, "value"]].copy()
        for k in keys:
            out[k] = out[k].astype("string") if k not in ("run", "turn") else out[k].astype("Int64")
        out["value"] = pd.to_numeric(out["value"], errors="coerce").astype("float64")
        return out

    ra, rb = prep(a), prep(b)
    pa, pb = ra.dropna(subset=["value"]), rb.dropna(subset=["value"])
    left_out = _left_out(ra, rb, pa, pb, keys, check)
    # Many rows on one side may meet one row on the other (every run of a judge against one human label);
    # many on both sides would pair every row with every other (two llm_judge checks of one turn matched on
    # `check`, or two label sets), inventing pairs: refuse rather than report made-up numbers.
    dup_a, dup_b = pa.duplicated(keys, keep=False), pb.duplicated(keys, keep=False)
    both = pa.loc[dup_a, keys].merge(pb.loc[dup_b, keys].drop_duplicates(), on=keys).drop_duplicates()
    if not both.empty:
        first = ", ".join(f"{k}={v}" for k, v in both.iloc[0].items())
        hint = (
            "; match on check_id (give it in both frames)"
            if check == "check"
            else "; give one row per case, run, turn and check in one of them"
        )
        raise ValueError(
            f"both frames have several rows for {first}: each would be paired with each, so agreement "
            f"is undefined{hint}"
        )
    merged = pa.merge(pb, on=keys, suffixes=("_a", "_b"))
    groups = dict(tuple(merged.groupby(check, sort=True)))
    rows = []
    for name in sorted(set(map(str, groups)) | set(left_out)):
        group = groups.get(name, merged.iloc[0:0])
        va, vb = group["value_a"], group["value_b"]
        scale = [1.0, 2.0, 3.0, 4.0, 5.0] if va.between(1, 5).all() and vb.between(1, 5).all() else None
        out, missing_a, missing_b = left_out.get(name, (0, 0, 0))
        rows.append(
            {
                "check": name,
                "n": len(group),
                "exact": float((va.round(6) == vb.round(6)).mean()) if len(group) else math.nan,
                "kappa": quadratic_kappa(np.round(va.to_numpy(), 6), np.round(vb.to_numpy(), 6), scale),
                "spearman": spearman(va.reset_index(drop=True), vb.reset_index(drop=True)),
                "left_out": out,
                "note": _note(len(group), out, missing_a, missing_b),
            }
        )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype(COLUMNS)


def _left_out(
    ra: pd.DataFrame, rb: pd.DataFrame, pa: pd.DataFrame, pb: pd.DataFrame, keys: list[str], check: str
) -> dict[str, tuple[int, int, int]]:
    """Per check: the rows both frames have that cannot be compared, and how many lack a value in a and in b."""

    def key_set(frame: pd.DataFrame) -> set[tuple[object, ...]]:
        return set(frame[keys].astype("object").itertuples(index=False, name=None))

    matched = key_set(ra) & key_set(rb)
    with_a, with_b = key_set(pa), key_set(pb)
    at = keys.index(check)
    counts: dict[str, list[int]] = {}
    for key in matched:
        no_a, no_b = key not in with_a, key not in with_b
        if no_a or no_b:
            c = counts.setdefault(str(key[at]), [0, 0, 0])
            c[0] += 1
            c[1] += no_a
            c[2] += no_b
    return {k: (v[0], v[1], v[2]) for k, v in counts.items()}


def _note(n: int, left_out: int, missing_a: int, missing_b: int) -> str | None:
    if not left_out:
        return None
    sides = ", ".join(
        f"{count} without a value in {side}" for side, count in (("a", missing_a), ("b", missing_b)) if count
    )
    if n == 0:
        return f"not compared: none of its {left_out} rows has a value in both frames ({sides}: degraded or not evaluated)"
    return f"{left_out} of {n + left_out} rows left out ({sides}: degraded or not evaluated)"
