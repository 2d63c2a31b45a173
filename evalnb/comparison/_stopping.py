"""The sequential gate: run a candidate against a baseline in batches and stop once every gating check is decided.

``evalnb.run(suite, agent, baseline=BASE, stop="decided")`` runs the cases in a seeded random order, in batches
of at most 5% of the suite; after each batch, per gating check, the one-sided anytime-valid confidence sequence
of the mean paired difference (:mod:`evalnb.comparison._sequential`) decides ``worse`` (entirely below
``-margin``), ``not worse`` (entirely above it) or goes on. The checks of every suite gated together share the
error rate by Holm's procedure; the run stops when every gating check is decided, and the case runs not run
are ``skipped`` with the reason. ``compare(BASE, result)`` replays the same decisions from the stored rows (one
home: :func:`evaluate`), so a stored run gives the same verdict in another process.

The paired differences, the direction of each check and its margin are the fixed gate's
(:func:`~evalnb.comparison._frames.build_cells`, :func:`~evalnb.comparison._verdicts.margin_for`): the case is
the unit (its runs averaged), a turn without an answer counts as the worst value, a check that could not run
is left out. A gating check is one measured on both sides with a finite range (a count has none, so no
confidence sequence bounds it: it is named ``not decided`` and the run does not wait for it).

See ``docs/comparison.md``, "Deciding with fewer cases".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb.checks.scales import scale_of
from evalnb.comparison._frames import Cells, build_cells, label_of, suite_case_ids
from evalnb.comparison._sequential import NOT_DECIDED, NOT_WORSE, WORSE, Track, decide_tracks
from evalnb.comparison._verdicts import Margin, check_options, fmt, margin_for, unit_words

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result
    from evalnb.results._records import CaseRunRecord
    from evalnb.suite import Case, Suite

__all__ = ["BATCH_SHARE", "Decision", "Sequential", "batch_size", "evaluate", "run_order"]

BATCH_SHARE = 0.05
"""A batch holds at most this share of the suite's cases (and at least one case)."""

_WORDS = {WORSE: "worse", NOT_WORSE: "not worse", NOT_DECIDED: "not decided"}


def batch_size(cases: int) -> int:
    """Cases per batch: at most 5% of the suite, at least 1 (400 cases: 20; 19 cases: 1)."""
    return max(1, math.floor(cases * BATCH_SHARE + 1e-9))


def run_order(case_ids: Sequence[str], seed: int) -> list[str]:
    """The seeded random order the cases run in (the same suite and seed give the same order)."""
    import numpy as np

    perm = np.random.default_rng([seed, len(case_ids)]).permutation(len(case_ids))
    return [case_ids[i] for i in perm.tolist()]


@dataclass
class Decision:
    """One gating check's sequential decision.

    Attributes:
        check_id: the check.
        decision: ``"worse"``, ``"not worse"`` or ``"not decided"``.
        after: cases run (of the suite) at the look that decided it, or at the last look.
        lower: one-sided lower bound of the mean difference ``b - a``, in the check's units.
        upper: one-sided upper bound, in the check's units.
        margin: the margin, in the check's units.
        p_value: the anytime-valid p-value of the decision (of "worse" when not decided).
        level: the check's Holm level at that look.
        bounded: whether the check's scale has a finite range (else it cannot be decided).
    """

    check_id: str
    decision: str
    after: int
    lower: float
    upper: float
    margin: float
    p_value: float
    level: float
    bounded: bool = True
    span: float = math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in self.__dict__.items()
        }


def _span(cells: Cells, k: int) -> float:
    """The width of a check's scale; a pass/fail check without a declared scale is 0-1; ``inf`` when unknown."""
    scale = cells.scales[k]
    if scale is not None:
        return scale.span if scale.bounded else math.inf
    return 1.0 if bool(cells.pass_only[k]) else math.inf


def evaluate(
    cells: Cells,
    order: Sequence[str],
    looks: Sequence[int],
    *,
    margin: Margin,
    alpha: float,
    gating: Sequence[str] | None = None,
) -> list[Decision]:
    """The sequential decisions of the gating checks, replayed look by look.

    Args:
        cells: both sides, aligned (the candidate's cases that ran).
        order: the case ids in the order they ran.
        looks: cases run at each look (batch end), increasing.
        margin: the margin (as for :func:`~evalnb.comparison.compare`).
        alpha: the error rate this family spends (one-sided, in each direction).
        gating: the checks that gate (default: every check measured on both sides).

    Returns:
        One :class:`Decision` per gating check, in the order of ``cells``; a check without a finite range is
        ``not decided`` and outside the family.
    """
    import numpy as np

    position = {c: i for i, c in enumerate(order)}
    case_pos = np.array([position.get(c, -1) for c in cells.case_ids], dtype=np.int64)
    cum = np.asarray(looks, dtype=np.int64)
    wanted = set(gating) if gating is not None else None
    tracks, where, decisions = [], [], []
    for k, check_id in enumerate(cells.check_ids):
        if wanted is not None and check_id not in wanted:
            continue
        sl = cells.check_slice(k)
        both = (cells.a.runs[sl] > 0) & (cells.b.runs[sl] > 0) & (case_pos >= 0)
        if wanted is None and not both.any():
            continue
        sign = 1.0 if bool(cells.higher[k]) else -1.0
        ya, yb = cells.a.y[sl][both], cells.b.y[sl][both]
        mean_a = float(ya.mean()) if len(ya) else math.nan
        m = margin_for(margin, check_id, cells.check_names[k], cells.scales[k], mean_a)
        span = _span(cells, k)
        pos = case_pos[both]
        ranked = np.argsort(pos, kind="stable")
        g = (sign * (yb - ya))[ranked]
        after = int(cum[-1]) if len(cum) else 0
        decisions.append(
            Decision(check_id, "not decided", after, -math.inf, math.inf, m, math.nan, alpha, span=span)
        )
        if not math.isfinite(span):
            decisions[-1].bounded = False
            continue
        seen = np.searchsorted(np.sort(pos), cum, side="left")
        tracks.append(Track(g, seen, span=span, threshold=-m))
        where.append((len(decisions) - 1, sign))
    for check_id in [c for c in gating or () if c not in set(cells.check_ids)]:
        # a gating check none of the cases so far has: it is waited for, and counts in the family from the start
        # (its p-values are 1 until it has cases), so the family does not change size as checks turn up
        scale = scale_of(check_id.split("#", 1)[0])
        span = (scale.span if scale.bounded else math.inf) if scale is not None else 1.0
        after = int(cum[-1]) if len(cum) else 0
        m = margin_for(margin, check_id, check_id.split("#", 1)[0], scale)
        decisions.append(
            Decision(check_id, "not decided", after, -math.inf, math.inf, m, math.nan, alpha, span=span)
        )
        if not math.isfinite(span):
            decisions[-1].bounded = False
            continue
        tracks.append(Track(np.empty(0), np.zeros(len(cum), dtype=np.int64), span=span, threshold=-m))
        where.append((len(decisions) - 1, 1.0))
    for (i, sign), v in zip(where, decide_tracks(tracks, alpha=alpha), strict=True):
        d = decisions[i]
        lo, hi = (v.lower, v.upper) if sign > 0 else (-v.upper, -v.lower)
        d.decision, d.lower, d.upper = _WORDS[v.decision], lo, hi
        d.after = int(cum[v.look]) if len(cum) else 0
        d.p_value, d.level = v.p, v.level
    return decisions


class Sequential:
    """The sequential gate as a stop rule of ``evalnb.run`` (``evalnb.running.StopRule``).

    Args:
        baseline: the baseline Result (every case ran in it).
        margin: how much worse a check may get (as for :func:`~evalnb.comparison.compare`).
        confidence: one-sided confidence of the gate, over every check (and, with ``share``, every suite).
        seed: seed of the random order the cases run in.
        share: the share of the error rate ``1 - confidence`` this suite spends, when several suites are
            gated as one (the command line gives each suite its share of the checks; 1 for one suite).

    Example::

        rule = evalnb.comparison.Sequential(baseline, margin=0.05)
        result = evalnb.running.run(suite, agent, stop=rule)
        result.stopped_early, result.calls_saved
    """

    name = "sequential"

    def __init__(
        self, baseline: Result, *, margin: Margin = 0.0, confidence: float = 0.95, seed: int = 0,
        share: float = 1.0,
    ) -> None:  # fmt: skip
        from evalnb.errors import ConfigError

        check_options(margin, confidence)
        if not (isinstance(share, (int, float)) and 0.0 < share <= 1.0):
            raise ConfigError(f"share must be in (0, 1], not {share!r}", code="INVALID_VALUE")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ConfigError(f"seed must be a whole number, not {seed!r}", code="INVALID_VALUE")
        if not hasattr(baseline, "scores"):
            raise ConfigError(
                f"baseline must be a Result (or a stored version with store=), not {type(baseline).__name__}",
                code="INVALID_VALUE",
            )
        self.baseline = baseline
        self.margin = margin
        self.confidence = float(confidence)
        self.seed = seed
        self.share = float(share)
        self._rows: list[tuple[Any, ...]] = []
        self._order: list[str] = []
        self._looks: list[int] = []
        self._decisions: list[Decision] = []
        self._gating: list[str] = []
        self._cases = 0

    @property
    def alpha(self) -> float:
        return (1.0 - self.confidence) * self.share

    # -- the StopRule protocol -------------------------------------------------------------------------

    def batches(self, suite: Suite, runs: int | None) -> list[list[Case]]:
        by_id = {c.id: c for c in suite.cases}
        self._order = run_order([c.id for c in suite.cases], self.seed)
        self._cases = len(self._order)
        size = batch_size(self._cases)
        ordered = [by_id[c] for c in self._order]
        return [ordered[i : i + size] for i in range(0, len(ordered), size)]

    def begin(self, suite: Suite, prior: Result | None) -> None:
        from evalnb.results._frames import SCORES_COLUMNS

        design = design_of(prior)
        if design is not None:
            # a resumed run keeps the order, margin and level it started with: its decisions are then the ones
            # the run would have made uninterrupted
            self.seed, self.margin = int(design["seed"]), design.get("margin", self.margin)
            self.confidence = float(design.get("confidence", self.confidence))
            self.share = float(design.get("share", self.share))

        # the checks measured on both sides gate; one only the candidate has is new, one only the baseline has
        # is gone: neither can be compared
        ids = {cid for case in suite.cases for turn in case.turns for cid in turn.check_ids()}
        self._gating = [c for c in dict.fromkeys(self.baseline.scores["check_id"].astype(str)) if c in ids]
        if prior is not None and len(prior.scores):
            frame = prior.scores.reindex(columns=list(SCORES_COLUMNS))
            self._rows.extend(frame.itertuples(index=False, name=None))

    def record(self, record: CaseRunRecord) -> None:
        self._rows.extend(record.rows()[1])

    def decided(self) -> str | None:
        """After a batch: decide every gating check; the skipped rows' reason once all are decided."""
        size = batch_size(self._cases)
        self._looks.append(min(self._cases, (len(self._looks) + 1) * size))
        self._decisions = self._evaluate()
        waiting = [d for d in self._decisions if d.bounded and d.decision == "not decided"]
        if waiting or not any(d.bounded for d in self._decisions):
            return None
        n = self._looks[-1]
        return f"skipped: the sequential gate decided every check after {n} of {self._cases} cases"

    def info(self) -> dict[str, Any]:
        after = self._looks[-1] if self._looks else 0
        return {
            "baseline": label_of(self.baseline, "baseline"),
            "baseline_run": self.baseline.meta.get("run_id")
            if isinstance(self.baseline.meta, Mapping)
            else None,
            "margin": self.margin if isinstance(self.margin, (int, float, str)) else dict(self.margin),
            "confidence": self.confidence,
            "share": self.share,
            "seed": self.seed,
            "batch": batch_size(self._cases),
            "cases": self._cases,
            "cases_run": after,
            "decided": bool(self._decisions)
            and all(d.decision != "not decided" for d in self._decisions if d.bounded),
            "gating": list(self._gating),
            "checks": [d.to_dict() for d in self._decisions],
        }

    # -- deciding ------------------------------------------------------------------------------------

    def _evaluate(self) -> list[Decision]:
        import pandas as pd

        from evalnb.results._frames import SCORES_COLUMNS

        frame = pd.DataFrame(self._rows, columns=list(SCORES_COLUMNS))
        run = set(self._order[: self._looks[-1]])
        base = self.baseline.scores
        cells = build_cells(base[base["case_id"].astype(str).isin(run)], frame)
        return evaluate(
            cells, self._order, self._looks, margin=self.margin, alpha=self.alpha, gating=self._gating
        )


def design_of(result: Any) -> Mapping[str, Any] | None:
    """The sequential design a Result ran with (its meta's ``sequential``), or None."""
    return design_in(getattr(result, "meta", None))


def design_in(meta: Any) -> Mapping[str, Any] | None:
    """The sequential design a run's meta (a mapping, or a stored run's) records, or None."""
    design = meta.get("sequential") if isinstance(meta, Mapping) else None
    return design if isinstance(design, Mapping) and "seed" in design else None


def replay(
    a: Any, b: Any, design: Mapping[str, Any], *, margin: Margin | None, confidence: float | None
) -> tuple[Cells, list[Decision], dict[str, Any]]:
    """The sequential decisions of a stored run ``b`` against ``a``, from its rows and its design: the same
    order, looks and family share; ``margin`` and ``confidence`` as the run's unless given."""
    ids = suite_case_ids(b)
    if ids is None:
        ids = list(dict.fromkeys(b.scores["case_id"].astype(str)))
    order = run_order(ids, int(design["seed"]))
    n = len(order)
    size = batch_size(n)
    ran = min(n, int(design.get("cases_run") or n))
    looks = [min(ran, i) for i in range(size, ran + size, size)]
    looks = sorted(set(looks))
    run = set(order[:ran])
    from evalnb.comparison._frames import scores_of

    sa, sb = scores_of(a), scores_of(b)
    cells = build_cells(sa[sa["case_id"].astype(str).isin(run)], sb[sb["case_id"].astype(str).isin(run)])
    conf = float(design.get("confidence", 0.95)) if confidence is None else confidence
    the_margin: Margin = design.get("margin", 0.0) if margin is None else margin
    alpha = (1.0 - conf) * float(design.get("share", 1.0))
    gating = design.get("gating")
    decisions = evaluate(cells, order, looks, margin=the_margin, alpha=alpha, gating=gating)
    facts = {"cases": n, "cases_run": ran, "batch": size, "looks": len(looks), "alpha": alpha, "confidence": conf,
             "margin": the_margin}  # fmt: skip
    return cells, decisions, facts


def sequential_words(d: Decision, *, cases: int, conf: str, scale: Any, higher: bool = True) -> str:
    """The words of one sequential decision: "worse by at least 0.08 (...), decided after 120 of 400 cases"."""
    # oriented: positive is better (a rise of a lower-is-better check is "worse")
    lo, hi = (d.lower, d.upper) if higher else (-d.upper, -d.lower)
    where = f"after all {cases} cases" if d.after >= cases else f"after {d.after} of {cases} cases"
    bound = f"{conf} anytime-valid bound"
    beyond = f", beyond the margin {unit_words(d.margin, scale)}" if d.margin > 0 else ""
    if not d.bounded:
        return "not decided: the check has no finite range, so no confidence sequence bounds it"
    if d.decision == "worse":
        return f"worse by at least {fmt(max(-hi, 0.0))} ({bound}){beyond}; decided {where}"
    if d.decision == "not worse":
        if lo < 0:
            # never "at most 0.15" beside a margin of 0.15: the bound is inside it, say by how much
            most = fmt(-lo) if fmt(-lo) != fmt(d.margin) else f"{-lo:.3f}"
            head = f"not worse beyond the margin {unit_words(d.margin, scale)}: worse by at most {most}"
        else:
            head = f"not worse: better by at least {fmt(lo)}" if lo > 0 else "not worse: no drop"
        return f"{head} ({bound}); decided {where}"
    if not (math.isfinite(lo) and math.isfinite(hi)) or (lo <= -d.span + 1e-9 and hi >= d.span - 1e-9):
        # the bounds are still the ends of the scale: nothing narrower to quote
        return f"not decided {where} (too few cases for the {conf} anytime-valid bounds to narrow)"
    return f"not decided {where} (between {_side(lo)} and {_side(hi)}, {conf} anytime-valid bounds)"


def _side(x: float) -> str:
    if x == 0:
        return "no change"
    return f"{fmt(abs(x))} {'worse' if x < 0 else 'better'}"


def sequential_table(
    raw: pd.DataFrame, cells: Cells, decisions: list[Decision], facts: Mapping[str, Any], *, conf: str
) -> pd.DataFrame:
    """The per-check table of a fixed comparison's ``raw`` rows, with the sequential columns in place of the
    fixed test's: bounds, p-value, verdict, gates, words and ``decided_after``."""
    import numpy as np

    from evalnb.checks.scales import scale_of

    del cells  # the directions are in raw (higher_is_better)
    out = raw.copy()
    by_id = {d.check_id: d for d in decisions}
    verdict: list[str] = []
    words: list[str] = []
    lower: list[float] = []
    upper: list[float] = []
    p: list[float] = []
    after: list[int | None] = []
    for k, check_id in enumerate(out["check_id"].astype(str)):
        d = by_id.get(check_id)
        row = out.iloc[k]
        if d is None:
            state = "new" if int(row["paired"]) == 0 and np.isnan(row["mean_a_all"]) else "gone"
            verdict.append(state)
            words.append(f"{state}: measured on the {'candidate' if state == 'new' else 'baseline'} only")
            lower.append(math.nan)
            upper.append(math.nan)
            p.append(math.nan)
            after.append(None)
            continue
        scale = scale_of(str(row["check"]))
        higher = bool(row["higher_is_better"])
        verdict.append(d.decision)
        words.append(sequential_words(d, cases=int(facts["cases"]), conf=conf, scale=scale, higher=higher))
        lower.append(d.lower if math.isfinite(d.lower) else math.nan)
        upper.append(d.upper if math.isfinite(d.upper) else math.nan)
        p.append(d.p_value)
        after.append(d.after if d.bounded else None)
    out["lower_bound"], out["upper_bound"] = lower, upper
    out["ci_low"], out["ci_high"] = lower, upper
    out["p_value"], out["p_adjusted"] = p, math.nan
    out["verdict"], out["words"] = verdict, words
    out["gates"] = [v == "worse" for v in verdict]
    out["decided_after"] = after
    return out


def compare_sequential(
    a: Any, b: Any, design: Mapping[str, Any], *, confidence: float | None, margin: Margin | None,
    fail_on_missing: bool, fail_on_degraded: bool, draws: int, seed: int,
) -> dict[str, Any]:  # fmt: skip
    """``compare(a, b)`` of a candidate the sequential gate ran: the fields of its ``Comparison``, over the cases
    it ran, with its decisions replayed (``evalnb.comparison._core`` builds the object)."""
    from evalnb.comparison._frames import scores_of, suite_of
    from evalnb.comparison._triage import case_table, check_counts
    from evalnb.comparison._verdicts import _degraded_words, check_tests, finish

    if confidence is not None or margin is not None:
        check_options(0.0 if margin is None else margin, 0.95 if confidence is None else confidence)
    cells, decisions, facts = replay(scores_of(a), b, design, margin=margin, confidence=confidence)
    conf_value, the_margin = float(facts["confidence"]), facts["margin"]
    raw, states = check_tests(cells, confidence=conf_value, margin=the_margin, draws=draws, seed=seed)
    cases = case_table(cells, confidence=conf_value, draws=draws, seed=seed)
    conf = f"{conf_value:.0%}" if round(conf_value * 100, 6).is_integer() else f"{conf_value:.1%}"
    table = sequential_table(raw, cells, decisions, facts, conf=conf)
    table["words"] = [
        w + _degraded_words(row, fail_on_degraded=fail_on_degraded)
        for w, (_, row) in zip(table["words"], table.iterrows(), strict=True)
    ]
    if fail_on_degraded:
        table["gates"] = table["gates"] | (table["degraded_b"] > 0)
    if fail_on_missing:
        table["gates"] = table["gates"] | (table["verdict"] == "gone")
    gating = [d for d in decisions if d.bounded]
    facts = {**facts, "gating": len(gating), "calls_saved": int(b.meta.calls_saved or 0)}
    suites = [suite_of(x) for x in (a, b)]
    return {
        "cases": cases,
        "checks": finish(table, check_counts(cases)),
        "confidence": conf_value,
        "margin": the_margin,
        "suite": suites[1] or suites[0],
        "family": f"the {len(gating)} gating check{'s' * (len(gating) != 1)}",
        "_raw": raw,
        "_states": states,
        "sequential": dict(facts),
    }


def report_head(cmp: Any, where: str) -> list[str]:
    """The first line of a sequential comparison's report, and where the run stopped."""
    f = cmp.sequential
    n, ran, batch = int(f["cases"]), int(f["cases_run"]), int(f["batch"])
    share = float(f.get("alpha", 1 - cmp.confidence)) / (1 - cmp.confidence) if cmp.confidence < 1 else 1.0
    family = f"Holm over {cmp.family}" + (f", {share:.0%} of the error rate" if share < 1 - 1e-9 else "")
    head = (
        f"Comparison {cmp.a_label} -> {cmp.b_label}{where} (sequential gate: one-sided {cmp._conf()} "
        f"anytime-valid, {cmp._margin_words()}, {family}; a look after every {batch} cases)"
    )
    open_ = cmp.checks["verdict"] == "not decided"
    if ran < n:
        saved = int(f.get("calls_saved", 0))
        stop = (
            f"Stopped after {ran} of {n} cases: every gating check decided; {saved} case "
            f"run{'s' * (saved != 1)} not run (skipped)"
        )
    elif bool(open_.any()):
        stop = f"Ran all {n} cases; not decided: {', '.join(cmp.checks.loc[open_, 'check_id'])}"
    else:
        stop = f"Ran all {n} cases; every gating check decided"
    return [head, stop]
