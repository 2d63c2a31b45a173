"""Compare two results: what changed per case and check, and whether it is more than noise.

Two levels, each with its own question:

* **Per check** (``Comparison.checks``): did the mean value and the pass rate move? The difference comes with a
  bootstrap confidence interval over *cases*: all runs of a case and all turns of a conversation are resampled
  together (a cluster bootstrap), because they are not independent samples. Cases present in both results are
  resampled as pairs (their difference is what varies); cases present on one side only are resampled on that
  side alone. The verdict is ``better`` or ``worse`` when the interval of the mean difference excludes zero at
  the stated confidence, else ``no detectable difference`` (``new`` or ``gone`` for a check measured on one
  side only).
* **Per case x check** (``Comparison.cases``): ``regressed``, ``improved``, ``same``, ``new`` or ``gone``. With
  several runs per case a change counts only when it exceeds what the case's own run-to-run variation
  explains: a moderated t statistic (the case's run-to-run variance shrunk toward the check's pooled
  within-case variance with prior weight ``PRIOR_DF``, as limma does for few replicates) gives a two-sided
  p-value, and the p-values of all cases and checks of the comparison are Holm-adjusted so that a suite of
  many noisy cases does not throw up false alarms (family-wise error at ``1 - confidence``). When no run-to-run
  variation can be measured (one run per case, or a check that never varies between runs), any change counts.

A run's value for a check is its mean over the conversation's turns. A score without a value that failed (an
agent error, a judge failure) counts as 0, in the per-case test and in the per-check mean, so a case that
stops answering is a regression, not a missing value. A check that never has a value (it only passes or
fails) is measured by its pass/fail outcome (1 or 0).

Only numpy and pandas are used (no scipy).

Example:
    >>> cmp = evalnb.compare(baseline, candidate)
    >>> cmp.checks[["check_id", "diff", "ci_low", "ci_high", "verdict"]]
    >>> cmp.regressions
"""

from __future__ import annotations

import html
import math
import sys
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["PRIOR_DF", "Comparison", "PowerAnalysis", "compare", "power"]

#: Prior degrees of freedom of the moderated per-case variance (weight of the check's pooled variance).
PRIOR_DF = 4
_EPS = 1e-9

CHANGES = ("regressed", "improved", "same", "new", "gone")


# --------------------------------------------------------------------------------------------------
# Small statistics helpers (numpy only)
# --------------------------------------------------------------------------------------------------


def _norm_ppf(p: float) -> float:
    """Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9 after refinement)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    a = (
        -3.969683028665376e01,
        2.209460984245205e02,
        -2.759285104469687e02,
        1.383577518672690e02,
        -3.066479806614716e01,
        2.506628277459239e00,
    )
    b = (
        -5.447609879822406e01,
        1.615858368580409e02,
        -1.556989798598866e02,
        6.680131188771972e01,
        -1.328068155288572e01,
    )
    c = (
        -7.784894002430293e-03,
        -3.223964580411365e-01,
        -2.400758277161838e00,
        -2.549732539343734e00,
        4.374664141464968e00,
        2.938163982698783e00,
    )
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
    lo = 0.02425
    if p < lo:
        q = math.sqrt(-2 * math.log(p))
        x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    elif p > 1 - lo:
        q = math.sqrt(-2 * math.log(1 - p))
        x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    else:
        q = p - 0.5
        r = q * q
        x = (
            (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
            * q
            / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        )
    # one Newton step on the exact CDF
    e = 0.5 * math.erfc(-x / math.sqrt(2)) - p
    u = e * math.sqrt(2 * math.pi) * math.exp(x * x / 2)
    return x - u / (1 + x * u / 2)


def _t_two_sided_p(t: float, df: int) -> float:
    """Two-sided p-value of Student's t with integer ``df`` (Abramowitz & Stegun 26.7.3-4, exact series)."""
    if df <= 0:
        return math.erfc(abs(t) / math.sqrt(2))
    if not math.isfinite(t):
        return 0.0
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        total, term = 0.0, 1.0
        if df > 1:
            total = term = math.cos(theta)
            for k in range(3, df - 1, 2):
                term *= c2 * (k - 1) / k
                total += term
        a = 2 / math.pi * (theta + s * total)
    else:
        total = term = 1.0
        for k in range(2, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        a = s * total
    return min(1.0, max(0.0, 1.0 - a))


def _t_ppf(q: float, df: int) -> float:
    """Quantile of Student's t (bisection on the exact two-sided tail; q > 0.5)."""
    target = 2 * (1 - q)
    lo, hi = 0.0, 1e3
    for _ in range(80):
        mid = (lo + hi) / 2
        if _t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error control, no independence assumption)."""
    import numpy as np

    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = adj
    return out


# --------------------------------------------------------------------------------------------------
# Frames
# --------------------------------------------------------------------------------------------------


def _scores_of(x: Any) -> pd.DataFrame:
    import pandas as pd

    if isinstance(x, pd.DataFrame):
        return x
    scores = getattr(x, "scores", None)
    if isinstance(scores, pd.DataFrame):
        return scores
    raise TypeError(f"compare() needs a Result or a scores DataFrame, got {type(x).__name__}")


def _label_of(x: Any, default: str) -> str:
    meta = getattr(x, "meta", None)
    if isinstance(meta, dict):
        for key in ("version", "run_id", "model", "agent"):
            if meta.get(key):
                return str(meta[key])
    return default


def _suite_of(x: Any) -> str | None:
    """The suite name of a Result, or of a scores frame holding one suite; None when unknown."""
    import pandas as pd

    if isinstance(x, pd.DataFrame):
        names = x["suite"].dropna().unique() if "suite" in x else []
        return str(names[0]) if len(names) == 1 else None
    name = getattr(getattr(x, "suite", None), "name", None)
    return None if name is None else str(name)


def _per_run(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per check x case x run: means over turns (``y`` counts a failed no-value score as 0)."""
    import numpy as np
    import pandas as pd

    s = scores
    value = s["value"].to_numpy(dtype="float64", na_value=np.nan)
    passed = s["passed"].astype("boolean")
    pass_f = passed.to_numpy(dtype="float64", na_value=np.nan)
    # a failed score without a value (agent error, judge failure) is the worst outcome, not a missing one
    y = np.where(np.isnan(value), np.where(pass_f == 0.0, 0.0, np.nan), value)
    frame = pd.DataFrame(
        {
            "check_id": s["check_id"].astype(str).to_numpy(),
            "case_id": s["case_id"].astype(str).to_numpy(),
            "run": s["run"].to_numpy(dtype="float64", na_value=0.0).astype(int),
            "y": y,
            "value": value,
            "passed": pass_f,
        }
    )
    out = frame.groupby(["check_id", "case_id", "run"], sort=True).mean().reset_index()
    names = pd.DataFrame(
        {
            "case_id": frame["case_id"],
            "case_name": s["case_name"].astype(str).to_numpy() if "case_name" in s else frame["case_id"],
            "category": s["category"].astype(object).to_numpy() if "category" in s else None,
        }
    ).drop_duplicates("case_id")
    return out.merge(names, on="case_id", how="left")


# --------------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    """The outcome of :func:`compare`.

    Attributes:
        cases: one row per case x check: ``case_id, case_name, category, check_id, a, b, delta, pass_rate_a,
            pass_rate_b, runs_a, runs_b, p_value, change`` (``change`` in regressed/improved/same/new/gone).
        checks: one row per check: ``check_id, cases, paired, mean_a, mean_b, diff, ci_low, ci_high,
            pass_rate_a, pass_rate_b, pass_rate_diff, pass_ci_low, pass_ci_high, verdict, regressed,
            improved``.
        confidence: the confidence level of the intervals, verdicts and per-case tests.
        a_label: what ``a`` is (a version or run id), for reports.
        b_label: what ``b`` is.
    """

    cases: pd.DataFrame
    checks: pd.DataFrame
    confidence: float
    a_label: str = "a"
    b_label: str = "b"
    n_boot: int = 2000
    notes: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> pd.DataFrame:
        """The case x check rows whose change is ``regressed``."""
        return self.cases[self.cases["change"] == "regressed"].reset_index(drop=True)

    @property
    def improvements(self) -> pd.DataFrame:
        """The case x check rows whose change is ``improved``."""
        return self.cases[self.cases["change"] == "improved"].reset_index(drop=True)

    @property
    def has_regressions(self) -> bool:
        """Whether any case regressed (what ``evalnb run --baseline`` gates on)."""
        return bool((self.cases["change"] == "regressed").any())

    def report(self) -> str:
        """A plain-text report: per-check verdicts with intervals, then the regressed cases.

        Example:
            >>> print(evalnb.compare(a, b).report())
        """
        pct = f"{self.confidence:.0%}"
        lines = [f"Comparison {self.a_label} -> {self.b_label} ({pct} confidence, bootstrap over cases)"]
        for row in self.checks.itertuples(index=False):
            lines.append(
                f"  {row.check_id}: mean {_fmt(row.mean_a)} -> {_fmt(row.mean_b)} "
                f"(diff {_fmt(row.diff, sign=True)}, {pct} CI [{_fmt(row.ci_low)}, {_fmt(row.ci_high)}]); "
                f"pass rate {_fmt(row.pass_rate_a)} -> {_fmt(row.pass_rate_b)} "
                f"(diff {_fmt(row.pass_rate_diff, sign=True)}, CI [{_fmt(row.pass_ci_low)}, "
                f"{_fmt(row.pass_ci_high)}]); {row.verdict}; "
                f"{row.regressed} regressed, {row.improved} improved"
            )
        counts = self.cases["change"].value_counts()
        lines.append("Cases: " + ", ".join(f"{counts.get(c, 0)} {c}" for c in CHANGES))
        reg = self.regressions
        if len(reg):
            lines.append("Regressed:")
            for r in reg.itertuples(index=False):
                lines.append(f"  {r.case_id} [{r.check_id}]: {_fmt(r.a)} -> {_fmt(r.b)}")
        lines.extend(self.notes)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = (
            f"<b>Comparison</b> {html.escape(self.a_label)} &rarr; {html.escape(self.b_label)} "
            f"({self.confidence:.0%} confidence)"
        )
        checks = self.checks.to_html(index=False, escape=True, float_format=lambda v: f"{v:.3f}")
        reg = self.regressions
        tail = (
            "<p>No regressed cases.</p>"
            if reg.empty
            else "<p><b>Regressed cases</b></p>"
            + reg[["case_id", "case_name", "check_id", "a", "b", "delta", "p_value"]].to_html(
                index=False, escape=True, float_format=lambda v: f"{v:.3f}"
            )
        )
        return head + checks + tail

    def __repr__(self) -> str:
        verdicts = ", ".join(f"{r.check_id}: {r.verdict}" for r in self.checks.itertuples(index=False))
        return (
            f"Comparison({self.a_label!r} -> {self.b_label!r}, {len(self.regressions)} regressed; {verdicts})"
        )


def _fmt(v: Any, *, sign: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return f"{v:+.3f}" if sign else f"{v:.3f}"


def _bootstrap_diff(
    paired_a: np.ndarray,
    paired_b: np.ndarray,
    only_a: np.ndarray,
    only_b: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Bootstrap replicates of mean(b cases) - mean(a cases); matched cases resampled as pairs."""
    import numpy as np

    n_p, n_a, n_b = len(paired_a), len(only_a), len(only_b)
    tot_a, tot_b = n_p + n_a, n_p + n_b
    if tot_a == 0 or tot_b == 0:
        return np.full(n_boot, np.nan)
    sum_a = np.zeros(n_boot)
    sum_b = np.zeros(n_boot)
    if n_p:
        idx = rng.integers(0, n_p, size=(n_boot, n_p))
        sum_a += paired_a[idx].sum(axis=1)
        sum_b += paired_b[idx].sum(axis=1)
    if n_a:
        sum_a += only_a[rng.integers(0, n_a, size=(n_boot, n_a))].sum(axis=1)
    if n_b:
        sum_b += only_b[rng.integers(0, n_b, size=(n_boot, n_b))].sum(axis=1)
    return sum_b / tot_b - sum_a / tot_a


def _interval(
    a: np.ndarray, b: np.ndarray, *, n_boot: int, rng: np.random.Generator, confidence: float
) -> tuple[float, float, float, float, float]:
    """(mean a, mean b, diff, low, high) from per-case means aligned by case (NaN: case absent on that side)."""
    import numpy as np

    ha, hb = ~np.isnan(a), ~np.isnan(b)
    both = ha & hb
    pa, pb = a[both], b[both]
    oa, ob = a[ha & ~hb], b[hb & ~ha]
    mean_a = float(a[ha].mean()) if ha.any() else math.nan
    mean_b = float(b[hb].mean()) if hb.any() else math.nan
    diff = mean_b - mean_a
    if min(int(ha.sum()), int(hb.sum())) < 2:
        # One case says nothing about the cases a suite stands for: no interval, so no verdict either
        # (the case itself still shows as improved or regressed in the per-case view).
        return mean_a, mean_b, diff, math.nan, math.nan
    reps = _bootstrap_diff(pa, pb, oa, ob, n_boot=n_boot, rng=rng)
    if np.isnan(reps).all():
        return mean_a, mean_b, diff, math.nan, math.nan
    alpha = 1 - confidence
    low, high = np.quantile(reps, [alpha / 2, 1 - alpha / 2])
    # The percentile bootstrap is too narrow with few cases (plug-in variance, normal tails): widen it around
    # the estimate by sqrt(n/(n-1)) * t[n-1]/z, the usual small-sample correction ("expanded" bootstrap).
    n = max(len(pa) + min(len(oa), len(ob)), 2)
    f = math.sqrt(n / (n - 1)) * _t_ppf(1 - alpha / 2, n - 1) / _norm_ppf(1 - alpha / 2)
    low, high = diff - f * (diff - low), diff + f * (high - diff)
    # The widening must not claim differences the data cannot have: a difference of two means lies within
    # the spread of the values (a pass rate difference within [-1, 1]).
    values = np.concatenate([a[ha], b[hb]])
    spread = float(values.max() - values.min())
    return mean_a, mean_b, diff, float(max(low, -spread)), float(min(high, spread))


def _group_mean(key: np.ndarray, x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per dense key: (mean of non-NaN x, count of non-NaN x)."""
    import numpy as np

    ok = ~np.isnan(x)
    cnt = np.bincount(key[ok], minlength=size).astype(float)
    tot = np.bincount(key[ok], weights=x[ok], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return tot / cnt, cnt


def _case_stats(
    s: pd.DataFrame, check: np.ndarray, case: np.ndarray, n_case: int, n_check: int, pass_only: np.ndarray
) -> dict[str, Any]:
    """Dense per check x case statistics: runs, n, mean and squared deviations of y, value mean, pass rate.

    ``y`` is a run's mean over the conversation's turns, counting a failed score without a value as 0; for a
    check that never has a value (``pass_only``), ``y`` is the pass/fail outcome itself.
    """
    import numpy as np

    value = s["value"].to_numpy(dtype="float64", na_value=np.nan)
    pass_f = s["passed"].astype("boolean").to_numpy(dtype="float64", na_value=np.nan)
    # a failed score without a value (agent error, judge failure) is the worst outcome, not a missing one
    y = np.where(np.isnan(value), np.where(pass_f == 0.0, 0.0, np.nan), value)
    # a check that only says pass or fail is measured by that: otherwise its passes would be missing values
    # and a case going from always passing to always failing would not count as changed
    y = np.where(pass_only[check], pass_f, y)
    run = s["run"].to_numpy(dtype="float64", na_value=0.0).astype(np.int64)
    cell = check.astype(np.int64) * n_case + case
    size = n_check * n_case
    # one row per check x case x run
    run_key = cell * (int(run.max(initial=0)) + 1) + run
    uniq, inv = np.unique(run_key, return_inverse=True)
    r_y, _ = _group_mean(inv, y, len(uniq))
    r_v, _ = _group_mean(inv, value, len(uniq))
    r_p, _ = _group_mean(inv, pass_f, len(uniq))
    r_cell = uniq // (int(run.max(initial=0)) + 1)
    runs = np.bincount(r_cell, minlength=size).astype(float)
    ymean, n = _group_mean(r_cell, r_y, size)
    dev = r_y - ymean[r_cell]
    ok = ~np.isnan(dev)
    ss = np.bincount(r_cell[ok], weights=dev[ok] ** 2, minlength=size)
    vmean, _ = _group_mean(r_cell, r_v, size)
    pmean, _ = _group_mean(r_cell, r_p, size)
    return {"runs": runs, "n": n, "y": ymean, "ss": ss, "value": vmean, "passed": pmean}


def compare(
    a: Any,
    b: Any,
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    labels: tuple[str, str] | None = None,
) -> Comparison:
    """Compare result ``b`` (the candidate) against result ``a`` (the baseline).

    Args:
        a: the baseline: a ``Result`` or its ``scores`` DataFrame.
        b: the candidate, likewise.
        confidence: confidence level of intervals, verdicts and per-case tests (0.95: 5% false alarms).
        n_boot: bootstrap replicates.
        seed: random seed of the bootstrap (the same inputs give the same intervals).
        labels: names of ``a`` and ``b`` for reports (default: their versions, run ids or models).

    Returns:
        A :class:`Comparison` with ``.cases``, ``.checks``, ``.regressions`` and ``report()``.

    Example:
        >>> cmp = evalnb.compare(result_v1, result_v2)
        >>> cmp.checks.set_index("check_id")["verdict"]
        >>> cmp.regressions[["case_id", "check_id", "a", "b"]]
    """
    import numpy as np
    import pandas as pd

    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence}")
    alpha = 1 - confidence
    la, lb = labels or (_label_of(a, "a"), _label_of(b, "b"))
    if la == lb:
        la, lb = f"{la} (a)", f"{lb} (b)"
    sa, sb = _scores_of(a), _scores_of(b)
    both_frames = pd.concat(
        [sa[["check_id", "case_id"]].astype(str), sb[["check_id", "case_id"]].astype(str)], ignore_index=True
    )
    check_codes, checks_u = pd.factorize(both_frames["check_id"], sort=True)
    case_codes, cases_u = pd.factorize(both_frames["case_id"], sort=True)
    n_check, n_case = len(checks_u), len(cases_u)
    na_rows = len(sa)
    has_value = np.zeros(n_check, dtype=bool)
    for frame, codes in ((sa, check_codes[:na_rows]), (sb, check_codes[na_rows:])):
        numeric = ~np.isnan(frame["value"].to_numpy(dtype="float64", na_value=np.nan))
        has_value[codes[numeric]] = True
    A = _case_stats(sa, check_codes[:na_rows], case_codes[:na_rows], n_case, n_check, ~has_value)
    B = _case_stats(sb, check_codes[na_rows:], case_codes[na_rows:], n_case, n_check, ~has_value)
    # names and categories: first occurrence, the candidate's first
    names = (
        pd.concat(
            [
                sb.assign(_c=case_codes[na_rows:])[["_c", "case_name", "category"]],
                sa.assign(_c=case_codes[:na_rows])[["_c", "case_name", "category"]],
            ],
            ignore_index=True,
        )
        .drop_duplicates("_c")
        .set_index("_c")
    )
    names = names.reindex(range(n_case))

    has_a, has_b = A["runs"] > 0, B["runs"] > 0
    cell_check = np.repeat(np.arange(n_check), n_case)
    # The check's pooled within-case (run-to-run) variance, from both sides.
    ss = A["ss"] + B["ss"]
    dfs = np.clip(A["n"] - 1, 0, None) + np.clip(B["n"] - 1, 0, None)
    pooled_ss = np.bincount(cell_check, weights=ss, minlength=n_check)
    pooled_df = np.bincount(cell_check, weights=dfs, minlength=n_check)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled_var = np.where(pooled_df > 0, pooled_ss / pooled_df, np.nan)[cell_check]
    delta = B["y"] - A["y"]
    both = has_a & has_b
    p_values = np.full(len(delta), np.nan)
    for i in np.flatnonzero(both & ~np.isnan(delta)):
        d, pv, own_df = float(delta[i]), float(pooled_var[i]), int(dfs[i])
        if abs(d) <= _EPS:
            p_values[i] = 1.0
            continue
        if math.isnan(pv) or pv <= _EPS:
            # nothing measured run-to-run variation (one run per case, or a check that never varies)
            p_values[i] = 0.0
            continue
        own_var = float(ss[i]) / own_df if own_df > 0 else 0.0
        var = (PRIOR_DF * pv + own_df * own_var) / (PRIOR_DF + own_df)
        se = math.sqrt(var * (1 / A["n"][i] + 1 / B["n"][i]))
        p_values[i] = _t_two_sided_p(d / se, PRIOR_DF + own_df) if se > 0 else 0.0
    tested = ~np.isnan(p_values)
    adjusted = np.full(len(delta), np.nan)
    adjusted[tested] = _holm(p_values[tested])
    signif = tested & (adjusted < alpha)
    change = np.select(
        [~has_a, ~has_b, signif & (delta < 0), signif & (delta > 0)],
        ["new", "gone", "regressed", "improved"],
        default="same",
    )
    keep = np.flatnonzero(has_a | has_b)
    case_of = keep % n_case
    cases = pd.DataFrame(
        {
            "case_id": pd.array(np.asarray(cases_u)[case_of], dtype="string"),
            "case_name": pd.array(names["case_name"].to_numpy(dtype=object)[case_of], dtype="string"),
            "category": pd.array(names["category"].to_numpy(dtype=object)[case_of], dtype="string"),
            "check_id": pd.array(np.asarray(checks_u)[cell_check[keep]], dtype="string"),
            "a": A["y"][keep],
            "b": B["y"][keep],
            "delta": delta[keep],
            "pass_rate_a": A["passed"][keep],
            "pass_rate_b": B["passed"][keep],
            "runs_a": pd.array(np.where(has_a, A["runs"], np.nan)[keep], dtype="Int64"),
            "runs_b": pd.array(np.where(has_b, B["runs"], np.nan)[keep], dtype="Int64"),
            "p_value": adjusted[keep],
            "change": pd.array(change[keep], dtype="string"),
        }
    )
    # cases in suite order where known, else by id
    cases = cases.sort_values(["check_id", "case_id"], kind="stable").reset_index(drop=True)

    rng = np.random.default_rng(seed)
    rows = []
    for k, check_id in enumerate(checks_u):
        cells = slice(k * n_case, (k + 1) * n_case)
        # the per-check mean is over the same per-case values as ``cases.a``/``cases.b``: a failed score
        # without a value counts as 0, so a candidate that errors on half the cases cannot look "better"
        va = np.where(has_a[cells], A["y"][cells], np.nan)
        vb = np.where(has_b[cells], B["y"][cells], np.nan)
        pa = np.where(has_a[cells], A["passed"][cells], np.nan)
        pb = np.where(has_b[cells], B["passed"][cells], np.nan)
        mean_a, mean_b, diff, lo, hi = _interval(va, vb, n_boot=n_boot, rng=rng, confidence=confidence)
        pr_a, pr_b, pdiff, plo, phi = _interval(pa, pb, n_boot=n_boot, rng=rng, confidence=confidence)
        # a check without numeric values is judged on its pass rate
        lo_v, hi_v = (lo, hi) if not math.isnan(diff) else (plo, phi)
        verdict = "worse" if hi_v < 0 else "better" if lo_v > 0 else "no detectable difference"
        if not has_a[cells].any() or not has_b[cells].any():
            # a check measured on one side only has nothing to compare: say so, as the cases do
            verdict = "new" if not has_a[cells].any() else "gone"
        ch = change[cells][(has_a | has_b)[cells]]
        rows.append(
            {
                "check_id": check_id,
                "cases": len(ch),
                "paired": int(both[cells].sum()),
                "mean_a": mean_a,
                "mean_b": mean_b,
                "diff": diff,
                "ci_low": lo,
                "ci_high": hi,
                "pass_rate_a": pr_a,
                "pass_rate_b": pr_b,
                "pass_rate_diff": pdiff,
                "pass_ci_low": plo,
                "pass_ci_high": phi,
                "verdict": verdict,
                "regressed": int((ch == "regressed").sum()),
                "improved": int((ch == "improved").sum()),
            }
        )
    dtypes = {
        "check_id": "string",
        "cases": "Int64",
        "paired": "Int64",
        "mean_a": "float64",
        "mean_b": "float64",
        "diff": "float64",
        "ci_low": "float64",
        "ci_high": "float64",
        "pass_rate_a": "float64",
        "pass_rate_b": "float64",
        "pass_rate_diff": "float64",
        "pass_ci_low": "float64",
        "pass_ci_high": "float64",
        "verdict": "string",
        "regressed": "Int64",
        "improved": "Int64",
    }
    checks = pd.DataFrame(rows, columns=list(dtypes)).astype(dtypes)
    notes = []
    suites = [_suite_of(x) for x in (a, b)]
    if suites[0] and suites[1] and suites[0] != suites[1]:
        notes.append(
            f"Note: a is suite {suites[0]!r} and b is suite {suites[1]!r}; cases are paired by id alone."
        )
    if both.any() and (pooled_df == 0).any():
        notes.append(
            "Note: one run per case for some checks; without run-to-run variation any change counts as a change."
        )
    return Comparison(
        cases=cases, checks=checks, confidence=confidence, a_label=la, b_label=lb, n_boot=n_boot, notes=notes
    )


# --------------------------------------------------------------------------------------------------
# Planning: what the suite can detect
# --------------------------------------------------------------------------------------------------


@dataclass
class PowerAnalysis:
    """What difference a suite can detect, per check (see :func:`power`).

    Attributes:
        table: one row per check: ``check_id, cases, runs, value_within, value_between, pass_within,
            pass_between`` (standard deviations run to run and case to case), ``mdd, mdd_pass_rate``
            (``mdd``: the smallest difference in mean value detected with the stated power; ``mdd_pass_rate``
            likewise for the pass rate).
        alpha: two-sided significance level.
        power: wanted power.
    """

    table: pd.DataFrame
    alpha: float
    power: float

    @property
    def _z(self) -> float:
        return _norm_ppf(1 - self.alpha / 2) + _norm_ppf(self.power)

    def _var_case(self, *, runs: pd.Series, column: str) -> pd.Series:
        t = self.table
        within = t[f"{column}_within"] ** 2
        between = t[f"{column}_between"] ** 2
        # paired comparison of the same cases: only run-to-run noise differs between versions; with one run
        # per case nothing separates it from case-to-case spread, so the spread is used (conservative)
        has_within = t["runs"] > 1
        return (2 * within / runs).where(has_within, 2 * between)

    def cases_needed(self, diff: float, *, runs: int | None = None, pass_rate: bool = False) -> pd.Series:
        """Cases needed per check to detect ``diff`` (with ``runs`` runs per case, default as observed).

        Example:
            >>> power(result).cases_needed(0.05, pass_rate=True)
        """
        import numpy as np

        r = self.table["runs"].astype(float) if runs is None else float(runs)
        column = "pass" if pass_rate else "value"
        var = self._var_case(runs=r, column=column)
        n = np.ceil(var * (self._z / diff) ** 2)
        return n.clip(lower=2).astype("Int64").set_axis(self.table["check_id"]).rename("cases_needed")

    def runs_needed(self, diff: float, *, cases: int | None = None, pass_rate: bool = False) -> pd.Series:
        """Runs per case needed per check to detect ``diff`` with ``cases`` cases (default as observed).

        Checks measured with one run per case have no run-to-run variance estimate and give ``<NA>``.

        Example:
            >>> power(result).runs_needed(0.1, cases=50)
        """
        import numpy as np

        t = self.table
        n = t["cases"].astype(float) if cases is None else float(cases)
        column = "pass" if pass_rate else "value"
        within = t[f"{column}_within"] ** 2
        r = np.ceil(2 * within * (self._z / diff) ** 2 / n)
        r = r.where(t["runs"] > 1).clip(lower=1)
        return r.astype("Int64").set_axis(t["check_id"]).rename("runs_needed")

    def _repr_html_(self) -> str:
        return f"<b>Power</b> (alpha {self.alpha}, power {self.power})" + self.table.to_html(
            index=False, float_format=lambda v: f"{v:.3f}"
        )

    def __repr__(self) -> str:
        return f"PowerAnalysis(alpha={self.alpha}, power={self.power})\n{self.table.to_string(index=False)}"


def power(source: Any, *, alpha: float = 0.05, power: float = 0.8) -> PowerAnalysis:
    """The minimal difference a comparison of two versions on this suite detects, per check.

    Uses the observed run-to-run variance within cases (what differs between two versions answering the
    same cases) and the case-to-case spread. The minimal detectable difference of a paired comparison of
    ``n`` cases with ``r`` runs each is ``(z[1-alpha/2] + z[power]) * sqrt(2 * s_within^2 / (r * n))``;
    with one run per case the case-to-case variance stands in (conservative).

    Args:
        source: a ``Result`` or a scores DataFrame.
        alpha: two-sided significance level.
        power: wanted power (chance to detect a true difference of that size).

    Returns:
        A :class:`PowerAnalysis`; its ``cases_needed(diff)`` and ``runs_needed(diff)`` plan a bigger suite.

    Example:
        >>> from evalnb.compare import power
        >>> p = power(result)
        >>> p.table[["check_id", "mdd", "mdd_pass_rate"]]
        >>> p.cases_needed(0.1, pass_rate=True)
    """
    import numpy as np
    import pandas as pd

    per_run = _per_run(_scores_of(source))
    rows = []
    for check_id, sub in per_run.groupby("check_id", sort=True):
        entry: dict[str, Any] = {"check_id": check_id, "cases": sub["case_id"].nunique()}
        entry["runs"] = float(sub.groupby("case_id")["run"].nunique().mean())
        for column, col in (("value", "value"), ("pass", "passed")):
            g = sub.dropna(subset=[col]).groupby("case_id")[col]
            dev = sub[col] - g.transform("mean")
            df = float((g.count() - 1).clip(lower=0).sum())
            entry[f"{column}_within"] = math.sqrt(float((dev**2).sum()) / df) if df > 0 else math.nan
            means = g.mean()
            entry[f"{column}_between"] = float(means.std(ddof=1)) if len(means) > 1 else math.nan
        rows.append(entry)
    table = pd.DataFrame(rows)
    if table.empty:
        table = pd.DataFrame(
            columns=[
                "check_id",
                "cases",
                "runs",
                "value_within",
                "value_between",
                "pass_within",
                "pass_between",
            ]
        )
    result = PowerAnalysis(table=table, alpha=alpha, power=power)
    z = result._z
    for column, name in (("value", "mdd"), ("pass", "mdd_pass_rate")):
        var = result._var_case(runs=table["runs"].astype(float), column=column)
        table[name] = z * np.sqrt(var / table["cases"].astype(float))
    table["check_id"] = table["check_id"].astype("string")
    table["cases"] = table["cases"].astype("Int64")
    result.table = table
    return result


class _CallableModule(types.ModuleType):
    """``evalnb.compare`` is both this module and the function: importing the module (as ``evalnb.store``
    does) rebinds the package attribute to the module, so the module itself forwards calls to :func:`compare`."""

    def __call__(self, a: Any, b: Any, **options: Any) -> Comparison:
        return compare(a, b, **options)


sys.modules[__name__].__class__ = _CallableModule
