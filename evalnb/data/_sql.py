"""The cube SQL builder: a structured ``referenceQuery`` becomes one SQL statement with bound parameters.

Filter members are never pasted into the SQL text: each becomes a parameter marker (``:p0`` for sqlite3 and
SQLAlchemy's ``text()``, ``$p0`` for DuckDB) and travels in :attr:`Statement.params`, so a member such as
``O'Brien`` or ``CA' OR '1'='1`` is compared as the value it is. What the cube model gives (measure
expressions, level columns, joins) is SQL by definition and is used as written; result column names are
quoted identifiers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from evalnb.data._names import as_list, axis_name, bare, item_name
from evalnb.errors import ReferenceQueryError

if TYPE_CHECKING:
    from evalnb.suite import ReferenceQuery

__all__ = ["PARAMSTYLES", "ParamStyle", "Statement", "build_statement"]

ParamStyle = Literal["named", "dollar"]
#: How a parameter marker is written: ``named`` (``:p0``: sqlite3, SQLAlchemy ``text()``), ``dollar``
#: (``$p0``: DuckDB, which has no ``:name`` markers).
PARAMSTYLES: dict[str, str] = {"named": ":", "dollar": "$"}


class CubeModel(Protocol):
    """What a statement is built from: the cube model of :mod:`evalnb.data._cube` (which builds statements with
    this module, so this module names only the part of it it reads)."""

    fact: str
    joins: dict[str, tuple[str, tuple[str, ...]]]

    def measure(self, name: str) -> Any: ...

    def axis_level(self, item: Any) -> Any: ...


_MEASURE_KEYS = ("name", "measure", "uniqueName")
_COMPARISONS = {"=": "=", "==": "=", "!=": "!=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@dataclass(frozen=True)
class Statement:
    """One SQL statement and the values of its parameter markers.

    Example::

        stmt = cube.statement({"measures": ["Unit Sales"], "filters": [{"level": "State", "equals": "CA"}]})
        stmt.sql
        # 'SELECT SUM(f.unit_sales) AS "Unit Sales" FROM sales_fact_1997 f ... WHERE s.store_state = :p0'
        stmt.params
        # {'p0': 'CA'}
    """

    sql: str
    params: dict[str, Any] = field(default_factory=dict)


class _Binder:
    """Hands out a marker per value and keeps the values, in the style of the database that will run them."""

    def __init__(self, style: ParamStyle) -> None:
        if style not in PARAMSTYLES:
            raise ValueError(f"paramstyle {style!r}: use one of {sorted(PARAMSTYLES)}")
        self.prefix = PARAMSTYLES[style]
        self.params: dict[str, Any] = {}

    def __call__(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params[name] = _bindable(value)
        return self.prefix + name

    def many(self, values: Any) -> str:
        return ", ".join(self(v) for v in as_list(values))


def _bindable(value: Any) -> Any:
    # Booleans as 1/0 (columns hold flags as integers); YAML dates and other scalars as their text.
    if isinstance(value, bool):
        return int(value)
    if value is None or isinstance(value, (str, int, float)):
        return value
    return str(value)


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def build_statement(
    cube: CubeModel,
    query: ReferenceQuery | Mapping[str, Any],
    *,
    order_by: str | None = None,
    descending: bool = False,
    limit: int | None = None,
    paramstyle: ParamStyle = "named",
) -> Statement:
    """Translate a structured query to one SQL statement with bound parameters (see :meth:`CubeModel.statement`).

    Raises:
        ReferenceQueryError: for unknown names or a malformed filter.
    """
    q = query if isinstance(query, Mapping) else query.model_dump()
    measures = [cube.measure(item_name(m, _MEASURE_KEYS)) for m in q.get("measures") or []]
    if not measures:
        raise ReferenceQueryError("a structured referenceQuery needs at least one measure")
    levels = []
    for item in q.get("rows") or []:
        alias = item.get("as") if isinstance(item, Mapping) else None
        levels.append((cube.axis_level(item), str(alias or bare(axis_name(item)))))
    bind = _Binder(paramstyle)
    filters = list(q.get("filters") or [])
    where = [_filter(cube, f, bind) for f in filters]

    needed: list[str] = []
    for lvl in [lv for lv, _ in levels] + [cube.axis_level(f) for f in filters]:
        if lvl.join:
            _add_join(cube, lvl.join, needed)
    select = [f"{lvl.column} AS {quote_identifier(alias)}" for lvl, alias in levels]
    select += [
        f"{m.sql} AS {quote_identifier(bare(item_name(item, _MEASURE_KEYS)))}"
        for m, item in zip(measures, q.get("measures") or [], strict=True)
    ]
    parts = [f"SELECT {', '.join(select)}", f"FROM {cube.fact}"]
    parts += [cube.joins[j][0] for j in needed]
    if where:
        parts.append("WHERE " + " AND ".join(where))
    if levels:
        parts.append("GROUP BY " + ", ".join(lvl.column for lvl, _ in levels))
    if order_by is not None:
        parts.append(f"ORDER BY {cube.measure(order_by).sql} {'DESC' if descending else 'ASC'}")
    elif levels:
        parts.append("ORDER BY " + ", ".join(lvl.order or lvl.column for lvl, _ in levels))
    if limit is not None:
        parts.append(f"LIMIT {int(limit)}")
    return Statement(" ".join(parts), bind.params)


def _add_join(cube: CubeModel, name: str, needed: list[str]) -> None:
    if name in needed:
        return
    for req in cube.joins[name][1]:
        _add_join(cube, req, needed)
    needed.append(name)


def _filter(cube: CubeModel, spec: Any, bind: _Binder) -> str:
    if not isinstance(spec, Mapping):
        raise ReferenceQueryError(
            f"a filter must be a mapping such as {{level: State, equals: CA}}, not {spec!r}"
        )
    col = cube.axis_level(spec).column
    if "equals" in spec:
        return f"{col} = {bind(spec['equals'])}"
    if "in" in spec or "values" in spec:
        return f"{col} IN ({bind.many(spec.get('in', spec.get('values')))})"
    if "notIn" in spec:
        return f"{col} NOT IN ({bind.many(spec['notIn'])})"
    op = str(spec.get("op", spec.get("operator", ""))).strip().lower()
    if op in _COMPARISONS and "value" in spec:
        return f"{col} {_COMPARISONS[op]} {bind(spec['value'])}"
    if op in ("in", "not in") and ("value" in spec or "values" in spec):
        return f"{col} {op.upper()} ({bind.many(spec.get('values', spec.get('value')))})"
    raise ReferenceQueryError(
        f"filter {dict(spec)!r}: give equals, in, notIn, or op (=, !=, <, <=, >, >=, in) with value"
    )
