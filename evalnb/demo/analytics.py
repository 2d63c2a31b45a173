"""A small rule-based NL-to-SQL agent over the FoodMart sample (offline, deterministic).

It reads a question the way a cube front end would: it finds measures ("store sales", "units", "profit"),
levels ("by state", "product families", "per quarter"), member filters ("in CA", "for Drink", "in Q4"),
top/bottom-N, a trend request ("week-on-week"), a view change ("as a bar chart") and follow-ups that refine
the previous question of the conversation ("now break it down by state"). The names come from the cube
model (``cube.yaml``: measures, levels and their aliases) and the filter members from the database itself,
so the agent answers questions it has never seen; it does not look up the example suite's questions.

Answers are :class:`evalnb.Response` objects: ``QUERY`` with rows, ``INSIGHT`` with markdown citing the
figures, ``VIEW_CHANGE``, or ``REFUSED`` with a reason naming the cube.
"""

from __future__ import annotations

import functools
import itertools
import re
import sqlite3
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from evalnb.agents._base import Request, Response
from evalnb.data._cube import CubeModel, Level, Measure
from evalnb.data._sql import Statement
from evalnb.demo._sample import foodmart_db

__all__ = ["FoodMartAgent", "analyst"]

MODEL = "foodmart-rules-1"
Flaw = Literal["cost-for-sales", "ignore-filters"]

_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_STATE_NAMES = {"california": "CA", "oregon": "OR", "washington": "WA"}
_TIME_LEVELS = {"Year", "Quarter", "Month", "Week", "Day", "Weekday"}
_CHARTS = ("bar", "column", "line", "pie", "area", "scatter", "table")
_FOLLOW_UP = re.compile(
    r"^\s*(now|and|also|then|what about|how about|same|only|just|instead|drill|break|split|ok|okay)\b"
    r"|\b(it|that|this|those|these|them)\b.*\b(down|by|instead|only)\b|\bbreak (it|this|that)? ?down\b",
    re.I,
)
_TREND = re.compile(
    r"\btrend|\btrending|week[- ]on[- ]week|week[- ]over[- ]week|\bwow\b|over time|\bgrowing\b", re.I
)
_VIEW = re.compile(
    r"\b(as|into|to|in) an? (bar|column|line|pie|area|scatter)\b|\b(bar|column|line|pie|area|scatter) (chart|graph|plot)\b"
    r"|\b(switch|change|turn) (it|this|that|the view)\b|\bas a table\b|\bshow (it|this|that) as\b",
    re.I,
)


@dataclass
class _Query:
    measures: list[str] = field(default_factory=list)
    levels: list[str] = field(default_factory=list)
    filters: dict[str, list[str]] = field(default_factory=dict)  # level -> members
    limit: int | None = None
    descending: bool = True
    ranked: bool = False

    @property
    def empty(self) -> bool:
        return not (self.measures or self.levels or self.filters or self.ranked)


class FoodMartAgent:
    """The demo analytics agent (``model="foodmart-rules-1"``).

    Args:
        db: the SQLite sample database; built on first use when omitted (:func:`evalnb.demo.foodmart_db`).
        flaw: ``"cost-for-sales"`` answers Store Cost when asked for Store Sales; ``"ignore-filters"`` drops
            member filters. Either makes it "the previous model version" of a demo comparison.
        cube: the cube model; by default ``cube.yaml`` next to the database.

    Example::

        agent = FoodMartAgent()
        agent.answer("show me unit sales by product family").rows[0]
        # {'productFamily': 'Food', 'unitSales': 191940}
    """

    def __init__(
        self, db: str | Path | None = None, *, flaw: Flaw | None = None, cube: CubeModel | None = None
    ):
        self.db = Path(db) if db is not None else foodmart_db()
        if flaw not in (None, "cost-for-sales", "ignore-filters"):
            raise ValueError(f"unknown flaw {flaw!r}: use 'cost-for-sales' or 'ignore-filters'")
        self.flaw = flaw
        self.model = MODEL if flaw is None else f"{MODEL}-{flaw}"
        self.cube = cube or CubeModel.load(self.db.with_name("cube.yaml"))
        self._sql_cube = self.cube
        if flaw == "cost-for-sales":
            # The flaw: the SQL for Store Sales reads the cost column (the label stays "Store Sales").
            measures = dict(self.cube.measures)
            measures["Store Sales"] = replace(measures["Store Sales"], sql=measures["Store Cost"].sql)
            self._sql_cube = replace(self.cube, measures=measures)
        self._con = sqlite3.connect(
            self.db.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False
        )
        self._lock = threading.Lock()
        self._members = self._load_members()
        self._states = sorted({member for level, member, _p, cs in self._members if level == "State" and cs})
        self._measure_words = _vocabulary({m.name: m for m in self.cube.measures.values()})
        self._level_words = _vocabulary({lv.name: lv for lv in self.cube.levels.values()})

    def __repr__(self) -> str:
        return f"FoodMartAgent(flaw={self.flaw!r})" if self.flaw else "FoodMartAgent()"

    # -- the Agent protocol -------------------------------------------------------------------------

    async def respond(self, request: Request) -> Response:
        """Answer one turn; earlier user messages in ``request.history`` give the context of follow-ups."""
        return self.answer(request.prompt, request.history)

    def answer(self, question: str, history: list[dict[str, str]] | None = None) -> Response:
        """Answer a question synchronously (handy in a notebook).

        Example::

            FoodMartAgent().answer("what's the weather in Paris?").intent
            # 'REFUSED'
        """
        previous: _Query | None = None
        for msg in history or []:
            if msg.get("role") == "user":
                parsed = self._parse(msg.get("content", ""))
                if parsed.empty:
                    continue
                previous = (
                    self._merge(previous, parsed)
                    if previous and self._is_follow_up(msg["content"])
                    else parsed
                )

        if _VIEW.search(question) and not self._mentions_data(question):
            return self._view_change(question, previous)
        if _TREND.search(question):
            base = self._parse(question)
            if previous and self._is_follow_up(question):
                base = self._merge(previous, base)
            return self._trend(question, base)
        parsed = self._parse(question)
        if previous is not None and self._is_follow_up(question):
            query = self._merge(previous, parsed)
        elif parsed.empty:
            return self._refuse(question)
        else:
            query = parsed
        unknown = self._unknown_member(question)
        if unknown is not None:
            # Answering without the filter would be the all-USA figure under a question about a subset.
            reason = (
                f"{unknown!r} is not a member of the FoodMart {self.cube.name} cube, so I cannot filter on it "
                f"(its stores are in {', '.join(self._states)})."
            )
            return Response(text=reason, intent="REFUSED", refusal=reason, model=self.model)
        return self._query(query)

    # -- parsing ------------------------------------------------------------------------------------

    def _is_follow_up(self, text: str) -> bool:
        return bool(_FOLLOW_UP.search(text))

    def _mentions_data(self, text: str) -> bool:
        q = self._parse(text)
        return bool(q.measures or q.levels)

    def _parse(self, text: str) -> _Query:
        q = _Query()
        low = " " + re.sub(r"[^\w%$.-]+", " ", text.lower()) + " "
        taken: list[tuple[int, int]] = []
        for word, name in self._measure_words:  # longest names first: "unit sales" before "sales"
            for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", low):
                if not _overlaps(m.span(), taken):
                    taken.append(m.span())
                    if name not in q.measures:
                        q.measures.append(name)
        q.measures.sort(key=lambda n: min(s for s, _ in _spans(low, self._measure_words, n, taken)))

        # Member filters ("in CA", "for Drink", "in Q4"): members are read from the database.
        for level, member, pattern, case_sensitive in self._members:
            if case_sensitive:
                hit = re.search(pattern, text) is not None
            else:
                spans = [m.span() for m in re.finditer(pattern, low) if not _overlaps(m.span(), taken)]
                taken.extend(spans)
                hit = bool(spans)
            if hit and member not in q.filters.setdefault(level, []):
                q.filters[level].append(member)
        q.filters = {k: v for k, v in q.filters.items() if v}

        found: list[tuple[int, str]] = []
        for word, name in self._level_words:
            for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", low):
                if not _overlaps(m.span(), taken):
                    taken.append(m.span())
                    found.append((m.start(), name))
        q.levels = list(dict.fromkeys(name for _, name in sorted(found)))

        top = re.search(
            r"\b(top|best|highest|largest|biggest|bottom|worst|lowest|smallest)\s+(\d+|\w+)?", low
        )
        if top:
            q.ranked = True
            q.descending = top.group(1) not in ("bottom", "worst", "lowest", "smallest")
            n = top.group(2)
            if n and (n.isdigit() or n in _NUMBERS):
                q.limit = int(n) if n.isdigit() else _NUMBERS[n]
        elif re.search(r"\b(the most|the least|sells? the most|sold the most|the highest|the lowest)\b", low):
            q.ranked, q.limit = True, 1
            q.descending = "least" not in low and "lowest" not in low
        return q

    def _unknown_member(self, question: str) -> str | None:
        """A capitalised name after "in"/"for" ("in Texas") that is no member, measure or level, if any."""
        for m in re.finditer(r"\b(?:in|for|from|at)\s+([A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*)?)", question):
            phrase = m.group(1)
            low = phrase.lower()
            if any(re.search(pat, phrase if cs else low) for _lv, _mb, pat, cs in self._members):
                continue
            if any(low.startswith(word) for word, _ in (*self._measure_words, *self._level_words)):
                continue
            return phrase
        return None

    def _merge(self, before: _Query, now: _Query) -> _Query:
        """A follow-up keeps what it does not change: new levels replace those of the same dimension."""
        levels = list(before.levels)
        for name in now.levels:
            dim = self.cube.levels[name].dimension
            levels = [lv for lv in levels if self.cube.levels[lv].dimension != dim]
            levels.append(name)
        filters = {**before.filters, **now.filters}
        return _Query(
            measures=now.measures or before.measures,
            levels=levels,
            filters=filters,
            limit=now.limit if now.ranked else before.limit,
            descending=now.descending if now.ranked else before.descending,
            ranked=now.ranked or before.ranked,
        )

    def _load_members(self) -> list[tuple[str, str, str, bool]]:
        """(level, member, regex, case-sensitive) for the members a question may name as a filter."""
        out: list[tuple[str, str, str, bool]] = []
        with self._lock:
            for level in (
                "Product Family",
                "Product Department",
                "Product Category",
                "City",
                "Quarter",
                "Month",
            ):
                stmt = self.cube.statement(
                    {"measures": [{"name": "Sales Count"}], "rows": [{"level": level}]}
                )
                for member, _count in self._con.execute(stmt.sql, stmt.params).fetchall():
                    out.append((level, str(member), rf"(?<!\w){re.escape(str(member).lower())}(?!\w)", False))
            states = [r[0] for r in self._con.execute("SELECT DISTINCT store_state FROM store").fetchall()]
        for code in states:
            # Two-letter codes only as written in capitals ("OR" the state, not "or" the word).
            out.append(("State", code, rf"(?<![\w-]){code}(?![\w-])", True))
        for name, code in _STATE_NAMES.items():
            if code in states:
                out.append(("State", code, rf"(?<!\w){name}(?!\w)", False))
        # Longer members first, and coarser levels first for names shared by levels ("Dairy").
        order = {"Product Family": 0, "Product Department": 1, "Product Category": 2}
        out.sort(key=lambda t: (-len(t[1]), order.get(t[0], 3)))
        seen: set[tuple[str, bool]] = set()
        unique = []
        for level, member, pattern, cs in out:
            key = (member if cs else member.lower(), cs)
            if key not in seen:
                seen.add(key)
                unique.append((level, member, pattern, cs))
        return unique

    # -- answers ------------------------------------------------------------------------------------

    def _structured(self, q: _Query, measures: list[str] | None = None) -> dict[str, Any]:
        filters = (
            []
            if self.flaw == "ignore-filters"
            else [{"level": level, "in": members} for level, members in q.filters.items()]
        )
        return {
            "measures": [{"name": m} for m in (measures or q.measures or ["Store Sales"])],
            "rows": [{"level": lv} for lv in q.levels],
            "filters": filters,
        }

    def _run(self, stmt: Statement) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self._lock:
            cur = self._con.execute(stmt.sql, stmt.params)
            cols = [d[0] for d in cur.description]
            return cols, cur.fetchall()

    def _query(self, q: _Query) -> Response:
        structured = self._structured(q)
        measures = [m["name"] for m in structured["measures"]]
        time_only = q.levels and all(lv in _TIME_LEVELS for lv in q.levels)
        if q.ranked or (q.levels and not time_only):
            # Rankings and non-time breakdowns read best first, like the cube front end.
            stmt = self._sql_cube.statement(
                structured, order_by=measures[0], descending=q.descending, limit=q.limit
            )
        else:
            stmt = self._sql_cube.statement(structured)
        cols, rows = self._run(stmt)
        keys = [_camel(c) for c in cols]
        records = [dict(zip(keys, r, strict=True)) for r in rows]
        what = " and ".join(measures)
        by = f" by {', '.join(q.levels)}" if q.levels else ""
        where = "".join(f" in {', '.join(f['in'])}" for f in structured["filters"])
        return Response(
            text=f"{len(records)} row(s) returned: {what}{by}{where}.",
            intent="QUERY",
            rows=records,
            model=self.model,
            meta={"sql": stmt.sql, "params": stmt.params, "query": structured},
        )

    def _trend(self, question: str, q: _Query) -> Response:
        low = question.lower()
        grain = "Month" if "month" in low else "Quarter" if "quarter" in low else "Week"
        label = {"Week": "week", "Month": "month", "Quarter": "quarter"}[grain]
        measure = (q.measures or ["Store Sales"])[0]
        structured = self._structured(_Query(measures=[measure], levels=[grain], filters=q.filters))
        stmt = self._sql_cube.statement(structured)
        _, rows = self._run(stmt)
        values = [float(r[1]) for r in rows]
        keys = [r[0] for r in rows]
        names = [str(k) for k in keys]
        money = self.cube.measures[measure].format == "currency"
        fmt = (lambda v: f"${v:,.2f}") if money else (lambda v: f"{v:,.0f}")
        changes = [b - a for a, b in itertools.pairwise(values)]
        ups = sum(c > 0 for c in changes)
        n = len(values)
        xbar = (n - 1) / 2
        slope = sum((i - xbar) * (v - sum(values) / n) for i, v in enumerate(values)) / max(
            1e-9, sum((i - xbar) ** 2 for i in range(n))
        )
        direction = "up" if slope > 0 else "down"
        last, prev = values[-1], values[-2]
        pct = (last - prev) / prev * 100 if prev else 0.0
        half = n // 2
        first_avg, second_avg = sum(values[:half]) / half, sum(values[half:]) / (n - half)
        best = max(range(n), key=lambda i: values[i])
        worst = min(range(n), key=lambda i: values[i])
        step = f"{label}-on-{label}"
        tag = (lambda i: f"{label} {names[i]}") if grain == "Week" else (lambda i: names[i])
        filt = "".join(f" ({', '.join(f['in'])})" for f in structured["filters"])
        md = "\n".join(
            [
                f"**{measure}**{filt} is trending **{direction}** {step} over 1997 ({n} {label}s).",
                "",
                f"- Latest {label} ({tag(n - 1)}): {fmt(last)}, {'up' if pct >= 0 else 'down'} {abs(pct):.1f}% "
                f"{step} from {fmt(prev)}.",
                f"- {ups} of {len(changes)} {step} changes were increases.",
                f"- Average per {label}: {fmt(first_avg)} in the first half, {fmt(second_avg)} in the second "
                f"({(second_avg - first_avg) / first_avg * 100:+.1f}%).",
                f"- Best {label}: {tag(best)} at {fmt(values[best])}; weakest: {tag(worst)} at {fmt(values[worst])}.",
            ]
        )
        records = [{_camel(grain): k, _camel(measure): v} for k, v in zip(keys, values, strict=True)]
        return Response(
            text=md,
            intent="INSIGHT",
            insight=md,
            rows=records,
            model=self.model,
            meta={"sql": stmt.sql, "params": stmt.params},
        )

    def _view_change(self, question: str, previous: _Query | None) -> Response:
        low = question.lower()
        chart = next((c for c in _CHARTS if re.search(rf"\b{c}\b", low)), "bar")
        subject = ""
        if previous is not None:
            measures = previous.measures or ["Store Sales"]
            subject = f" of {' and '.join(measures)}" + (
                f" by {', '.join(previous.levels)}" if previous.levels else ""
            )
        text = (
            f"Switched the view to a {chart} chart{subject}."
            if chart != "table"
            else f"Switched the view to a table{subject}."
        )
        return Response(text=text, intent="VIEW_CHANGE", model=self.model, meta={"view": {"chart": chart}})

    def _refuse(self, question: str) -> Response:
        measures = ", ".join(self.cube.measures)
        reason = (
            f"That question is outside the FoodMart {self.cube.name} cube: I can only answer questions about "
            f"{measures} by store, product, time (1997) and customer."
        )
        return Response(text=reason, intent="REFUSED", refusal=reason, model=self.model)


def _vocabulary(items: dict[str, Measure | Level]) -> list[tuple[str, str]]:
    words = []
    for name, item in items.items():
        for w in (name, *item.aliases):
            words.append((w.lower(), name))
    return sorted(words, key=lambda t: (-len(t[0]), t[0]))


def _spans(
    low: str, vocab: list[tuple[str, str]], name: str, taken: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    found = []
    for word, n in vocab:
        if n == name:
            found += [
                m.span() for m in re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", low) if m.span() in taken
            ]
    return found or [(10**9, 10**9)]


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in taken)


def _camel(name: str) -> str:
    """``Product Family`` -> ``productFamily`` (the shape analytics front ends return)."""
    parts = re.split(r"[\s_\-]+", name.strip())
    return parts[0].lower() + "".join(p[:1].upper() + p[1:] for p in parts[1:])


@functools.lru_cache(maxsize=1)
def _current() -> FoodMartAgent:
    return FoodMartAgent()


async def analyst(request: Request) -> Response:
    """The demo analytics agent (the current version) as one function, as ``evalnb.toml`` or ``--agent
    evalnb.demo.analytics:analyst`` name it; the FoodMart sample is built on first use."""
    return await _current().respond(request)
