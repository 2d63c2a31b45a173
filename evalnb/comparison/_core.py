"""``compare(a, b)`` and the :class:`Comparison` it returns (:func:`~evalnb.comparison.gate` over several is in
``_gate.py``).

Two levels, each with its own question (see ``docs/comparison.md``):

* **The gate, per check** (``Comparison.checks``): is the candidate worse than the baseline by more than the
  margin, with the stated confidence? A one-sided exact sign-flip test on the paired per-case differences,
  Holm across checks (and across suites with :func:`gate`). ``Comparison.regressed`` and
  ``Comparison.exit_code`` say it; ``evalnb run --baseline`` and ``evalnb compare`` exit with it.
* **Triage, per case x check** (``Comparison.cases``): what changed (``change``) and whether the case's own
  runs show it is beyond their noise (``significant``, only with two runs or more a side). It never gates.

Example::

    cmp = evalnb.compare(baseline, candidate)
    cmp.checks[["check_id", "diff", "upper_bound", "verdict", "words"]]
    cmp[cmp["change"] == "regressed"]
    cmp.exit_code
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb._deprecation import deprecated_property, text_summary
from evalnb.comparison._aggregates import Aggregates, aggregates_of
from evalnb.comparison._frames import cells_of, label_of
from evalnb.comparison._spend import check_spend_margin, spend_rows
from evalnb.comparison._stopping import compare_sequential, design_of, report_head
from evalnb.comparison._triage import CHANGES, case_table, check_counts, triage_order
from evalnb.comparison._verdicts import (
    Margin,
    adjust,
    check_line,
    check_options,
    check_tests,
    decide,
    family_words,
    finish,
    margin_words,
    unknown_margins,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Comparison", "compare", "compare_aggregates"]

_TRIAGE_LINES = 20


@dataclass
class Comparison:
    """The outcome of :func:`compare`: the gate per check and the triage list per case.

    It behaves like its per-case frame where a frame is expected: ``cmp["change"]``,
    ``cmp[cmp["change"] == "regressed"]``, ``len(cmp)``, ``cmp.columns``, ``cmp.head()``, ``cmp.to_frame()``.

    Attributes:
        cases: one row per case x check, in suite order: ``case_id, case_name, category, check_id, a, b,
            delta, pass_rate_a, pass_rate_b, runs_a, runs_b, p_value, p_adjusted, significant, change,
            judge_sd_a, judge_sd_b`` (the judge's mean spread, for a judge that gave its score distribution).
        checks: one row per check: ``check_id, check, scale, cases, paired, mean_a, mean_b, diff, lower_bound,
            upper_bound, ci_low, ci_high, pass_rate_a, pass_rate_b, pass_rate_diff, margin, p_value,
            p_adjusted, verdict, gates, words, regressed, improved, significant, weighted, higher_is_better,
            mean_a_all, mean_b_all, degraded_a, degraded_b, not_compared``. ``mean_a``, ``mean_b`` and the pass
            rates are per case over the paired cases (so ``diff`` is ``mean_b - mean_a``); ``mean_a_all`` and
            ``mean_b_all`` over every case of each side; ``margin`` in the check's units; ``weighted``: compared
            on the judge's probability-weighted scores; ``degraded_a/b``: cases with a degraded score on each
            side; ``not_compared``: cases left out because a check could not run.
        confidence: the confidence of the gate (one-sided) and of the per-case flags.
        margin: the margin of the gate (a number in each check's units, ``"N%"`` of each check's range, or a
            mapping by check id or name, ``"*"`` for the others).
        fail_on_missing: whether a check or case the candidate lost gates too.
        fail_on_degraded: whether a degraded score on the candidate side gates too.
        a_label: what ``a`` is (a version or run id), for reports.
        b_label: what ``b`` is.
        suite: the suite compared, when known.
        notes: lines the report adds at its end.
    """

    cases: pd.DataFrame
    checks: pd.DataFrame
    confidence: float
    margin: Margin = 0.0
    fail_on_missing: bool = False
    a_label: str = "a"
    b_label: str = "b"
    suite: str | None = None
    notes: list[str] = field(default_factory=list)
    family: str = "the checks compared"
    fail_on_degraded: bool = False
    _raw: Any = field(default=None, repr=False)
    _states: list[str] = field(default_factory=list, repr=False)
    # the Results compared, for explore(); or what reads them when it is called (store.compare)
    _results: tuple[Any, Any] | Callable[[], tuple[Any, Any]] | None = field(default=None, repr=False)
    _spend: Any = field(default=None, repr=False)  # the cost and latency rows (comparison/_spend.py)
    sequential: dict[str, Any] | None = None
    """For a candidate run by the sequential gate: its design and where it stopped (cases, cases_run, batch,
    looks); the verdicts are then the sequential ones (docs/comparison.md, deciding with fewer cases)."""

    # -- the gate ------------------------------------------------------------------------------------

    @property
    def missing(self) -> dict[str, list[str]]:
        """What is on one side only: ``{"checks gone": [...], "checks new": [...], "cases gone": [...],
        "cases new": [...]}`` (a case is gone when the candidate lacks it for every check)."""
        c = self.checks
        cases = self.cases
        # a case whose scores degraded on a side is there, not gone (see `degraded`)
        present_b = set(cases.loc[cases["runs_b"].notna() | (cases["degraded_b"] > 0), "case_id"])
        present_a = set(cases.loc[cases["runs_a"].notna() | (cases["degraded_a"] > 0), "case_id"])
        ids = list(dict.fromkeys(cases["case_id"].tolist()))
        return {
            "checks gone": c.loc[c["verdict"] == "gone", "check_id"].tolist(),
            "checks new": c.loc[c["verdict"] == "new", "check_id"].tolist(),
            "cases gone": [i for i in ids if i in present_a and i not in present_b],
            "cases new": [i for i in ids if i in present_b and i not in present_a],
        }

    @property
    def degraded(self) -> dict[str, list[str]]:
        """The cases with a degraded score, per side: ``{"baseline": [...], "candidate": [...]}``.

        A check that could not run (a judge outage) is left out of the paired differences; a turn without an
        answer counts as the worst value. With ``fail_on_degraded``, any on the candidate side gates.
        """
        cases = self.cases
        return {
            side: list(dict.fromkeys(cases.loc[cases[f"degraded_{key}"] > 0, "case_id"].tolist()))
            for side, key in (("baseline", "a"), ("candidate", "b"))
        }

    @property
    def regressed(self) -> bool:
        """Whether the gate fires: a check worse beyond the margin (or, with ``fail_on_missing``, lost; with
        ``fail_on_degraded``, degraded on the candidate side)."""
        if bool(self.checks["gates"].fillna(False).any()):
            return True
        return self.fail_on_missing and bool(self.missing["cases gone"])

    has_regressions = deprecated_property("regressed", "has_regressions", owner="Comparison")

    @property
    def exit_code(self) -> int:
        """1 when the gate fires, else 0: what ``evalnb run --baseline`` and ``evalnb compare`` exit with."""
        return 1 if self.regressed else 0

    # -- triage --------------------------------------------------------------------------------------

    @property
    def triage(self) -> pd.DataFrame:
        """Every case x check that changed, surest first (significant, then by p-value, then by size)."""
        return triage_order(self.cases)

    @property
    def regressions(self) -> pd.DataFrame:
        """The case x check rows that got worse (down; up for a lower-is-better check), surest first (a triage
        list: it does not gate)."""
        t = self.triage
        return t[t["change"] == "regressed"].reset_index(drop=True)

    @property
    def improvements(self) -> pd.DataFrame:
        """The case x check rows that got better, surest first."""
        t = self.triage
        return t[t["change"] == "improved"].reset_index(drop=True)

    def explore(self, *, pairwise: Any = None) -> Any:
        """An interactive browser for a notebook (ipywidgets): pick a case (filter by change, check,
        category) and see both versions' answers side by side with their difference marked, each check's
        values, change and reasons; with ``pairwise`` (what ``evalnb.pairwise(a, b, ...)`` returned), the
        judge's pairwise verdict beside the answers.

        Raises:
            ValueError: when the comparison was made from scores frames (it needs the Results' answers).
            ImportError: without ipywidgets (``pip install "evalnb[notebooks]"``).

        Example::

            store.compare("v1", "v2").explore()
        """
        if self._results is None:
            raise ValueError(
                "explore() needs the answers: compare two Results (or store.compare), not scores frames"
            )
        from evalnb import _hooks

        # evalnb.browser sits above comparison: it is reached through the slot evalnb/__init__.py fills
        results = self._results() if callable(self._results) else self._results
        return _hooks.implementation("comparison.explore")(self, *results, pairwise=pairwise)

    # -- frame-like ----------------------------------------------------------------------------------

    def to_frame(self) -> pd.DataFrame:
        """A copy of the per-case frame."""
        return self.cases.copy()

    def __getitem__(self, key: Any) -> Any:
        return self.cases[key]

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.cases)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the Comparison lacks: the per-case frame's public API (loc, head, query...).
        cases = self.__dict__.get("cases")
        if name.startswith("_") or cases is None or not hasattr(cases, name):
            raise AttributeError(f"'Comparison' object has no attribute {name!r}")
        return getattr(cases, name)

    # -- words ---------------------------------------------------------------------------------------

    def _conf(self) -> str:
        return (
            f"{self.confidence:.0%}"
            if round(self.confidence * 100, 6).is_integer()
            else f"{self.confidence:.1%}"
        )

    def _margin_words(self) -> str:
        return margin_words(self.margin)

    def _gate_line(self) -> str:
        worse = self.checks[self.checks["verdict"] == "worse"]
        missing = self.missing
        if not self.regressed:
            open_ = self.checks.loc[self.checks["verdict"] == "not decided", "check_id"].tolist()
            if open_:
                return f"Gate: pass (no check decided worse; not decided: {', '.join(open_)})"
            return "Gate: pass (no check is worse beyond the margin)"
        parts = [f"{r.check_id} {r.words}" for r in worse.itertuples(index=False)]
        if self.fail_on_degraded:
            parts += [
                f"{r.check_id}: {r.degraded_b} case{'s' * int(r.degraded_b != 1)} degraded on the candidate side"
                for r in self.checks.itertuples(index=False)
                if r.degraded_b and r.verdict != "worse"
            ]
        if self.fail_on_missing:
            parts += [f"check {c} gone" for c in missing["checks gone"]]
            if missing["cases gone"]:
                parts.append(f"{len(missing['cases gone'])} case(s) gone")
        return "Gate: FAIL: " + "; ".join(parts)

    def _short(self) -> str:
        """The gate in a few words: ``FAIL (worse: regex, rows)`` or ``pass (gone: Citations)``."""
        parts = []
        worse = self.checks.loc[self.checks["verdict"] == "worse", "check_id"].tolist()
        if worse:
            parts.append("worse: " + ", ".join(worse))
        degraded = self.degraded["candidate"]
        if degraded:
            parts.append(f"{len(degraded)} case{'s' * (len(degraded) != 1)} degraded on the candidate side")
        for key, names in self.missing.items():
            if names:
                parts.append(
                    f"{key}: "
                    + ", ".join(names[:5])
                    + (f" and {len(names) - 5} more" if len(names) > 5 else "")
                )
        return ("FAIL" if self.regressed else "pass") + (f" ({'; '.join(parts)})" if parts else "")

    def _missing_line(self) -> str | None:
        m = self.missing
        items = []
        for key in ("checks gone", "cases gone", "checks new", "cases new"):
            names = m[key]
            if names:
                shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                items.append(f"{key}: {shown}")
        if not items:
            return None
        rule = (
            "gates (fail on missing)" if self.fail_on_missing else "does not gate without --fail-on-missing"
        )
        return "On one side only: " + "; ".join(items) + f" ({rule})"

    def _degraded_line(self) -> str | None:
        items = []
        for side, names in self.degraded.items():
            if names:
                shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                items.append(f"{len(names)} case{'s' * (len(names) != 1)} on the {side} side ({shown})")
        if not items:
            return None
        rule = (
            "gates (fail on degraded)"
            if self.fail_on_degraded and self.degraded["candidate"]
            else "a check that could not run is not compared; gates with --fail-on-degraded"
        )
        return "Degraded: " + "; ".join(items) + f" ({rule})"

    summary = text_summary("Comparison")

    def headline(self) -> str:
        """The gate's outcome in a line or two, naming what is on one side only.

        Example::

            print(evalnb.compare(a, b).headline())
            # Gate: pass (no check is worse beyond the margin)
        """
        lines = [self._gate_line()]
        for extra in (self._missing_line(), self._degraded_line()):
            if extra:
                lines.append(extra)
        return "\n".join(lines)

    def report(self) -> str:
        """A plain-text report: the gate per check (with words), then the per-case triage list.

        Example::

            print(evalnb.compare(a, b).report())
        """

        where = f", suite {self.suite}" if self.suite else ""
        lines = [
            f"Comparison {self.a_label} -> {self.b_label}{where} (gate: one-sided {self._conf()}, "
            f"{self._margin_words()}, Holm over {self.family})",
            self.headline(),
            "Per check (the gate: paired over cases, exact sign-flip test; a mean is per case: each case's runs "
            "and turns averaged first):",
        ]
        if self.sequential is not None:
            lines = [*report_head(self, where), self.headline(), *lines[3:]]
        for r in self.checks.itertuples(index=False):
            lines.append(f"  {check_line(r)}")
        counts = self.cases["change"].value_counts()
        sig = int(self.cases["significant"].fillna(False).sum())
        untested = int(self.cases["significant"].isna().sum())
        flags = f"{sig} significant"
        if untested:
            flags += f", {untested} untested (a significant flag needs >= 2 runs a side)"
        lines.append(
            "Cases (triage, does not gate): "
            + ", ".join(f"{counts.get(c, 0)} {c}" for c in CHANGES if c != "degraded" or counts.get(c, 0))
            + f"; {flags}"
        )
        triage = self.triage
        triage = triage[triage["change"].isin(["regressed", "improved", "changed"])]
        for r in triage.head(_TRIAGE_LINES).itertuples(index=False):
            lines.append(f"  {r.case_id} [{r.check_id}]: {_num(r.a)} -> {_num(r.b)} ({r.change}; {_flag(r)})")
        if len(triage) > _TRIAGE_LINES:
            lines.append(f"  ... and {len(triage) - _TRIAGE_LINES} more (cmp.triage lists them all)")
        lines.extend(self.notes)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        where = f" ({esc(self.suite)})" if self.suite else ""
        head = (
            f"<b>Comparison</b> {esc(self.a_label)} &rarr; {esc(self.b_label)}{where}: "
            f"one-sided {self._conf()}, {esc(self._margin_words())}"
            f"<pre>{esc(self.headline())}</pre><p><b>The gate, per check</b></p>"
        )
        cols = [
            "check_id", "scale", "higher_is_better", "paired", "mean_a", "mean_b", "diff", "upper_bound", "verdict",
            "words",
        ]  # fmt: skip
        checks = self.checks[cols].to_html(
            index=False, escape=True, na_rep="", float_format=lambda v: f"{v:.3f}"
        )
        triage = self.triage
        tail = (
            "<p>No case changed.</p>"
            if triage.empty
            else "<p><b>Triage, per case</b> (does not gate; surest first)</p>"
            + triage.head(_TRIAGE_LINES)[
                ["case_id", "case_name", "check_id", "a", "b", "delta", "p_adjusted", "significant", "change"]
            ].to_html(index=False, escape=True, na_rep="", float_format=lambda v: f"{v:.3f}")
        )
        return head + checks + tail

    def __repr__(self) -> str:
        verdicts = ", ".join(f"{r.check_id}: {r.verdict}" for r in self.checks.itertuples(index=False))
        gate = "FAIL" if self.regressed else "pass"
        return f"Comparison({self.a_label!r} -> {self.b_label!r}, gate {gate}; {verdicts})"

    # -- families ------------------------------------------------------------------------------------

    def _in_family(self, p_worse: Any, p_better: Any, family: str) -> Comparison:
        """This comparison with its verdicts re-decided for a family of tests (see :func:`gate`)."""
        if self.sequential is not None:
            # its family share was fixed before the run (docs/comparison.md, deciding with fewer cases: several suites)
            return self
        table = decide(
            self._raw,
            self._states,
            p_worse,
            p_better,
            confidence=self.confidence,
            family=family,
            fail_on_missing=self.fail_on_missing,
            fail_on_degraded=self.fail_on_degraded,
        )
        checks = finish(table, check_counts(self.cases))
        if self._spend is not None:
            import pandas as pd

            checks = pd.concat([checks, self._spend], ignore_index=True)
        return dataclasses.replace(self, checks=checks, family=family)


def _num(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if math.isnan(f) else f"{f:.3f}"


def _flag(r: Any) -> str:
    import pandas as pd

    if r.change in ("new", "gone"):
        return "one side only"
    flag = (
        "untested"
        if pd.isna(r.significant)
        else f"{'significant' if r.significant else 'within its noise'}, adjusted p {r.p_adjusted:.2g}"
    )
    sd = max((v for v in (r.judge_sd_a, r.judge_sd_b) if not pd.isna(v)), default=None)
    if sd is not None and not pd.isna(r.delta):
        # how sure the judge was: a change no larger than its own spread is one it was unsure of itself
        flag += f"; {'within' if abs(r.delta) <= sd else 'beyond'} the judge's sd {sd:.2f}"
    return flag


def compare(
    a: Any,
    b: Any,
    *,
    confidence: float | None = None,
    margin: Margin | None = None,
    fail_on_missing: bool = False,
    fail_on_degraded: bool = False,
    labels: tuple[str, str] | None = None,
    draws: int = 9999,
    seed: int = 0,
    cost_margin: float | str | None = None,
    latency_margin: float | str | None = None,
) -> Comparison:
    """Compare result ``b`` (the candidate) against result ``a`` (the baseline).

    Args:
        a: the baseline: a ``Result`` or its ``scores`` DataFrame.
        b: the candidate, likewise.
        confidence: confidence of the one-sided gate and of the per-case flags (0.95: at most 5% false
            alarms over all checks, when the candidate is the baseline again). A candidate run by the
            sequential gate (``evalnb.run(..., stop="decided")``) gets the sequential verdicts, at the
            confidence and margin it ran with unless given here.
        margin: how much worse a check may get before it gates: a number in each check's own units (0.02 on a
            pass rate is 2 points, on a 1-5 score 0.02 of a point), ``"N%"`` of each check's range (``"5%"``:
            5 points of pass rate, 0.2 on a 1-5 score), or a mapping by check id or name with ``"*"`` for the
            others (``{"*": 0.02, "Relevance": 0.2}``).
        fail_on_missing: a check or case the candidate lost gates too (by default it is named, not gated).
        fail_on_degraded: a degraded score on the candidate side gates too (by default a check that could not
            run, such as a judge outage, is left out of the comparison and named).
        labels: names of ``a`` and ``b`` for reports (default: their versions, run ids or models).
        draws: random sign patterns of the gate's test beyond 16 cases (and permutations beyond 20,000 run
            splits for the per-case test).
        seed: seed of those draws (the same inputs give the same answer).
        cost_margin: the ``cost`` row (cost per case, agent and judge, lower is better) gates when b's cost per
            case rose by more than this share (``0.10`` or ``"10%"``) with the stated confidence: a paired test
            over cases on the relative scale (docs/costs.md). Without it the row is reported, never gated.
        latency_margin: the same for the ``latency`` row (mean latency of the agent calls per case).

    Returns:
        A :class:`Comparison`: ``.checks`` (the gate), ``.cases`` (triage), ``.regressed``, ``.exit_code``.

    Example::

        cmp = evalnb.compare(result_v1, result_v2, margin=0.02)
        cmp.checks.set_index("check_id")["words"]
        cmp[cmp["change"] == "regressed"][["case_id", "check_id", "a", "b", "significant"]]
    """
    cost_share = check_spend_margin("cost_margin", cost_margin)
    latency_share = check_spend_margin("latency_margin", latency_margin)
    la, lb = labels or (label_of(a, "a"), label_of(b, "b"))
    if la == lb:
        la, lb = f"{la} (a)", f"{lb} (b)"
    design = design_of(b)
    if design is not None:
        _no_spend_margins(cost_share, latency_share)
        parts = compare_sequential(
            a, b, design, confidence=confidence, margin=margin, fail_on_missing=fail_on_missing,
            fail_on_degraded=fail_on_degraded, draws=draws, seed=seed,
        )  # fmt: skip
        both = all(hasattr(x, "runs") and hasattr(x, "responses") for x in (a, b))
        return Comparison(
            **parts, a_label=la, b_label=lb, fail_on_missing=fail_on_missing, fail_on_degraded=fail_on_degraded,
            _results=(a, b) if both else None,
        )  # fmt: skip
    both = all(hasattr(x, "runs") and hasattr(x, "responses") for x in (a, b))
    return compare_aggregates(
        aggregates_of(a), aggregates_of(b), labels=(la, lb), results=(a, b) if both else None,
        confidence=confidence, margin=margin, fail_on_missing=fail_on_missing, fail_on_degraded=fail_on_degraded,
        draws=draws, seed=seed, cost_margin=cost_share, latency_margin=latency_share,
    )  # fmt: skip


def compare_aggregates(
    ga: Aggregates,
    gb: Aggregates,
    *,
    labels: tuple[str, str],
    results: tuple[Any, Any] | None = None,
    confidence: float | None = None,
    margin: Margin | None = None,
    fail_on_missing: bool = False,
    fail_on_degraded: bool = False,
    draws: int = 9999,
    seed: int = 0,
    cost_margin: float | str | None = None,
    latency_margin: float | str | None = None,
) -> Comparison:
    """:func:`compare` of two results' sums (comparison/_aggregates.py): what ``store.compare`` reads of two
    stored runs instead of their rows. ``results`` are the two Results for ``explore()``; the other options are
    :func:`compare`'s."""
    cost_margin = check_spend_margin("cost_margin", cost_margin)
    latency_margin = check_spend_margin("latency_margin", latency_margin)
    la, lb = labels
    if la == lb:
        la, lb = f"{la} (a)", f"{lb} (b)"
    confidence = 0.95 if confidence is None else confidence
    margin = 0.0 if margin is None else margin
    check_options(margin, confidence)
    cells = cells_of(ga, gb)
    raw, states = check_tests(cells, confidence=confidence, margin=margin, draws=draws, seed=seed)
    cases = case_table(cells, confidence=confidence, draws=draws, seed=seed)
    notes = []
    unknown = unknown_margins(margin, set(cells.check_ids) | set(cells.check_names))
    if unknown:
        notes.append(f"Note: the margin for {', '.join(map(repr, unknown))} names no check compared here.")
    if ga.suite and gb.suite and ga.suite != gb.suite:
        notes.append(
            f"Note: a is suite {ga.suite!r} and b is suite {gb.suite!r}; cases are paired by id alone."
        )
    spend, latency_line = spend_rows(
        ga,
        gb,
        confidence=confidence,
        cost_margin=cost_margin,
        latency_margin=latency_margin,
        draws=draws,
        seed=seed,
    )
    if latency_line:
        notes.append(latency_line)
    if spend is None and (cost_margin is not None or latency_margin is not None):
        notes.append(
            "Note: cost and latency margins need two Results (scores frames hold no cost or latency)."
        )
    cmp = Comparison(
        cases=cases,
        checks=raw,
        confidence=confidence,
        margin=margin,
        fail_on_missing=fail_on_missing,
        fail_on_degraded=fail_on_degraded,
        a_label=la,
        b_label=lb,
        suite=gb.suite or ga.suite,
        notes=notes,
        _raw=raw,
        _states=states,
        _results=results,
        _spend=spend,
    )
    ((p_worse, p_better),) = adjust([raw], [states])
    tested, compared = _family_size([states])
    return cmp._in_family(p_worse, p_better, family_words(tested, 1, compared))


def _family_size(states: list[list[str]]) -> tuple[int, int]:
    """(checks in the family, checks compared): a check measured on both sides is compared; it is in the
    family when it could reach the level (docs/comparison.md, the gate)."""
    tested = sum(s == "tested" for st in states for s in st)
    compared = sum(s not in ("new", "gone") for st in states for s in st)
    return tested, compared


def _no_spend_margins(cost: float | None, latency: float | None) -> None:
    """A candidate the sequential gate ran gates on its checks only (docs/comparison.md, deciding with fewer
    cases): its cost and latency were never watched by the anytime-valid test, and a fixed-sample test over the
    cases it chose to run would read an optional stop as evidence. A margin asked for is refused, not ignored."""
    from evalnb.errors import ConfigError

    asked = [
        name for name, share in (("cost_margin", cost), ("latency_margin", latency)) if share is not None
    ]
    if asked:
        raise ConfigError(
            f"{' and '.join(asked)}: b is a run of the sequential gate, which gates on its checks only (its cost "
            "and latency are not part of its anytime-valid test); to gate on cost or latency, compare a run of "
            "every case (evalnb run without --sequential)",
            code="INVALID_VALUE",
        )
