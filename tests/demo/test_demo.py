"""The FoodMart sample and the demo agent: figures to the cent, the example suite end to end, the flaws."""

from __future__ import annotations

import hashlib
import importlib.util
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.demo import FoodMartAgent, foodmart_db
from evalnb.demo._sample import sample_dir, suite_path

FLAW_CASES = {
    # every case whose rows carry Store Sales figures, and only those
    "cost-for-sales": {
        "sales-by-state",
        "store-sales-by-product-family",
        "total-sales-1997",
        "sales-by-family-in-ca",
        "follow-up-turn",
    },
    # the one case with a member filter
    "ignore-filters": {"sales-by-family-in-ca"},
}


@pytest.fixture(scope="module")
def db() -> Path:
    return foodmart_db()


@pytest.fixture(scope="module")
def agent(db: Path) -> FoodMartAgent:
    return FoodMartAgent(db)


def q(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


FACT = "sales_fact_1997 f"


def test_sample_totals_to_the_cent(db: Path) -> None:
    # integer cents: the comparison is exact, not approximate
    assert q(db, f"SELECT SUM(unit_sales), SUM(store_sales_cents) FROM {FACT}") == [(266_773, 56_523_813)]
    assert q(db, "SELECT DISTINCT store_country FROM store") == [("USA",)]


def test_sample_by_product_family(db: Path) -> None:
    rows = q(
        db,
        f"SELECT pc.product_family, SUM(unit_sales), SUM(store_sales_cents) FROM {FACT} "
        "JOIN product p USING (product_id) JOIN product_class pc USING (product_class_id) GROUP BY 1 ORDER BY 1",
    )
    assert rows == [
        ("Drink", 24_597, 4_883_621),
        ("Food", 191_940, 40_903_559),
        ("Non-Consumable", 50_236, 10_736_633),
    ]


def test_sample_by_state_and_quarter(db: Path) -> None:
    rows = q(
        db,
        f"SELECT store_state, SUM(unit_sales), SUM(store_sales_cents) FROM {FACT} JOIN store s USING (store_id) GROUP BY 1 ORDER BY 1",
    )
    assert rows == [("CA", 74_748, 15_916_784), ("OR", 67_659, 14_227_707), ("WA", 124_366, 26_379_322)]
    rows = q(
        db,
        f"SELECT quarter, SUM(unit_sales), SUM(store_sales_cents) FROM {FACT} JOIN time_by_day USING (time_id) GROUP BY 1 ORDER BY 1",
    )
    assert rows == [
        ("Q1", 66_291, 13_962_835),
        ("Q2", 62_610, 13_266_627),
        ("Q3", 65_848, 14_027_189),
        ("Q4", 72_024, 15_267_162),
    ]
    assert q(db, "SELECT COUNT(*), MIN(the_date), MAX(the_date), MAX(week_of_year) FROM time_by_day") == [
        (365, "1997-01-01", "1997-12-31", 52)
    ]


def test_build_is_deterministic(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("fm_build", sample_dir() / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    a, b = build.build(tmp_path / "a.db"), build.build(tmp_path / "b.db")
    assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()


# -- the agent -------------------------------------------------------------------------------------------


def test_measure_by_level_in_new_words(agent: FoodMartAgent) -> None:
    r = agent.answer("how many units did each product family sell?")
    assert r.intent == "QUERY"
    assert r.model == "foodmart-rules-1"
    assert {row["productFamily"]: row["unitSales"] for row in r.rows} == {
        "Food": 191_940,
        "Non-Consumable": 50_236,
        "Drink": 24_597,
    }
    r = agent.answer("revenue per quarter")
    assert [row["quarter"] for row in r.rows] == ["Q1", "Q2", "Q3", "Q4"]
    assert r.rows[3]["storeSales"] == 152_671.62


def test_top_n_and_filters(agent: FoodMartAgent) -> None:
    r = agent.answer("top 2 states by unit sales")
    assert r.rows == [{"state": "WA", "unitSales": 124_366}, {"state": "CA", "unitSales": 74_748}]
    r = agent.answer("unit sales by product family in Oregon")
    assert sum(row["unitSales"] for row in r.rows) < 67_660
    assert "WHERE" in r.meta["sql"]
    r = agent.answer("store sales for Drink by state")
    assert round(sum(row["storeSales"] for row in r.rows), 2) == 48_836.21
    # "or" the word is not Oregon
    r = agent.answer("store sales or unit sales by state")
    assert "WHERE" not in r.meta["sql"]


def test_follow_up_uses_history(agent: FoodMartAgent) -> None:
    history = [
        {"role": "user", "content": "show unit sales by product family"},
        {"role": "assistant", "content": "3 rows returned."},
    ]
    r = agent.answer("now only for WA", history)
    assert sum(row["unitSales"] for row in r.rows) == 124_366
    assert set(r.rows[0]) == {"productFamily", "unitSales"}
    r = agent.answer("now break it down by quarter", history)
    assert set(r.rows[0]) == {"productFamily", "quarter", "unitSales"}


def test_insight_cites_figures(agent: FoodMartAgent, db: Path) -> None:
    r = agent.answer("is revenue trending up week-on-week?")
    assert r.intent == "INSIGHT"
    assert r.insight is not None
    assert "Store Sales" in r.insight
    assert "week-on-week" in r.insight
    (last,) = q(
        db,
        f"SELECT SUM(store_sales_cents) FROM {FACT} JOIN time_by_day USING (time_id) WHERE week_of_year = 52",
    )[0]
    assert f"${last / 100:,.2f}" in r.insight


def test_view_change_and_refusals(agent: FoodMartAgent) -> None:
    history = [{"role": "user", "content": "show unit sales by quarter"}]
    r = agent.answer("show it as a line chart", history)
    assert (r.intent, r.meta["view"]) == ("VIEW_CHANGE", {"chart": "line"})
    assert "Unit Sales by Quarter" in (r.text or "")
    for question in (
        "what's the weather in Paris?",
        "who won the 1998 world cup?",
        "help me fix my bash script",
    ):
        r = agent.answer(question)
        assert r.intent == "REFUSED", question
        assert "cube" in (r.refusal or "")


async def test_agent_protocol_reads_the_request(agent: FoodMartAgent) -> None:
    req = evalnb.Request(
        prompt="now by state", history=[{"role": "user", "content": "show profit by country"}]
    )
    r = await agent.respond(req)
    assert [row["state"] for row in r.rows] == ["WA", "CA", "OR"]
    with pytest.raises(ValueError, match="unknown flaw"):
        FoodMartAgent(flaw="typo")  # type: ignore[arg-type]


# -- the example suite end to end ------------------------------------------------------------------------


def test_example_suite_passes(agent: FoodMartAgent, db: Path) -> None:
    suite = evalnb.load(suite_path())
    assert suite.format == "cube-yaml"
    result = evalnb.run(suite, agent, data=db)
    assert result.cases["status"].tolist() == ["passed"] * len(suite.cases), result.report()
    assert result.mismatches.empty
    checks = set(result.scores["check"])
    assert {"intent", "rows", "insight", "refusal"} <= checks


@pytest.mark.parametrize("flaw", sorted(FLAW_CASES))
def test_flawed_variant_fails_exactly_its_cases(flaw: str, db: Path) -> None:
    result = evalnb.run(evalnb.load(suite_path()), FoodMartAgent(db, flaw=flaw), data=db)  # type: ignore[arg-type]
    failed = set(result.cases.loc[result.cases["status"] != "passed", "case_id"])
    assert failed == FLAW_CASES[flaw]
    mm = result.mismatches
    assert set(mm["case_id"]) == FLAW_CASES[flaw]
    assert mm["key"].map(lambda k: k.replace(" ", "").lower()).eq("storesales").all()
    for line in mm["reason"]:
        assert line.startswith("rows[")
        assert ": expected " in line and ", got " in line
    if flaw == "cost-for-sales":
        line = mm.loc[mm["case_id"] == "total-sales-1997", "reason"].item()
        assert line.startswith("rows[0].storeSales: expected 565238.13 ± (abs 0, rel 0), got ")


def test_example_suite_needs_data(agent: FoodMartAgent) -> None:
    with pytest.raises(evalnb.ConfigError, match="needs a data source for referenceQuery"):
        evalnb.run(suite_path(), agent)


def test_a_filter_on_a_member_the_cube_lacks_is_refused_not_dropped(agent: FoodMartAgent) -> None:
    r = agent.answer("store sales by product family in Texas")
    assert r.intent == "REFUSED" and r.refusal is not None
    assert "'Texas' is not a member" in r.refusal and "cube" in r.refusal and "CA, OR, WA" in r.refusal
    # known members, measures and levels after "in"/"for" still filter as before
    assert agent.answer("store sales by product family in CA").intent == "QUERY"
    assert agent.answer("store sales in San Francisco").intent == "QUERY"
    assert agent.answer("top 3 product families for Unit Sales").intent == "QUERY"
