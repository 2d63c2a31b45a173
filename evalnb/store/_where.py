"""``Store.load(v, columns=..., where=...)``: the rows and columns a notebook asks for, read lazily in SQL.

``where`` is a mapping of column -> condition, never SQL text: each column must be one of the stored frames'
columns and each value becomes a bound parameter, so nothing a caller passes is spliced into a statement.

* ``{"status": "failed"}``: equal (``None``: is missing);
* ``{"check_id": ["ExactMatch", "Regex"]}``: one of (a list, tuple or set);
* ``{"latency_ms": {">": 1000}}``: compared (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``), several at once.

A column of the scores frame filters score rows; a column only the runs frame has (``response``,
``latency_ms``) filters run rows. The Result holds the case runs (case x run) with a matching row in each frame
named, and of those: the matching score rows and run rows, and every row mismatch and tool call
(docs/results.md, large runs).

Example::

    failures = store.load("v1", where={"passed": False}, columns=["response", "reason"])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalnb.errors import StoreError
from evalnb.store._schema import MISMATCH_COLS, RUN_COLS, SCORE_COLS, TOOL_CALL_COLS

if TYPE_CHECKING:
    from sqlalchemy import Table
    from sqlalchemy.sql.elements import ColumnElement

__all__ = ["KEYS", "Narrowing", "matches", "narrowing"]

KEYS = ("case_id", "case_name", "category", "run", "turn", "check", "check_id", "status", "passed")
"""Columns read whatever ``columns`` says: a case's status and the Result's views are derived from them."""

_OPS = ("==", "!=", "<", "<=", ">", ">=")
_COLS = {
    "run_rows": RUN_COLS,
    "scores": SCORE_COLS,
    "mismatches": MISMATCH_COLS,
    "tool_calls": TOOL_CALL_COLS,
}


def _bad(message: str) -> StoreError:
    return StoreError(message, code="INVALID_WHERE")


def _condition(column: Any, name: str, value: Any) -> ColumnElement[bool]:
    from sqlalchemy import and_

    if value is None:
        return column.is_(None)
    if isinstance(value, (list, tuple, set, frozenset)):
        values = list(value)
        if any(isinstance(v, (list, tuple, set, dict)) for v in values):
            raise _bad(f"where[{name!r}]: a list holds plain values (text, numbers, True/False)")
        return column.in_(values)
    if isinstance(value, Mapping):
        unknown = [op for op in value if op not in _OPS]
        if unknown or not value:
            raise _bad(
                f"where[{name!r}]: {unknown[0]!r} is not a comparison; use one of {', '.join(_OPS)}"
                if unknown
                else f"where[{name!r}]: an empty comparison; give e.g. {{'>': 0}}"
            )
        parts = []
        for op, v in value.items():
            if not isinstance(v, (str, int, float, bool)):
                raise _bad(f"where[{name!r}][{op!r}]: compare with a plain value, not {type(v).__name__}")
            parts.append(column.operate(_operator(op), v))
        return and_(*parts)
    if not isinstance(value, (str, int, float, bool)):
        raise _bad(
            f"where[{name!r}]: {type(value).__name__} is not a value to match; give text, a number, "
            "True/False, None, a list of values or a comparison such as {'>': 1000}"
        )
    return column == value


def _operator(op: str) -> Any:
    import operator

    return {
        "==": operator.eq,
        "!=": operator.ne,
        "<": operator.lt,
        "<=": operator.le,
        ">": operator.gt,
        ">=": operator.ge,
    }[op]


def matches(value: Any, values: list[Any]) -> list[bool]:
    """Which of ``values`` (one stored column) a ``where`` value matches, as SQL has it: a missing value
    (``None``, NaN) matches only ``None``, never a comparison or a list (runs stored in segments, filtered in
    Python; store/_segments.py)."""
    if value is None:
        return [v is None or v != v for v in values]
    if isinstance(value, (list, tuple, set, frozenset)):
        wanted = [v for v in value if v is not None]
        try:
            pool: Any = set(wanted)
        except TypeError:
            pool = wanted
        return [v in pool for v in values]
    if isinstance(value, Mapping):
        ops = [(_operator(op), x) for op, x in value.items()]
        return [_compared(v, ops) for v in values]
    return [v == value for v in values]


def _compared(v: Any, ops: list[tuple[Any, Any]]) -> bool:
    if v is None or v != v:
        return False
    try:
        return all(op(v, x) for op, x in ops)
    except TypeError:  # text against a number: SQL's comparison across types is not what was asked either
        return False


class Narrowing:
    """What one lazy load reads: per table, its columns and the SQL condition on its rows (besides the run)."""

    def __init__(
        self, tables: Mapping[str, Table], pk: int, columns: Sequence[str] | None, where: Mapping[str, Any]
    ) -> None:
        from sqlalchemy import and_, select, tuple_

        self.columns = None if columns is None else set(columns) | set(KEYS)
        score_terms = {k: v for k, v in where.items() if k in SCORE_COLS}
        #: per frame, its own ``where`` terms (column -> value), for runs stored in segments
        self.terms: dict[str, dict[str, Any]] = {
            "scores": score_terms,
            "runs": {k: v for k, v in where.items() if k not in score_terms and k in RUN_COLS},
        }
        score_cond = [_condition(tables["scores"].c[k], k, v) for k, v in where.items() if k in SCORE_COLS]
        run_cond = [
            _condition(tables["run_rows"].c[k], k, v)
            for k, v in where.items()
            if k not in SCORE_COLS and k in RUN_COLS
        ]
        self._own = {"scores": score_cond, "run_rows": run_cond}
        self._subqueries: list[Any] = []
        for name, cond in (("scores", score_cond), ("run_rows", run_cond)):
            if cond:
                t = tables[name]
                self._subqueries.append(select(t.c.case_id, t.c.run).where(t.c.run_pk == pk, and_(*cond)))
        self._tuple = tuple_

    def cols(self, table: str) -> list[str]:
        """The stored columns of ``table`` to read."""
        every = _COLS[table]
        return list(every) if self.columns is None else [c for c in every if c in self.columns]

    def extra(self) -> bool:
        """Whether the columns a frame holds beyond the stored ones (JSON ``extra``) are read."""
        return self.columns is None

    def condition(self, table: str, t: Table) -> list[Any]:
        """The conditions of ``table``'s rows: its own ``where`` terms, and the kept case runs."""
        out = list(self._own.get(table, []))
        out += [self._tuple(t.c.case_id, t.c.run).in_(sub) for sub in self._subqueries]
        return out


def narrowing(
    tables: Mapping[str, Table], pk: int, *, columns: Sequence[str] | None = None, where: Any = None
) -> Narrowing | None:
    """What ``Store.load(columns=, where=)`` reads, checked; ``None`` when it is the whole run.

    Raises:
        StoreError: ``INVALID_WHERE`` for ``where`` that is not a mapping of known columns to values (SQL text
            included: it is refused, never run), ``INVALID_COLUMNS`` for a column no stored frame has.
    """
    if columns is None and not where:
        return None
    known = {c for cols in _COLS.values() for c in cols}
    if isinstance(columns, str) or (columns is not None and not all(isinstance(c, str) for c in columns)):
        raise StoreError(
            "columns is a list of column names, e.g. ['response', 'reason']", code="INVALID_COLUMNS"
        )
    if columns is not None:
        unknown = [c for c in columns if c not in known]
        if unknown:
            raise StoreError(
                f"no stored frame has the column {unknown[0]!r}; columns are those of result.runs and "
                "result.scores (docs/results.md)",
                code="INVALID_COLUMNS",
            )
    if where is None:
        where = {}
    if not isinstance(where, Mapping):
        raise _bad(
            f"where is a mapping of column to value, e.g. {{'status': 'failed'}}, not {type(where).__name__}"
            + (" (SQL text is not accepted)" if isinstance(where, str) else "")
        )
    for k in where:
        if not isinstance(k, str) or k not in (set(SCORE_COLS) | set(RUN_COLS)):
            raise _bad(
                f"where names {k!r}, which is not a column of result.scores or result.runs "
                "(e.g. status, passed, check_id, category, latency_ms)"
            )
    return Narrowing(tables, pk, columns, where)
