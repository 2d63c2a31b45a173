"""Data sources for referenceQuery: header detection, SQLAlchemy, DataFrames, cube model, run-time rules."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb.data import connect
from evalnb.data._cube import CubeModel
from evalnb.data._sources import Source, detect_file, open_source
from evalnb.errors import ConfigError, ReferenceQueryError
from evalnb.suite import Case, ReferenceQuery, RowsCheck, Suite, Turn
from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
CUBE = EXAMPLES / "foodmart" / "cube.yaml"


def make_sqlite(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE sales (state TEXT, family TEXT, cents INTEGER);"
        "INSERT INTO sales VALUES ('CA', 'Food', 150), ('CA', 'Drink', 50), ('WA', 'Food', 1000);"
    )
    con.commit()
    con.close()
    return path


def make_duckdb(path: Path) -> Path:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE sales AS SELECT 'CA' AS state, 'Food' AS family, 150 AS cents")
    con.close()
    return path


def suite_with(*checks: RowsCheck) -> Suite:
    cases = [
        Case(id=f"case-{i}", name=f"case-{i}", turns=[Turn(prompt="q", checks=[c])])
        for i, c in enumerate(checks)
    ]
    return Suite(name="demo-suite", format="cube-yaml", cases=cases)


SQL = "SELECT state, SUM(cents) AS cents FROM sales GROUP BY state ORDER BY state"


def test_header_decides_not_the_extension(tmp_path: Path) -> None:
    lite = make_sqlite(tmp_path / "really-sqlite.duckdb")
    duck = make_duckdb(tmp_path / "really-duck.db")
    assert detect_file(lite) == "sqlite"
    assert detect_file(duck) == "duckdb"
    assert connect(lite).query(SQL)["cents"].tolist() == [200, 1000]
    src = connect(duck)
    assert src.kind == "duckdb"
    assert src.query("SELECT cents FROM sales")["cents"].tolist() == [150]
    src.close()


def test_unknown_or_missing_file(tmp_path: Path) -> None:
    junk = tmp_path / "notes.db"
    junk.write_text("hello, this is not a database")
    with pytest.raises(ConfigError, match="neither a SQLite nor a DuckDB"):
        connect(junk)
    with pytest.raises(ConfigError, match="cannot open"):
        connect(tmp_path / "missing.db")
    with pytest.raises(ConfigError, match="not a data source"):
        connect(42)


def test_sqlite_file_opens_read_only(tmp_path: Path) -> None:
    src = connect(make_sqlite(tmp_path / "s.db"))
    with pytest.raises(ReferenceQueryError, match=r"READ_ONLY_QUERY: .* starts with 'DELETE'"):
        src.query("DELETE FROM sales")
    # without the statement check, the connection itself refuses (tests/data/test_read_only.py: every backend)
    with pytest.raises(ReferenceQueryError, match=r"READ_ONLY_QUERY: .*the database refused it"):
        src._execute("DELETE FROM sales", None, check=False)


def test_sqlalchemy_url_and_engine(tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    db = make_sqlite(tmp_path / "s.db")
    src = connect(f"sqlite:///{db}")
    assert src.kind == "sqlalchemy"
    assert src.query(SQL)["cents"].tolist() == [200, 1000]
    src.close()
    engine = create_engine(f"sqlite:///{db}")
    assert connect(engine).query(SQL)["state"].tolist() == ["CA", "WA"]
    engine.dispose()
    with pytest.raises(ReferenceQueryError, match="no such table"):
        connect(f"sqlite:///{db}").query("SELECT * FROM nope")


def test_mapping_of_dataframes() -> None:
    frames = {"sales": pd.DataFrame({"state": ["CA", "CA", "WA"], "cents": [150, 50, 1000]})}
    src = connect(frames)
    assert src.query(SQL)["cents"].tolist() == [200, 1000]
    with pytest.raises(ConfigError, match="not a DataFrame"):
        connect({"sales": [1, 2]})


def test_missing_data_is_a_config_error_naming_the_cases() -> None:
    suite = suite_with(
        RowsCheck(expected=[{"a": 1}]),
        RowsCheck(reference_query=ReferenceQuery(sql=SQL)),
        RowsCheck(reference_query=ReferenceQuery(sql=SQL)),
    )
    with pytest.raises(ConfigError) as info:
        open_source(suite, None)
    assert str(info.value).startswith(
        "suite demo-suite needs a data source for referenceQuery in cases case-1, case-2"
    )
    assert "pass data=" in str(info.value)
    assert open_source(suite_with(RowsCheck(expected=[])), None) is None


def test_run_says_so_before_running(tmp_path: Path) -> None:
    calls: list[str] = []
    suite = suite_with(RowsCheck(reference_query=ReferenceQuery(sql=SQL)))
    with pytest.raises(ConfigError, match="needs a data source"):
        evalnb.run(suite, lambda prompt: calls.append(prompt) or "x")
    assert calls == []


def test_structured_query_needs_a_cube_model(tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "s.db")
    suite = suite_with(RowsCheck(reference_query=ReferenceQuery(measures=[{"name": "Unit Sales"}])))
    with pytest.raises(ConfigError, match="no cube model"):
        open_source(suite, db)


CUBE_DOC = {
    "name": "Mini",
    "fact": "sales f",
    "joins": {},
    "measures": {"Sales": {"sql": "SUM(f.cents) / 100.0", "aliases": ["revenue"]}},
    "levels": {"State": {"column": "f.state"}, "Family": {"column": "f.family", "dimension": "Product"}},
}


def test_cube_model_translates_structured_queries(tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "s.db")
    src = connect(db, cube=CUBE_DOC)
    q = {
        "measures": [{"name": "[Measures].[Revenue]"}],
        "rows": [{"dimension": "Product", "level": "Family"}],
        "filters": [{"level": "State", "equals": "CA"}],
    }
    stmt = src.statement(q)
    assert stmt.sql == (
        'SELECT f.family AS "Family", SUM(f.cents) / 100.0 AS "Revenue" FROM sales f '
        "WHERE f.state = :p0 GROUP BY f.family ORDER BY f.family"
    )
    assert stmt.params == {"p0": "CA"}
    assert src.reference(q).to_dict("records") == [
        {"Family": "Drink", "Revenue": 0.5},
        {"Family": "Food", "Revenue": 1.5},
    ]
    with pytest.raises(ReferenceQueryError, match="unknown measure 'Profit'; the cube has Sales"):
        src.reference({"measures": [{"name": "Profit"}]})
    with pytest.raises(ReferenceQueryError, match="give equals, in, notIn"):
        src.statement({"measures": ["Sales"], "filters": [{"level": "State", "like": "C%"}]})
    stmt = src.statement({"measures": ["Sales"], "filters": [{"level": "State", "in": ["CA", "O'Brien"]}]})
    assert "f.state IN (:p0, :p1)" in stmt.sql and stmt.params == {"p0": "CA", "p1": "O'Brien"}


def test_cube_model_found_next_to_the_database(tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "s.db")
    assert connect(db).cube is None
    shutil.copyfile(CUBE, tmp_path / "cube.yaml")
    cube = connect(db).cube
    assert cube is not None
    assert cube.name == "Sales"
    assert isinstance(CubeModel.load(CUBE).level("product families").column, str)


def test_reference_results_are_cached_per_query(tmp_path: Path) -> None:
    class Counting(Source):
        calls = 0

        def query(self, sql: str, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
            Counting.calls += 1
            return super().query(sql, params)

    con = sqlite3.connect(make_sqlite(tmp_path / "s.db"), check_same_thread=False)
    src = Counting("sqlite", con)
    for _ in range(3):
        assert len(src.reference(ReferenceQuery(sql=SQL))) == 2
        with pytest.raises(ReferenceQueryError):
            src.reference(ReferenceQuery(sql="SELECT broken"))
    assert Counting.calls == 2


def test_failing_reference_query_in_a_run(tmp_path: Path) -> None:
    db = make_sqlite(tmp_path / "s.db")
    suite = suite_with(
        RowsCheck(reference_query=ReferenceQuery(sql="SELECT state, total FROM sales")),
        RowsCheck(reference_query=ReferenceQuery(sql=SQL)),
    )
    result = evalnb.run(
        suite,
        lambda prompt: {"rows": [{"state": "CA", "cents": 200}, {"state": "WA", "cents": 1000}]},
        data=db,
    )
    scores = result.scores.set_index("case_id")
    assert bool(scores.loc["case-1", "passed"]) is True
    assert bool(scores.loc["case-0", "passed"]) is False
    mm = result.mismatches
    assert mm["key"].tolist() == ["referenceQuery"]
    assert mm["reason"].iloc[0] == "referenceQuery: no such column: total"
    assert set(result.runs["status"]) <= {"passed", "failed"}  # an authoring mismatch, not degraded


# --- bound parameters --------------------------------------------------------------------------------------

HOSTILE = [
    "O'Brien",  # a quote: a member, compared as written
    "CA' OR '1'='1",  # the classic: would match every row if pasted into the SQL
    "x'); DROP TABLE sales; --",  # a second statement: must stay a value
    'say "hi" \\ :p0 $p0 ?',  # markers and escapes inside a value mean nothing
]


def _people_frame() -> pd.DataFrame:
    names = ["CA", "WA", *HOSTILE]
    return pd.DataFrame(
        {"state": names, "family": ["Food"] * len(names), "cents": range(100, 100 * (len(names) + 1), 100)}
    )


def _sources(tmp_path: Path) -> dict[str, Source]:
    frame = _people_frame()
    lite = tmp_path / "people.db"
    con = sqlite3.connect(lite)
    frame.to_sql("sales", con, index=False)
    con.close()
    import duckdb

    duck_path = tmp_path / "people.duckdb"
    dcon = duckdb.connect(str(duck_path))
    dcon.register("frame", frame)
    dcon.execute("CREATE TABLE sales AS SELECT * FROM frame")
    dcon.close()
    return {
        "sqlite file": connect(lite, cube=CUBE_DOC),
        "duckdb file": connect(duck_path, cube=CUBE_DOC),
        "dataframes (duckdb)": connect({"sales": frame}, cube=CUBE_DOC),
        # writable, unlike the read-only file sources: a second statement would really run here
        "sqlalchemy url": connect(f"sqlite:///{lite}", cube=CUBE_DOC),
    }


@pytest.mark.parametrize("member", HOSTILE)
def test_filter_members_are_bound_never_pasted(tmp_path: Path, member: str) -> None:
    expected = float(_people_frame().set_index("state").loc[member, "cents"]) / 100
    for kind, src in _sources(tmp_path).items():
        query = {
            "measures": ["Sales"],
            "rows": [{"level": "State"}],
            "filters": [{"level": "State", "equals": member}],
        }
        stmt = src.statement(query)
        assert member not in stmt.sql, kind
        assert list(stmt.params.values()) == [member], kind
        assert src.reference(query).to_dict("records") == [{"State": member, "Sales": expected}], kind
        both = {"measures": ["Sales"], "filters": [{"level": "State", "in": ["CA", member]}]}
        assert src.reference(both)["Sales"].tolist() == [pytest.approx(1.0 + expected)], kind
        others = {"measures": ["Sales"], "filters": [{"level": "State", "notIn": [member]}]}
        total = float(_people_frame()["cents"].sum()) / 100
        assert src.reference(others)["Sales"].tolist() == [pytest.approx(total - expected)], kind
        # the table is still there, whole
        assert src.query("SELECT COUNT(*) AS n FROM sales")["n"].tolist() == [len(_people_frame())], kind
        src.close()


def test_markers_follow_the_database(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    q = {
        "measures": ["Sales"],
        "filters": [{"level": "State", "op": ">=", "value": "W"}, {"level": "Family", "equals": True}],
    }
    assert sources["sqlite file"].statement(q).sql.endswith("WHERE f.state >= :p0 AND f.family = :p1")
    assert sources["sqlalchemy url"].statement(q).sql.endswith("WHERE f.state >= :p0 AND f.family = :p1")
    assert sources["duckdb file"].statement(q).sql.endswith("WHERE f.state >= $p0 AND f.family = $p1")
    # booleans bind as 1/0, as flag columns hold them
    assert sources["duckdb file"].statement(q).params == {"p0": "W", "p1": 1}
    for src in sources.values():
        src.close()


def test_dataframes_with_a_cube_model_reach_structured_reference_queries(tmp_path: Path) -> None:
    import sqlite3

    import pandas as pd

    from evalnb.data import connect
    from evalnb.demo import foodmart_db
    from evalnb.demo.analytics import FoodMartAgent

    db = foodmart_db()
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        frames = {t: pd.read_sql_query(f'SELECT * FROM "{t}"', con) for t in tables}
    con.close()
    suite = evalnb.load(EXAMPLES / "suites" / "foodmart-sales.eval.yaml")
    with pytest.raises(evalnb.ConfigError, match=r"data=evalnb\.data\.connect\(data, cube='cube\.yaml'\)"):
        evalnb.run(suite, FoodMartAgent(db), data=frames, progress=False)
    source = connect(frames, cube=EXAMPLES / "foodmart" / "cube.yaml")
    result = evalnb.run(suite, FoodMartAgent(db), data=source, progress=False)
    assert result.passed, result.report()
    # the caller's source is still open after the run
    assert source.query("SELECT COUNT(*) AS n FROM store")["n"].iloc[0] > 0
    source.close()


def test_a_callers_sqlite_connection_stays_open_after_a_run(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "t.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (k TEXT, v REAL)")
    con.execute("INSERT INTO t VALUES ('a', 1.5)")
    con.commit()
    text = """
name: s
cube: {connectionName: c, catalog: c, schema: c, cubeName: c}
cases:
  - name: one
    question: q
    referenceQuery: {sql: "SELECT k, v FROM t"}
"""
    suite = evalnb.load(text, format="cube-yaml")
    result = evalnb.run(suite, lambda p: {"rows": [{"k": "a", "v": 1.5}]}, data=con, progress=False)
    assert result.passed, result.report()
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (1,)
    con.close()
