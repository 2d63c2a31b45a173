"""Typed run records: what one case run produced, the unit recorders take.

A :class:`CaseRunRecord` is the outcome of running one case once: per turn a :class:`TurnRecord` (the request
sent, the response, its scores, status, error and timing), the working directory kept for a failed run, and
timings. Records flow from the executor to the recorders (:class:`~evalnb.results._recorders.Recorder`); the
frames of a :class:`~evalnb.results.Result` and the rows of a store are derived from them by
:meth:`CaseRunRecord.rows`.

Example::

    record.status                   # worst of its turns: passed, failed, degraded or skipped
    runs, scores, mismatches, tool_calls = record.rows()
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb._costs import usage_of
from evalnb._scoring import worst
from evalnb._unicode import clean
from evalnb.results._frames import json_cell, mismatch_value

if TYPE_CHECKING:
    from evalnb.agents._base import Request, Response
    from evalnb.checks._registry import Score
    from evalnb.suite import Case

__all__ = ["CaseRunRecord", "Rows", "TurnRecord"]

Rows = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]
"""A record's rows: runs, scores, mismatches and tool calls (see :meth:`CaseRunRecord.rows`)."""


@dataclass(slots=True)
class TurnRecord:
    """One turn of a case run.

    Attributes:
        index: the turn's position in the case (0-based).
        request: what the agent was sent (``None`` for a turn skipped after an earlier one failed).
        response: what came back (``None`` when the agent failed or the turn was skipped), its text made
            encodable on arrival (:func:`evalnb.agents._base.encodable`): rows take it as it is.
        status: ``passed``, ``failed``, ``degraded`` or ``skipped``.
        error: why the agent gave no answer (``None`` when it answered).
        latency_ms: the agent call's wall time (of the last attempt).
        scores: one Score per check of the turn, in the turn's check order.
        statuses: the status of each score (:func:`evalnb._scoring.status_of`).
        check_ids, check_names, options: the checks' ids, names and saved options (shared with the plan).
        usage: the agent's token counts for the turn (:data:`evalnb._costs.TOKEN_KEYS`), every attempt's
            added, a failed one's too; None when the agent reported none.
        cost: what those calls cost (docs/costs.md); None when unknown (no price, or no usage).
    """

    index: int
    request: Request | None
    response: Response | None
    status: str
    error: str | None
    latency_ms: float | None
    scores: list[Score]
    statuses: list[str]
    check_ids: list[str]
    check_names: list[str]
    options: list[str]
    usage: dict[str, int] | None = None
    cost: float | None = None


@dataclass(slots=True)
class CaseRunRecord:
    """One run of one case: its turns, the working directory kept when it failed, and timings.

    Attributes:
        suite: the suite's name.
        case: the case that ran.
        run: the run index (0-based).
        agent: the agent's display name.
        turns: one record per turn of the case.
        workdir: the working directory kept for inspection (a failed run), else ``None``.
        started_at: when the case run started (seconds since the epoch).
        elapsed_ms: its wall time, agent calls and checks included.
    """

    suite: str
    case: Case
    run: int
    agent: str
    turns: list[TurnRecord] = field(default_factory=list)
    workdir: str | None = None
    started_at: float = 0.0
    elapsed_ms: float = 0.0
    _rows: Rows | None = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> tuple[str, int]:
        """``(case id, run)``: what a recorder says is done."""
        return (self.case.id, self.run)

    @property
    def status(self) -> str:
        """The run's status: the worst of its turns (docs/results.md, statuses)."""
        return worst(t.status for t in self.turns)

    def rows(self) -> Rows:
        """The record as row tuples in the column order of ``RUNS_COLUMNS``, ``SCORES_COLUMNS``,
        ``MISMATCH_COLUMNS`` and ``TOOL_CALLS_COLUMNS`` (plain python values), as the Result's frames and a
        store's tables hold them. Made once: the Result and a store both take them."""
        if self._rows is None:
            self._rows = self._make_rows()
        return self._rows

    def _make_rows(self) -> Rows:
        case = self.case
        where = (self.suite, case.id, case.name, case.category, self.run)
        agent = _text(self.agent)
        run_rows: list[tuple[Any, ...]] = []
        score_rows: list[tuple[Any, ...]] = []
        mismatch_rows: list[tuple[Any, ...]] = []
        tool_rows: list[tuple[Any, ...]] = []
        for tr in self.turns:
            turn = case.turns[tr.index]
            r = tr.response
            if r is not None and r.tool_calls:
                tool_rows += _tool_rows(where, tr.index, turn, r)
            run_rows.append(self._run_row(where, tr, turn, agent))
            for i, score in enumerate(tr.scores):
                score_rows.append(_score_row(where, tr, i, score))
                if score.details:
                    mismatch_rows += [
                        _mismatch(self.suite, case.id, self.run, tr.index, d) for d in score.details
                    ]
        return run_rows, score_rows, mismatch_rows, tool_rows

    def _run_row(self, where: tuple[Any, ...], tr: TurnRecord, turn: Any, agent: Any) -> tuple[Any, ...]:
        r = tr.response
        usage = tr.usage or {}
        return (
            *where,
            tr.index,
            turn.prompt,
            turn.expected,
            # What the agent sent is text every file and database can take already: the runner cleans
            # each response as it arrives (evalnb._unicode, agents.base.encodable).
            r.text if r else None,
            r.stdout if r else None,
            r.exit_code if r else None,
            r.intent if r else None,
            r.refusal if r else None,
            r.insight if r else None,
            r.context if r is not None and r.context is not None else turn.context,
            tr.status,
            None if tr.error is None else _text(tr.error),
            tr.latency_ms,
            r.model if r else None,
            agent,
            self.workdir,
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            usage.get("cached_tokens"),
            usage.get("reasoning_tokens"),
            tr.cost,
        )


def _tool_rows(where: tuple[Any, ...], t: int, turn: Any, r: Any) -> list[tuple[Any, ...]]:
    """A turn's reported tool calls, in order, each with whether the turn's allowlist permits it."""
    permitted = None if turn.allowed_tools is None else {a.strip() for a in turn.allowed_tools}
    rows = []
    for order, call in enumerate(r.tool_calls):
        plugin, function = call.identity
        rows.append(
            (
                *where,
                t,
                order,
                call.tool,
                plugin,
                function,
                json_cell(call.arguments),
                call.status,
                call.http_status,
                None if permitted is None else call.tool.strip() in permitted,
                call.id,
                json_cell(call.output),
            )
        )
    return rows


_NO_USAGE: dict[str, int] = {}


def _score_row(where: tuple[Any, ...], tr: TurnRecord, i: int, score: Any) -> tuple[Any, ...]:
    su = _NO_USAGE if score.usage is None else (usage_of(score.usage) or _NO_USAGE)
    return (
        *where,
        tr.index,
        tr.check_names[i],
        tr.check_ids[i],
        score.value,
        score.passed,
        tr.statuses[i],
        reason if type(reason := score.reason) is str and reason.isascii() else _text(reason),
        None if score.judge is None else _text(score.judge),
        tr.options[i],
        su.get("prompt_tokens"),
        su.get("completion_tokens"),
        score.cost,
        score.weighted,
        score.spread,
        None if score.model is None else _text(score.model),
        su.get("cached_tokens"),
        su.get("reasoning_tokens"),
    )


def _mismatch(suite: str, cid: str, run: int, t: int, d: Mapping[str, Any]) -> tuple[Any, ...]:
    tol = d.get("tolerance")
    return (
        suite,
        cid,
        run,
        t,
        d.get("row"),
        _text(d.get("key")),
        _text(mismatch_value(d.get("expected"))),
        _text(mismatch_value(d.get("actual"))),
        _text(tol) if isinstance(tol, str) or tol is None else json.dumps(tol, default=str),
        _text(d.get("reason")),
    )


def _text(value: Any) -> Any:
    return clean(value) if isinstance(value, str) else value


def tokens(usage: Mapping[str, Any], *names: str) -> int | None:
    """The first of ``names`` in a usage mapping as an int (providers name token counts differently)."""
    for n in names:
        v = usage.get(n)
        if v is not None:
            try:
                return int(v)
            except (TypeError, ValueError):
                return None
    return None
