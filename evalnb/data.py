"""Data sources for cube ``referenceQuery`` ground truth.

A cube case may give its expected rows as a ``referenceQuery`` that runs live against the data the caller
connects (cube spec: drift-proof ground truth). :func:`open_source` turns the ``data`` argument of
``evalnb.run`` into a :class:`Source`:

* a path to a SQLite or DuckDB file, told apart by the file's header, never its extension;
* a SQLAlchemy URL string or ``Engine``;
* a mapping of table name to DataFrame, loaded into an in-memory DuckDB (or SQLite without DuckDB);
* an open ``sqlite3.Connection``.

The SQL form of a reference query runs as written. The structured form (``measures``, ``rows`` levels,
``filters``) is translated to SQL through a :class:`CubeModel`, a small YAML file that maps measure names to
aggregate expressions and levels to columns and joins; it is found next to the database file
(``cube.yaml`` or ``<stem>.cube.yaml``) or given with ``cube=``. The structured form::

    referenceQuery:
      measures: [{name: Store Sales}, {name: Unit Sales}]
      rows: [{level: Product Family}]                 # {level: ..., as: alias} renames the column
      filters:
        - {level: State, equals: CA}                  # also: in: [..], notIn: [..], op: ">=", value: ..

Its result columns are named as the query writes the names ("Product Family", "Store Sales"), which the
row comparison matches to ``productFamily`` / ``storeSales`` by key normalisation.

SQLAlchemy and DuckDB are imported only when such a source is opened.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.errors import ConfigError, ReferenceQueryError

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.suite import ReferenceQuery, RowsCheck, Suite

__all__ = [
    "CubeModel",
    "ReferenceQueryError",
    "Source",
    "connect",
    "detect_file",
    "open_source",
]

SQLITE_MAGIC = b"SQLite format 3\x00"
DUCKDB_MAGIC = b"DUCK"  # at offset 8 of a DuckDB database file


def _norm(name: str) -> str:
    # cube spec key normalisation: case-insensitive, spaces, "_" and "-" removed
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def _bare(name: str) -> str:
    """``[Product].[Product Family]`` -> ``Product Family`` (MDX-style unique names are accepted)."""
    parts = re.findall(r"\[([^\]]*)\]", name)
    return parts[-1] if parts else name


# --------------------------------------------------------------------------------------------------
# Cube model
# --------------------------------------------------------------------------------------------------


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

    Example:
        >>> cube = CubeModel.load("data/foodmart/cube.yaml")
        >>> print(cube.sql({"measures": [{"name": "Unit Sales"}], "rows": [{"level": "Quarter"}]}))
        SELECT t.quarter AS "Quarter", SUM(f.unit_sales) AS "Unit Sales" FROM sales_fact_1997 f ...
    """

    name: str
    fact: str
    measures: dict[str, Measure]
    levels: dict[str, Level]
    joins: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    path: str | None = None

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
        return cls(str(data.get("name") or "cube"), str(data["fact"]), measures, levels, joins)

    # -- lookups ------------------------------------------------------------------------------------

    def measure(self, name: str) -> Measure:
        """The measure called ``name`` (or one of its aliases), matched like row keys.

        Raises:
            ReferenceQueryError: naming the known measures when there is no such measure.
        """
        found = _lookup(self.measures, _bare(name))
        if found is None:
            raise ReferenceQueryError(f"unknown measure {name!r}; the cube has {', '.join(self.measures)}")
        return found

    def level(self, name: str) -> Level:
        """The level called ``name`` (or one of its aliases).

        Raises:
            ReferenceQueryError: naming the known levels when there is no such level.
        """
        found = _lookup(self.levels, _bare(name))
        if found is None:
            raise ReferenceQueryError(f"unknown level {name!r}; the cube has {', '.join(self.levels)}")
        return found

    # -- SQL ----------------------------------------------------------------------------------------

    def sql(
        self,
        query: ReferenceQuery | Mapping[str, Any],
        *,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
    ) -> str:
        """Translate a structured query to one SQL statement.

        Args:
            query: a ``ReferenceQuery`` or a mapping with ``measures``, ``rows`` and ``filters``.
            order_by: a measure name to sort by instead of the levels' natural order.
            descending: sort ``order_by`` from the largest value.
            limit: keep only the first rows (top-N).

        Raises:
            ReferenceQueryError: for unknown names or a malformed filter.
        """
        q = query if isinstance(query, Mapping) else query.model_dump()
        measures = [
            self.measure(_item_name(m, ("name", "measure", "uniqueName"))) for m in q.get("measures") or []
        ]
        if not measures:
            raise ReferenceQueryError("a structured referenceQuery needs at least one measure")
        levels: list[tuple[Level, str]] = []
        for item in q.get("rows") or []:
            name = _axis_name(item)
            alias = item.get("as") if isinstance(item, Mapping) else None
            levels.append((self._axis_level(item), str(alias or _bare(name))))
        where = [self._filter(f) for f in q.get("filters") or []]

        needed: list[str] = []
        for lvl in [lv for lv, _ in levels] + [self._axis_level(f) for f in q.get("filters") or []]:
            if lvl.join:
                self._add_join(lvl.join, needed)
        select = [f"{lvl.column} AS {_quote(alias)}" for lvl, alias in levels]
        select += [
            f"{m.sql} AS {_quote(_bare(_item_name(item, ('name', 'measure', 'uniqueName'))))}"
            for m, item in zip(measures, q.get("measures") or [], strict=True)
        ]
        parts = [f"SELECT {', '.join(select)}", f"FROM {self.fact}"]
        parts += [self.joins[j][0] for j in needed]
        if where:
            parts.append("WHERE " + " AND ".join(where))
        if levels:
            parts.append("GROUP BY " + ", ".join(lvl.column for lvl, _ in levels))
        if order_by is not None:
            parts.append(f"ORDER BY {self.measure(order_by).sql} {'DESC' if descending else 'ASC'}")
        elif levels:
            parts.append("ORDER BY " + ", ".join(lvl.order or lvl.column for lvl, _ in levels))
        if limit is not None:
            parts.append(f"LIMIT {int(limit)}")
        return " ".join(parts)

    def _axis_level(self, item: Any) -> Level:
        """The level of a row axis: ``{dimension: Store, level: State}``, ``{level: ...}`` or a string.

        A level not found by its own name is tried with its dimension in front (``Product`` + ``Family``).
        """
        name = _axis_name(item)
        if isinstance(item, Mapping) and item.get("dimension") and _lookup(self.levels, _bare(name)) is None:
            joined = _lookup(self.levels, f"{_bare(str(item['dimension']))} {_bare(name)}")
            if joined is not None:
                return joined
        return self.level(name)

    def _add_join(self, name: str, needed: list[str]) -> None:
        if name in needed:
            return
        for req in self.joins[name][1]:
            self._add_join(req, needed)
        needed.append(name)

    def _filter(self, spec: Any) -> str:
        if not isinstance(spec, Mapping):
            raise ReferenceQueryError(
                f"a filter must be a mapping such as {{level: State, equals: CA}}, not {spec!r}"
            )
        col = self._axis_level(spec).column
        if "equals" in spec:
            return f"{col} = {_literal(spec['equals'])}"
        if "in" in spec or "values" in spec:
            values = spec.get("in", spec.get("values"))
            return f"{col} IN ({', '.join(_literal(v) for v in _as_list(values))})"
        if "notIn" in spec:
            return f"{col} NOT IN ({', '.join(_literal(v) for v in _as_list(spec['notIn']))})"
        op = str(spec.get("op", spec.get("operator", ""))).strip().lower()
        if op in ("=", "==", "!=", "<>", "<", "<=", ">", ">=") and "value" in spec:
            return f"{col} {'=' if op == '==' else op} {_literal(spec['value'])}"
        if op in ("in", "not in") and ("value" in spec or "values" in spec):
            values = spec.get("values", spec.get("value"))
            return f"{col} {op.upper()} ({', '.join(_literal(v) for v in _as_list(values))})"
        raise ReferenceQueryError(
            f"filter {dict(spec)!r}: give equals, in, notIn, or op (=, !=, <, <=, >, >=, in) with value"
        )


def _lookup(table: Mapping[str, Any], name: str) -> Any:
    key = _norm(name)
    for real, item in table.items():
        if _norm(real) == key or key in {_norm(a) for a in getattr(item, "aliases", ())}:
            return item
    return None


def _item_name(item: Any, keys: Iterable[str]) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        for k in keys:
            if item.get(k):
                return str(item[k])
    raise ReferenceQueryError(f"cannot read a name from {item!r}: write {{name: ...}} or a plain string")


def _axis_name(item: Any) -> str:
    # cube YAML row axes are {dimension, hierarchy?, level?}: the most specific name given wins.
    return _item_name(item, ("level", "name", "uniqueName", "hierarchy", "dimension"))


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(value: Any) -> str:
    # Literals instead of bound parameters: the paramstyle differs between sqlite3, DuckDB and SQLAlchemy.
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


# --------------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------------


class Source:
    """A connected database that reference queries run against.

    Attributes:
        kind: ``sqlite``, ``duckdb`` or ``sqlalchemy``.
        cube: the cube model used for structured reference queries, if any.
        description: where the data comes from (a file name or a URL without password).

    Example:
        >>> src = connect("data/foodmart/foodmart.db")
        >>> src.query("SELECT COUNT(*) AS n FROM store")["n"][0]
        13
    """

    def __init__(
        self,
        kind: str,
        handle: Any,
        *,
        cube: CubeModel | None = None,
        description: str = "",
        owned: bool = True,
    ) -> None:
        self.kind = kind
        self.cube = cube
        self.description = description
        self._handle = handle
        self._owned = owned  # False for a connection or engine the caller gave: theirs to close
        self._lock = threading.Lock()  # sqlite3 and DuckDB connections are not safe to share across threads
        self._cache: dict[str, pd.DataFrame | ReferenceQueryError] = {}

    def query(self, sql: str) -> pd.DataFrame:
        """Run one SQL statement and return its rows.

        Raises:
            ReferenceQueryError: with the database's own message when the statement fails.
        """
        import pandas as pd

        with self._lock:
            try:
                if self.kind == "duckdb":
                    return self._handle.execute(sql).df()
                if self.kind == "sqlalchemy":
                    from sqlalchemy import text

                    with self._handle.connect() as conn:
                        return pd.read_sql_query(text(sql), conn)
                return pd.read_sql_query(sql, self._handle)
            except Exception as exc:  # the database's message is what an author needs to see
                raise ReferenceQueryError(_db_message(exc)) from exc

    def reference(self, rq: ReferenceQuery | Mapping[str, Any]) -> pd.DataFrame:
        """The expected rows of a reference query, computed once per source (cached by query).

        Raises:
            ReferenceQueryError: when the query cannot be translated or fails in the database.
        """
        data = rq if isinstance(rq, Mapping) else rq.model_dump()
        key = json.dumps(data, sort_keys=True, default=str)
        if key not in self._cache:
            try:
                self._cache[key] = self.query(self.to_sql(data))
            except ReferenceQueryError as exc:
                self._cache[key] = exc
        hit = self._cache[key]
        if isinstance(hit, ReferenceQueryError):
            raise hit
        return hit.copy()

    def to_sql(self, rq: ReferenceQuery | Mapping[str, Any]) -> str:
        """The SQL a reference query runs: its ``sql`` as written, or the structured form translated.

        Raises:
            ReferenceQueryError: for a structured query without a cube model.
        """
        data = rq if isinstance(rq, Mapping) else rq.model_dump()
        if data.get("sql"):
            return str(data["sql"])
        if self.cube is None:
            raise ReferenceQueryError(
                "a structured referenceQuery needs a cube model: put cube.yaml next to the database file, "
                "or pass data=evalnb.data.connect(data, cube='cube.yaml')"
            )
        return self.cube.sql(data)

    @property
    def thread_bound(self) -> bool:
        """Whether the connection only works in the thread that made it (a caller's ``sqlite3.connect()``
        with the default ``check_same_thread``): its reference queries must run there, not in a worker."""
        if self.kind != "sqlite" or self._owned:
            return False
        import threading

        box: list[bool] = []

        def probe() -> None:
            try:
                self._handle.execute("SELECT 1").fetchall()
                box.append(False)
            except sqlite3.ProgrammingError:
                box.append(True)

        worker = threading.Thread(target=probe, name="evalnb-probe")
        worker.start()
        worker.join()
        return bool(box and box[0])

    def close(self) -> None:
        """Close the connection (or dispose of an engine) this source opened; a caller's own stays open."""
        if not self._owned:
            return
        with self._lock:
            try:
                if self.kind == "sqlalchemy":
                    self._handle.dispose()
                elif hasattr(self._handle, "close"):
                    self._handle.close()
            except Exception:  # pragma: no cover - closing is best effort
                pass

    def __repr__(self) -> str:
        cube = f", cube={self.cube.name!r}" if self.cube else ""
        return f"Source({self.kind}: {self.description}{cube})"


def _db_message(exc: BaseException) -> str:
    # pandas re-raises the driver's error with the SQL in front: the innermost cause is the database's own.
    err: BaseException = exc
    for _ in range(10):
        inner = getattr(err, "orig", None) or err.__cause__
        if not isinstance(inner, BaseException):
            break
        err = inner
    text = str(err).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def detect_file(path: str | Path) -> str:
    """``sqlite`` or ``duckdb`` from the file header (never the extension).

    Raises:
        ConfigError: for a missing file or one that is neither.

    Example:
        >>> detect_file("data/foodmart/foodmart.db")
        'sqlite'
    """
    p = Path(path)
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise ConfigError(f"cannot open the data file {p}: {exc.strerror or exc}") from exc
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head[8:12] == DUCKDB_MAGIC:
        return "duckdb"
    raise ConfigError(f"{p} is neither a SQLite nor a DuckDB database file (unrecognised header)")


def connect(data: Any, *, cube: CubeModel | str | Path | Mapping[str, Any] | None = None) -> Source:
    """Open a data source.

    Args:
        data: a SQLite or DuckDB file path, a SQLAlchemy URL or Engine, a mapping of table name to
            DataFrame, an open ``sqlite3.Connection`` (left open by :meth:`Source.close`), or a ``Source``
            already opened (returned as it is).
        cube: a cube model (object, YAML path or mapping); by default ``cube.yaml`` or ``<stem>.cube.yaml``
            next to a database file.

    Raises:
        ConfigError: when the data cannot be opened or is of an unknown kind.

    Example:
        >>> import pandas as pd
        >>> src = connect({"sales": pd.DataFrame({"state": ["CA"], "units": [3]})})
        >>> src.query("SELECT SUM(units) AS u FROM sales")
    """
    model = _as_cube(cube)
    if isinstance(data, Source):
        # An opened source passes through: it is how a run gets DataFrames with a cube model
        # (`data=connect(frames, cube="cube.yaml")`), as `run()` has no cube argument of its own.
        if model is not None:
            raise ConfigError("this data source is open already: give cube=... to connect() when opening it")
        return data
    if isinstance(data, sqlite3.Connection):
        return Source("sqlite", data, cube=model, description="sqlite3 connection", owned=False)
    if isinstance(data, Mapping):
        return _from_frames(data, model)
    if isinstance(data, str) and "://" in data:
        return _from_url(data, model)
    if isinstance(data, (str, Path)):
        p = Path(data)
        kind = detect_file(p)
        if model is None:
            model = _find_cube(p)
        if kind == "sqlite":
            con = sqlite3.connect(p.resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
            return Source("sqlite", con, cube=model, description=p.name)
        try:
            import duckdb
        except ImportError as exc:
            raise ConfigError(f'{p.name} is a DuckDB file: pip install "evalnb[duckdb]"') from exc
        return Source("duckdb", duckdb.connect(str(p), read_only=True), cube=model, description=p.name)
    if hasattr(data, "dialect") and hasattr(data, "connect"):  # a SQLAlchemy Engine
        return Source(
            "sqlalchemy", data, cube=model, description=str(getattr(data, "url", "engine")), owned=False
        )
    raise ConfigError(
        f"data of type {type(data).__name__} is not a data source: give a SQLite or DuckDB path, "
        "a SQLAlchemy URL or engine, or a mapping of table name to DataFrame"
    )


def _from_url(url: str, model: CubeModel | None) -> Source:
    from sqlalchemy import create_engine
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        engine = create_engine(url)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        raise ConfigError(f"cannot use the data URL: {exc}") from exc
    return Source(
        "sqlalchemy", engine, cube=model, description=engine.url.render_as_string(hide_password=True)
    )


def _from_frames(frames: Mapping[str, Any], model: CubeModel | None) -> Source:
    import pandas as pd

    for name, frame in frames.items():
        if not isinstance(frame, pd.DataFrame):
            raise ConfigError(f"data[{name!r}] is a {type(frame).__name__}, not a DataFrame")
    try:
        import duckdb
    except ImportError:
        con = sqlite3.connect(":memory:", check_same_thread=False)
        for name, frame in frames.items():
            frame.to_sql(str(name), con, index=False)
        return Source("sqlite", con, cube=model, description=f"{len(frames)} DataFrame(s)")
    dcon = duckdb.connect(":memory:")
    for name, frame in frames.items():
        dcon.register(str(name), frame)
    return Source("duckdb", dcon, cube=model, description=f"{len(frames)} DataFrame(s)")


def _as_cube(cube: CubeModel | str | Path | Mapping[str, Any] | None) -> CubeModel | None:
    if cube is None or isinstance(cube, CubeModel):
        return cube
    if isinstance(cube, Mapping):
        return CubeModel.from_dict(cube)
    return CubeModel.load(cube)


def _find_cube(db: Path) -> CubeModel | None:
    for candidate in (db.with_name(f"{db.stem}.cube.yaml"), db.with_name("cube.yaml")):
        if candidate.is_file():
            return CubeModel.load(candidate)
    return None


# --------------------------------------------------------------------------------------------------
# The runner's entry point
# --------------------------------------------------------------------------------------------------


def reference_checks(suite: Suite) -> list[tuple[str, RowsCheck]]:
    """``(case id, rows check)`` for every rows check of the suite that has a ``reference_query``."""
    from evalnb.suite import RowsCheck

    return [
        (case.id, spec)
        for case in suite.cases
        for turn in case.turns
        for spec in turn.checks
        if isinstance(spec, RowsCheck) and spec.reference_query is not None
    ]


def open_source(
    suite: Suite, data: Any, *, cube: CubeModel | str | Path | Mapping[str, Any] | None = None
) -> Source | None:
    """The data source of a run, checked against what the suite needs before anything runs.

    Args:
        suite: the suite about to run.
        data: the ``data`` argument of ``evalnb.run`` (see :func:`connect`), or ``None``.
        cube: a cube model for structured reference queries (default: found next to a database file).

    Returns:
        A :class:`Source`, or ``None`` when ``data`` is ``None`` and the suite needs none.

    Raises:
        ConfigError: when the suite has a ``referenceQuery`` and ``data`` is ``None``, when a structured
            ``referenceQuery`` has no cube model to translate it, or when ``data`` cannot be opened.

    Example:
        >>> open_source(suite, "data/foodmart/foodmart.db")
        Source(sqlite: foodmart.db, cube='Sales')
    """
    needing = reference_checks(suite)
    if data is None:
        if needing:
            cases = ", ".join(dict.fromkeys(cid for cid, _ in needing))
            raise ConfigError(
                f"suite {suite.name} needs a data source for referenceQuery in cases {cases}: "
                "pass data=... (a SQLite or DuckDB file, a SQLAlchemy URL or engine, or a mapping of DataFrames)"
            )
        return None
    source = connect(data, cube=cube)
    structured = [cid for cid, spec in needing if spec.reference_query and not spec.reference_query.sql]
    if structured and source.cube is None:
        if source is not data:  # a Source the caller opened stays theirs
            source.close()
        raise ConfigError(
            f"suite {suite.name} has structured referenceQuery in cases {', '.join(dict.fromkeys(structured))} "
            "but no cube model maps its names to SQL: put cube.yaml next to the database file, or pass "
            "data=evalnb.data.connect(data, cube='cube.yaml')"
        )
    return source
