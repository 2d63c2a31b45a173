"""The gate: per check, is the candidate worse than the baseline by more than the margin?

Per check, the paired per-case differences ``d = b - a`` (a case's runs and turns averaged first: the case
is the unit) are tested one-sided against ``mean(d) >= -margin`` with the exact sign-flip test
(:class:`~evalnb.comparison._stats.SignFlip`), at level ``1 - confidence``. Across every check of every suite
compared, Holm's procedure keeps the family-wise false-alarm rate at that level, so a suite of six checks
does not fire six times as often as one with one check. Cases on one side only do not enter the test.

Every test is oriented by the check's direction: for a lower-is-better check (``higher_is_better`` false) a
rise is the drop the gate looks for; the frame keeps the values, differences and bounds in the check's units.

The margin is in each check's own units (0.02 is 2 points of pass rate, and 0.02 on a 1-5 score), or a share of
each check's range (``"5%"``: 5 points of pass rate, 0.2 on a 1-5 score; for a check without a finite range, a
share of its paired baseline mean); a mapping gives checks their own, ``"*"`` the others'. The words name the
unit of every margin they print.

The words say what a data scientist needs to read: "worse by 0.08 (95% one-sided bound 0.03)", "no
detectable difference (could hide a drop of up to 0.12)", "too few cases to tell".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalnb.comparison._frames import Cells
from evalnb.comparison._stats import SignFlip, holm

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalnb.checks.scales import Scale

Margin = float | str | Mapping[str, float | str]
"""A margin: a number in each check's units, ``"N%"`` of each check's range, or a mapping by check id or name
(``"*"``: every other check)."""

__all__ = [
    "CHECK_COLUMNS",
    "VERDICTS",
    "Margin",
    "adjust",
    "check_line",
    "check_options",
    "check_tests",
    "decide",
    "family_words",
    "finish",
    "fmt",
    "margin_for",
    "margin_words",
    "parse_margins",
    "unit_words",
    "unknown_margins",
]

VERDICTS = (
    "worse",
    "within margin",
    "no detectable difference",
    "better",
    "too few cases to tell",
    "new",
    "gone",
    "not worse",
    "not decided",
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
    "higher_is_better": "boolean",
    "mean_a_all": "float64",
    "mean_b_all": "float64",
    "degraded_a": "Int64",
    "degraded_b": "Int64",
    "not_compared": "Int64",
    "decided_after": "Int64",
}


def _one_margin(value: float | str) -> tuple[float, bool]:
    """``(amount, relative)`` of one margin: ``0.02`` in the check's units, ``"5%"`` of its range."""
    from evalnb.errors import ConfigError

    relative = isinstance(value, str) and value.strip().endswith("%")
    try:
        if isinstance(value, bool):
            raise TypeError
        amount = float(value.strip().removesuffix("%")) / 100 if relative else float(value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise ConfigError(
            f"--margin must be a number in the check's units (0.02) or a share of its range (5%), not {value!r}",
            code="INVALID_VALUE",
        ) from None
    if not (math.isfinite(amount) and amount >= 0):
        raise ConfigError(
            f"--margin must be >= 0 and finite (how much worse a check may get), not {value}",
            code="INVALID_VALUE",
        )
    return amount, relative


def check_options(margin: Margin, confidence: float) -> None:
    """The gate's options are valid: a confidence in [0.5, 1) and margins >= 0 (numbers or ``"N%"``).

    Raises:
        ConfigError: code ``INVALID_VALUE``, naming the option (a run with them could not start).
    """
    from evalnb.errors import ConfigError

    if not (isinstance(confidence, (int, float)) and 0.5 <= confidence < 1.0):
        raise ConfigError(
            f"--confidence must be in [0.5, 1), e.g. 0.95, not {confidence}", code="INVALID_VALUE"
        )
    if isinstance(margin, Mapping):
        for key, value in margin.items():
            if not isinstance(key, str) or not key:
                raise ConfigError(
                    f"--margin CHECK=V needs a check id or name, not {key!r}", code="INVALID_VALUE"
                )
            _one_margin(value)
    else:
        _one_margin(margin)


def margin_for(
    margin: Margin, check_id: str, check: str, scale: Scale | None = None, base: float = math.nan
) -> float:
    """The margin of one check in its units: a number for all, ``"N%"`` of its range (of ``|base|``, the paired
    baseline mean, without a finite range), or a mapping by check id, then name, then ``"*"`` (default 0)."""
    value = (
        margin.get(check_id, margin.get(check, margin.get("*", 0.0)))
        if isinstance(margin, Mapping)
        else margin
    )
    amount, relative = _one_margin(value)
    if not relative:
        return amount
    if scale is not None and scale.bounded:
        return amount * scale.span
    return amount * abs(base) if math.isfinite(base) else 0.0


def parse_margins(values: Sequence[str] | None) -> Margin:
    """The margin of the command line's ``--margin`` options: ``V`` for every check, ``CHECK=V`` for one
    (repeatable); ``V`` is a number in the check's units or ``N%`` of its range.

    Raises:
        ConfigError: ``INVALID_VALUE`` for a value that is not a margin, or two margins for every check.

    Example::

        parse_margins(["0.02", "Relevance=0.2"])
        # {'*': 0.02, 'Relevance': 0.2}
    """
    from evalnb.errors import ConfigError

    if not values:
        return 0.0
    out: dict[str, float | str] = {}
    for text in values:
        key, sep, value = text.rpartition("=")
        key = key.strip() if sep else "*"
        if sep and not key:
            raise ConfigError(
                f"--margin CHECK=V needs a check id or name before '=', not {text!r}", code="INVALID_VALUE"
            )
        if key in out:
            which = "every check" if key == "*" else key
            raise ConfigError(
                f"--margin is given twice for {which}: {out[key]!r} and {value!r}", code="INVALID_VALUE"
            )
        amount, relative = _one_margin(value)
        out[key] = value.strip() if relative else amount
    return out["*"] if list(out) == ["*"] else out


def unknown_margins(margin: Margin, checks: set[str]) -> list[str]:
    """The keys of a margin mapping that name none of ``checks`` (ids and names; ``name#2`` ids count too)."""
    if not isinstance(margin, Mapping):
        return []
    names = checks | {c.split("#", 1)[0] for c in checks}
    return [k for k in margin if k != "*" and k not in names and k.split("#", 1)[0] not in names]


def unit_words(amount: float, scale: Scale | None) -> str:
    """An amount in a check's units, with its unit in words: ``0.02 (2 points of pass rate)``, ``0.20 (on the 1-5
    score)``, ``0.50 (a count)``."""
    if scale is None:
        unit = "in the check's units"
    elif scale.kind == "pass/fail":
        unit = f"{round(amount * 100, 4):g} points of pass rate"
    elif scale.kind == "count":
        unit = "a count"
    else:
        unit = f"on the {scale.label if scale.label.endswith('score') else scale.label + ' scale'}"
    return f"{fmt(amount)} ({unit})"


def margin_words(margin: Margin) -> str:
    """How the report's head names the margin: ``margin 0.02 in each check's units``, ``margin 5% of each
    check's range``, ``margins regex 0.02, Relevance 0.2, others 0``."""

    def one(v: float | str) -> str:
        amount, relative = _one_margin(v)
        return f"{round(amount * 100, 6):g}%" if relative else f"{amount:g}"

    if isinstance(margin, Mapping):
        items = [f"{k} {one(v)}" for k, v in margin.items() if k != "*"]
        items.append(f"others {one(margin.get('*', 0.0))}")
        return "margins " + ", ".join(items) + " (each in its check's units, or % of its range)"
    amount, relative = _one_margin(margin)
    return (
        f"margin {one(margin)} of each check's range"
        if relative
        else f"margin {amount:g} in each check's units"
    )


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


def _state(has_a: np.ndarray, has_b: np.ndarray, sf: SignFlip, g: np.ndarray, m: float, alpha: float) -> str:
    import numpy as np

    if not has_a.any():
        return "new"
    if not has_b.any():
        return "gone"
    if not sf.can_reject(alpha):
        return "too few"
    if bool(np.all(np.abs(g) <= 1e-12)):
        return "no change"
    if sf.min_p(-m) > alpha:
        return "cannot reach"  # too few cases changed for any signs to be significant
    return "tested"


def _bounds(sf: SignFlip, alpha: float, sign: float) -> tuple[float, float]:
    """One-sided (lower, upper) bounds at ``1 - alpha`` of the difference in the check's units."""
    lo, hi = sf.lower(alpha), sf.upper(alpha)
    return (lo, hi) if sign > 0 else (-hi, -lo)


def _degraded_counts(cells: Cells, sl: slice, has_a: np.ndarray, has_b: np.ndarray) -> dict[str, int]:
    """Per side: cases with degraded scores; those left out (nothing left to compare), those without an answer
    (counted as the worst value) and those compared on their other runs."""
    out: dict[str, int] = {}
    for key, side, other in (("a", cells.a, has_b), ("b", cells.b, has_a)):
        deg, unanswered, runs = side.degraded[sl], side.unanswered[sl], side.runs[sl]
        out[f"degraded_{key}"] = int((deg > 0).sum())
        out[f"_left_{key}"] = int(((runs == 0) & (deg > 0) & other).sum())
        out[f"_unanswered_{key}"] = int(((unanswered > 0) & (runs > 0)).sum())
        out[f"_partly_{key}"] = int(((deg > unanswered) & (runs > 0)).sum())
    left = (cells.a.left_out[sl] & (has_b | cells.b.left_out[sl])) | (cells.b.left_out[sl] & has_a)
    out["not_compared"] = int(left.sum())
    return out


def check_tests(
    cells: Cells, *, confidence: float, margin: Margin, draws: int, seed: int
) -> tuple[pd.DataFrame, list[str]]:
    """Per check: means, the paired difference, its bounds and one-sided p-values (before the family).

    Returns the table (without the family-dependent columns filled) and each check's state: ``tested``,
    ``too few``, ``no change``, ``cannot reach``, ``new`` or ``gone``. The private columns (``_gain...``) are
    the difference oriented so that positive is better, for :func:`decide`.
    """
    import numpy as np
    import pandas as pd

    alpha = 1.0 - confidence
    rows, states = [], []
    for k, check_id in enumerate(cells.check_ids):
        sl = cells.check_slice(k)
        scale = cells.scales[k]
        sign = 1.0 if bool(cells.higher[k]) else -1.0
        has_a, has_b = cells.a.runs[sl] > 0, cells.b.runs[sl] > 0
        both = has_a & has_b
        ya, yb = cells.a.y[sl], cells.b.y[sl]
        d = (yb - ya)[both]
        g = sign * d  # positive: better
        mean_a = _nanmean(ya[both])
        m = margin_for(margin, check_id, cells.check_names[k], scale, mean_a)
        sf = SignFlip(g, draws=draws, seed=seed)
        span = scale.span if scale is not None and scale.bounded else math.inf

        def clip(v: float, span: float = span) -> float:
            if math.isnan(v):
                return v
            v = max(-span, min(span, v))
            return v if math.isfinite(v) else math.nan

        state = _state(has_a, has_b, sf, g, m, alpha)
        states.append(state)
        tested = state in ("tested", "no change", "cannot reach")
        lower, upper = _bounds(sf, alpha, sign) if tested else (math.nan, math.nan)
        ci_low, ci_high = _bounds(sf, alpha / 2, sign) if tested else (math.nan, math.nan)
        pa, pb = cells.a.passed[sl], cells.b.passed[sl]
        rows.append(
            {
                "check_id": check_id,
                "check": cells.check_names[k],
                "scale": scale.label if scale is not None else pd.NA,
                "cases": int((has_a | has_b).sum()),
                "paired": int(both.sum()),
                # docs/comparison.md: the printed means are the paired ones, so diff = mean_b - mean_a
                "mean_a": mean_a,
                "mean_b": _nanmean(yb[both]),
                "diff": float(d.mean()) if len(d) else math.nan,
                "lower_bound": clip(lower),
                "upper_bound": clip(upper),
                "ci_low": clip(ci_low),
                "ci_high": clip(ci_high),
                "pass_rate_a": _nanmean(pa[both]),
                "pass_rate_b": _nanmean(pb[both]),
                "pass_rate_diff": _nanmean((pb - pa)[both]),
                "margin": m,
                "p_value": sf.p_below(-m) if tested else math.nan,
                "_p_better": sf.p_above(0.0) if tested else math.nan,
                "_gain": float(g.mean()) if len(g) else math.nan,
                "_gain_lower": clip(sf.lower(alpha)) if tested else math.nan,
                "_gain_upper": clip(sf.upper(alpha)) if tested else math.nan,
                "_changed": int((np.abs(g) > 1e-12).sum()),
                "_worse": int((g < -1e-12).sum()),
                "weighted": bool(cells.weighted[k]),
                "higher_is_better": bool(cells.higher[k]),
                "mean_a_all": _nanmean(ya[has_a]),
                "mean_b_all": _nanmean(yb[has_b]),
                **_degraded_counts(cells, sl, has_a, has_b),
            }
        )
    # the family-dependent columns (p_adjusted onwards) are filled by decide() and finish()
    if not rows:
        return pd.DataFrame(columns=["check_id", "check", "paired", "p_value", "_p_better"]), states
    return pd.DataFrame(rows), states


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


def _verdict(
    state: str, row: pd.Series, p_worse: float, p_better: float, *, alpha: float, conf: str, family: str,
    fail_on_missing: bool, scale: Scale | None,
) -> tuple[str, str]:  # fmt: skip
    """One check's verdict and words, from its state and its oriented difference (positive: better)."""
    gain, lower, upper = (float(row[c]) for c in ("_gain", "_gain_lower", "_gain_upper"))
    margin, paired = float(row["margin"]), int(row["paired"])
    beyond = f", beyond the margin {unit_words(margin, scale)}" if margin > 0 else ""
    if state == "new":
        return "new", "new: measured on the candidate only"
    if state == "gone":
        return "gone", "gone: measured on the baseline only" + (
            "; gates (fail on missing)" if fail_on_missing else ""
        )
    if state == "too few":
        return "too few cases to tell", f"too few cases to tell ({paired} paired case{'s' * (paired != 1)})"
    if state == "no change":
        return "no detectable difference", f"no change on any of the {paired} paired cases"
    if state == "cannot reach":
        changed, worse = int(row["_changed"]), int(row["_worse"])
        head = f"too few cases to tell (only {changed} of the {paired} paired cases changed"
        if worse == 0:
            return "too few cases to tell", head + (
                ", for the better)" if changed == 1 else ", all for the better)"
            )
        if not -lower > 0:  # never "a drop of up to 0.00" beside cases that got worse
            return "too few cases to tell", head + f": {worse} worse, {changed - worse} better)"
        return "too few cases to tell", head + f"; could hide a drop of up to {fmt(-lower)})"
    if p_worse <= alpha:
        return "worse", f"worse by {fmt(-gain)} ({conf} one-sided bound {fmt(-upper)}){beyond}"
    if upper < -margin:
        return "no detectable difference", (
            f"worse by {fmt(-gain)} ({conf} one-sided bound {fmt(-upper)} for this check alone; "
            f"not significant over {family})"
        )
    if upper < 0:
        return "within margin", (
            f"worse by {fmt(-gain)} ({conf} one-sided bound {fmt(-upper)}), not shown to exceed the margin "
            f"{unit_words(margin, scale)}"
        )
    if p_better <= alpha:
        return "better", f"better by {fmt(gain)} ({conf} one-sided bound {fmt(lower)})"
    if lower > 0:
        return "no detectable difference", (
            f"better by {fmt(gain)} ({conf} one-sided bound {fmt(lower)} for this check alone; "
            f"not significant over {family})"
        )
    if lower == 0:
        # the bound itself excludes any drop: "could hide a drop of up to 0.00" would read as a contradiction
        return (
            "no detectable difference",
            f"no detectable difference (the {conf} one-sided bound rules out a drop)",
        )
    return "no detectable difference", f"no detectable difference (could hide a drop of up to {fmt(-lower)})"


def _degraded_words(row: pd.Series, *, fail_on_degraded: bool) -> str:
    """What degraded scores did to this check's comparison, per side (docs/comparison.md, degraded scores)."""
    parts = []
    for key, side in (("b", "candidate"), ("a", "baseline")):
        left, unanswered, partly = (int(row[f"_{w}_{key}"]) for w in ("left", "unanswered", "partly"))
        if left:
            parts.append(f"{_n(left)} degraded on the {side} side: not compared")
        if partly:
            parts.append(f"{_n(partly)} partly degraded on the {side} side: compared on their other runs")
        if unanswered:
            parts.append(f"{_n(unanswered)} without an answer on the {side} side: counted as the worst value")
    if fail_on_degraded and int(row["degraded_b"]):
        parts.append("gates (fail on degraded)")
    return "".join(f"; {p}" for p in parts)


def _n(cases: int) -> str:
    return f"{cases} case{'s' * (cases != 1)}"


def decide(
    table: pd.DataFrame,
    states: list[str],
    p_worse: np.ndarray,
    p_better: np.ndarray,
    *,
    confidence: float,
    family: str,
    fail_on_missing: bool,
    fail_on_degraded: bool = False,
) -> pd.DataFrame:
    """Fill ``p_adjusted``, ``verdict``, ``gates`` and ``words`` from the family's adjusted p-values."""
    from evalnb.checks.scales import scale_of

    alpha = 1.0 - confidence
    conf = f"{confidence:.0%}" if round(confidence * 100, 6).is_integer() else f"{confidence:.1%}"
    out = table.copy()
    verdicts, words, gates = [], [], []
    for i, state in enumerate(states):
        row = out.iloc[i]
        v, w = _verdict(
            state, row, p_worse[i], p_better[i], alpha=alpha, conf=conf, family=family,
            fail_on_missing=fail_on_missing, scale=scale_of(str(row["check"])),
        )  # fmt: skip
        verdicts.append(v)
        words.append(w + _degraded_words(row, fail_on_degraded=fail_on_degraded))
        degraded_gate = fail_on_degraded and int(row["degraded_b"]) > 0
        gates.append(v == "worse" or (v == "gone" and fail_on_missing) or degraded_gate)
    out["p_adjusted"] = p_worse
    out["verdict"] = verdicts
    out["gates"] = gates
    out["words"] = words
    return out


def finish(table: pd.DataFrame, counts: pd.DataFrame) -> pd.DataFrame:
    """Add the per-case counts (regressed, improved, significant) and conform to ``CHECK_COLUMNS``."""
    private = [c for c in table.columns if c.startswith("_")]
    out = table.drop(columns=private).merge(counts, on="check_id", how="left")
    for c in ("regressed", "improved", "significant"):
        out[c] = out[c].fillna(0)
    return out.reindex(columns=list(CHECK_COLUMNS)).astype(CHECK_COLUMNS)


def family_words(n_tested: int, n_suites: int, n_checks: int | None = None) -> str:
    """How the words name the family of tests: "the 6 checks compared", "the 9 checks of 3 suites compared",
    or, when some checks could never reach the level (too few changed cases: they stay out of the family),
    "the 1 check that could reach the level, of the 4 checks of 3 suites compared"."""
    total = n_tested if n_checks is None else n_checks
    suites = f" of {n_suites} suites" if n_suites > 1 else ""
    checks = f"{total} check{'s' * (total != 1)}"
    if n_tested == 0:
        return f"no check: none of the {checks}{suites} compared could reach the level"
    if n_tested == total:
        return f"the {checks}{suites} compared"
    tested = f"{n_tested} check{'s' * (n_tested != 1)}"
    return f"the {tested} that could reach the level, of the {checks}{suites} compared"


def check_line(r: Any) -> str:
    """One check of the report: ``rows (0-1): mean per case 0.940 -> 0.810 over 40 paired cases; worse ...``."""
    import pandas as pd

    from evalnb.checks.scales import scale_of

    tags = [r.scale] if isinstance(r.scale, str) else []
    if r.weighted is not pd.NA and bool(r.weighted):
        tags.append("weighted")
    if r.higher_is_better is not pd.NA and not bool(r.higher_is_better):
        tags.append("lower is better")
    joined = ", ".join(tags)
    head = f"{r.check_id} ({joined})" if tags else str(r.check_id)
    if r.verdict in ("new", "gone"):
        return f"{head}: {r.words}"
    text = (
        f"{head}: mean per case {_num3(r.mean_a)} -> {_num3(r.mean_b)} over {r.paired} paired "
        f"case{'s' * int(r.paired != 1)}"
    )
    if r.cases != r.paired:
        # docs/comparison.md: the paired means are the ones compared; the others said apart, never mixed in
        text += (
            f" (every case of each side: {_num3(r.mean_a_all)} -> {_num3(r.mean_b_all)}; {r.cases - r.paired} "
            f"case{'s' * int(r.cases - r.paired != 1)} on one side only or not compared)"
        )
    if r.margin > 0:
        text += f", margin {unit_words(float(r.margin), scale_of(str(r.check)))}"
    return f"{text}; {r.words}"


def _num3(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if math.isnan(f) else f"{f:.3f}"
