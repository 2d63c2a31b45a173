"""The failure browser's widgets (ipywidgets): filters, a case list, run and turn pickers and the case view.

Imported only by ``result.explore()`` and ``comparison.explore()`` (ipywidgets is the ``notebooks`` extra).
Each browser is an ``ipywidgets.VBox``: the last line of a cell shows it. ``select(case_id)`` picks a case
from code; ``html`` is the view shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as w

from evalnb.browser import _data as data
from evalnb.browser._data import ALL, NOT_PASSED
from evalnb.browser._views import case_html, comparison_html, verdict_html
from evalnb.results._frames import records

if TYPE_CHECKING:
    from evalnb.comparison import Comparison
    from evalnb.preference import Pairwise
    from evalnb.results import Result

__all__ = ["ComparisonBrowser", "PairwiseBrowser", "ResultBrowser"]

_STATUSES = [
    ("failed or degraded", NOT_PASSED),
    ("failed", "failed"),
    ("degraded", "degraded"),
    ("passed", "passed"),
    ("skipped", "skipped"),
    ("all", ALL),
]
_CHANGES = [
    ("changed (any way)", "moved"),
    ("regressed", "regressed"),
    ("improved", "improved"),
    ("changed", "changed"),
    ("new", "new"),
    ("gone", "gone"),
    ("degraded", "degraded"),
    ("same", "same"),
    ("all", ALL),
]
_MOVED = {"regressed", "improved", "changed", "new", "gone", "degraded"}
_NARROW = {"description_width": "60px"}


class _Browser(w.VBox):
    """What both browsers share: filters over a case list, run and turn pickers, and the view."""

    def __init__(self, filters: list[w.Dropdown]) -> None:
        self._busy = False
        self.filters = filters
        self.count = w.HTML()
        self.count.add_class("evalnb-count")
        self.cases = w.Select(options=[], rows=8, layout=w.Layout(width="100%"))
        self.cases.add_class("evalnb-cases")
        self.run = w.Dropdown(description="run", options=[], style=_NARROW, layout=w.Layout(width="160px"))
        self.turn = w.Dropdown(description="turn", options=[], style=_NARROW, layout=w.Layout(width="160px"))
        self.view = w.HTML()
        self.view.add_class("evalnb-view")
        for f in filters:
            f.add_class(f"evalnb-filter-{f.description}")
            f.observe(lambda _change: self._refilter(), names="value")
        self.cases.observe(lambda _change: self._picked(), names="value")
        self.run.observe(lambda _change: self._run_picked(), names="value")
        self.turn.observe(lambda _change: self._render(), names="value")
        super().__init__([w.HBox(filters), self.count, self.cases, w.HBox([self.run, self.turn]), self.view])
        self.add_class("evalnb-explorer")

    # -- to be given by each browser -----------------------------------------------------------------

    def _case_ids(self) -> list[str]:
        raise NotImplementedError

    def _label(self, case_id: str) -> str:
        raise NotImplementedError

    def _runs(self, case_id: str) -> list[int]:
        raise NotImplementedError

    def _turns(self, case_id: str, run: int) -> list[int]:
        raise NotImplementedError

    def _first(self, case_id: str) -> tuple[int, int]:
        raise NotImplementedError

    def _html(self, case_id: str, run: int, turn: int) -> str:
        raise NotImplementedError

    # -- the flow ------------------------------------------------------------------------------------

    @property
    def html(self) -> str:
        """The HTML of the view shown."""
        return str(self.view.value)

    def select(self, case_id: str, run: int | None = None, turn: int | None = None) -> None:
        """Show ``case_id`` (its first run and turn that did not pass, unless given); the filters widen to
        ``all`` when they hide it.

        Raises:
            KeyError: for a case the browser does not have.
        """
        if case_id not in self._case_ids():
            self._busy = True
            try:
                for f in self.filters:
                    f.value = ALL
            finally:
                self._busy = False
            self._refilter()
            if case_id not in self._case_ids():
                raise KeyError(case_id)
        self.cases.value = case_id
        if run is not None:
            self.run.value = run
        if turn is not None:
            self.turn.value = turn

    def _refilter(self) -> None:
        if self._busy:
            return
        ids = self._case_ids()
        keep = self.cases.value if self.cases.value in ids else (ids[0] if ids else None)
        self._busy = True
        try:
            self.cases.options = [(self._label(c), c) for c in ids]
            self.cases.value = keep
        finally:
            self._busy = False
        self.count.value = f"<b>{len(ids)}</b> case{'s' * (len(ids) != 1)} {'match' if len(ids) != 1 else 'matches'} the filters"
        self._picked()

    def _picked(self) -> None:
        if self._busy:
            return
        cid = self.cases.value
        self._busy = True
        try:
            if cid is None:
                self.run.options, self.turn.options = [], []
            else:
                run, turn = self._first(cid)
                self.run.options = [(str(r + 1), r) for r in self._runs(cid)]
                self.run.value = run if run in _values(self.run) else None
                self.turn.options = [(str(t + 1), t) for t in self._turns(cid, run)]
                self.turn.value = turn if turn in _values(self.turn) else None
        finally:
            self._busy = False
        self._render()

    def _run_picked(self) -> None:
        if self._busy or self.cases.value is None or self.run.value is None:
            return
        self._busy = True
        try:
            turns = self._turns(self.cases.value, self.run.value)
            self.turn.options = [(str(t + 1), t) for t in turns]
            self.turn.value = turns[0] if turns else None
        finally:
            self._busy = False
        self._render()

    def _render(self) -> None:
        if self._busy:
            return
        cid = self.cases.value
        if cid is None:
            self.view.value = '<div class="evalnb-browser"><i>No case matches these filters.</i></div>'
            return
        self.view.value = self._html(cid, self.run.value or 0, self.turn.value or 0)


def _values(dropdown: w.Dropdown) -> list[Any]:
    """The values of a dropdown's ``(label, value)`` options."""
    return [value for _label, value in dropdown.options]


class ResultBrowser(_Browser):
    """``result.explore()``: the cases of one Result, failed and degraded ones first shown."""

    def __init__(self, result: Result) -> None:
        self.result = result
        status = w.Dropdown(description="status", options=_STATUSES, style=_NARROW)
        check = w.Dropdown(
            description="check",
            options=[("all", ALL), *[(c, c) for c in data.check_ids(result)]],
            style=_NARROW,
        )
        category = w.Dropdown(
            description="category",
            options=[("all", ALL), *[(c, c) for c in data.categories(result)]],
            style=_NARROW,
        )
        self.status, self.check, self.category = status, check, category
        if not data.case_ids(result):
            status.value = ALL  # nothing failed: browse every case
        super().__init__([status, check, category])
        self._refilter()

    def _case_ids(self) -> list[str]:
        return data.case_ids(
            self.result, status=self.status.value, check=self.check.value, category=self.category.value
        )

    def _label(self, case_id: str) -> str:
        # under a check filter, a case is listed by that check's status, not the case's
        return data.case_label(self.result, case_id, check=self.check.value)

    def _runs(self, case_id: str) -> list[int]:
        return data.runs_of(self.result, case_id)

    def _turns(self, case_id: str, run: int) -> list[int]:
        return data.turns_of(self.result, case_id, run)

    def _first(self, case_id: str) -> tuple[int, int]:
        return data.first_failing(self.result, case_id, check=self.check.value)

    def _html(self, case_id: str, run: int, turn: int) -> str:
        return case_html(data.case_view(self.result, case_id, run, turn))


class ComparisonBrowser(_Browser):
    """``comparison.explore()``: the cases of a comparison, both versions' answers side by side."""

    def __init__(
        self, comparison: Comparison, a: Result, b: Result, *, pairwise: Pairwise | None = None
    ) -> None:
        self.comparison, self.a, self.b = comparison, a, b
        self.pairwise = pairwise
        cases = comparison.cases
        change = w.Dropdown(description="change", options=_CHANGES, style=_NARROW)
        checks = [str(c) for c in dict.fromkeys(cases["check_id"].tolist())]
        check = w.Dropdown(
            description="check", options=[("all", ALL), *[(c, c) for c in checks]], style=_NARROW
        )
        cats = [str(c) for c in dict.fromkeys(cases["category"].dropna().tolist())]
        category = w.Dropdown(
            description="category", options=[("all", ALL), *[(c, c) for c in cats]], style=_NARROW
        )
        self.change, self.check, self.category = change, check, category
        if not bool(cases["change"].isin(_MOVED).any()):
            change.value = ALL
        super().__init__([change, check, category])
        self._refilter()

    def _case_ids(self) -> list[str]:
        c = self.comparison.cases
        if self.change.value == "moved":
            c = c[c["change"].isin(_MOVED)]
        elif self.change.value != ALL:
            c = c[c["change"] == self.change.value]
        if self.check.value != ALL:
            c = c[c["check_id"] == self.check.value]
        if self.category.value != ALL:
            c = c[c["category"] == self.category.value]
        return [str(x) for x in dict.fromkeys(c["case_id"].tolist())]

    def _label(self, case_id: str) -> str:
        rows = self.comparison.cases[self.comparison.cases["case_id"] == case_id]
        moved = [f"{r.check_id} {r.change}" for r in rows.itertuples(index=False) if r.change != "same"]
        return f"{case_id} · {', '.join(moved) if moved else 'same'}"

    def _side(self, case_id: str) -> list[Result]:
        return [r for r in (self.a, self.b) if case_id in set(r.runs["case_id"])]

    def _runs(self, case_id: str) -> list[int]:
        return sorted({run for r in self._side(case_id) for run in data.runs_of(r, case_id)})

    def _turns(self, case_id: str, run: int) -> list[int]:
        return sorted({t for r in self._side(case_id) for t in data.turns_of(r, case_id, run)})

    def _first(self, case_id: str) -> tuple[int, int]:
        side = self._side(case_id)
        return data.first_failing(side[-1], case_id) if side else (0, 0)

    def _html(self, case_id: str, run: int, turn: int) -> str:
        def view(result: Result) -> data.CaseView | None:
            if run not in data.runs_of(result, case_id) or turn not in data.turns_of(result, case_id, run):
                return None
            return data.case_view(result, case_id, run, turn)

        rows = self.comparison.cases[self.comparison.cases["case_id"] == case_id]
        changes = records(rows[["check_id", "a", "b", "delta", "change"]])
        labels = (self.comparison.a_label, self.comparison.b_label)
        verdict = _verdict(self.pairwise, case_id, run, turn, labels)
        return comparison_html(view(self.a), view(self.b), changes, labels=labels, verdict=verdict)


def _verdict(pairwise: Pairwise | None, case_id: str, run: int, turn: int, labels: tuple[str, str]) -> str:
    """The pairwise verdict of this case, run and turn as HTML ("" when there is none)."""
    if pairwise is None:
        return ""
    c = pairwise.cases
    rows = c[(c["case_id"] == case_id) & (c["run"] == run) & (c["turn"] == turn)]
    if rows.empty:
        return ""
    return verdict_html(records(rows)[0], labels=labels, judge=pairwise.judge)


_WINNERS = [
    ("all", ALL),
    ("a won", "a"),
    ("b won", "b"),
    ("tie", "tie"),
    ("orders disagree", "flipped"),
    ("not judged", "degraded"),
]


class PairwiseBrowser(_Browser):
    """``pw.explore()``: the pairs a judge compared, both answers side by side with the verdict beside them."""

    def __init__(self, pairwise: Pairwise, a: Result, b: Result) -> None:
        self.pairwise, self.a, self.b = pairwise, a, b
        la, lb = pairwise.a_label, pairwise.b_label
        options = [
            (text.replace("a won", f"{la} won").replace("b won", f"{lb} won"), v) for text, v in _WINNERS
        ]
        winner = w.Dropdown(description="winner", options=options, style=_NARROW)
        cats = [str(x) for x in dict.fromkeys(pairwise.cases["category"].dropna().tolist())]
        category = w.Dropdown(
            description="category", options=[("all", ALL), *[(x, x) for x in cats]], style=_NARROW
        )
        self.winner, self.category = winner, category
        super().__init__([winner, category])
        self._refilter()

    def _rows(self, case_id: str | None = None) -> Any:
        c = self.pairwise.cases
        if case_id is not None:
            return c[c["case_id"] == case_id]
        if self.winner.value == "flipped":
            c = c[c["consistent"].eq(False).fillna(False)]
        elif self.winner.value == "degraded":
            c = c[c["status"] == "degraded"]
        elif self.winner.value != ALL:
            c = c[c["winner"] == self.winner.value]
        if self.category.value != ALL:
            c = c[c["category"] == self.category.value]
        return c

    def _case_ids(self) -> list[str]:
        return [str(x) for x in dict.fromkeys(self._rows()["case_id"].tolist())]

    def _label(self, case_id: str) -> str:
        names = {"a": self.pairwise.a_label, "b": self.pairwise.b_label, "tie": "tie"}
        won = [
            names.get(str(x), "not judged") if x == x and x is not None else "not judged"
            for x in self._rows(case_id)["winner"].astype(object).where(lambda s: s.notna(), None)
        ]
        return f"{case_id} · {', '.join(dict.fromkeys(won))}"

    def _runs(self, case_id: str) -> list[int]:
        return sorted({int(x) for x in self._rows(case_id)["run"]})

    def _turns(self, case_id: str, run: int) -> list[int]:
        rows = self._rows(case_id)
        return sorted({int(x) for x in rows.loc[rows["run"] == run, "turn"]})

    def _first(self, case_id: str) -> tuple[int, int]:
        rows = self._rows(case_id)
        pick = rows[rows["winner"] != "b"] if (rows["winner"] != "b").any() else rows
        r = pick.iloc[0]
        return int(r["run"]), int(r["turn"])

    def _html(self, case_id: str, run: int, turn: int) -> str:
        def view(result: Result) -> data.CaseView | None:
            if run not in data.runs_of(result, case_id) or turn not in data.turns_of(result, case_id, run):
                return None
            return data.case_view(result, case_id, run, turn)

        labels = (self.pairwise.a_label, self.pairwise.b_label)
        verdict = _verdict(self.pairwise, case_id, run, turn, labels)
        return comparison_html(view(self.a), view(self.b), [], labels=labels, verdict=verdict)
