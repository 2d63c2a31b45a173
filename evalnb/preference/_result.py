"""``Pairwise``: what :func:`evalnb.pairwise` returns: the verdicts per case and b's win rate with its test."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb._deprecation import text_summary

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CASES_COLUMNS", "Pairwise"]

CASES_COLUMNS: dict[str, str] = {
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "turn": "Int64",
    "run": "Int64",
    "winner": "string",
    "verdict_ab": "string",
    "verdict_ba": "string",
    "consistent": "boolean",
    "score": "float64",
    "weighted": "boolean",
    "status": "string",
    "reason": "string",
    "prompt": "string",
    "a": "string",
    "b": "string",
    "judge": "string",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "cost": "float64",
}
_SHOWN = 20


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The ``cases`` frame: exactly :data:`CASES_COLUMNS`, in order, with their dtypes."""
    import pandas as pd

    data = {c: [r.get(c) for r in rows] for c in CASES_COLUMNS}
    return pd.DataFrame(data, columns=list(CASES_COLUMNS)).astype(CASES_COLUMNS)


def _pct(v: float) -> str:
    return "n/a" if v != v else f"{v:.1%}"


@dataclass
class Pairwise:
    """The outcome of :func:`evalnb.pairwise`: which of two versions a judge prefers, with honest statistics.

    Attributes:
        cases: one row per case x turn (x run, runs paired by number): ``case_id, case_name, category, turn,
            run, winner`` (``"a"``, ``"b"``, ``"tie"``; NA when not judged), ``verdict_ab`` (the verdict with a's
            answer shown first), ``verdict_ba`` (b's first), ``consistent`` (both orders agree), ``score``
            (b's share: 1, 0.5, 0, or probability-weighted), ``weighted``, ``status`` (``judged`` or
            ``degraded``: the judge failed or gave no readable verdict), ``reason``, ``prompt``, ``a``, ``b``,
            ``judge``, tokens and ``cost``.
        win_rate: b's win rate over cases, ties as half (NaN when nothing was judged).
        ci_low: the low end of its two-sided interval at ``confidence``.
        ci_high: the high end.
        p_value: one-sided p-value of "b is worse" (the exact sign-flip test of the case scores about 0.5).
        p_better: one-sided p-value of "b is better".
        position_bias: the share (0-1) of pairs judged in both orders whose verdicts differ (NaN with one order).
        confidence: the confidence of the test.
        a_label: what a is (its version, run id or ``"a"``).
        b_label: what b is.
        judge: the judge's label.
        orderings: 2 (each pair in both orders) or 1 (once, in a seeded random order).
        left_out: the pairs not judged (one side has no answer, the prompts differ): ``case_id, turn, run, why``.
        suite: the suite compared, when known.
        cases_counted: the cases the statistics count (those with a judged pair).
        first_favoured: of the pairs whose verdicts differ, how many favoured the answer shown first.
        flips: the pairs whose verdicts differ with the order.

    Example::

        pw = evalnb.pairwise(a, b, judge="openai:gpt-4o-mini")
        pw.win_rate, (pw.ci_low, pw.ci_high), pw.p_value, pw.position_bias, pw.exit_code
        pw.cases[pw.cases["winner"] == "a"]
    """

    cases: pd.DataFrame
    win_rate: float
    ci_low: float
    ci_high: float
    p_value: float
    p_better: float
    position_bias: float
    confidence: float
    a_label: str = "a"
    b_label: str = "b"
    judge: str = ""
    orderings: int = 2
    left_out: pd.DataFrame | None = None
    suite: str | None = None
    cases_counted: int = 0
    first_favoured: int = 0
    flips: int = 0
    can_reject: bool = True
    notes: list[str] = field(default_factory=list)
    _results: tuple[Any, Any] | None = field(default=None, repr=False)

    # -- the gate --------------------------------------------------------------------------------------

    @property
    def worse(self) -> bool:
        """Whether b is worse than a at the confidence (what ``exit_code`` says)."""
        return bool(self.p_value == self.p_value and self.p_value <= 1.0 - self.confidence)

    @property
    def better(self) -> bool:
        """Whether b is better than a at the confidence."""
        return bool(self.p_better == self.p_better and self.p_better <= 1.0 - self.confidence)

    @property
    def exit_code(self) -> int:
        """1 when b is worse at the confidence, else 0 (what ``evalnb pairwise`` exits with)."""
        return 1 if self.worse else 0

    @property
    def verdict(self) -> str:
        """``"worse"``, ``"better"``, ``"no difference shown"`` or ``"not judged"``."""
        if self.cases_counted == 0:
            return "not judged"
        return "worse" if self.worse else "better" if self.better else "no difference shown"

    @property
    def counts(self) -> dict[str, int]:
        """Judged pairs won by a, won by b, tied; and the pairs the judge failed on (``degraded``)."""
        c = self.cases
        judged = c[c["status"] == "judged"]
        return {
            "a": int((judged["winner"] == "a").sum()),
            "b": int((judged["winner"] == "b").sum()),
            "tie": int((judged["winner"] == "tie").sum()),
            "degraded": int((c["status"] == "degraded").sum()),
        }

    @property
    def cost(self) -> float | None:
        """What the judge cost (None when it has no prices)."""
        v = self.cases["cost"].dropna()
        return float(v.sum()) if len(v) else None

    def explore(self) -> Any:
        """The failure browser's comparison of the two Results, with these verdicts beside the answers.

        Example::

            evalnb.pairwise(a, b, judge=judge).explore()
        """
        from evalnb import _hooks

        if self._results is None:
            raise ValueError("explore() needs the two Results this comparison was made from")
        # evalnb.browser sits above evalnb.preference: it is reached through the slot evalnb/__init__.py fills
        return _hooks.implementation("pairwise.explore")(self, *self._results)

    # -- words -----------------------------------------------------------------------------------------

    def _conf(self) -> str:
        return (
            f"{self.confidence:.0%}"
            if round(self.confidence * 100, 6).is_integer()
            else f"{self.confidence:g}"
        )

    summary = text_summary("Pairwise")

    def headline(self) -> str:
        """One paragraph: the win rate, its interval, the verdict and the position bias."""
        n = self.counts
        if self.cases_counted == 0:
            return (
                f"{self.b_label} against {self.a_label}: nothing was judged ({n['degraded']} judge failures)."
            )
        order = "both orders" if self.orderings == 2 else "one seeded random order"
        head = (
            f"{self.b_label} against {self.a_label}: {self.b_label} wins {_pct(self.win_rate)} of "
            f"{self.cases_counted} cases, ties as half ({self._conf()} interval {_pct(self.ci_low)} to "
            f"{_pct(self.ci_high)}); judged by {self.judge} in {order}: of {n['a'] + n['b'] + n['tie']} pairs "
            f"(case x turn x run), {n['b']} won by {self.b_label}, {n['a']} by {self.a_label}, {n['tie']} ties."
        )
        if self.worse:
            verdict = f"{self.b_label} is worse (one-sided p = {self.p_value:.3g} at {self._conf()})."
        elif self.better:
            verdict = (
                f"{self.b_label} is better (one-sided p = {self.p_better:.3g}); not worse at {self._conf()}."
            )
        elif not self.can_reject:
            verdict = f"too few cases with a winner for the test to reach {self._conf()}: no difference can be shown."
        else:
            verdict = f"No difference shown at {self._conf()} (p of 'b is worse' = {self.p_value:.3g})."
        lines = [head, verdict]
        if self.orderings == 2 and self.position_bias == self.position_bias:
            lean = f" ({self.first_favoured} of them favoured the answer shown first)" if self.flips else ""
            lines.append(
                f"Position bias: {_pct(self.position_bias)} of the pairs got a different verdict in the other "
                f"order{lean}; those count as ties."
            )
        if n["degraded"]:
            lines.append(f"{n['degraded']} pair(s) not judged: the judge failed or gave no readable verdict.")
        if self.left_out is not None and len(self.left_out):
            why = self.left_out["why"].value_counts()
            lines.append("Left out: " + "; ".join(f"{k}: {v}" for k, v in why.items()) + ".")
        return "\n".join(lines + self.notes)

    def report(self) -> str:
        """The summary, then the pairs a won and the pairs whose verdict flipped with the order."""
        c = self.cases
        lines = [self.headline()]
        for title, rows in (
            (f"Won by {self.a_label}", c[c["winner"] == "a"]),
            ("Verdict flipped with the order", c[c["consistent"].eq(False).fillna(False)]),
        ):
            if len(rows):
                lines.append(f"{title}:")
                for r in rows.head(_SHOWN).itertuples(index=False):
                    why = str(r.reason)[:160] if r.reason is not None and r.reason == r.reason else ""
                    lines.append(f"  {r.case_id} turn {r.turn} run {r.run}: {why}")
                if len(rows) > _SHOWN:
                    lines.append(f"  ... and {len(rows) - _SHOWN} more (pw.cases lists them all)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        cols = [
            "case_id",
            "turn",
            "run",
            "winner",
            "verdict_ab",
            "verdict_ba",
            "consistent",
            "score",
            "reason",
        ]
        table = (
            self.cases[cols]
            .head(50)
            .to_html(index=False, escape=True, na_rep="", float_format="{:.2f}".format)
        )
        return (
            f"<b>Pairwise</b> {esc(self.a_label)} vs {esc(self.b_label)}"
            f"<pre>{esc(self.headline())}</pre>{table}"
        )

    def __repr__(self) -> str:
        rate = "n/a" if math.isnan(self.win_rate) else f"{self.win_rate:.3f}"
        return (
            f"Pairwise({self.a_label!r} vs {self.b_label!r}: win rate of b {rate} "
            f"[{self.ci_low:.3f}, {self.ci_high:.3f}], p {self.p_value:.3g}, {self.verdict})"
        )
