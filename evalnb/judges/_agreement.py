"""``agreement``: how far two judges (or a judge and people) agree, per check, before trusting a judge."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["agreement", "bootstrap_intervals", "kappa_gain", "quadratic_kappa", "spearman"]

_KEYS = ("suite", "case_id", "run", "turn")
COLUMNS = {"check": "string", "n": "Int64", "exact": "float64", "kappa": "float64", "spearman": "float64"}
STATISTICS = ("exact", "kappa", "spearman")
INTERVAL_COLUMNS = {f"{s}_{end}": "float64" for s in STATISTICS for end in ("low", "high")}
# What could not be compared: always the last columns (after the intervals, when asked).
COVERAGE_COLUMNS = {"left_out": "Int64", "note": "string"}


def quadratic_kappa(a: np.ndarray, b: np.ndarray, categories: list[float] | None = None) -> float:
    """Cohen's kappa with quadratic weights: 1 perfect agreement, 0 chance level, negative worse than chance.

    Example::

        quadratic_kappa(np.array([1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 5]))
        # 1.0
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

    Example::

        spearman(pd.Series([1, 2, 3, 4]), pd.Series([10, 20, 40, 30]))
        # 0.8
    """
    import pandas as pd

    pairs = pd.DataFrame({"a": a.to_numpy(dtype=float), "b": b.to_numpy(dtype=float)})
    return float(pairs.corr(method="spearman").iloc[0, 1])


def _resampled_kappas(ra: np.ndarray, rb: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """The quadratic kappa of each row of two resample matrices (NaN where it is undefined), all at once."""
    import numpy as np

    resamples, n = ra.shape
    k = len(cats)
    ia, ib = np.searchsorted(cats, ra), np.searchsorted(cats, rb)
    flat = (np.arange(resamples)[:, None] * k * k + ia * k + ib).ravel()
    observed = np.bincount(flat, minlength=resamples * k * k).reshape(resamples, k, k).astype(float)
    weights = np.subtract.outer(cats, cats) ** 2 / (cats[-1] - cats[0]) ** 2
    expected = observed.sum(2)[:, :, None] * observed.sum(1)[:, None, :] / n
    denom = (weights * expected).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        kappas = 1 - (weights * observed).sum(axis=(1, 2)) / denom
    return np.where(denom > 0, kappas, np.nan)


def kappa_gain(
    labels: np.ndarray,
    better: np.ndarray,
    baseline: np.ndarray,
    categories: list[float] | None = None,
    *,
    interval: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """How much higher one judge's quadratic kappa with the labels is than another's, on the same items, with
    a paired percentile bootstrap interval (both judges resampled on the same items, from ``seed``).

    Two kappas with their own intervals overlap even when one judge is better on almost every resample; the
    interval of the difference answers "by how much is it better" directly.

    Returns:
        ``{"n": ..., "gain": ..., "gain_low": ..., "gain_high": ...}`` (NaN when undefined).

    Example::

        kappa_gain(np.array([1, 2, 3, 4, 5]), np.array([1, 2, 3, 4, 5]), np.array([3, 3, 2, 4, 3]))
        # {'n': 5, 'gain': 0.833..., 'gain_low': 0.428..., 'gain_high': 1.666...}
    """
    import numpy as np

    y, a, b = (np.asarray(v, dtype=float) for v in (labels, better, baseline))
    if not len(y) == len(a) == len(b):
        raise ValueError(f"kappa_gain needs paired values: {len(y)} labels, {len(a)} and {len(b)} scores")
    cats = sorted(set(categories or []) | set(y.tolist()) | set(a.tolist()) | set(b.tolist()))
    out: dict[str, float] = {"n": len(y), "gain": quadratic_kappa(y, a, cats) - quadratic_kappa(y, b, cats)}
    out["gain_low"] = out["gain_high"] = math.nan
    if len(y) >= 2 and len(cats) >= 2 and 0 < interval < 1:
        idx = np.random.default_rng(seed).integers(0, len(y), size=(resamples, len(y)))
        grid = np.array(cats, dtype=float)
        diff = _resampled_kappas(y[idx], a[idx], grid) - _resampled_kappas(y[idx], b[idx], grid)
        finite = diff[np.isfinite(diff)]
        if len(finite):
            lo, hi = np.percentile(finite, [(1 - interval) / 2 * 100, (1 + interval) / 2 * 100])
            out["gain_low"], out["gain_high"] = float(lo), float(hi)
    return out


def bootstrap_intervals(
    a: np.ndarray,
    b: np.ndarray,
    categories: list[float] | None,
    *,
    interval: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """Percentile bootstrap intervals of the exact share, quadratic kappa and Spearman of paired values.

    The pairs are resampled with replacement (``resamples`` times, from ``seed``, so the same input gives the
    same interval); every statistic of a resample is computed at once, in numpy. A resample where a statistic
    is undefined (one side constant) is left out of that statistic's interval.

    Returns:
        ``{"exact_low": ..., "exact_high": ..., "kappa_low": ..., ...}`` (NaN when undefined).
    """
    import numpy as np
    import pandas as pd

    n = len(a)
    out = dict.fromkeys(INTERVAL_COLUMNS, math.nan)
    if n < 2 or not 0 < interval < 1:
        return out
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    ra, rb = a[idx], b[idx]
    lo, hi = (1 - interval) / 2 * 100, (1 + interval) / 2 * 100

    def put(name: str, values: np.ndarray) -> None:
        finite = values[np.isfinite(values)]
        if len(finite):
            out[f"{name}_low"], out[f"{name}_high"] = (float(v) for v in np.percentile(finite, [lo, hi]))

    put("exact", (np.round(ra, 6) == np.round(rb, 6)).mean(axis=1))
    if categories is not None or (np.all(a == np.round(a)) and np.all(b == np.round(b))):
        cats = np.array(sorted(set(categories or []) | set(a.tolist()) | set(b.tolist())), dtype=float)
        if len(cats) >= 2:
            put("kappa", _resampled_kappas(ra, rb, cats))
    # Spearman: Pearson correlation of average ranks, every resample a column (pandas ranks them at once).
    rank_a = pd.DataFrame(ra.T).rank().to_numpy()
    rank_b = pd.DataFrame(rb.T).rank().to_numpy()
    da, db = rank_a - rank_a.mean(0), rank_b - rank_b.mean(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (da * db).sum(0) / np.sqrt((da**2).sum(0) * (db**2).sum(0))
    put("spearman", rho)
    return out


def agreement(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    on: str | None = None,
    interval: float | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
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
        interval: a confidence (``0.95``) to add percentile bootstrap intervals of each statistic over the
            matched pairs (``exact_low``, ``exact_high``, ``kappa_low`` ... ``spearman_high``); None: none.
        resamples: bootstrap resamples for the intervals.
        seed: the bootstrap's seed: the same frames give the same intervals.

    Returns:
        One row per check: ``n`` (matched pairs), ``exact`` (share of identical values), ``kappa``
        (Cohen's quadratic-weighted kappa over the scale, 1..5 for the judged metrics) and ``spearman``
        (rank correlation), then the interval columns when asked, then ``left_out`` (rows of both frames
        without a value on one side) and ``note`` (why rows were left out or the check was not compared; NA
        when nothing was). NaN where a statistic is undefined (no pairs, a constant side).

    Raises:
        ValueError: a frame lacks a needed column, or both frames have several rows for one key (each row
            would be paired with each).

    Example::

        humans = pd.DataFrame({"case_id": ["q1", "q2"], "turn": [0, 0],
                               "check": ["Relevance"] * 2, "value": [5, 2]})
        evalnb.judges.agreement(result.scores, humans)
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
        row: dict[str, object] = {
            "check": name,
            "n": len(group),
            "exact": float((va.round(6) == vb.round(6)).mean()) if len(group) else math.nan,
            "kappa": quadratic_kappa(np.round(va.to_numpy(), 6), np.round(vb.to_numpy(), 6), scale),
            "spearman": spearman(va.reset_index(drop=True), vb.reset_index(drop=True)),
        }
        if interval is not None:
            row.update(
                bootstrap_intervals(
                    np.round(va.to_numpy(dtype=float), 6),
                    np.round(vb.to_numpy(dtype=float), 6),
                    scale,
                    interval=interval,
                    resamples=resamples,
                    seed=seed,
                )
            )
        row.update(left_out=out, note=_note(len(group), out, missing_a, missing_b))
        rows.append(row)
    columns = {**COLUMNS, **(INTERVAL_COLUMNS if interval is not None else {}), **COVERAGE_COLUMNS}
    frame = pd.DataFrame(rows, columns=list(columns))
    return frame.astype(columns)


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
