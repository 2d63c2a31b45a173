"""Data sources that cube reference queries run against: SQLite and DuckDB files, SQLAlchemy, DataFrames.

:func:`connect` (and :func:`open_source`, the runner's entry point) turns the ``data`` argument of
``evalnb.run`` into a :class:`Source`:

* a path to a SQLite or DuckDB file, told apart by the file's header, never its extension;
* a SQLAlchemy URL string or ``Engine``;
* a mapping of table name to DataFrame, loaded into an in-memory DuckDB (or SQLite without DuckDB);
* an open ``sqlite3.Connection``.

SQLAlchemy and DuckDB are imported only when such a source is opened.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.data._cube import CubeModel
from evalnb.data._readonly import (
    DUCKDB_CONFIG,
    check_statement,
    open_sqlite,
    refusal,
    refused,
    sqlite_reading,
)
from evalnb.data._sql import ParamStyle, Statement
from evalnb.errors import ConfigError, ReferenceQueryError

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.suite import ReferenceQuery, RowsCheck, Suite

__all__ = [
    "DUCKDB_MAGIC",
    "SQLITE_MAGIC",
    "Source",
    "connect",
    "detect_file",
    "open_source",
    "reference_checks",
]

SQLITE_MAGIC = b"SQLite format 3\x00"
DUCKDB_MAGIC = b"DUCK"  # at offset 8 of a DuckDB database file

# The parameter markers each kind of source understands (sqlite3 and SQLAlchemy text(): ":p0"; DuckDB: "$p0").
_PARAMSTYLE: dict[str, ParamStyle] = {"sqlite": "named", "sqlalchemy": "named", "duckdb": "dollar"}


class Source:
    """A connected database that reference queries run against.

    Attributes:
        kind: ``sqlite``, ``duckdb`` or ``sqlalchemy``.
        cube: the cube model used for structured reference queries, if any.
        description: where the data comes from (a file name or a URL without password).

    A Source can be serialised (a cluster executor sends it to its workers): it travels as what it was opened
    from (a file path, a URL, the DataFrames) with the reference rows computed so far, and opens its own
    connection where it is first queried. A connection the caller opened travels as its database file; an
    in-memory one cannot be opened elsewhere, so only its computed reference rows travel.

    Example::

        src = connect(evalnb.examples.foodmart_db())
        src.query("SELECT COUNT(*) AS n FROM store")["n"][0]
        # 13
    """

    def __init__(
        self,
        kind: str,
        handle: Any,
        *,
        cube: CubeModel | None = None,
        description: str = "",
        owned: bool = True,
        origin: Any = None,
    ) -> None:
        self.kind = kind
        self.cube = cube
        self.description = description
        self._handle = handle
        self._owned = owned  # False for a connection or engine the caller gave: theirs to close
        self._origin = origin  # what connect() opens it again from elsewhere (None: it cannot be)
        self._lock = threading.Lock()  # sqlite3 and DuckDB connections are not safe to share across threads
        self._cache: dict[str, pd.DataFrame | ReferenceQueryError] = {}

    @property
    def paramstyle(self) -> ParamStyle:
        """How this source's statements write parameter markers (see :meth:`CubeModel.statement`)."""
        return _PARAMSTYLE[self.kind]

    def query(self, sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """Run one SQL statement, with ``params`` bound to its markers, and return its rows.

        The statement must only read (docs/cube-yaml.md, "Reference queries only read"): it is checked before
        it is sent, and the connection cannot write whatever it says.

        Raises:
            ReferenceQueryError: code ``READ_ONLY_QUERY`` for a statement that is not one read-only
                ``SELECT`` or ``WITH``; else with the database's own message when the statement fails.
        """
        return self._execute(sql, params, check=True)

    @property
    def dialect(self) -> str:
        """The SQL the source speaks: ``sqlite``, ``duckdb``, or a SQLAlchemy dialect name (``postgresql``)."""
        if self.kind != "sqlalchemy":
            return self.kind
        if self._handle is not None:
            return str(self._handle.dialect.name)
        from sqlalchemy.engine import make_url

        return str(make_url(self._origin).get_backend_name()) if self._origin else "sqlalchemy"

    def _execute(self, sql: str, params: Mapping[str, Any] | None, *, check: bool) -> pd.DataFrame:
        # check=False leaves only the connection's own locks: how the tests show that they hold by themselves.
        import pandas as pd

        if check:
            check_statement(sql, dialect=self.dialect)
        bound = dict(params) if params else None
        with self._lock:
            if self._handle is None:
                self._handle = self._reopen()
            try:
                if self.kind == "duckdb":
                    return _duckdb_read(self._handle, sql, bound)
                if self.kind == "sqlalchemy":
                    return _sqlalchemy_read(self._handle, sql, bound)
                with sqlite_reading(self._handle):
                    return pd.read_sql_query(sql, self._handle, params=bound)
            except ReferenceQueryError:
                raise
            except Exception as exc:  # the database's message is what an author needs to see
                message = _db_message(exc)
                raise (refusal(message) or ReferenceQueryError(message)) from exc

    def reference(self, rq: ReferenceQuery | Mapping[str, Any]) -> pd.DataFrame:
        """The expected rows of a reference query, computed once per source (cached by query).

        Raises:
            ReferenceQueryError: when the query cannot be translated or fails in the database.
        """
        data = rq if isinstance(rq, Mapping) else rq.model_dump()
        key = json.dumps(data, sort_keys=True, default=str)
        if key not in self._cache:
            try:
                stmt = self.statement(data)
                self._cache[key] = self.query(stmt.sql, stmt.params)
            except ReferenceQueryError as exc:
                self._cache[key] = exc
        hit = self._cache[key]
        if isinstance(hit, ReferenceQueryError):
            raise hit
        return hit.copy()

    def statement(self, rq: ReferenceQuery | Mapping[str, Any]) -> Statement:
        """The statement a reference query runs: its ``sql`` as written, or the structured form translated
        with this source's parameter markers.

        Raises:
            ReferenceQueryError: for a structured query without a cube model.
        """
        data = rq if isinstance(rq, Mapping) else rq.model_dump()
        if data.get("sql"):
            return Statement(str(data["sql"]))
        if self.cube is None:
            raise ReferenceQueryError(
                "a structured referenceQuery needs a cube model: put cube.yaml next to the database file, "
                "or pass data=evalnb.data.connect(data, cube='cube.yaml')"
            )
        return self.cube.statement(data, paramstyle=self.paramstyle)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_shipped, (self.kind, self._origin, self.cube, self.description, dict(self._cache)))

    def _reopen(self) -> Any:
        if self._origin is None:
            raise ReferenceQueryError(
                f"the data source {self.description} is a connection of the process that opened it and cannot "
                "be opened here; pass data as a database file, a URL or DataFrames"
            )
        fresh = connect(self._origin, cube=self.cube)
        return fresh._handle

    @property
    def thread_bound(self) -> bool:
        """Whether the connection only works in the thread that made it (a caller's ``sqlite3.connect()``
        with the default ``check_same_thread``): its reference queries must run there, not in a worker."""
        if self.kind != "sqlite" or self._owned:
            return False
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
        if not self._owned or self._handle is None:
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


def _shipped(
    kind: str, origin: Any, cube: CubeModel | None, description: str, cache: dict[str, Any]
) -> Source:
    """A Source rebuilt from its serialised form: its connection is opened on first use (see :class:`Source`)."""
    source = Source(kind, None, cube=cube, description=description, origin=origin)
    source._cache.update(cache)
    return source


def _duckdb_read(con: Any, sql: str, params: dict[str, Any] | None) -> pd.DataFrame:
    # DuckDB's own parser says what the statement is: one SELECT, or it does not run (docs/cube-yaml.md,
    # "Reference queries only read"). An in-memory database of DataFrames could otherwise be written to.
    import duckdb

    statements = con.extract_statements(sql)
    kinds = [str(getattr(st.type, "name", st.type)) for st in statements]
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise refused(f"DuckDB reads it as {', '.join(kinds) or 'no statement'}")
    return con.execute(sql, params).df()


def _sqlalchemy_read(engine: Any, sql: str, params: dict[str, Any] | None) -> pd.DataFrame:
    # One transaction per query, always rolled back (pandas would commit one it began itself); PostgreSQL
    # runs it read-only, and a SQLite connection is held to reading (docs/cube-yaml.md, "Reference queries
    # only read").
    import pandas as pd
    from sqlalchemy import text

    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            # A transaction even on an engine made with isolation_level="AUTOCOMMIT", where SET TRANSACTION
            # would apply to nothing; the level is the server's default and is reset when the connection is
            # returned to the pool.
            conn.execution_options(isolation_level="READ COMMITTED")
        transaction = conn.begin()
        try:
            if engine.dialect.name == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            if engine.dialect.name == "sqlite":
                with sqlite_reading(conn.connection.dbapi_connection):
                    return pd.read_sql_query(text(sql), conn, params=params)
            return pd.read_sql_query(text(sql), conn, params=params)
        finally:
            transaction.rollback()


def _database_file(con: sqlite3.Connection) -> str | None:
    """The file of a caller's sqlite3 connection's main database (None: in memory, or unreadable)."""
    try:
        rows = con.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:  # a connection that only works in its own thread: not ours to probe
        return None
    return next((str(r[2]) for r in rows if r[1] == "main" and r[2]), None)


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

    Example::

        detect_file(evalnb.examples.foodmart_db())
        # 'sqlite'
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

    Example::

        import pandas as pd
        src = connect({"sales": pd.DataFrame({"state": ["CA"], "units": [3]})})
        src.query("SELECT SUM(units) AS u FROM sales")
    """
    model = _as_cube(cube)
    if isinstance(data, Source):
        # An opened source passes through: it is how a run gets DataFrames with a cube model
        # (`data=connect(frames, cube="cube.yaml")`), as `run()` has no cube argument of its own.
        if model is not None:
            raise ConfigError("this data source is open already: give cube=... to connect() when opening it")
        return data
    if isinstance(data, sqlite3.Connection):
        return Source(
            "sqlite",
            data,
            cube=model,
            description="sqlite3 connection",
            owned=False,
            origin=_database_file(data),
        )
    if isinstance(data, Mapping):
        source = _from_frames(data, model)
        source._origin = dict(data)
        return source
    if isinstance(data, str) and "://" in data:
        source = _from_url(data, model)
        source._origin = data
        return source
    if isinstance(data, (str, Path)):
        p = Path(data)
        kind = detect_file(p)
        if model is None:
            model = _find_cube(p)
        origin = str(p.resolve())
        if kind == "sqlite":
            return Source("sqlite", open_sqlite(origin), cube=model, description=p.name, origin=origin)
        try:
            import duckdb
        except ImportError as exc:
            raise ConfigError(f'{p.name} is a DuckDB file: pip install "evalnb[duckdb]"') from exc
        dcon = duckdb.connect(str(p), read_only=True, config=DUCKDB_CONFIG)
        return Source("duckdb", dcon, cube=model, description=p.name, origin=origin)
    if hasattr(data, "dialect") and hasattr(data, "connect"):  # a SQLAlchemy Engine
        url = getattr(data, "url", None)
        if url is not None and data.dialect.name == "sqlite":
            _sqlite_file_of(url)  # a missing file would be created by the engine's first connection
        return Source(
            "sqlalchemy",
            data,
            cube=model,
            description=str(url if url is not None else "engine"),
            owned=False,
            # elsewhere it opens an engine of its own on the same URL (password included: it must connect)
            origin=url.render_as_string(hide_password=False) if url is not None else None,
        )
    raise ConfigError(
        f"data of type {type(data).__name__} is not a data source: give a SQLite or DuckDB path, "
        "a SQLAlchemy URL or engine, or a mapping of table name to DataFrame"
    )


def _from_url(url: str, model: CubeModel | None) -> Source:
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite":
            # A read-only connection to the file, never creating it (docs/cube-yaml.md, "Reference queries
            # only read"); SQLAlchemy's own would open it read-write and create a missing one.
            path = _sqlite_file_of(parsed)
            if path is None:
                engine = create_engine(parsed)
            else:
                engine = create_engine(parsed, creator=lambda: open_sqlite(path))
        else:
            engine = create_engine(parsed)
    except (ArgumentError, NoSuchModuleError, ImportError) as exc:
        raise ConfigError(f"cannot use the data URL: {exc}") from exc
    return Source(
        "sqlalchemy", engine, cube=model, description=engine.url.render_as_string(hide_password=True)
    )


def _sqlite_file_of(url: Any) -> str | None:
    """The database file of a SQLite URL (None: in memory).

    Raises:
        ConfigError: when the file does not exist (it is never created).
    """
    import urllib.parse

    database = url.database or ""
    if database in ("", ":memory:"):
        return None
    if database.startswith("file:"):  # sqlite:///file:x.db?mode=ro&uri=true
        database = urllib.parse.unquote(urllib.parse.urlsplit(database).path)
        if database in ("", ":memory:"):
            return None
    if not Path(database).is_file():
        raise ConfigError(
            f"cannot open the data file {database}: no such file (a data source is never created)"
        )
    return str(Path(database).resolve())


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
    dcon = duckdb.connect(":memory:", config={**DUCKDB_CONFIG, "python_enable_replacements": False})
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

    Example::

        open_source(suite, evalnb.examples.foodmart_db())
        # Source(sqlite: foodmart.db, cube='Sales')
    """
    needing = reference_checks(suite)
    if data is None:
        if needing:
            cases = ", ".join(dict.fromkeys(cid for cid, _ in needing))
            raise ConfigError(
                f"suite {suite.name} needs a data source for referenceQuery in cases {cases}: "
                "pass data=... (a SQLite or DuckDB file, a SQLAlchemy URL or engine, or a mapping of DataFrames), "
                "or on the command line --data SOURCE (a SQLite or DuckDB file, or a SQLAlchemy URL)"
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
