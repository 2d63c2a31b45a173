"""The gate: per check, is the candidate worse than the baseline by more than the margin?

Per check, the paired per-case differences ``d = b - a`` (a case's runs and turns averaged first: the case
is the unit) are tested one-sided against ``mean(d) >= -margin`` with the exact sign-flip test
(:class:`~evalnb.comparison.stats.SignFlip`), at level ``1 - confidence``. Across every check of every suite
compared, Holm's procedure keeps the family-wise false-alarm rate at that level, so a suite of six checks
does not fire six times as often as one with one check. Cases on one side only do not enter the test.

The words say what a data scientist needs to read: "worse by 0.08 (95% one-sided bound 0.03)", "no
detectable difference (could hide a drop of up to 0.12)", "too few cases to tell".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from evalnb.comparison.frames import Cells
from evalnb.comparison.stats import SignFlip, holm

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "CHECK_COLUMNS",
    "VERDICTS",
    "adjust",
    "check_options",
    "check_tests",
    "decide",
    "family_words",
    "finish",
    "fmt",
    "margin_for",
]

VERDICTS = (
    "worse",
    "within margin",
    "no detectable difference",
    "better",
    "too few cases to tell",
    "new",
    "gone",
)

#: The per-check table's columns and dtypes, in order.
CHECK_COLUMNS: dict[str, str] = {
    "check_id": "string",
    "check": "string",
    "scale": "string",
    "cases": "Int64",
    "paired": "Int64",
    "mean_a": "float64",
    "mean_b": "float64",
    "diff": "float64",
    "lower_bound": "float64",
    "upper_bound": "float64",
    "ci_low": "float64",
    "ci_high": "float64",
    "pass_rate_a": "float64",
    "pass_rate_b": "float64",
    "pass_rate_diff": "float64",
    "margin": "float64",
    "p_value": "float64",
    "p_adjusted": "float64",
    "verdict": "string",
    "gates": "boolean",
    "words": "string",
    "regressed": "Int64",
    "improved": "Int64",
    "significant": "Int64",
    "weighted": "boolean",
}


def check_options(margin: float | Mapping[str, float], confidence: float) -> None:
    """The gate's options are valid: a confidence in [0.5, 1) and margins >= 0.

    Raises:
        ConfigError: code ``INVALID_VALUE``, naming the option (a run with them could not start).
    """
    from evalnb.errors import ConfigError

    if not 0.5 <= confidence < 1.0:
        raise ConfigError(
            f"--confidence must be in [0.5, 1), e.g. 0.95, not {confidence}", code="INVALID_VALUE"
        )
    for value in margin.values() if isinstance(margin, Mapping) else [margin]:
        if not float(value) >= 0:
            raise ConfigError(
                f"--margin must be >= 0 (how much worse a check may get), not {value}", code="INVALID_VALUE"
            )


def margin_for(margin: float | Mapping[str, float], check_id: str, check: str) -> float:
    """The margin of one check: a number for all, or a mapping by check id or name (default 0)."""
    value = margin.get(check_id, margin.get(check, 0.0)) if isinstance(margin, Mapping) else margin
    return float(value)


def fmt(x: float) -> str:
    """A difference as the words print it: two decimals, more for a tiny one."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if x == 0 or abs(x) >= 0.01:
        return f"{x:.2f}"
    return f"{x:.2g}"


def _nanmean(x: np.ndarray) -> float:
    import numpy as np

    x = x[~np.isnan(x)]
    return float(x.mean()) if len(x) else math.nan


def check_tests(
    cells: Cells, *, confidence: float, margin: float | Mapping[str, float], draws: int, seed: int
) -> tuple[pd.DataFrame, list[str]]:
    """Per check: means, the paired difference, its bounds and one-sided p-values (before the family).

    Returns the table (without the family-dependent columns filled) and each check's state: ``tested``,
    ``too few``, ``new`` or ``gone``.
    """
    import numpy as np
    import pandas as pd

    alpha = 1.0 - confidence
    rows, states = [], []
    for k, check_id in enumerate(cells.check_ids):
        sl = cells.check_slice(k)
        scale = cells.scales[k]
        has_a, has_b = cells.a.runs[sl] > 0, cells.b.runs[sl] > 0
        both = has_a & has_b
        ya, yb = cells.a.y[sl], cells.b.y[sl]
        d = (yb - ya)[both]
        m = margin_for(margin, check_id, cells.check_names[k])
        sf = SignFlip(d, draws=draws, seed=seed)
        span = scale.span if scale is not None and scale.bounded else math.inf

        def clip(v: float, span: float = span) -> float:
            v = max(-span, min(span, v))
            return v if math.isfinite(v) else math.nan

        if not has_a.any():
            state = "new"
        elif not has_b.any():
            state = "gone"
        elif not sf.can_reject(alpha):
            state = "too few"
        elif bool(np.all(np.abs(d) <= 1e-12)):
            state = "no change"
        elif sf.min_p(-m) > alpha:
            state = "cannot reach"  # too few cases changed for any signs to be significant
        else:
            state = "tested"
        states.append(state)
        tested = state in ("tested", "no change", "cannot reach")
        rows.append(
            {
                "check_id": check_id,
                "check": cells.check_names[k],
                "scale": scale.label if scale is not None else pd.NA,
                "cases": int((has_a | has_b).sum()),
                "paired": int(both.sum()),
                "mean_a": _nanmean(ya[has_a]),
                "mean_b": _nanmean(yb[has_b]),
                "diff": float(d.mean()) if len(d) else math.nan,
                "lower_bound": clip(sf.lower(alpha)) if tested else math.nan,
                "upper_bound": clip(sf.upper(alpha)) if tested else math.nan,
                "ci_low": clip(sf.lower(alpha / 2)) if tested else math.nan,
                "ci_high": clip(sf.upper(alpha / 2)) if tested else math.nan,
                "pass_rate_a": _nanmean(cells.a.passed[sl][has_a]),
                "pass_rate_b": _nanmean(cells.b.passed[sl][has_b]),
                "pass_rate_diff": _nanmean((cells.b.passed[sl] - cells.a.passed[sl])[both]),
                "margin": m,
                "p_value": sf.p_below(-m) if tested else math.nan,
                "_p_better": sf.p_above(0.0) if tested else math.nan,
                "_changed": int((np.abs(d) > 1e-12).sum()),
                "weighted": bool(cells.weighted[k]),
            }
        )
    # the family-dependent columns (p_adjusted onwards) are filled by decide() and finish()
    columns = [
        *list(CHECK_COLUMNS)[: list(CHECK_COLUMNS).index("p_adjusted")],
        "_p_better",
        "_changed",
        "weighted",
    ]
    return pd.DataFrame(rows, columns=columns), states


def adjust(tables: list[pd.DataFrame], states: list[list[str]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Holm across every tested check of every table: adjusted (worse, better) p-values per table."""
    import numpy as np

    worse, better, where = [], [], []
    for t, (table, st) in enumerate(zip(tables, states, strict=True)):
        for i, state in enumerate(st):
            # Tarone's rule: a test that cannot reach the level whatever the signs stays out of the family
            if state == "tested":
                worse.append(float(table["p_value"].iloc[i]))
                better.append(float(table["_p_better"].iloc[i]))
                where.append((t, i))
    adj_w, adj_b = holm(np.array(worse)), holm(np.array(better))
    out = [(np.full(len(tb), np.nan), np.full(len(tb), np.nan)) for tb in tables]
    for j, (t, i) in enumerate(where):
        out[t][0][i], out[t][1][i] = adj_w[j], adj_b[j]
    return out


def decide(
    table: pd.DataFrame,
    states: list[str],
    p_worse: np.ndarray,
    p_better: np.ndarray,
    *,
    confidence: float,
    family: str,
    fail_on_missing: bool,
) -> pd.DataFrame:
    """Fill ``p_adjusted``, ``verdict``, ``gates`` and ``words`` from the family's adjusted p-values."""
    alpha = 1.0 - confidence
    conf = f"{confidence:.0%}" if round(confidence * 100, 6).is_integer() else f"{confidence:.1%}"
    out = table.copy()
    verdicts, words, gates = [], [], []
    for i, state in enumerate(states):
        row = out.iloc[i]
        diff, lower, upper, margin = (float(row[c]) for c in ("diff", "lower_bound", "upper_bound", "margin"))
        paired = int(row["paired"])
        if state == "new":
            v, w = "new", "new: measured on the candidate only"
        elif state == "gone":
            v = "gone"
            w = "gone: measured on the baseline only" + (
                "; gates (fail on missing)" if fail_on_missing else ""
            )
        elif state == "too few":
            v, w = (
                "too few cases to tell",
                f"too few cases to tell ({paired} paired case{'s' * (paired != 1)})",
            )
        elif state == "no change":
            v, w = "no detectable difference", f"no change on any of the {paired} paired cases"
        elif state == "cannot reach":
            changed = int(row["_changed"])
            v = "too few cases to tell"
            w = (
                f"too few cases to tell (only {changed} of the {paired} paired cases changed; "
                f"could hide a drop of up to {fmt(max(0.0, -lower))})"
            )
        elif p_worse[i] <= alpha:
            v = "worse"
            w = f"worse by {fmt(-diff)} ({conf} one-sided bound {fmt(-upper)})"
            if margin > 0:
                w += f", beyond the margin {fmt(margin)}"
        elif upper < -margin:
            v = "no detectable difference"
            w = (
                f"worse by {fmt(-diff)} ({conf} one-sided bound {fmt(-upper)} for this check alone; "
                f"not significant over {family})"
            )
        elif upper < 0:
            v = "within margin"
            w = f"worse by {fmt(-diff)} ({conf} one-sided bound {fmt(-upper)}), not shown to exceed the margin {fmt(margin)}"
        elif p_better[i] <= alpha:
            v, w = "better", f"better by {fmt(diff)} ({conf} one-sided bound {fmt(lower)})"
        elif lower > 0:
            v = "no detectable difference"
            w = (
                f"better by {fmt(diff)} ({conf} one-sided bound {fmt(lower)} for this check alone; "
                f"not significant over {family})"
            )
        else:
            v, w = (
                "no detectable difference",
                f"no detectable difference (could hide a drop of up to {fmt(-lower)})",
            )
        verdicts.append(v)
        words.append(w)
        gates.append(v == "worse" or (v == "gone" and fail_on_missing))
    out["p_adjusted"] = p_worse
    out["verdict"] = verdicts
    out["gates"] = gates
    out["words"] = words
    return out


def finish(table: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """Add the per-case counts (regressed, improved, significant) and conform to ``CHECK_COLUMNS``."""
    out = table.drop(columns=["_p_better", "_changed"], errors="ignore").merge(
        counts, on="check_id", how="left"
    )
    for c in ("regressed", "improved", "significant"):
        out[c] = out[c].fillna(0)
    return out.reindex(columns=list(CHECK_COLUMNS)).astype(CHECK_COLUMNS)


def family_words(n_checks: int, n_suites: int) -> str:
    """How the words name the family of tests ("the 6 checks compared", "the 9 checks of 3 suites")."""
    if n_checks == 0:
        return "no check (none could reach the level)"
    checks = f"{n_checks} check{'s' * (n_checks != 1)}"
    return f"the {checks} of {n_suites} suites compared" if n_suites > 1 else f"the {checks} compared"
