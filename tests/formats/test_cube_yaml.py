"""cube spec: the YAML cube suite, its five codes with their exact meanings, and evalnb's strictness."""

from __future__ import annotations

import pytest

import evalnb
from evalnb.suite import InsightCheck, IntentCheck, Message, RefusalCheck, RowsCheck, Tolerance

CUBE = "cube: {connectionName: c, catalog: FoodMart, schema: FoodMart, cubeName: Sales}\n"
HEAD = "name: s\n" + CUBE + "cases:\n"


def one(case_body: str) -> str:
    return HEAD + "  - name: a\n    question: q\n" + case_body


def test_spec_example_loads_as_the_spec_says(fixtures):
    suite = evalnb.load(fixtures / "spec-cube.yaml")
    assert suite.name == "foodmart-sales-evals"
    assert suite.format == "cube-yaml"
    assert suite.description is not None and suite.description.startswith(
        "Ground-truth cases for the FoodMart"
    )
    assert suite.meta["cube"] == {
        "connectionName": "unknown_foodmart",
        "catalog": "FoodMart",
        "schema": "FoodMart",
        "cubeName": "Sales",
    }
    assert [c.id for c in suite.cases] == [
        "sales-by-country",
        "trend-analysis",
        "refuse-off-topic",
        "follow-up-turn",
    ]
    assert all(c.runs == 1 and len(c.turns) == 1 for c in suite.cases)
    by = {c.id: c.turns[0] for c in suite.cases}
    assert by["sales-by-country"].prompt == "show me store sales by country"
    assert by["sales-by-country"].checks == [
        IntentCheck(expected="QUERY"),
        RowsCheck(
            expected=[
                {"country": "USA", "storeSales": 565238.13},
                {"country": "Canada", "storeSales": 79063.11},
                {"country": "Mexico", "storeSales": 51298.13},
            ],
            order_matters=True,
            tolerance=Tolerance(relative=0.001),
        ),
    ]
    assert by["trend-analysis"].checks == [
        IntentCheck(expected="INSIGHT"),
        InsightCheck(contains=["Store Sales", "week-on-week"]),
    ]
    assert by["refuse-off-topic"].checks == [IntentCheck(expected="REFUSED"), RefusalCheck(contains="cube")]
    follow = by["follow-up-turn"]
    assert follow.history == [
        Message(role="user", content="show store sales by country"),
        Message(role="assistant", content="3 rows returned."),
    ]
    rows = follow.checks[1]
    assert isinstance(rows, RowsCheck)
    assert rows.tolerance == Tolerance(absolute=0.0, relative=0.0)  # tolerances default to 0


def test_defaults_and_case_insensitive_intent():
    suite = evalnb.load(one("    expectedIntent: view_change\n    expectedRows: []\n"), format="cube-yaml")
    intent, rows = suite.cases[0].turns[0].checks
    assert intent == IntentCheck(expected="VIEW_CHANGE")
    assert isinstance(rows, RowsCheck) and rows.order_matters is True and rows.expected == []


def test_only_stated_expectations_become_checks():
    assert evalnb.load(one(""), format="cube-yaml").cases[0].turns[0].checks == []


def test_reference_query_sql_and_structured():
    sql = evalnb.load(
        one("    referenceQuery: {sql: SELECT 1 AS x}\n    orderMatters: false\n"), format="cube-yaml"
    )
    (rows,) = sql.cases[0].turns[0].checks
    assert isinstance(rows, RowsCheck)
    assert rows.expected is None and rows.reference_query is not None
    assert rows.reference_query.sql == "SELECT 1 AS x"
    assert rows.order_matters is False
    structured = one(
        "    referenceQuery:\n"
        "      measures: [{name: Store Sales}]\n"
        "      rows: [{dimension: Store, hierarchy: Store, level: Store Country}]\n"
        "      filters: [{dimension: Time, members: ['1997']}]\n"
    )
    (rows,) = evalnb.load(structured, format="cube-yaml").cases[0].turns[0].checks
    assert isinstance(rows, RowsCheck) and rows.reference_query is not None
    assert rows.reference_query.measures == [{"name": "Store Sales"}]
    assert rows.reference_query.rows == [
        {"dimension": "Store", "hierarchy": "Store", "level": "Store Country"}
    ]
    assert rows.reference_query.filters == [{"dimension": "Time", "members": ["1997"]}]


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        # cube spec: the parser rejected the file, or the top level / a case is not a mapping
        ("name: [unclosed\n", "MALFORMED_YAML", "line 2, column 1"),
        ("- a\n- b\n", "MALFORMED_YAML", ""),
        ("", "MALFORMED_YAML", ""),
        (HEAD + "  - just a string\n", "MALFORMED_YAML", "cases[0]"),
        # duplicate keys are an error, not "last one wins"
        (HEAD + "  - name: a\n    name: b\n    question: q\n", "MALFORMED_YAML", "line 5, column 5"),
        (
            "name: a\nname: b\n" + CUBE + "cases: [{name: a, question: q}]\n",
            "MALFORMED_YAML",
            "line 2, column 1",
        ),
        # MISSING_FIELD
        ("name: s\ncases: [{name: a, question: q}]\n", "MISSING_FIELD", "cube"),
        (CUBE + "cases: [{name: a, question: q}]\n", "MISSING_FIELD", "name"),
        ("name: s\n" + CUBE, "MISSING_FIELD", "cases"),
        (HEAD + "  - name: a\n", "MISSING_FIELD", "cases[0].question"),
        ("name: s\n" + CUBE + "cases: []\n", "MISSING_FIELD", "cases"),
        (
            "name: s\ncube: {catalog: F, schema: F, cubeName: S}\ncases: [{name: a, question: q}]\n",
            "MISSING_FIELD",
            "cube.connectionName",
        ),
        # BLANK_FIELD
        ("name: '  '\n" + CUBE + "cases: [{name: a, question: q}]\n", "BLANK_FIELD", "name"),
        (
            "name: s\ncube: {connectionName: '', catalog: F, schema: F, cubeName: S}\ncases: [{name: a, question: q}]\n",
            "BLANK_FIELD",
            "cube.connectionName",
        ),
        (HEAD + "  - name: a\n    question: ''\n", "BLANK_FIELD", "cases[0].question"),
        # TYPE_MISMATCH
        ("name: s\n" + CUBE + "cases: {a: {question: q}}\n", "TYPE_MISMATCH", "cases"),
        (one("    orderMatters: 'no'\n"), "TYPE_MISMATCH", "cases[0].orderMatters"),
        (one("    tolerance: {absolute: '0.1'}\n"), "TYPE_MISMATCH", "cases[0].tolerance.absolute"),
        (one("    expectedRows: {a: 1}\n"), "TYPE_MISMATCH", "cases[0].expectedRows"),
        (
            one("    expectedInsightContains: Store Sales\n"),
            "TYPE_MISMATCH",
            "cases[0].expectedInsightContains",
        ),
        # INVALID_TOLERANCE
        (one("    tolerance: {absolute: -0.01}\n"), "INVALID_TOLERANCE", "cases[0].tolerance.absolute"),
        (one("    tolerance: {relative: -1}\n"), "INVALID_TOLERANCE", "cases[0].tolerance.relative"),
        # INVALID_VALUE
        (one("    expectedIntent: ANSWER\n"), "INVALID_VALUE", "cases[0].expectedIntent"),
        (
            one("    expectedRows: []\n    referenceQuery: {sql: SELECT 1}\n"),
            "INVALID_VALUE",
            "cases[0].referenceQuery",
        ),
        (one("    history: [{role: robot, content: hi}]\n"), "INVALID_VALUE", "cases[0].history[0].role"),
        (HEAD + "  - {name: a, question: q}\n  - {name: a, question: r}\n", "INVALID_VALUE", "cases[1].name"),
        # UNKNOWN_FIELD
        (one("    expectedRow: [{a: 1}]\n"), "UNKNOWN_FIELD", "cases[0].expectedRow"),
        (one("    tolerance: {absolut: 1}\n"), "UNKNOWN_FIELD", "cases[0].tolerance.absolut"),
        ("name: s\nsuite: x\n" + CUBE + "cases: [{name: a, question: q}]\n", "UNKNOWN_FIELD", "suite"),
    ],
)
def test_error_codes_with_locations(load_error, text, code, location):
    err = load_error(text, "cube-yaml")
    assert (err.code, err.location) == (code, location), err


def test_typo_suggests_the_nearest_key(load_error):
    err = load_error(one("    expectedRow:\n      - {country: USA}\n"), "cube-yaml")
    assert err.code == "UNKNOWN_FIELD"
    assert err.suggestion == "expectedRows"
    assert "did you mean 'expectedRows'?" in err.message
    err = load_error(HEAD + "  - name: a\n    qestion: q\n", "cube-yaml")
    assert (err.code, err.location, err.suggestion) == ("UNKNOWN_FIELD", "cases[0].qestion", "question")


def test_safe_load_semantics_only(load_error):
    err = load_error(
        HEAD + "  - name: !!python/object/apply:os.system ['true']\n    question: q\n", "cube-yaml"
    )
    assert err.code == "MALFORMED_YAML"


def test_merge_keys_may_be_overridden():
    # YAML merge keys: an explicit key overriding a merged one is not a duplicate.
    text = HEAD + "  - &base {name: a, question: q}\n  - <<: *base\n    name: b\n"
    suite = evalnb.load(text, format="cube-yaml")
    assert [c.id for c in suite.cases] == ["a", "b"]


def test_fixtures(fixtures):
    suite = evalnb.load(fixtures / "cube-valid.yaml")
    assert [c.id for c in suite.cases] == ["by-country", "refuse"]
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(fixtures / "cube-invalid-tolerance.yaml")
    assert (info.value.code, info.value.location) == ("INVALID_TOLERANCE", "cases[1].tolerance.relative")


CUBE_HEAD = "name: s\ncube: {connectionName: a, catalog: b, schema: c, cubeName: d}\n"


@pytest.mark.parametrize(
    ("row", "key"),
    [("{1997: 565238.13}", "1997"), ("{on: 5}", "True"), ("{~: 5}", "None")],
)
def test_a_yaml_key_that_is_not_a_string_is_reported_at_its_row(row: str, key: str) -> None:
    text = CUBE_HEAD + f"cases:\n  - name: x\n    question: q\n    expectedRows: [{row}]\n"
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format="cube-yaml")
    err = info.value
    assert err.code == "TYPE_MISMATCH"
    assert err.location == "cases[0].expectedRows[0]"
    assert "[key]" not in err.message
    assert f"key {key} in cases[0].expectedRows[0] must be a string" in err.message
    assert "quote it" in err.message


def test_a_non_string_key_in_a_free_form_mapping_names_the_mapping() -> None:
    text = CUBE_HEAD + (
        "cases:\n  - name: x\n    question: q\n"
        "    referenceQuery: {measures: [{name: m}], filters: [{1: 2}]}\n"
    )
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format="cube-yaml")
    assert info.value.location == "cases[0].referenceQuery.filters[0]"
    assert info.value.code == "TYPE_MISMATCH"


@pytest.mark.parametrize(
    ("row", "first", "second"),
    [
        ("{Store Sales: 1, store_sales: 2}", "Store Sales", "store_sales"),
        ("{country: USA, Country: USA}", "country", "Country"),
        ("{storeSales: 1, STORE-SALES: 1}", "storeSales", "STORE-SALES"),
    ],
)
def test_two_expected_keys_naming_one_column_are_rejected(row: str, first: str, second: str) -> None:
    # cube spec: keys compare case-insensitively without spaces, '_' and '-'; both would be compared with
    # the same actual column, so a row giving them different values could never pass.
    text = (
        CUBE_HEAD
        + f"cases:\n  - name: x\n    question: q\n    expectedRows:\n      - {{a: 1}}\n      - {row}\n"
    )
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format="cube-yaml")
    err = info.value
    assert (err.code, err.location) == ("INVALID_VALUE", "cases[0].expectedRows[1]")
    assert f"{first!r} and {second!r} name the same column" in err.message


def test_distinct_expected_keys_still_load() -> None:
    text = CUBE_HEAD + "cases:\n  - name: x\n    question: q\n    expectedRows: [{store: A, storeSales: 1}]\n"
    check = evalnb.load(text, format="cube-yaml").cases[0].turns[0].checks[0]
    assert check.expected == [{"store": "A", "storeSales": 1}]  # type: ignore[union-attr]
