"""Reference queries only read, whatever they say, on every backend (docs/cube-yaml.md, "Reference queries
only read").

Every hostile query is tried on every kind of data source: a SQLite file, a sqlite URL, SQLAlchemy engines
(one in autocommit mode), a caller's sqlite3 connection, a DuckDB file, DataFrames, and a real PostgreSQL
server. Each is refused with the code ``READ_ONLY_QUERY`` before it runs; and with the statement check left
out, the connection's own locks still leave the data as it was. "As it was" is measured: the hash of every
file in the data folder (and no new file there), the DataFrames' contents, and on PostgreSQL the tables, the
sequence, the large objects, the locks, a bystander session and the server-writable folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb.data import connect
from evalnb.data._readonly import check_statement
from evalnb.data._sources import Source
from evalnb.errors import ReferenceQueryError
from evalnb.suite import Case, ReferenceQuery, RowsCheck, Suite, Turn
from tests.support.cli import evalnb_cli

SELECT = "SELECT state, SUM(cents) AS cents FROM sales GROUP BY state ORDER BY state"
ROWS = [{"state": "CA", "cents": 200}, {"state": "WA", "cents": 1000}]

# Every backend: writes, second statements hidden behind comments and literals, data-modifying CTEs.
HOSTILE = [
    "DROP TABLE sales",
    "DELETE FROM sales",
    "delete from sales where 1 = 1",
    "INSERT INTO sales VALUES ('XX', 'Junk', 1)",
    "UPDATE sales SET cents = 0",
    "CREATE TABLE junk (a INTEGER)",
    "ALTER TABLE sales ADD COLUMN junk INTEGER",
    "SELECT 1 AS a; DELETE FROM sales",
    "SELECT 1 AS a;\n\tDROP TABLE sales",
    "SELECT 1 AS a -- just a comment\n; DROP TABLE sales",
    "/* SELECT */ DELETE FROM sales",
    "SELECT 1 AS a /* ; */ ; DELETE FROM sales",
    "SELECT 'it''s; fine' AS a; DELETE FROM sales",
    "(SELECT 1 AS a); DROP TABLE sales",
    "WITH gone AS (DELETE FROM sales RETURNING *) SELECT * FROM gone",
    "WITH added AS (INSERT INTO sales VALUES ('XX', 'Junk', 1) RETURNING *) SELECT * FROM added",
    "SELECT * INTO junk FROM sales",
    "SELECT 1 /* /* */ AS a; DELETE FROM sales; /* */",
    "BEGIN; DELETE FROM sales; COMMIT",
]

SQLITE_HOSTILE = [
    "PRAGMA user_version = 7",
    "PRAGMA journal_mode = WAL",
    "ATTACH DATABASE '{dir}/attached.db' AS other",
    "VACUUM INTO '{dir}/copy.db'",
    "VACUUM",
    "REPLACE INTO sales VALUES ('XX', 'Junk', 1)",
    "INSERT OR REPLACE INTO sales VALUES ('XX', 'Junk', 1)",
    "SELECT load_extension('{dir}/nothing')",
    "SELECT * FROM pragma_user_version(7)",
    "SELECT [a] FROM (SELECT 1 AS [a]); DELETE FROM sales",
]

DUCKDB_HOSTILE = [
    "COPY sales TO '{dir}/out.csv'",
    "COPY (SELECT * FROM sales) TO '{dir}/out.parquet' (FORMAT parquet)",
    "INSTALL httpfs",
    "LOAD httpfs",
    "ATTACH '{dir}/other.duckdb' AS other",
    "EXPORT DATABASE '{dir}/exported'",
    "SET enable_external_access = true",
    "CREATE TABLE junk AS SELECT 1 AS a",
    "CREATE VIEW junk AS SELECT 1 AS a",
    "DROP VIEW sales",
    "CHECKPOINT",
    "SELECT * FROM query('DROP VIEW sales')",
    "SELECT * FROM read_csv('{dir}/../elsewhere.csv')",
    "SELECT $$;$$ AS a; DROP VIEW sales",
]

POSTGRES_HOSTILE = [
    "SELECT pg_terminate_backend({pid})",
    "SELECT pg_catalog.pg_terminate_backend({pid})",
    'SELECT "pg_terminate_backend"({pid})',
    "SELECT pg_cancel_backend({pid})",
    "SELECT lo_export(4242, '{dir}/exported.txt')",
    "SELECT lo_unlink(4242)",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT set_config('transaction_read_only', 'off', true)",
    "SELECT nextval('counter')",
    "SELECT setval('counter', 100)",
    "SELECT pg_advisory_lock(1)",
    "SELECT pg_reload_conf()",
    "SELECT pg_read_file('/etc/hostname')",
    "COPY sales TO '{dir}/out.csv'",
    "COPY (SELECT * FROM sales) TO '{dir}/out2.csv'",
    "DO $$ BEGIN DELETE FROM sales; END $$",
    "SELECT query_to_xml('DELETE FROM sales RETURNING *', true, false, '')",
    "SET default_transaction_read_only = off",
    "SET TRANSACTION READ WRITE",
    "SELECT * FROM sales FOR UPDATE",
    "SELECT * FROM sales FOR SHARE",
    "SELECT * FROM sales FOR KEY SHARE",
    "CREATE TEMP TABLE junk AS SELECT 1 AS a",
    "SELECT $$;$$ AS a; DELETE FROM sales",
    "SELECT $tag$ $$ ; $tag$ AS a; DELETE FROM sales",
    "SELECT E'\\';' AS a; DELETE FROM sales",
    "SELECT 'a\\' AS a; DELETE FROM sales; --'",
    "CALL nothing()",
    "EXPLAIN ANALYZE DELETE FROM sales",
]

# What the connection alone (no statement check) cannot stop on PostgreSQL: functions that act outside the
# transaction (as the superuser the tests connect as). The statement check refuses them; a role without these
# rights is the remedy the docs give for the rest.
POSTGRES_BEYOND_THE_TRANSACTION = {
    "SELECT pg_terminate_backend({pid})",
    "SELECT pg_catalog.pg_terminate_backend({pid})",
    'SELECT "pg_terminate_backend"({pid})',
    "SELECT pg_cancel_backend({pid})",
    "SELECT lo_export(4242, '{dir}/exported.txt')",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT pg_advisory_lock(1)",
    "SELECT pg_reload_conf()",
    "SELECT pg_read_file('/etc/hostname')",
    "COPY sales TO '{dir}/out.csv'",
    "COPY (SELECT * FROM sales) TO '{dir}/out2.csv'",
}

# Reads that must still run everywhere: keywords in literals, comments and quoted names are not statements.
READS = [
    SELECT,
    SELECT + ";",
    f"-- DELETE FROM sales;\n{SELECT}",
    f"/* DROP TABLE sales; */ {SELECT}",
    "WITH t AS (SELECT * FROM sales) SELECT state, SUM(cents) AS cents FROM t GROUP BY state ORDER BY state",
]


def _hash_folder(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


def _fill(sql: str, folder: Path, pid: int = 0) -> str:
    return sql.replace("{dir}", str(folder)).replace("{pid}", str(pid))


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {"state": ["CA", "CA", "WA"], "family": ["Food", "Drink", "Food"], "cents": [150, 50, 1000]}
    )


def _sqlite_file(folder: Path) -> Path:
    path = folder / "shop.db"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE sales (state TEXT, family TEXT, cents INTEGER);"
        "INSERT INTO sales VALUES ('CA', 'Food', 150), ('CA', 'Drink', 50), ('WA', 'Food', 1000);"
    )
    con.commit()
    con.close()
    return path


def _duckdb_file(folder: Path) -> Path:
    import duckdb

    path = folder / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.register("frame", _frame())
    con.execute("CREATE TABLE sales AS SELECT * FROM frame")
    con.close()
    return path


class Backend:
    """A data source over files in ``folder``, and how to tell that nothing changed."""

    def __init__(self, name: str, folder: Path, source: Source, *, extra: Callable[[], Any] = lambda: None):
        self.name, self.folder, self.source, self._extra = name, folder, source, extra
        self.before = self.state()

    def state(self) -> tuple[dict[str, str], Any]:
        return _hash_folder(self.folder), self._extra()


def _sqlite_backends(folder: Path) -> Iterator[Backend]:
    from sqlalchemy import create_engine

    path = _sqlite_file(folder)
    yield Backend("sqlite file", folder, connect(path))
    yield Backend("sqlite url", folder, connect(f"sqlite:///{path}"))
    engine = create_engine(f"sqlite:///{path}")
    yield Backend("sqlalchemy engine (sqlite)", folder, connect(engine))
    autocommit = create_engine(f"sqlite:///{path}", isolation_level="AUTOCOMMIT")
    yield Backend("sqlalchemy engine (sqlite, autocommit)", folder, connect(autocommit))
    yield Backend(
        "a caller's sqlite3 connection", folder, connect(sqlite3.connect(path, check_same_thread=False))
    )


def _duckdb_backends(folder: Path) -> Iterator[Backend]:
    yield Backend("duckdb file", folder, connect(_duckdb_file(folder)))
    frame = _frame()
    yield Backend(
        "dataframes (duckdb in memory)",
        folder,
        connect({"sales": frame}),
        extra=lambda: (pd.util.hash_pandas_object(frame).tolist(), frame.columns.tolist()),
    )


BACKENDS: dict[str, tuple[Callable[[Path], Iterator[Backend]], list[str]]] = {
    "sqlite": (_sqlite_backends, HOSTILE + SQLITE_HOSTILE),
    "duckdb": (_duckdb_backends, HOSTILE + DUCKDB_HOSTILE),
}


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The data folder, also the working directory (a relative path in a query would land here)."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.chdir(data)
    return data


def _refused_everywhere(backend: Backend, queries: list[str], pid: int = 0) -> list[str]:
    """The failures (empty: every query refused with the rule's code, nothing changed, reads still right)."""
    problems = []
    for raw in queries:
        sql = _fill(raw, backend.folder, pid)
        try:
            backend.source.query(sql)
            problems.append(f"{backend.name}: ran {sql!r}")
        except ReferenceQueryError as exc:
            if exc.code != "READ_ONLY_QUERY" or not str(exc).startswith("READ_ONLY_QUERY: "):
                problems.append(f"{backend.name}: {sql!r} failed otherwise: {exc.code} {exc}")
        if backend.state() != backend.before:
            problems.append(f"{backend.name}: {sql!r} changed the data or its folder")
    if backend.source.query(SELECT).to_dict("records") != ROWS:
        problems.append(f"{backend.name}: the data reads differently afterwards")
    return problems


def _reads(backend: Backend) -> list[str]:
    problems = []
    for read in READS:
        try:
            if backend.source.query(read).to_dict("records") != ROWS:
                problems.append(f"{backend.name}: the read {read!r} read wrong")
        except ReferenceQueryError as exc:
            problems.append(f"{backend.name}: the read {read!r} was refused: {exc}")
    return problems


def _unchanged_without_the_check(backend: Backend, queries: list[str], pid: int = 0) -> list[str]:
    """The failures when the statement check is left out: the connection's locks alone must hold."""
    problems = []
    for raw in queries:
        sql = _fill(raw, backend.folder, pid)
        # refused by the database (or not valid SQL there): what matters is what it left
        with contextlib.suppress(ReferenceQueryError):
            backend.source._execute(sql, None, check=False)
        if backend.state() != backend.before:
            problems.append(f"{backend.name}: {sql!r} changed the data or its folder without the check")
    for write in ("DELETE FROM sales", "DROP TABLE sales"):
        with pytest.raises(ReferenceQueryError) as info:
            backend.source._execute(write, None, check=False)
        if info.value.code != "READ_ONLY_QUERY":
            problems.append(
                f"{backend.name}: the connection let {write!r} through to fail otherwise: {info.value}"
            )
    if backend.source.query(SELECT).to_dict("records") != ROWS:
        problems.append(f"{backend.name}: the data reads differently afterwards")
    return problems


@pytest.mark.parametrize("family", sorted(BACKENDS))
def test_hostile_queries_are_refused_and_change_nothing(folder: Path, family: str) -> None:
    make, queries = BACKENDS[family]
    problems: list[str] = []
    for backend in make(folder):
        problems += _refused_everywhere(backend, queries)
        problems += _reads(backend)
        backend.source.close()
    assert problems == []


@pytest.mark.parametrize("family", sorted(BACKENDS))
def test_the_connection_alone_changes_nothing(folder: Path, family: str) -> None:
    make, queries = BACKENDS[family]
    problems: list[str] = []
    for backend in make(folder):
        problems += _unchanged_without_the_check(backend, queries)
        backend.source.close()
    assert problems == []


def test_a_callers_sqlite_connection_gets_its_settings_back(folder: Path) -> None:
    con = sqlite3.connect(_sqlite_file(folder))
    src = connect(con)
    with pytest.raises(ReferenceQueryError, match="READ_ONLY_QUERY"):
        src._execute("DELETE FROM sales", None, check=False)
    assert src.query(SELECT).to_dict("records") == ROWS
    # the caller's connection writes again, as before: evalnb's locks were for its queries only
    con.execute("INSERT INTO sales VALUES ('OR', 'Food', 1)")
    con.execute("PRAGMA user_version = 3")
    assert con.execute("PRAGMA user_version").fetchone() == (3,)
    assert con.execute("SELECT COUNT(*) FROM sales").fetchone() == (4,)
    con.close()


def test_a_missing_sqlite_file_is_never_created(folder: Path) -> None:
    from sqlalchemy import create_engine

    with pytest.raises(evalnb.ConfigError, match="no such file"):
        connect(f"sqlite:///{folder / 'typo.db'}")
    with pytest.raises(evalnb.ConfigError, match="no such file"):
        connect(create_engine(f"sqlite:///{folder / 'typo.db'}"))
    with pytest.raises(evalnb.ConfigError, match="cannot open"):
        connect(folder / "typo.db")
    assert list(folder.iterdir()) == []


def test_a_sqlite_uri_url_is_opened_read_only_whatever_its_mode(folder: Path) -> None:
    path = _sqlite_file(folder)
    before = _hash_folder(folder)
    src = connect(f"sqlite:///file:{path}?mode=rwc&uri=true")
    with pytest.raises(ReferenceQueryError, match="READ_ONLY_QUERY"):
        src._execute("DELETE FROM sales", None, check=False)
    assert src.query(SELECT).to_dict("records") == ROWS
    src.close()
    assert _hash_folder(folder) == before


# --- PostgreSQL ---------------------------------------------------------------------------------------------


def _postgres(pg_url: str, folder: Path) -> Iterator[Any]:
    """The shop on a fresh database, a bystander session, and a server-writable folder."""
    from sqlalchemy import create_engine

    folder.chmod(0o777)  # the server (another user) could write here if it were let
    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE sales (state text, family text, cents integer);"
            "INSERT INTO sales VALUES ('CA', 'Food', 150), ('CA', 'Drink', 50), ('WA', 'Food', 1000);"
            "CREATE SEQUENCE counter; SELECT lo_from_bytea(4242, 'secret')"
        )
    return admin


def _pg_state(admin: Any, bystander: Any) -> Any:
    with admin.connect() as conn:
        run = lambda sql: [tuple(r) for r in conn.exec_driver_sql(sql).fetchall()]  # noqa: E731
        state = (
            run("SELECT * FROM sales ORDER BY state, family"),
            run(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
                "ORDER BY 1, 2"
            ),
            run("SELECT last_value, is_called FROM counter"),
            run("SELECT oid FROM pg_largeobject_metadata ORDER BY oid"),
            run("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'"),
            run("SHOW default_transaction_read_only"),
        )
    alive = bystander.exec_driver_sql("SELECT 1").scalar()  # raises when the session was terminated
    return state, alive


@pytest.mark.parametrize("how", ["url", "engine", "engine (autocommit)"])
def test_hostile_queries_on_postgres(pg_url: str, folder: Path, how: str) -> None:
    from sqlalchemy import create_engine

    admin = _postgres(pg_url, folder)
    bystander_engine = create_engine(pg_url)
    bystander = bystander_engine.connect()
    pid = int(bystander.exec_driver_sql("SELECT pg_backend_pid()").scalar())
    bystander.commit()
    engine = None
    if how == "engine":
        engine = create_engine(pg_url)
    elif how == "engine (autocommit)":
        engine = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    source = connect(pg_url if engine is None else engine)
    backend = Backend(f"postgresql {how}", folder, source, extra=lambda: _pg_state(admin, bystander))
    problems = _refused_everywhere(backend, HOSTILE + POSTGRES_HOSTILE, pid)
    problems += _reads(backend)
    inside = [q for q in HOSTILE + POSTGRES_HOSTILE if q not in POSTGRES_BEYOND_THE_TRANSACTION]
    problems += _unchanged_without_the_check(backend, inside, pid)
    source.close()
    if engine is not None:
        engine.dispose()  # the caller's engine: theirs to dispose of
    bystander.close()
    bystander_engine.dispose()
    admin.dispose()
    assert problems == []


def test_a_run_on_postgres_reports_the_rule(pg_url: str, folder: Path) -> None:
    admin = _postgres(pg_url, folder)
    queries = [
        "DELETE FROM sales",
        "SELECT lo_export(4242, '{dir}/x.txt')",
        "SELECT 1 AS a; DROP TABLE sales",
    ]
    result = evalnb.run(_suite([_fill(q, folder) for q in queries]), _agent, data=pg_url, progress=False)
    _assert_refused_rows(result, len(queries))
    with admin.connect() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM sales").scalar() == 3
    assert list(folder.iterdir()) == []
    admin.dispose()


# --- in a run, and on the command line ---------------------------------------------------------------------


def _suite(queries: list[str]) -> Suite:
    cases = [
        Case(
            id=f"bad-{i}",
            name=f"bad-{i}",
            turns=[Turn(prompt="q", checks=[RowsCheck(reference_query=ReferenceQuery(sql=q))])],
        )
        for i, q in enumerate(queries)
    ]
    good = RowsCheck(reference_query=ReferenceQuery(sql=SELECT))
    return Suite(
        name="hostile",
        format="cube-yaml",
        cases=[*cases, Case(id="good", name="good", turns=[Turn(prompt="q", checks=[good])])],
    )


def _agent(prompt: str) -> dict[str, Any]:
    return {"rows": ROWS}


def _assert_refused_rows(result: Any, n: int) -> None:
    scores = result.scores.set_index("case_id")
    assert bool(scores.loc["good", "passed"]) is True  # the run went on
    for i in range(n):
        row = scores.loc[f"bad-{i}"]
        assert bool(row["passed"]) is False
        assert str(row["reason"]).startswith("referenceQuery: READ_ONLY_QUERY: a reference query only reads")
    assert set(result.runs["status"]) == {"passed", "failed"}  # an authoring mismatch, not a crash


@pytest.mark.parametrize("family", sorted(BACKENDS))
def test_a_run_reports_the_rule_per_case(folder: Path, family: str) -> None:
    make, queries = BACKENDS[family]
    filled = [_fill(q, folder) for q in queries]
    for backend in make(folder):
        result = evalnb.run(_suite(filled), _agent, data=backend.source, progress=False)
        _assert_refused_rows(result, len(filled))
        assert backend.state() == backend.before, backend.name
        backend.source.close()


def test_the_command_line_with_a_sqlite_url(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = _sqlite_file(data)
    before = _hash_folder(data)
    suite = tmp_path / "hostile.eval.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""\
            name: hostile
            cube: {{connectionName: c, catalog: c, schema: c, cubeName: c}}
            cases:
              - name: drop
                question: q
                referenceQuery: {{sql: "DROP TABLE sales"}}
              - name: version
                question: q
                referenceQuery: {{sql: "PRAGMA user_version = 7"}}
              - name: copy
                question: q
                referenceQuery: {{sql: "VACUUM INTO '{data}/copy.db'"}}
              - name: good
                question: q
                referenceQuery: {{sql: "{SELECT}"}}
            """
        )
    )
    agent = tmp_path / "agent.py"
    agent.write_text(f"def answer(prompt):\n    return {{'rows': {ROWS!r}}}\n")
    out = evalnb_cli(
        "run", str(suite), "--agent", f"{agent}:answer", "--data", f"sqlite:///{db}", cwd=tmp_path
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.count("READ_ONLY_QUERY") >= 3, out.stdout
    assert "Traceback" not in out.stderr
    assert _hash_folder(data) == before
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone() == (0,)
    con.close()


# --- the statement check by itself --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "dialect", "why"),
    [
        ("", "sqlite", "empty"),
        ("  ;  ; ", "sqlite", "empty"),
        ("SELECT 1; SELECT 2", "sqlite", "2 statements"),
        ("SELECT 1 /* unclosed", "postgresql", "unclosed|inside a /\\* comment"),
        ("SELECT 'unclosed", "duckdb", "ends inside"),
        ("SELECT 1 /* a /* nested */ comment */", "postgresql", "comment inside a comment"),
        ("SELECT 1 /*! ; DROP TABLE sales */", "mysql", "MySQL runs"),
        ("SELECT 'a\\' AS x; DROP TABLE sales; --'", "mysql", "read differently"),
        ("SELECT 'a\\' AS x; DROP TABLE sales; --'", "postgresql", "read differently"),
        ("SELECT * FROM sales FOR UPDATE", "postgresql", "contains UPDATE"),
        ("SELECT * FROM sales FOR NO KEY UPDATE", "postgresql", "contains UPDATE"),
        ("SELECT * FROM sales FOR SHARE", "postgresql", "locks rows"),
        ("select PG_TERMINATE_BACKEND(1)", "postgresql", "pg_terminate_backend"),
        ("SELECT dblink_exec('x', 'DROP TABLE t')", "postgresql", "dblink_exec"),
        ("SELECT writefile('x', 'y')", "sqlite", "writefile"),
        ("SELECT * FROM query_table('sales')", "duckdb", "query_table"),
        ("SELECT pg_terminate_backend(1)", "mssql", "pg_terminate_backend"),  # unknown dialect: every list
        ("VALUES (1)", "sqlite", "starts with 'VALUES'"),
        ("SHOW TABLES", "duckdb", "starts with 'SHOW'"),
        ("SELECT load AS x FROM t; LOAD httpfs", "duckdb", "2 statements"),
    ],
)
def test_the_check_names_what_it_found(sql: str, dialect: str, why: str) -> None:
    with pytest.raises(ReferenceQueryError, match=why) as info:
        check_statement(sql, dialect=dialect)
    assert info.value.code == "READ_ONLY_QUERY"


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT 'DELETE FROM sales; DROP TABLE sales' AS note", "sqlite"),
        ('SELECT "update", "insert" FROM "delete"', "postgresql"),
        ("SELECT `update` FROM `into`", "sqlite"),
        ("SELECT [drop] FROM [create]", "sqlite"),
        ("SELECT $$ ; DROP TABLE x $$ AS a", "postgresql"),
        ("SELECT E'it\\'s; DROP TABLE x' AS a", "postgresql"),
        ("SELECT 'C:\\\\' AS path", "mysql"),  # an even run of backslashes reads the same everywhere
        ("SELECT 'a\\' AS path", "sqlite"),  # SQLite has no backslash escapes
        ("SELECT date'2020-01-01' AS d", "postgresql"),
        ("SELECT * FROM t WHERE a = $1 AND b = $p0", "duckdb"),
        ("SELECT replace(name, 'a', 'b') AS n, sum(x) FILTER (WHERE y) FROM t", "postgresql"),
        (
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT * FROM c",
            "sqlite",
        ),
        ("SELECT last_update, updated_at, into_x FROM t", "sqlite"),
        ("SELECT 1 -- a comment at the very end", "sqlite"),
    ],
)
def test_the_check_lets_reads_through(sql: str, dialect: str) -> None:
    check_statement(sql, dialect=dialect)


def test_the_sample_cube_reads(foodmart_db: Path) -> None:
    """The structured form's SQL goes through the check too: the sample cube's statements pass it."""
    suite = evalnb.examples.load("foodmart-sales")
    src = connect(foodmart_db)
    from evalnb.data._sources import reference_checks

    checked = 0
    for _, spec in reference_checks(suite):
        assert spec.reference_query is not None
        stmt = src.statement(spec.reference_query)
        check_statement(stmt.sql, dialect="sqlite")
        checked += 1
    assert checked > 0
    src.close()


def test_the_rule_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cube-yaml.md").read_text()
    assert "## Reference queries only read" in doc
    assert "`READ_ONLY_QUERY`" in doc


def test_a_source_sent_to_a_worker_opens_read_only_there(folder: Path) -> None:
    """A cluster executor ships a source as what it re-opens (Source.__reduce__): the copy's connection is
    read-only too."""
    import pickle

    from sqlalchemy import create_engine

    path = _sqlite_file(folder)
    engine = create_engine(f"sqlite:///{path}")
    sources = [connect(path), connect(f"sqlite:///{path}"), connect(engine), connect(_duckdb_file(folder))]
    sources.append(connect({"sales": _frame()}))
    before = _hash_folder(folder)
    for original in sources:
        copy = pickle.loads(pickle.dumps(original))
        for sql in ("DELETE FROM sales", "DROP TABLE sales"):
            with pytest.raises(ReferenceQueryError, match="READ_ONLY_QUERY"):
                copy._execute(sql, None, check=False)
        assert copy.query(SELECT).to_dict("records") == ROWS, original
        copy.close()
        original.close()
    engine.dispose()
    assert _hash_folder(folder) == before
