"""The rows check's number rule (docs/cube-yaml.md, numbers and text in rows): only well-formed thousands
groups lose their commas, anything else is text; ``decimalComma`` swaps the roles of comma and dot; the vectorised reading of a
column agrees with the reading of each cell whatever the text."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalnb
from evalnb.checks._rowdata import parse_number, parse_series
from evalnb.checks._rows import compare_rows
from evalnb.suite import RowsCheck

PROFILE = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)

# -- the rule -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "point", "comma"),
    [
        # (text, read with a decimal point, read with decimalComma)
        ("1,5", None, 1.5),
        ("12,34", None, 12.34),
        ("1.234,5", None, 1234.5),
        ("1,,5", None, None),
        ("1,234,567", 1234567.0, None),
        ("1,234", 1234.0, 1.234),
        ("1,234.5", 1234.5, None),
        ("-1,234.50", -1234.5, None),
        ("+1,234", 1234.0, 1.234),
        ("$1,234", 1234.0, 1.234),
        ("($1,234.50)", -1234.5, None),
        ("1,234.5%", 1234.5, None),
        ("1.234.567", None, 1234567.0),
        ("1.234.567,89 €", None, 1234567.89),
        ("-1.234,5", None, -1234.5),
        ("(1.234,50)", None, -1234.5),
        ("12,5 %", None, 12.5),
        ("1 234 567", 1234567.0, 1234567.0),  # spaces between groups of three, as both conventions write them
        ("1\u202f234,5", None, 1234.5),  # a narrow no-break space, as French formatting writes it
        ("1 234.5", 1234.5, None),
        ("0,123", None, 0.123),  # no grouping starts with 0
        ("01,234", None, 1.234),
        ("1,2345", None, 1.2345),
        ("1234,567", None, 1234.567),
        ("12,34,567", None, None),  # groups of three only
        ("1,234,56", None, None),
        (",5", None, 0.5),
        ("1,", None, 1.0),
        ("1,234,", None, None),
        ("1, 234", None, None),
        ("1 ,234", None, None),
        ("12 34", None, None),
        ("1,234 567", None, None),  # one kind of separator per number
        ("1.5", 1.5, None),
        ("1e3", 1000.0, 1000.0),
        ("1,5e3", None, 1500.0),
        ("1$2", None, None),
        ("$5$", None, None),
        ("(-5)", None, None),
        ("--5", None, None),
        ("5 €", 5.0, 5.0),
        ("€ -5", -5.0, -5.0),
        ("٣", None, None),  # digits are ASCII digits
    ],
)
def test_number_rule(text: str, point: float | None, comma: float | None) -> None:
    assert parse_number(text) == point
    assert parse_number(text, decimal_comma=True) == comma
    for decimal_comma, want in ((False, point), (True, comma)):
        values, ok = parse_series(
            pd.Series([text], dtype=object), strict_types=True, decimal_comma=decimal_comma
        )
        assert bool(ok[0]) == (want is not None)
        if want is not None:
            assert values[0] == want


@pytest.mark.parametrize(
    ("expected", "actual"), [("1,5", 15), ("12,34", 1234), ("1.234,5", 1.2345), ("1,,5", 15)]
)
def test_malformed_commas_are_text_not_numbers(expected: str, actual: float) -> None:
    d = compare_rows([{"v": expected}], [{"v": actual}])
    assert not d.passed
    assert d.lines == [f'rows[0].v: expected "{expected}", got "{actual}"']
    # and an answer written so is no number either
    d = compare_rows([{"v": actual}], [{"v": expected}])
    assert d.lines == [f'rows[0].v: expected {actual!r} ± (abs 0, rel 0), got "{expected}" (not a number)']


def test_decimal_comma_reads_both_sides() -> None:
    expected = [{"sales": "1.234,5", "share": "12,5 %", "n": 3}]
    answer = [{"Sales": "1.234,50", "share": 12.5, "n": "3"}]
    assert compare_rows(expected, answer, decimal_comma=True).passed
    d = compare_rows(expected, answer)
    assert d.lines == [
        'rows[0].sales: expected "1.234,5", got "1.234,50"',
        'rows[0].share: expected "12,5 %", got "12.5"',
    ]
    # a dot is a thousands separator there: "1.5" is text, "1.500" fifteen hundred
    assert compare_rows([{"v": 1500}], [{"v": "1.500"}], decimal_comma=True).passed
    assert compare_rows([{"v": 1.5}], [{"v": "1.5"}], decimal_comma=True).lines == [
        'rows[0].v: expected 1.5 ± (abs 0, rel 0), got "1.5" (not a number)'
    ]


CUBE = """
name: s
cube: {connectionName: c, catalog: c, schema: s, cubeName: Sales}
cases:
  - name: de
    question: Umsatz nach Land
    decimalComma: true
    expectedRows: [{country: Deutschland, storeSales: "1.234,5"}]
  - name: en
    question: sales by country
    expectedRows: [{country: USA, storeSales: "1,234.5"}]
"""


def test_decimal_comma_is_a_case_key_of_cube_suites(tmp_path: Any) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(CUBE)
    suite = evalnb.load(path)
    de, en = (c.turns[0].checks[0] for c in suite.cases)
    assert isinstance(de, RowsCheck) and (de.decimal_comma, en.decimal_comma) == (True, False)
    assert de.options()["decimal_comma"] is True  # a saved run says how its numbers were read

    def agent(request: Any) -> Any:
        value = "1.234,50" if "Umsatz" in request.prompt else "1,234.50"
        return evalnb.Response(intent="QUERY", rows=[{"country": "x", "storeSales": value}])

    result = evalnb.run(suite, agent, progress=False)
    # each case read its numbers its own way: only the countries differ
    assert sorted(result.mismatches["key"]) == ["country", "country"]
    assert result.scores["value"].tolist() == [0.5, 0.5]
    path.write_text(CUBE.replace("decimalComma: true", 'decimalComma: "yes"'))
    with pytest.raises(evalnb.SuiteError) as err:
        evalnb.load(path)
    assert err.value.errors[0].code == "TYPE_MISMATCH"


# -- the vectorised reading agrees with the reading of each cell --------------------------------------------

# Text made of what numbers are made of, so that most draws come close to being one.
NUMBERISH = st.text(st.sampled_from(list("0123456789,.,.  $€(-)+%eE\u00a0\u202fx")), max_size=14)


def formatted(x: float, *, decimal_comma: bool, grouped: bool, currency: str, pct: bool, paren: bool) -> str:
    text = f"{abs(x):,.2f}" if grouped else f"{abs(x):.2f}"
    if decimal_comma:
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    text = f"{currency}{text}{' %' if pct else ''}"
    if x < 0:
        text = f"({text})" if paren else f"-{text}"
    return text


STORAGES = ["object", "string", "str", pd.StringDtype("python")]


@PROFILE
@given(
    cells=st.lists(NUMBERISH, min_size=1, max_size=8),
    decimal_comma=st.booleans(),
    storage=st.sampled_from(STORAGES),
)
def test_column_reading_agrees_with_each_cell(cells: list[str], decimal_comma: bool, storage: Any) -> None:
    values, ok = parse_series(pd.Series(cells, dtype=storage), strict_types=True, decimal_comma=decimal_comma)
    for cell, value, good in zip(cells, values, ok, strict=True):
        one = parse_number(cell, decimal_comma=decimal_comma)
        assert bool(good) == (one is not None), cell
        if one is not None:
            assert repr(float(value)) == repr(one), cell


@PROFILE
@given(
    x=st.floats(min_value=-1e9, max_value=1e9, allow_nan=False).map(lambda v: round(v, 2)),
    decimal_comma=st.booleans(),
    grouped=st.booleans(),
    currency=st.sampled_from(["", "$", "€ ", "£"]),
    pct=st.booleans(),
    paren=st.booleans(),
)
def test_numbers_as_people_write_them_read_back(
    x: float, decimal_comma: bool, grouped: bool, currency: str, pct: bool, paren: bool
) -> None:
    text = formatted(x, decimal_comma=decimal_comma, grouped=grouped, currency=currency, pct=pct, paren=paren)
    assert parse_number(text, decimal_comma=decimal_comma) == pytest.approx(x, abs=0.005), text
    # written in one convention and read in the other, a grouped number with decimals is text
    if grouped and abs(x) >= 1000:
        assert parse_number(text, decimal_comma=not decimal_comma) is None, text


@PROFILE
@given(
    pairs=st.lists(
        st.tuples(NUMBERISH, NUMBERISH | st.floats(allow_nan=False, width=32)), min_size=1, max_size=12
    ),
    decimal_comma=st.booleans(),
    order_matters=st.booleans(),
)
def test_comparison_fast_paths_agree_with_reading_every_cell(
    pairs: list[tuple[str, Any]], decimal_comma: bool, order_matters: bool
) -> None:
    from evalnb.checks import _rows as rows

    expected = [{"v": e, "k": str(i % 3)} for i, (e, _) in enumerate(pairs)]
    actual = [{"V": a, "K": str(i % 3)} for i, (_, a) in enumerate(pairs)]

    def outcome() -> tuple[Any, ...]:
        d = compare_rows(
            expected, actual, decimal_comma=decimal_comma, order_matters=order_matters, relative=1e-9
        )
        return (d.value, d.mismatches, d.lines, repr(d.details))

    fast = outcome()
    saved = rows.same_text, rows._distinct
    try:
        rows.same_text = lambda e, a: None  # type: ignore[assignment]  # every cell read, parsed and trimmed
        rows._distinct = lambda s: None  # type: ignore[assignment]  # cell by cell, no distinct values
        slow = outcome()
    finally:
        rows.same_text, rows._distinct = saved
    assert fast == slow


def test_a_long_column_reads_as_its_cells() -> None:
    rng = np.random.default_rng(5)
    pool = [
        "1,5",
        "12,34",
        "1.234,5",
        "1,,5",
        "1,234,567",
        "$1,234.50",
        "(1,234)",
        "1 234",
        "0,123",
        "x",
        None,
    ]
    cells = [pool[i] for i in rng.integers(0, len(pool), 50_000)]
    for decimal_comma in (False, True):
        values, ok = parse_series(
            pd.Series(cells, dtype="str"), strict_types=True, decimal_comma=decimal_comma
        )
        want = {c: parse_number(c, decimal_comma=decimal_comma) for c in pool}
        for i in range(0, len(cells), 997):
            w = want[cells[i]]
            assert bool(ok[i]) == (w is not None)
            if w is not None and not math.isnan(w):
                assert values[i] == w


def test_a_negative_zero_keeps_its_sign_in_a_column() -> None:
    # pandas reads "-0" as the integer 0; the column reading must agree with the cell-by-cell one
    values, ok = parse_series(pd.Series(["-0", "-$0", "0", "5"], dtype=object), strict_types=True)
    assert ok.all()
    assert [repr(float(v)) for v in values] == ["-0.0", "-0.0", "0.0", "5.0"]
