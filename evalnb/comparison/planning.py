"""Power planning: how many cases and runs the gate needs to catch a given drop.

The gate tests the mean of the paired per-case differences ``d_i = b_i - a_i``. Its power depends on their
variance, which has two parts: the run-to-run noise of both versions (``(v_a + v_b) / runs``) and how much
the drop itself varies between cases. A drop spread evenly over every case adds little; the same drop
concentrated in a few cases (they break, the rest stay) adds a lot, and a plan that ignores it promises
power it does not deliver. :func:`power` models both from the baseline:

* the candidate is the baseline with each affected case's value moved toward the bottom of its scale by a
  factor ``1 - c``; ``affected`` is the share of cases that carry the drop (1.0: spread over every case;
  0.2: a fifth of the cases carry all of it), and ``c = drop / (affected * mean headroom)``;
* pass/fail runs stay Bernoulli (a case passing with probability ``p`` passes with ``p (1 - c)``), other
  values shrink with their noise;
* ``Var(d) = (E[v_a] + E[v_b]) / runs + Var(effect)``, with the moments of the baseline's per-case means
  corrected for their own run noise;
* the sign-flip test rejects at level ``alpha / checks`` (Holm's first step, so the promise holds for a drop
  in any one check of the family) once ``sqrt(n) * drop / sd > t[n-1] * sqrt(1 + drop^2 / sd^2)``.

With one run per case in the baseline, run-to-run noise and case-to-case spread cannot be told apart; the
plan takes whichever split needs more cases, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import scale_of
from evalnb.comparison.frames import build_cells
from evalnb.comparison.stats import norm_sf, t_isf
from evalnb.comparison.verdicts import check_options

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PowerPlan", "power"]

_MAX_RUNS = 100
_MAX_CASES = 10**7


@dataclass(frozen=True)
class _Moments:
    """What a check's baseline says about its cases (values relative to the scale's floor)."""

    check_id: str
    scale: str | None
    cases: int
    runs: float
    mean: float
    headroom: float  # E[mu - low]
    second: tuple[float, ...]  # candidate values of E[(mu - low)^2] (two when one run cannot tell)
    within: tuple[float, ...]  # matching values of E[v]
    binary: bool

    def sd(self, drop: float, affected: float, runs: float) -> float:
        """Standard deviation of a case's paired difference under the drop model (the worse split)."""
        c = drop / (affected * self.headroom) if self.headroom > 0 else math.inf
        worst = 0.0
        for e2, ev in zip(self.second, self.within, strict=True):
            keep = affected * (1 - c) ** 2 + (1 - affected)
            ev_b = self.headroom - drop - e2 * keep if self.binary else ev * keep
            effect = c * c * (affected * e2 - affected**2 * self.headroom**2)
            worst = max(worst, (ev + max(ev_b, 0.0)) / runs + max(effect, 0.0))
        return math.sqrt(worst)


def _power(
    m: _Moments, drop: float, affected: float, cases: int, runs: float, *, alpha: float, margin: float
) -> float:
    effect = drop - margin
    if effect <= 0 or cases < 2 or 2.0 ** (-cases) > alpha:
        return 0.0 if effect > 0 else math.nan
    sd = m.sd(drop, affected, runs)
    if sd == 0:
        return 1.0
    crit = t_isf(alpha, cases - 1)
    # Pass/fail differences sit on a lattice of step 1/runs, so the sum the test flips moves in steps of
    # 2/runs and an exact test must clear half a step more than the normal curve says (a continuity
    # correction; without it the plan promises power the conservative discrete test does not deliver).
    step = 1.0 / runs if m.binary and margin == 0 else 0.0
    z = (math.sqrt(cases) * effect - crit * math.sqrt(sd**2 + effect**2) - step / math.sqrt(cases)) / sd
    return 1.0 - norm_sf(z)


@dataclass
class PowerPlan:
    """What the gate can detect on a suite like the baseline, per check (see :func:`power`).

    Attributes:
        table: one row per check: ``check_id, scale, cases, runs, mean, sd_within, sd_between, drop,
            affected, sd_diff, power, cases_needed, cases_needed_one_run, one_run_factor, runs_needed,
            detectable``. ``power`` is at the baseline's size with ``plan_runs`` runs; ``cases_needed`` is at
            ``plan_runs`` runs, ``cases_needed_one_run`` at one; ``runs_needed`` at the baseline's number of
            cases (``<NA>`` when no number of runs gets there: the drop varies too much between cases);
            ``detectable`` is the smallest drop detected at the baseline's size.
        confidence: one-sided confidence of the gate.
        target: the wanted power.
        margin: the gate's margin.
        checks: the family size the gate corrects for.
        plan_runs: runs per case the plan is for.
        notes: caveats the report prints.
    """

    table: pd.DataFrame
    confidence: float
    target: float
    margin: float
    checks: int
    plan_runs: int
    notes: list[str] = field(default_factory=list)
    _moments: dict[str, _Moments] = field(default_factory=dict, repr=False)

    @property
    def _alpha(self) -> float:
        return (1 - self.confidence) / max(self.checks, 1)

    def _each(self, fn: Any, name: str, dtype: str) -> pd.Series:
        import pandas as pd

        values = [fn(m) for m in self._moments.values()]
        return pd.Series(values, index=pd.Index(list(self._moments), name="check_id"), name=name, dtype=dtype)

    def power_at(
        self, cases: int, runs: int, *, drop: float | None = None, affected: float | None = None
    ) -> pd.Series:
        """The promised power per check with ``cases`` cases and ``runs`` runs per case.

        Example::

            evalnb.power(baseline, drop=0.1).power_at(100, 3)
        """
        return self._each(
            lambda m: _power(
                m,
                self._drop(m, drop),
                self._affected(affected),
                cases,
                runs,
                alpha=self._alpha,
                margin=self.margin,
            ),
            "power",
            "float64",
        )

    def cases_needed(
        self, *, runs: int | None = None, drop: float | None = None, affected: float | None = None
    ) -> pd.Series:
        """Cases needed per check to detect the drop with the target power (``runs`` runs per case).

        Example::

            evalnb.power(baseline, drop=0.1).cases_needed(runs=1)
        """
        r = self.plan_runs if runs is None else runs
        return self._each(
            lambda m: _cases(m, self._drop(m, drop), self._affected(affected), r, self),
            "cases_needed",
            "Int64",
        )

    def runs_needed(
        self, *, cases: int | None = None, drop: float | None = None, affected: float | None = None
    ) -> pd.Series:
        """Runs per case needed per check with ``cases`` cases (default the baseline's); ``<NA>`` if none do."""
        return self._each(
            lambda m: _runs(m, self._drop(m, drop), self._affected(affected), cases or m.cases, self),
            "runs_needed",
            "Int64",
        )

    def detectable(
        self, *, cases: int | None = None, runs: int | None = None, affected: float | None = None
    ) -> pd.Series:
        """The smallest drop per check detected with the target power at that size (default the baseline's)."""
        r = self.plan_runs if runs is None else runs
        return self._each(
            lambda m: _detectable(m, self._affected(affected), cases or m.cases, r, self),
            "detectable",
            "float64",
        )

    def _drop(self, m: _Moments, drop: float | None) -> float:
        if drop is not None:
            return float(drop)
        return float(self.table.set_index("check_id").loc[m.check_id, "drop"])

    def _affected(self, affected: float | None) -> float:
        return (
            float(self.table["affected"].iloc[0])
            if affected is None and len(self.table)
            else float(affected or 1.0)
        )

    def report(self) -> str:
        """The plan in words, per check.

        Example::

            print(evalnb.power(baseline, drop=0.05).report())
        """
        t = self.table
        if t.empty:
            return "Power plan: the baseline has no checks"
        share = float(t["affected"].iloc[0])
        spread = "spread over every case" if share >= 1 else f"concentrated in {share:.0%} of the cases"
        first = t.iloc[0]
        lines = [
            f"Power plan from {int(first['cases'])} baseline cases x {_runs_words(float(first['runs']))} "
            f"(one-sided {self.confidence:.0%}, Holm over {self.checks} check{'s' * (self.checks != 1)}, "
            f"{self.target:.0%} power), for a drop {spread}:"
        ]
        for r in t.itertuples(index=False):
            scale = f"{r.scale}, " if isinstance(r.scale, str) else ""
            head = f"  {r.check_id} ({scale}mean {r.mean:.2f}), a drop of {r.drop:.2f}: "
            if _na(r.cases_needed):
                lines.append(head + "not detectable at any size under this model")
                continue
            text = (
                f"{_n(r.cases, 'case')} x {_n(self.plan_runs, 'run')} detect it with {r.power:.0%} power; "
                f"{self.target:.0%} needs {r.cases_needed} cases x {self.plan_runs} runs"
            )
            if not _na(r.cases_needed_one_run):
                text += (
                    f", or {r.cases_needed_one_run} cases x 1 run (one run per case needs "
                    f"{r.one_run_factor:.1f}x the cases)"
                )
            text += f"; with {_n(r.cases, 'case')}: " + (
                "no number of runs is enough" if _na(r.runs_needed) else f"{r.runs_needed} runs per case"
            )
            if not math.isnan(r.detectable):
                text += f"; detectable at {r.cases} x {self.plan_runs}: {r.detectable:.2f}"
            lines.append(head + text)
        lines.extend(self.notes)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.report())}</pre>" + self.table.to_html(
            index=False, na_rep="", float_format=lambda v: f"{v:.3f}"
        )

    def __repr__(self) -> str:
        return self.report()


def _na(v: Any) -> bool:
    import pandas as pd

    return v is None or bool(pd.isna(v))


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'s' * int(count != 1)}"


def _runs_words(runs: float) -> str:
    return f"{runs:g} run{'s' * (runs != 1)}" if float(runs).is_integer() else f"{runs:.1f} runs (mean)"


def _cases(m: _Moments, drop: float, affected: float, runs: float, plan: PowerPlan) -> int | None:
    alpha = plan._alpha

    def ok(n: int) -> bool:
        return _power(m, drop, affected, n, runs, alpha=alpha, margin=plan.margin) >= plan.target

    lo = max(2, math.ceil(math.log2(1 / alpha)))
    if not ok(_MAX_CASES):
        return None
    if ok(lo):
        return lo
    hi = lo
    while not ok(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _runs(m: _Moments, drop: float, affected: float, cases: int, plan: PowerPlan) -> int | None:
    for r in range(1, _MAX_RUNS + 1):
        if _power(m, drop, affected, cases, r, alpha=plan._alpha, margin=plan.margin) >= plan.target:
            return r
    return None


def _detectable(m: _Moments, affected: float, cases: int, runs: float, plan: PowerPlan) -> float:
    top = affected * m.headroom  # the largest drop the model can make: the affected cases hit the floor
    if _power(m, top, affected, cases, runs, alpha=plan._alpha, margin=plan.margin) < plan.target:
        return math.nan
    lo, hi = plan.margin, top
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _power(m, mid, affected, cases, runs, alpha=plan._alpha, margin=plan.margin) >= plan.target:
            hi = mid
        else:
            lo = mid
    return hi


def _moments(
    check_id: str, scale_name: str | None, runs: list[Any], low: float | None, binary_scale: bool
) -> _Moments:
    import numpy as np

    runs = [r for r in runs if len(r)]
    values = np.concatenate(runs)
    lo = float(low) if low is not None and math.isfinite(low) else float(min(0.0, values.min()))
    binary = bool(np.isin(values, (0.0, 1.0)).all()) and (binary_scale or lo == 0.0)
    means = np.array([r.mean() for r in runs]) - lo
    counts = np.array([len(r) for r in runs], dtype=float)
    multi = counts >= 2
    headroom = float(means.mean())
    seconds: tuple[float, ...]
    withins: tuple[float, ...]
    if multi.any():
        s2 = np.array([r.var(ddof=1) for r, k in zip(runs, multi, strict=True) if k])
        within = float(s2.mean())
        # E[mu^2] = E[mean^2] - E[v / r]: each case mean carries its own run noise
        second = float(np.mean(means**2) - np.mean(s2 / counts[multi]))
        seconds, withins = (max(second, headroom**2),), (within,)
    else:
        # one run per case: run-to-run and case-to-case spread cannot be told apart; try both ends
        raw2 = float(np.mean(means**2))
        if binary:
            seconds = (headroom**2, raw2)
            withins = tuple(headroom - s for s in seconds)
        else:
            total = float(means.var(ddof=1)) if len(means) > 1 else 0.0
            seconds = (max(raw2 - total, headroom**2), raw2)
            withins = (total, 0.0)
    return _Moments(
        check_id=check_id,
        scale=scale_name,
        cases=len(runs),
        runs=float(counts.mean()),
        mean=headroom + lo,
        headroom=headroom,
        second=seconds,
        within=withins,
        binary=binary,
    )


def power(
    baseline: Any,
    *,
    drop: float | None = None,
    affected: float = 1.0,
    runs: int = 3,
    power: float = 0.8,
    confidence: float = 0.95,
    margin: float = 0.0,
    checks: int | None = None,
) -> PowerPlan:
    """Plan a comparison: how many cases and runs detect a drop of ``drop`` with ``power``, per check.

    Args:
        baseline: a ``Result`` or scores frame of the baseline (several runs per case tell run-to-run noise
            from case-to-case spread; with one run the plan assumes the worse of the two).
        drop: the drop to detect, in the check's units (default: 5% of the check's range, e.g. 5 points of
            pass rate or 0.2 on a 1-5 score).
        affected: the share of cases that carry the drop: 1.0 spreads it over every case, 0.2 concentrates it
            in a fifth of them (needs more cases: the effect varies between cases).
        runs: runs per case the plan is for.
        power: the wanted chance to detect the drop.
        confidence: the gate's one-sided confidence.
        margin: the gate's margin (the drop beyond it is what is detected).
        checks: how many checks the gate corrects for (default: the baseline's checks).

    Returns:
        A :class:`PowerPlan`; ``.report()`` says it in words, ``.table`` per check.

    Example::

        plan = evalnb.power(baseline, drop=0.1)
        plan.table[["check_id", "cases_needed", "cases_needed_one_run", "runs_needed"]]
        plan.cases_needed(runs=5, drop=0.05)
    """
    import pandas as pd

    if not 0 < affected <= 1:
        raise ValueError(f"affected must be in (0, 1], got {affected}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    check_options(margin, confidence)
    cells = build_cells(baseline, baseline)
    values = cells.a.run_values()
    moments: dict[str, _Moments] = {}
    for k, check_id in enumerate(cells.check_ids):
        per_case = values[cells.check_slice(k)]
        if not any(len(r) for r in per_case):
            continue
        scale = cells.scales[k] or scale_of(cells.check_names[k])
        moments[check_id] = _moments(
            check_id,
            scale.label if scale else None,
            list(per_case),
            scale.low if scale else None,
            bool(scale and scale.kind == "pass/fail") or bool(cells.pass_only[k]),
        )
    plan = PowerPlan(
        table=pd.DataFrame(),
        confidence=confidence,
        target=power,
        margin=margin,
        checks=checks or max(len(moments), 1),
        plan_runs=runs,
        _moments=moments,
    )
    rows = []
    for check_id, m in moments.items():
        k = cells.check_ids.index(check_id)
        scale = cells.scales[k]
        d = (
            float(drop)
            if drop is not None
            else 0.05 * (scale.span if scale and scale.bounded else max(m.mean, 1.0))
        )
        floor_share = d / m.headroom if m.headroom > 0 else math.inf
        if floor_share > affected + 1e-12:
            raise ValueError(
                f"{check_id}: a drop of {d:g} cannot sit in {affected:.0%} of the cases (their mean is only "
                f"{m.headroom:.3g} above the bottom of the scale); the smallest share is {min(floor_share, 1):.0%}"
            )
        sd = m.sd(d, affected, runs)
        needed = _cases(m, d, affected, runs, plan)
        one = _cases(m, d, affected, 1, plan)
        rows.append(
            {
                "check_id": check_id,
                "scale": m.scale,
                "cases": m.cases,
                "runs": m.runs,
                "mean": m.mean,
                "sd_within": math.sqrt(max(max(m.within), 0.0)),
                "sd_between": math.sqrt(max(max(m.second) - m.headroom**2, 0.0)),
                "drop": d,
                "affected": affected,
                "sd_diff": sd,
                "power": _power(m, d, affected, m.cases, runs, alpha=plan._alpha, margin=margin),
                "cases_needed": needed,
                "cases_needed_one_run": one,
                "one_run_factor": (one / needed) if needed and one else math.nan,
                "runs_needed": _runs(m, d, affected, m.cases, plan),
                "detectable": _detectable(m, affected, m.cases, runs, plan),
            }
        )
    dtypes = {
        "check_id": "string",
        "scale": "string",
        "cases": "Int64",
        "runs": "float64",
        "mean": "float64",
        "sd_within": "float64",
        "sd_between": "float64",
        "drop": "float64",
        "affected": "float64",
        "sd_diff": "float64",
        "power": "float64",
        "cases_needed": "Int64",
        "cases_needed_one_run": "Int64",
        "one_run_factor": "float64",
        "runs_needed": "Int64",
        "detectable": "float64",
    }
    plan.table = pd.DataFrame(rows, columns=list(dtypes)).astype(dtypes)
    if any(len(m.second) > 1 for m in moments.values()):
        plan.notes.append(
            "Note: the baseline has one run per case, so run-to-run noise and case-to-case spread cannot be told "
            "apart; the plan assumes whichever needs more cases (a baseline with 2+ runs per case plans tighter)."
        )
    return plan
