"""Cube suites written for Mondrian's FoodMart Sales cube run on the sample: its level and measure names are
aliases of the sample's, a name the sample cannot serve says so, an expected null matches an empty string, and
the report's lines read as the suite wrote them."""

from __future__ import annotations

import sqlite3
import textwrap
from pathlib import Path

import pytest

import evalnb
from evalnb.data import connect
from evalnb.data._cube import CubeModel
from evalnb.errors import ReferenceQueryError
from tests.support.examples import EXAMPLES

CUBE = EXAMPLES / "foodmart" / "cube.yaml"
LEVELS = {
    "Store Country": "s.store_country",
    "Store State": "s.store_state",
    "Store City": "s.store_city",
    "Store Name": "s.store_name",
    "Store Type": "s.store_type",
    "Product Family": "pc.product_family",
    "Product Department": "pc.product_department",
    "Product Category": "pc.product_category",
    "Year": "t.the_year",
    "Quarter": "t.quarter",
    "Month": "t.the_month",
    "Week": "t.week_of_year",
    "Gender": "c.gender",
    "Marital Status": "c.marital_status",
    "Education": "c.education",
    "Yearly Income": "c.yearly_income",
}
MEASURES = {
    "Store Sales": "SUM(f.store_sales_cents) / 100.0",
    "Store Cost": "SUM(f.store_cost_cents) / 100.0",
    "Unit Sales": "SUM(f.unit_sales)",
    "Sales Count": "COUNT(*)",
    "Customer Count": "COUNT(DISTINCT f.customer_id)",
}


@pytest.mark.parametrize("level", list(LEVELS))
def test_every_foodmart_level_name_reads_the_sample(level: str) -> None:
    cube = CubeModel.load(CUBE)
    assert cube.level(level).column == LEVELS[level]
    assert cube.level(f"[{level.split()[0]}].[{level}]").column == LEVELS[level]  # MDX unique names too


@pytest.mark.parametrize("measure", list(MEASURES))
def test_every_foodmart_measure_name_reads_the_sample(measure: str) -> None:
    assert CubeModel.load(CUBE).measure(f"[Measures].[{measure}]").sql == MEASURES[measure]


def test_a_reference_query_written_for_the_foodmart_cube_runs(foodmart_db: Path) -> None:
    query = {
        "measures": [{"name": "[Measures].[Unit Sales]"}, {"name": "Customer Count"}],
        "rows": [{"dimension": "Store", "level": "[Store].[Store State]"}],
        "filters": [{"level": "[Product].[Product Family]", "equals": "Drink"}],
    }
    source = connect(foodmart_db)
    try:
        got = source.reference(query)
    finally:
        source.close()
    sql = (
        "SELECT s.store_state, SUM(f.unit_sales), COUNT(DISTINCT f.customer_id) FROM sales_fact_1997 f "
        "JOIN store s ON s.store_id = f.store_id JOIN product p ON p.product_id = f.product_id "
        "JOIN product_class pc ON pc.product_class_id = p.product_class_id WHERE pc.product_family = 'Drink' "
        "GROUP BY s.store_state ORDER BY s.store_state"
    )
    with sqlite3.connect(foodmart_db) as con:
        want = con.execute(sql).fetchall()
    assert [tuple(r) for r in got.itertuples(index=False)] == want and len(want) == 3
    assert list(got.columns) == ["Store State", "Unit Sales", "Customer Count"]


def test_a_name_the_sample_cannot_serve_is_an_error_naming_it() -> None:
    cube = CubeModel.load(CUBE)
    with pytest.raises(
        ReferenceQueryError, match=r"level '\[Product\].\[Product Subcategory\]' has no data here"
    ):
        cube.statement({"measures": ["Unit Sales"], "rows": [{"level": "[Product].[Product Subcategory]"}]})
    with pytest.raises(
        ReferenceQueryError, match=r"measure 'Promotion Sales' has no data here \(the sample has no"
    ):
        cube.measure("Promotion Sales")
    with pytest.raises(ReferenceQueryError, match=r"unknown level 'Planet'; the cube has Country, State"):
        cube.level("Planet")


SUITE = """\
name: mondrian-style
cube: {connectionName: c, catalog: FoodMart, schema: FoodMart, cubeName: Sales}
cases:
  - name: empty-cells
    question: store types with no manager
    expectedIntent: QUERY
    expectedRows:
      - {storeType: Supermarket, manager: ~}
  - name: wrong-intent
    question: why did sales drop?
    expectedIntent: INSIGHT
  - name: by-store-country
    question: unit sales by store country
    expectedIntent: QUERY
    referenceQuery:
      measures: [{name: "[Measures].[Unit Sales]"}]
      rows: [{dimension: Store, level: Store Country}]
"""


def test_saiku_style_suite_on_the_sample(tmp_path: Path, foodmart_db: Path) -> None:
    path = tmp_path / "mondrian.eval.yaml"
    path.write_text(textwrap.dedent(SUITE))

    def analyst(prompt: str) -> dict:
        if "manager" in prompt:
            return {"intent": "QUERY", "rows": [{"Store Type": "Supermarket", "Manager": ""}]}  # saiku: ""
        if "country" in prompt:
            return {"intent": "QUERY", "rows": [{"Store Country": "USA", "Unit Sales": 266773}]}
        return {"intent": "QUERY", "rows": []}

    result = evalnb.run(path, analyst, data=foodmart_db, progress=False)
    assert result.cases.set_index("case_id")["status"].to_dict() == {
        "empty-cells": "passed",
        "wrong-intent": "failed",
        "by-store-country": "passed",
    }
    report = result.report()
    assert "  intent: expected INSIGHT, got QUERY" in report and "intent: intent:" not in report
