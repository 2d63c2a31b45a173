"""The cube model: a small YAML file that maps measure names to aggregate SQL and levels to columns and joins.

It is what translates the structured form of a ``referenceQuery`` (``measures``, ``rows`` levels,
``filters``) to SQL (:meth:`CubeModel.statement`); it is found next to the database file (``cube.yaml`` or
``<stem>.cube.yaml``) or given with ``connect(data, cube=...)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.data._names import axis_name, bare, lookup, norm
from evalnb.data._sql import ParamStyle, Statement, build_statement
from evalnb.errors import ConfigError, ReferenceQueryError

if TYPE_CHECKING:
    from evalnb.suite import ReferenceQuery

__all__ = ["CubeModel", "Level", "Measure"]


@dataclass(frozen=True)
class Measure:
    name: str
    sql: str
    format: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Level:
    name: str
    column: str
    join: str | None = None
    dimension: str | None = None
    order: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass
class CubeModel:
    """Measure names to aggregate SQL, level names to columns, and the joins each level needs.

    Example::

        cube = CubeModel.load(evalnb.examples.resource("foodmart/cube.yaml"))
        stmt = cube.statement({"measures": [{"name": "Unit Sales"}], "rows": [{"level": "Quarter"}]})
        print(stmt.sql)
        # SELECT t.quarter AS "Quarter", SUM(f.unit_sales) AS "Unit Sales" FROM sales_fact_1997 f ...
    """

    name: str
    fact: str
    measures: dict[str, Measure]
    levels: dict[str, Level]
    joins: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    path: str | None = None
    unavailable: dict[str, dict[str, str]] = field(default_factory=dict)
    """``{"levels": {name: why}, "measures": {name: why}}``: names a query may use (those of the cube the model
    follows) that this data cannot serve; an error naming one says why."""

    @classmethod
    def load(cls, path: str | Path) -> CubeModel:
        """Read a cube model YAML file.

        Raises:
            ConfigError: when the file is missing or is not a valid cube model.
        """
        import yaml

        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the cube model {p.name}: {exc}") from exc
        model = cls.from_dict(data, where=p.name)
        model.path = str(p)
        return model

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "cube model") -> CubeModel:
        """Build a cube model from its parsed YAML mapping.

        Raises:
            ConfigError: for a missing ``fact``, ``measures`` or ``levels`` or a level naming an unknown join.
        """
        if not isinstance(data, Mapping) or not all(k in data for k in ("fact", "measures", "levels")):
            raise ConfigError(f"{where}: a cube model needs 'fact', 'measures' and 'levels'")
        joins: dict[str, tuple[str, tuple[str, ...]]] = {}
        for jname, spec in (data.get("joins") or {}).items():
            if isinstance(spec, str):
                joins[jname] = (spec, ())
            else:
                joins[jname] = (str(spec["sql"]), tuple(spec.get("requires") or ()))
        measures = {}
        for mname, spec in data["measures"].items():
            spec = {"sql": spec} if isinstance(spec, str) else dict(spec)
            measures[mname] = Measure(
                mname, str(spec["sql"]), spec.get("format"), tuple(spec.get("aliases") or ())
            )
        levels = {}
        for lname, spec in data["levels"].items():
            spec = {"column": spec} if isinstance(spec, str) else dict(spec)
            join = spec.get("join")
            if join is not None and join not in joins:
                raise ConfigError(f"{where}: level {lname!r} names the unknown join {join!r}")
            levels[lname] = Level(
                lname,
                str(spec["column"]),
                join,
                spec.get("dimension"),
                spec.get("order"),
                tuple(spec.get("aliases") or ()),
            )
        gaps = data.get("unavailable") or {}
        if not isinstance(gaps, Mapping) or not all(isinstance(gaps.get(k) or {}, Mapping) for k in gaps):
            raise ConfigError(f"{where}: 'unavailable' maps levels and measures to why they cannot be served")
        unavailable = {
            kind: {str(n): str(w) for n, w in (gaps.get(kind) or {}).items()}
            for kind in ("levels", "measures")
        }
        return cls(
            str(data.get("name") or "cube"),
            str(data["fact"]),
            measures,
            levels,
            joins,
            unavailable=unavailable,
        )

    # -- lookups ------------------------------------------------------------------------------------

    def measure(self, name: str) -> Measure:
        """The measure called ``name`` (or one of its aliases), matched like row keys.

        Raises:
            ReferenceQueryError: naming the known measures when there is no such measure.
        """
        found = lookup(self.measures, bare(name))
        if found is None:
            raise ReferenceQueryError(self._unknown("measure", name, self.measures))
        return found

    def level(self, name: str) -> Level:
        """The level called ``name`` (or one of its aliases).

        Raises:
            ReferenceQueryError: naming the known levels when there is no such level.
        """
        found = lookup(self.levels, bare(name))
        if found is None:
            raise ReferenceQueryError(self._unknown("level", name, self.levels))
        return found

    def _unknown(self, kind: str, name: str, known: Mapping[str, Any]) -> str:
        gaps = self.unavailable.get(f"{kind}s") or {}
        key = norm(bare(name))
        why = next((w for n, w in gaps.items() if norm(n) == key), None)
        if why is not None:
            return f"{kind} {name!r} has no data here ({why}); the cube has {', '.join(known)}"
        return f"unknown {kind} {name!r}; the cube has {', '.join(known)}"

    def axis_level(self, item: Any) -> Level:
        """The level of a row axis or filter: ``{dimension: Store, level: State}``, ``{level: ...}`` or a string.

        A level not found by its own name is tried with its dimension in front (``Product`` + ``Family``).
        """
        name = axis_name(item)
        if isinstance(item, Mapping) and item.get("dimension") and lookup(self.levels, bare(name)) is None:
            joined = lookup(self.levels, f"{bare(str(item['dimension']))} {bare(name)}")
            if joined is not None:
                return joined
        return self.level(name)

    # -- SQL ----------------------------------------------------------------------------------------

    def statement(
        self,
        query: ReferenceQuery | Mapping[str, Any],
        *,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        paramstyle: ParamStyle = "named",
    ) -> Statement:
        """Translate a structured query to one SQL statement whose filter values are bound parameters.

        Args:
            query: a ``ReferenceQuery`` or a mapping with ``measures``, ``rows`` and ``filters``.
            order_by: a measure name to sort by instead of the levels' natural order.
            descending: sort ``order_by`` from the largest value.
            limit: keep only the first rows (top-N).
            paramstyle: ``"named"`` (``:p0`` markers: sqlite3, SQLAlchemy ``text()``) or ``"dollar"``
                (``$p0``: DuckDB).

        Raises:
            ReferenceQueryError: for unknown names or a malformed filter.

        Example::

            stmt = cube.statement({"measures": ["Unit Sales"], "filters": [{"level": "State", "in": ["CA"]}]})
            con.execute(stmt.sql, stmt.params).fetchall()     # a sqlite3 connection
        """
        return build_statement(
            self, query, order_by=order_by, descending=descending, limit=limit, paramstyle=paramstyle
        )
