"""Power planning: how many cases and runs the gate needs to catch a given drop.

The gate tests the mean of the paired per-case differences ``d_i = b_i - a_i``. Its power depends on their
variance, which has two parts: the run-to-run noise of both versions (``(v_a + v_b) / runs``) and how much
the drop itself varies between cases. A drop spread evenly over every case adds little; the same drop
concentrated in a few cases (they break, the rest stay) adds a lot, and a plan that ignores it promises
power it does not deliver. :func:`power` models both from the baseline:

* the candidate is the baseline with each affected case's value moved toward the worst value of its scale by
  a factor ``1 - c``; ``affected`` is the share of cases that carry the drop (1.0: spread over every case;
  0.2: a fifth of the cases carry all of it);
* the affected cases are any cases, ``c = drop / (affected * mean headroom)``, while they can carry the drop
  that way; a drop too large for that ("a few cases break": 10 points carried by 10% of the cases) is carried
  by cases that have that much to lose: the affected cases are drawn from the ``from_top`` share of cases with
  the most headroom (the best ones), just enough of them that breaking completely (``c = 1``) makes the drop.
  A drop more than even the best ``affected`` share can lose cannot be planned, and the plan says so;
* pass/fail runs stay Bernoulli (a case passing with probability ``p`` passes with ``p (1 - c)``), other
  values shrink with their noise;
* ``Var(d) = (E[v_a] + E[v_b]) / runs + Var(effect)``, with the moments of the baseline's per-case means
  corrected for their own run noise;
* the sign-flip test rejects at level ``alpha / checks`` (Holm's first step, so the promise holds for a drop
  in any one check of the family) once ``sqrt(n) * drop / sd > t[n-1] * sqrt(1 + drop^2 / sd^2)``.

A lower-is-better check is planned on its values turned around (a drop is a rise); one without a finite worst
value (a lower-is-better count) moves each affected case by the same amount. With one run per case in the
baseline, run-to-run noise and case-to-case spread cannot be told apart; the plan takes whichever split needs
more cases, and says so. A check the plan cannot plan (it is at the worst value of its scale already, has no
value in the baseline, or the drop cannot sit in so few cases) is listed by name with the reason; the others
are planned.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import scale_of
from evalnb.comparison._frames import build_cells
from evalnb.comparison._stats import norm_sf, t_isf
from evalnb.comparison._verdicts import Margin, check_options, fmt, margin_for

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["PowerPlan", "power"]

_MAX_RUNS = 100
_MAX_CASES = 10**7
_TINY = 1e-12


@dataclass(frozen=True)
class _Split:
    """One reading of the baseline's cases: per case (most headroom first) the mean above the worst value
    ``h``, its square corrected for run noise ``mu2``, and the run-to-run variance ``v``."""

    h: np.ndarray
    mu2: np.ndarray
    v: np.ndarray

    def top(self, share: float) -> tuple[float, float, float]:
        """``E[h], E[mu^2], E[v]`` over the ``share`` of cases with the most headroom (a fraction of a case
        counts by its part, so the means move smoothly with the share)."""
        import numpy as np

        n = len(self.h)
        k = min(max(share, 0.0), 1.0) * n
        whole = math.floor(k + 1e-9)
        part = 0.0 if whole >= n else k - whole
        out = []
        for x in (self.h, self.mu2, self.v):
            total = float(np.sum(x[:whole])) + (part * float(x[whole]) if part > 0 else 0.0)
            out.append(total / k if k > 0 else math.nan)
        h, mu2, v = out
        return h, max(mu2, h * h), v


@dataclass(frozen=True)
class _Moments:
    """What a check's baseline says about its cases (values oriented: a drop goes toward the worst value)."""

    check_id: str
    scale: str | None
    cases: int
    runs: float
    mean: float  # in the check's units
    binary: bool
    additive: bool  # no finite worst value: an affected case moves by the same amount
    splits: tuple[_Split, ...]  # two when one run per case cannot tell run noise from case spread
    margin: float = 0.0  # the gate's margin for this check, in its units

    @property
    def headroom(self) -> float:
        return self.splits[0].top(1.0)[0]

    def max_drop(self, affected: float) -> float:
        """The largest drop ``affected`` of the cases can carry: the best of them falling to the worst value."""
        if self.additive:
            return math.inf
        return max(affected * sp.top(affected)[0] for sp in self.splits)

    def placement(self, sp: _Split, drop: float, affected: float) -> tuple[float, float] | None:
        """``(from_top, c)``: the share of best cases the affected ones are drawn from, and how much of their
        headroom they lose; ``None`` when this reading of the baseline cannot carry the drop."""
        whole = affected * sp.top(1.0)[0]
        if whole >= drop - _TINY:
            return 1.0, (drop / whole if whole > 0 else 0.0)
        if affected * sp.top(affected)[0] < drop - _TINY:
            return None
        lo, hi = affected, 1.0  # the largest share whose best cases still carry the drop by breaking
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if affected * sp.top(mid)[0] >= drop else (lo, mid)
        return lo, min(1.0, drop / (affected * sp.top(lo)[0]))

    def from_top(self, drop: float, affected: float) -> float:
        """The share of best cases the affected ones are drawn from (1.0: any case), as the first reading says."""
        if self.additive:
            return 1.0
        placed = self.placement(self.splits[0], drop, affected)
        return math.nan if placed is None else placed[0]

    def sd(self, drop: float, affected: float, runs: float) -> float:
        """Standard deviation of a case's paired difference under the drop model (the worse reading)."""
        worst = -1.0
        for sp in self.splits:
            h, s2, w = sp.top(1.0)
            if self.additive:
                worst = max(worst, 2 * w / runs + drop * drop * (1 / affected - 1))
                continue
            placed = self.placement(sp, drop, affected)
            if placed is None:
                continue  # this reading cannot make the drop: the other one describes the baseline
            share, c = placed
            _, st, wt = sp.top(share)
            lost = 1 - (1 - c) ** 2
            ev_b = h - drop - (s2 - affected * st * lost) if self.binary else w - affected * wt * lost
            effect = affected * c * c * st - drop * drop
            worst = max(worst, (w + max(ev_b, 0.0)) / runs + max(effect, 0.0))
        return math.sqrt(worst) if worst >= 0 else math.nan


def _power(
    m: _Moments, drop: float, affected: float, cases: int, runs: float, *, alpha: float, margin: float
) -> float:
    effect = drop - margin
    if effect <= 0 or cases < 2 or 2.0 ** (-cases) > alpha:
        return 0.0 if effect > 0 else math.nan
    sd = m.sd(drop, affected, runs)
    if math.isnan(sd):
        return math.nan
    if sd == 0:
        return 1.0
    crit = t_isf(alpha, cases - 1)
    # Pass/fail differences sit on a lattice of step 1/runs, so the sum the test flips moves in steps of
    # 2/runs and an exact test must clear half a step more than the normal curve says (a continuity
    # correction; without it the plan promises power the conservative discrete test does not deliver).
    step = 1.0 / runs if m.binary and margin == 0 else 0.0
    z = (math.sqrt(cases) * effect - crit * math.sqrt(sd**2 + effect**2) - step / math.sqrt(cases)) / sd
    return 1.0 - norm_sf(z)


#: The per-check table's columns and dtypes, in order.
PLAN_COLUMNS: dict[str, str] = {
    "check_id": "string",
    "scale": "string",
    "cases": "Int64",
    "runs": "float64",
    "mean": "float64",
    "sd_within": "float64",
    "sd_between": "float64",
    "drop": "float64",
    "affected": "float64",
    "margin": "float64",
    "sd_diff": "float64",
    "power": "float64",
    "cases_needed": "Int64",
    "cases_needed_one_run": "Int64",
    "one_run_factor": "float64",
    "runs_needed": "Int64",
    "detectable": "float64",
    "from_top": "float64",
    "higher_is_better": "boolean",
    "plannable": "boolean",
    "reason": "string",
}


@dataclass
class PowerPlan:
    """What the gate can detect on a suite like the baseline, per check (see :func:`power`).

    Attributes:
        table: one row per check: ``check_id, scale, cases, runs, mean, sd_within, sd_between, drop,
            affected, margin, sd_diff, power, cases_needed, cases_needed_one_run, one_run_factor, runs_needed,
            detectable, from_top, higher_is_better, plannable, reason``. ``power`` is at the baseline's size
            with ``plan_runs`` runs; ``cases_needed`` is at ``plan_runs`` runs, ``cases_needed_one_run`` at one;
            ``runs_needed`` at the baseline's number of cases (``<NA>`` when no number of runs gets there: the
            drop varies too much between cases); ``detectable`` is the smallest drop detected at the baseline's
            size; ``from_top`` the share of best cases the affected ones are drawn from (1.0: any case; less
            when only the best cases have that much to lose); ``plannable`` false with the ``reason`` for a
            check the plan cannot plan (its numbers are ``<NA>``).
        confidence: one-sided confidence of the gate.
        target: the wanted power.
        margin: the gate's margin as given (``table["margin"]``: each check's, in its units).
        checks: the family size the gate corrects for.
        plan_runs: runs per case the plan is for.
        notes: caveats the report prints.
    """

    table: pd.DataFrame
    confidence: float
    target: float
    margin: Margin
    checks: int
    plan_runs: int
    notes: list[str] = field(default_factory=list)
    _moments: dict[str, _Moments] = field(default_factory=dict, repr=False)

    @property
    def _alpha(self) -> float:
        return (1 - self.confidence) / max(self.checks, 1)

    @property
    def unplanned(self) -> dict[str, str]:
        """The checks the plan could not plan, with the reason: ``{check_id: reason}``."""
        t = self.table
        off = t[~t["plannable"].fillna(False).astype(bool)]
        return dict(zip(off["check_id"].tolist(), off["reason"].fillna("").tolist(), strict=True))

    def _each(self, fn: Any, name: str, dtype: str) -> pd.Series:
        import pandas as pd

        ids = self.table["check_id"].tolist()
        values = [fn(self._moments[c]) if c in self._moments else None for c in ids]
        return pd.Series(values, index=pd.Index(ids, name="check_id"), name=name, dtype=dtype)

    def power_at(
        self, cases: int, runs: int, *, drop: float | None = None, affected: float | None = None
    ) -> pd.Series:
        """The promised power per check with ``cases`` cases and ``runs`` runs per case (``NaN`` for a check
        the plan cannot plan).

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
                margin=m.margin,
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
        if affected is not None:
            return float(affected)
        return float(self.table["affected"].iloc[0]) if len(self.table) else 1.0

    def report(self) -> str:
        """The plan in words, per check; the checks it cannot plan are named with the reason.

        Example::

            print(evalnb.power(baseline, drop=0.05).report())
        """
        t = self.table
        if t.empty:
            return "Power plan: the baseline has no checks"
        share = float(t["affected"].iloc[0])
        spread = "spread over every case" if share >= 1 else f"carried by {share:.0%} of the cases"
        first = t.iloc[0]
        planned = int(t["plannable"].fillna(False).astype(bool).sum())
        lines = [
            f"Power plan from {int(first['cases'])} baseline cases x {_runs_words(float(first['runs']))} "
            f"(one-sided {self.confidence:.0%}, Holm over {self.checks} check{'s' * (self.checks != 1)}, "
            f"{self.target:.0%} power), for a drop {spread}:"
        ]
        if planned == 0:
            lines[0] = lines[0][:-1] + f"; no check can be planned ({len(t)} listed):"
        for r in t.itertuples(index=False):
            lines.append("  " + _plan_line(r, self))
        lines.extend(self.notes)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.report())}</pre>" + self.table.to_html(
            index=False, na_rep="", float_format=lambda v: f"{v:.3f}"
        )

    def __repr__(self) -> str:
        return self.report()


def _plan_line(r: Any, plan: PowerPlan) -> str:
    """One check of the plan in words."""
    scale = f"{r.scale}, " if isinstance(r.scale, str) else ""
    if not _na(r.higher_is_better) and not r.higher_is_better:
        scale += "lower is better, "
    mean = "no values" if _na(r.mean) else f"mean {r.mean:.2f}"
    head = f"{r.check_id} ({scale}{mean}), a drop of {fmt(r.drop)}: "
    if not r.plannable:
        return head + f"cannot be planned: {r.reason}"
    if _na(r.cases_needed):
        return head + "not detectable at any size under this model"
    if not _na(r.from_top) and r.from_top < 1:
        head += f"the cases that break are among the {r.from_top:.0%} with the most to lose; "
    text = (
        f"{_n(r.cases, 'case')} x {_n(plan.plan_runs, 'run')} detect it with {r.power:.0%} power; "
        f"{plan.target:.0%} needs {r.cases_needed} cases x {_n(plan.plan_runs, 'run')}"
    )
    if not _na(r.cases_needed_one_run):
        text += (
            f", or {r.cases_needed_one_run} cases x 1 run (one run per case needs "
            f"{r.one_run_factor:.1f}x the cases)"
        )
    text += f"; with {_n(r.cases, 'case')}: " + (
        "no number of runs is enough" if _na(r.runs_needed) else f"{_n(r.runs_needed, 'run')} per case"
    )
    if not math.isnan(r.detectable):
        # a baseline without run-to-run noise detects any drop the model makes: say that, not "7.1e-17"
        small = r.detectable <= r.margin + 1e-9
        text += f"; detectable at {r.cases} x {plan.plan_runs}: " + (
            "any drop (the baseline shows no run-to-run noise)" if small else fmt(r.detectable)
        )
    return head + text


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
        return _power(m, drop, affected, n, runs, alpha=alpha, margin=m.margin) >= plan.target

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
        if _power(m, drop, affected, cases, r, alpha=plan._alpha, margin=m.margin) >= plan.target:
            return r
    return None


def _detectable(m: _Moments, affected: float, cases: int, runs: float, plan: PowerPlan) -> float:
    def ok(d: float) -> bool:
        return _power(m, d, affected, cases, runs, alpha=plan._alpha, margin=m.margin) >= plan.target

    top = m.max_drop(affected)  # the largest drop the model can make: the affected cases hit the floor
    if not math.isfinite(top):  # no worst value: search upwards
        top = max(m.margin, 1e-9) * 2 + max(m.splits[0].top(1.0)[2], 1.0)
        for _ in range(60):
            if ok(top):
                break
            top *= 2
    if not ok(top):
        return math.nan
    lo, hi = m.margin, top
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _moments(
    check_id: str, scale_name: str | None, runs: list[Any], low: float | None, binary_scale: bool,
    *, higher: bool = True,
) -> _Moments:  # fmt: skip
    """The moments of one check's baseline; ``low`` is the worst value of its scale, in oriented values
    (``-high`` for a lower-is-better check), ``None`` or ``-inf`` when there is none."""
    import numpy as np

    sign = 1.0 if higher else -1.0
    runs = [sign * r for r in runs if len(r)]
    values = np.concatenate(runs)
    if low is None and higher:
        low = float(min(0.0, values.min()))  # an undeclared scale: from 0, or its lowest value
    additive = low is None or not math.isfinite(low)
    lo = 0.0 if additive else float(low)  # type: ignore[arg-type]
    binary = higher and bool(np.isin(values, (0.0, 1.0)).all()) and (binary_scale or lo == 0.0)
    means = np.array([r.mean() for r in runs]) - lo
    counts = np.array([len(r) for r in runs], dtype=float)
    multi = counts >= 2
    order = np.argsort(-means, kind="stable")
    means, counts = means[order], counts[order]
    multi = multi[order]
    per_case = [runs[i] for i in order]
    splits: tuple[_Split, ...]
    if multi.any():
        s2 = np.array([r.var(ddof=1) if len(r) >= 2 else np.nan for r in per_case])
        v = np.where(multi, s2, float(np.nanmean(s2)))
        # E[mu^2] = E[mean^2] - E[v / r]: each case mean carries its own run noise
        splits = (_Split(means, means**2 - v / counts, v),)
    else:
        # one run per case: run-to-run and case-to-case spread cannot be told apart; try both ends
        headroom = float(means.mean())
        total = headroom - headroom**2 if binary else (float(means.var(ddof=1)) if len(means) > 1 else 0.0)
        same = np.full(len(means), headroom)
        splits = (
            _Split(means, means**2, np.zeros(len(means))),
            _Split(same, same**2, np.full(len(means), total)),
        )
    return _Moments(
        check_id=check_id,
        scale=scale_name,
        cases=len(runs),
        runs=float(counts.mean()),
        mean=sign * (float(means.mean()) + lo),
        binary=binary,
        additive=additive,
        splits=splits,
    )


def _unplannable(m: _Moments, values: Any, drop: float, affected: float, margin: float) -> str | None:
    """Why this check cannot be planned for this drop, or ``None`` when it can."""
    import numpy as np

    if not m.additive and m.headroom <= _TINY:
        worst = (
            "every case fails in the baseline (pass rate 0%)"
            if m.binary
            else (f"every case is at the worst value of its scale in the baseline ({fmt(m.mean)})")
        )
        return f"{worst}, so it cannot get worse"
    if not m.binary and float(np.ptp(values)) == 0.0:
        return (
            f"its value is {fmt(float(values[0]))} on every case and run of the baseline: there is no spread to "
            "plan from (plan from a baseline where it varies)"
        )
    if drop <= margin:
        return f"a drop of {fmt(drop)} is within the margin {fmt(margin)}: the gate does not look for it"
    most = m.max_drop(affected)
    if drop > most + _TINY:
        whole = m.max_drop(1.0)
        if drop > whole + _TINY:
            return (
                f"a drop of {fmt(drop)} is more than the baseline has above the worst value of its scale "
                f"({fmt(whole)} on average)"
            )
        lo, hi = affected, 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if m.max_drop(mid) >= drop else (mid, hi)
        return (
            f"a drop of {fmt(drop)} cannot sit in {affected:.0%} of the cases: even if the {affected:.0%} with the "
            f"most to lose fell to the worst value, the drop would be {fmt(most)}; the smallest share is "
            f"{math.ceil(hi * 100 - 1e-9):.0f}%"
        )
    return None


def power(
    baseline: Any,
    *,
    drop: float | None = None,
    affected: float = 1.0,
    runs: int = 3,
    power: float = 0.8,
    confidence: float = 0.95,
    margin: Margin = 0.0,
    checks: int | None = None,
) -> PowerPlan:
    """Plan a comparison: how many cases and runs detect a drop of ``drop`` with ``power``, per check.

    A check the plan cannot plan (at the worst value of its scale already, without values, or a drop that
    cannot sit in so few cases) is listed with the reason (``plan.unplanned``); the others are planned. It
    raises only for options that make no sense.

    Args:
        baseline: a ``Result`` or scores frame of the baseline (several runs per case tell run-to-run noise
            from case-to-case spread; with one run the plan assumes the worse of the two).
        drop: the drop to detect, in the check's units (default: 5% of the check's range, e.g. 5 points of
            pass rate or 0.2 on a 1-5 score); for a lower-is-better check, a rise.
        affected: the share of cases that carry the drop: 1.0 spreads it over every case, 0.1 puts it in a
            tenth of them ("a few cases break": when the drop is more than a random tenth can lose, the
            tenth that breaks is drawn from the best cases; see ``from_top``). Needs more cases: the effect
            varies between cases.
        runs: runs per case the plan is for.
        power: the wanted chance to detect the drop.
        confidence: the gate's one-sided confidence.
        margin: the gate's margin, as ``evalnb.compare`` takes it: a number in each check's units, ``"N%"``
            of each check's range, or a mapping by check (the drop beyond it is what is detected).
        checks: how many checks the gate corrects for (default: the baseline's checks).

    Returns:
        A :class:`PowerPlan`; ``.report()`` says it in words, ``.table`` per check.

    Raises:
        ValueError: ``affected`` outside (0, 1], ``power`` outside (0, 1), ``runs`` below 1 or a negative drop.

    Example::

        plan = evalnb.power(baseline, drop=0.1)
        plan.table[["check_id", "cases_needed", "cases_needed_one_run", "runs_needed"]]
        plan.cases_needed(runs=5, drop=0.05)
        evalnb.power(baseline, drop=0.1, affected=0.1).report()   # a tenth of the cases break
    """
    import pandas as pd

    if not 0 < affected <= 1:
        raise ValueError(f"affected must be in (0, 1], got {affected}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if not (isinstance(runs, int) and runs >= 1):
        raise ValueError(f"runs must be a whole number >= 1, got {runs!r}")
    if drop is not None and not (math.isfinite(drop) and drop > 0):
        raise ValueError(f"drop must be a positive number in the checks' units, got {drop}")
    check_options(margin, confidence)
    cells = build_cells(baseline, baseline)
    values = cells.a.run_values()
    plan = PowerPlan(
        table=pd.DataFrame(),
        confidence=confidence,
        target=power,
        margin=margin,
        # the family of the gate: the checks the baseline measures
        checks=checks
        or max(
            sum(any(len(r) for r in values[cells.check_slice(k)]) for k in range(len(cells.check_ids))), 1
        ),
        plan_runs=runs,
    )
    rows = [
        _plan_row(plan, cells, k, list(values[cells.check_slice(k)]), drop, affected)
        for k in range(len(cells.check_ids))
    ]
    plan.table = pd.DataFrame(rows, columns=list(PLAN_COLUMNS)).astype(PLAN_COLUMNS)
    if any(len(m.splits) > 1 for m in plan._moments.values()):
        plan.notes.append(
            "Note: the baseline has one run per case, so run-to-run noise and case-to-case spread cannot be told "
            "apart; the plan assumes whichever needs more cases (a baseline with 2+ runs per case plans tighter)."
        )
    return plan


def _plan_row(
    plan: PowerPlan, cells: Any, k: int, per_case: list[Any], drop: float | None, affected: float
) -> dict[str, Any]:
    """One check's row of the plan (and its moments in ``plan._moments`` when it can be planned)."""
    import numpy as np

    check_id = cells.check_ids[k]
    scale = cells.scales[k] or scale_of(cells.check_names[k])
    higher = bool(cells.higher[k])
    row: dict[str, Any] = {
        "check_id": check_id, "scale": scale.label if scale else None, "higher_is_better": higher,
        "affected": affected, "plannable": False,
    }  # fmt: skip
    present = [r for r in per_case if len(r)]
    if not present:
        return {**row, "cases": 0, "reason": "no scored value in the baseline"}
    worst = None if scale is None else (scale.low if higher else -scale.high)
    m = _moments(
        check_id, row["scale"], present, worst,
        bool(scale and scale.kind == "pass/fail") or bool(cells.pass_only[k]), higher=higher,
    )  # fmt: skip
    d = (
        float(drop)
        if drop is not None
        else 0.05 * (scale.span if scale and scale.bounded else max(abs(m.mean), 1.0))
    )
    row.update(cases=m.cases, runs=m.runs, mean=m.mean, drop=d)
    m = dataclasses.replace(
        m, margin=margin_for(plan.margin, check_id, cells.check_names[k], scale, abs(m.mean))
    )
    row["margin"] = m.margin
    why = _unplannable(m, np.concatenate(present), d, affected, m.margin)
    if why is not None:
        return {**row, "reason": why}
    plan._moments[check_id] = m
    needed = _cases(m, d, affected, plan.plan_runs, plan)
    one = _cases(m, d, affected, 1, plan)
    return {
        **row,
        "plannable": True,
        "sd_within": math.sqrt(max(max(sp.top(1.0)[2] for sp in m.splits), 0.0)),
        "sd_between": math.sqrt(max(max(sp.top(1.0)[1] - sp.top(1.0)[0] ** 2 for sp in m.splits), 0.0)),
        "sd_diff": m.sd(d, affected, plan.plan_runs),
        "power": _power(m, d, affected, m.cases, plan.plan_runs, alpha=plan._alpha, margin=m.margin),
        "cases_needed": needed,
        "cases_needed_one_run": one,
        "one_run_factor": (one / needed) if needed and one else math.nan,
        "runs_needed": _runs(m, d, affected, m.cases, plan),
        "detectable": _detectable(m, affected, m.cases, plan.plan_runs, plan),
        "from_top": m.from_top(d, affected),
    }
