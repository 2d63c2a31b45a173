"""The rows check: every rule of the cube spec's row comparison."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evalnb.agents._base import Request, Response
from evalnb.checks import _registry as registry
from evalnb.checks._registry import CheckContext
from evalnb.checks._rows import compare_rows, normalise_key, parse_number
from evalnb.data import connect
from evalnb.suite import Case, ReferenceQuery, RowsCheck, Suite, Tolerance, Turn


def run_check(spec: RowsCheck, rows: Any, data: Any = None) -> Any:
    turn = Turn(prompt="q", checks=[spec])
    case = Case(id="c", name="c", turns=[turn])
    ctx = CheckContext(
        suite=Suite(name="s", format="cube-yaml", cases=[case]),
        case=case,
        turn=turn,
        turn_index=0,
        run=0,
        request=Request(prompt="q"),
        response=Response(intent="QUERY", rows=rows),
        data=data,
    )
    return registry.get("rows")(spec, ctx)


# -- the spec's parsing table, and more ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (500, 500.0),
        (500.0, 500.0),
        ("$565,238.13", 565238.13),
        ("(500)", -500.0),
        ("12%", 12.0),
        (" 42 ", 42.0),
        ("£1,000", 1000.0),
        ("€2.5", 2.5),
        ("¥300", 300.0),
        ("1e3", 1000.0),
        ("-2.5E-2", -0.025),
        ("($1,234.50)", -1234.5),
        ("-$5", -5.0),
    ],
)
def test_parsing_table(value: Any, parsed: float) -> None:
    assert parse_number(value) == parsed
    # the vectorised path agrees with the scalar one
    assert compare_rows([{"v": value}], [{"v": parsed}]).passed


@pytest.mark.parametrize("value", ["Food", "USA", "Q1", "12 units", "$", "", True])
def test_non_numbers_are_text(value: Any) -> None:
    assert parse_number(value) is None


def test_key_normalisation() -> None:
    keys = ["Store Sales", "storeSales", "store_sales", "STORE-SALES"]
    assert len({normalise_key(k) for k in keys}) == 1
    for written in keys:
        assert compare_rows([{"storeSales": 1}], [{written: 1}]).passed


# -- exact mismatch lines ------------------------------------------------------------------------------


def test_numeric_mismatch_line() -> None:
    d = compare_rows(
        [{"storeSales": 100.0}, {"storeSales": 250.0}],
        [{"store_sales": 100.0}, {"store_sales": 100.0}],
        relative=0.001,
    )
    assert d.lines == ["rows[1].storeSales: expected 250 ± (abs 0, rel 0.001), got 100"]
    assert d.details[0] | {} == {
        "row": 1,
        "key": "storeSales",
        "expected": 250.0,
        "actual": 100.0,
        "tolerance": "abs 0, rel 0.001",
        "reason": "rows[1].storeSales: expected 250 ± (abs 0, rel 0.001), got 100",
    }


def test_string_mismatch_line() -> None:
    d = compare_rows([{"productFamily": "Food"}], [{"product family": "Drink"}])
    assert d.lines == ['rows[0].productFamily: expected "Food", got "Drink"']
    assert d.details[0]["tolerance"] is None


def test_strings_trimmed_and_case_sensitive() -> None:
    assert compare_rows([{"f": " Food "}], [{"f": "Food  "}]).passed
    d = compare_rows([{"f": "Food"}], [{"f": "food"}])
    assert d.lines == ['rows[0].f: expected "Food", got "food"']


def test_actual_must_parse_when_expected_is_a_number() -> None:
    d = compare_rows([{"units": "1,000"}], [{"units": "lots"}])
    assert d.lines == ['rows[0].units: expected 1000 ± (abs 0, rel 0), got "lots" (not a number)']
    # an actual written leniently still parses
    assert compare_rows([{"units": 1000}], [{"units": "$1,000"}]).passed


# -- tolerance -----------------------------------------------------------------------------------------


def test_tolerance_either_rule_suffices() -> None:
    assert compare_rows([{"v": 100}], [{"v": 100.04}], absolute=0.05).passed
    assert compare_rows([{"v": 100}], [{"v": 100.09}], relative=0.001).passed
    assert not compare_rows([{"v": 100}], [{"v": 100.2}], absolute=0.05, relative=0.001).passed
    assert compare_rows([{"v": 100}], [{"v": 100.2}], absolute=0.5, relative=0.001).passed
    # exact by default
    assert not compare_rows([{"v": 100}], [{"v": 100.000001}]).passed


def test_relative_tolerance_does_not_apply_to_zero() -> None:
    assert not compare_rows([{"v": 0}], [{"v": 1e-12}], relative=1.0).passed
    assert compare_rows([{"v": 0}], [{"v": 1e-12}], absolute=1e-9).passed


def test_nan_equals_nan_only() -> None:
    assert compare_rows([{"v": math.nan}], [{"v": math.nan}]).passed
    assert compare_rows([{"v": math.nan}], [{"v": None}]).passed
    assert not compare_rows([{"v": math.nan}], [{"v": 0.0}], absolute=1e9).passed
    assert not compare_rows([{"v": 1.0}], [{"v": math.nan}], absolute=1e9).passed


# -- keys and sizes ------------------------------------------------------------------------------------


def test_missing_keys_are_asymmetric() -> None:
    # an extra actual key is fine (expectations are additive) ...
    assert compare_rows([{"state": "CA"}], [{"state": "CA", "storeSales": 1.0, "extra": "x"}]).passed
    # ... an expected key missing from the actual row is not
    d = compare_rows([{"state": "CA", "storeSales": 1.0}], [{"state": "CA"}])
    assert d.lines == ["rows[0].storeSales: expected 1 ± (abs 0, rel 0), got nothing (no such key)"]
    # also when only one actual row lacks it
    d = compare_rows([{"v": 1}, {"v": 2}], [{"v": 1}, {"w": 2}])
    assert [x["row"] for x in d.details] == [1]


def test_size_mismatch_still_compares_pairs() -> None:
    d = compare_rows(
        [{"f": "Food"}, {"f": "Drink"}, {"f": "Non-Consumable"}],
        [{"f": "Food"}, {"f": "Food"}],
    )
    assert d.lines == ["rows: expected 3 row(s), got 2", 'rows[1].f: expected "Drink", got "Food"']
    assert d.value == pytest.approx(1 / 3)
    assert not compare_rows([{"f": "a"}], [{"f": "a"}, {"f": "b"}]).passed


def test_no_rows_in_the_answer() -> None:
    d = compare_rows([{"f": "Food"}], None)
    assert d.lines == ["rows: expected 1 row(s), got 0"]
    assert compare_rows([], None).passed


# -- order ---------------------------------------------------------------------------------------------


def test_unordered_with_mixed_case_keys() -> None:
    expected = [{"productFamily": "Food", "unitSales": 2}, {"productFamily": "Drink", "unitSales": 1}]
    actual = [{"PRODUCT_FAMILY": "Drink", "Unit Sales": 1.0}, {"PRODUCT_FAMILY": "Food", "Unit Sales": "2"}]
    assert not compare_rows(expected, actual, order_matters=True).passed
    assert compare_rows(expected, actual, order_matters=False).passed


def test_unordered_pairs_rows_on_labels_first() -> None:
    expected = [{"k": "a", "v": 10.0}, {"k": "b", "v": 5.0}]
    actual = [{"k": "b", "v": 5.0}, {"k": "a", "v": 99.0}]
    d = compare_rows(expected, actual, order_matters=False)
    # unordered: the row is named by its key values, and `row` is the expected row as written
    assert d.lines == ['rows[k="a"].v: expected 10 ± (abs 0, rel 0), got 99']
    assert d.details[0]["row"] == 0


def test_unordered_mismatches_name_the_expected_row_as_written() -> None:
    expected = [{"state": "WA", "city": "Seattle", "sales": 3}, {"state": "CA", "city": "LA", "sales": 1}]
    actual = [{"state": "CA", "city": "LA", "sales": 1}, {"state": "WA", "city": "Seattle", "sales": 4}]
    d = compare_rows(expected, actual, order_matters=False)
    # sorted, WA is the second row; it is the first the suite writes, and named by both text keys
    assert d.lines == ['rows[city="Seattle", state="WA"].sales: expected 3 ± (abs 0, rel 0), got 4']
    assert d.details[0]["row"] == 0
    # numbers only: the other keys name the row; a lone key names it by its own expected value
    d = compare_rows(
        [{"year": 1998, "v": 7}, {"year": 1997, "v": 5}],
        [{"year": 1997, "v": 5}, {"year": 1998, "v": 8}],
        order_matters=False,
    )
    assert d.lines == ["rows[year=1998].v: expected 7 ± (abs 0, rel 0), got 8"]
    d = compare_rows([{"v": 7}, {"v": 5}], [{"v": 5}, {"v": 6}], order_matters=False)
    assert d.lines == ["rows[v=7].v: expected 7 ± (abs 0, rel 0), got 6"] and d.details[0]["row"] == 0


def test_unordered_numbers_only_and_ties() -> None:
    assert compare_rows(
        [{"v": 2}, {"v": 1}, {"v": 1}], [{"v": 1}, {"v": 2}, {"v": 1}], order_matters=False
    ).passed


# -- DataFrames, size, details -------------------------------------------------------------------------


def test_dataframe_answer() -> None:
    frame = pd.DataFrame({"Product Family": ["Drink", "Food"], "unit_sales": np.array([24597, 191940])})
    expected = [
        {"productFamily": "Drink", "unitSales": "24,597"},
        {"productFamily": "Food", "unitSales": 191940},
    ]
    assert compare_rows(expected, frame).passed
    assert run_check(RowsCheck(expected=expected), frame).passed


def test_large_frames_are_compared_and_details_capped() -> None:
    n = 200_000
    expected = pd.DataFrame({"k": np.arange(n).astype(str), "v": np.arange(n, dtype=float)})
    actual = expected.sample(frac=1.0, random_state=1).reset_index(drop=True)
    actual.loc[actual.index[:1500], "v"] += 10
    d = compare_rows(expected, actual, order_matters=False, relative=0.0)
    assert d.mismatches == 1500
    assert len(d.details) == 1000
    assert "... and 1495 more mismatch(es)" in d.reason()


# -- text columns worked on their distinct values -----------------------------------------------------

LABELS = ["East", " East", "west", "West ", "", "  ", None, float("nan")]
NUMBERS = ["$1,200", "(5)", "12%", " 42 ", "1e3", "-$5", "£1,000.5", "abc", "12 units", None]


def mixed_sides(n: int, seed: int) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """An expected frame and an answer of ``n`` rows mixing every kind of cell the parser reads."""
    rng = np.random.default_rng(seed)
    pick = rng.integers
    expected = pd.DataFrame(
        {
            "region": pd.Series([LABELS[i] for i in pick(0, len(LABELS), n)], dtype="str"),
            "segment": pd.Series([LABELS[i] for i in pick(0, len(LABELS), n)], dtype="string"),
            "code": [NUMBERS[i] for i in pick(0, len(NUMBERS), n)],  # object, all text or null
            "flag": [[True, False, "True", 1, None][i] for i in pick(0, 5, n)],  # object, mixed types
            "id": [f" id{i} " if i % 7 else None for i in range(n)],  # high cardinality
            "amount": np.where(pick(0, 10, n) == 0, np.nan, np.round(rng.uniform(-50, 50, n), 2)),
        }
    )
    actual: list[dict[str, Any]] = []
    for i, row in enumerate(expected.to_dict("records")):
        answer = {"REGION": row["region"], "Segment": row["segment"], "CODE": row["code"]}
        answer |= {"flag": row["flag"], "Id": row["id"], "amount": row["amount"]}
        if i % 5 == 0:  # some cells change: to another label, a number, a bool, a null
            answer["REGION"] = LABELS[(i // 5) % len(LABELS)]
            answer["CODE"] = [1200, "-5", True, None, "1,000", " 12% "][(i // 5) % 6]
            answer["Id"] = f"id{i}"
        if i % 11 == 0:
            del answer["Segment"]  # a missing key
        actual.append(answer)
    return expected, actual


@pytest.mark.parametrize("sample", [None, 100])  # cardinality counted exactly, or on a strided sample
@pytest.mark.parametrize("order_matters", [True, False])
def test_distinct_values_path_gives_identical_results(
    sample: int | None, order_matters: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalnb.checks import _rows as rows

    n = 1500
    if sample is not None:
        monkeypatch.setattr(rows, "_DISTINCT_SAMPLE", sample)
    expected, actual = mixed_sides(n, seed=order_matters)
    # The low-cardinality labels take the factorised path, the ids and the mixed object column do not.
    assert rows._distinct(expected["region"]) is not None
    assert rows._distinct(expected["code"]) is not None
    assert rows._distinct(expected["id"]) is None
    assert rows._distinct(expected["flag"]) is None

    def outcome() -> tuple[Any, ...]:
        out = []
        for exp in (expected, expected.astype(object).to_dict("records")):
            d = compare_rows(exp, actual, relative=0.01, order_matters=order_matters)
            # repr: NaN cells compare equal as text
            out.append((d.value, d.mismatches, d.matched, d.cells, d.lines, repr(d.details)))
        return tuple(out)

    default = outcome()
    with monkeypatch.context() as m:
        m.setattr(rows, "_DISTINCT_MAX_SHARE", 1.0)  # every text column factorised, ids too
        everywhere = outcome()
    with monkeypatch.context() as m:
        m.setattr(rows, "_distinct", lambda s: None)  # every column cell by cell
        nowhere = outcome()
    assert default == everywhere == nowhere
    assert 0 < default[0][1] < n * 6


@pytest.mark.parametrize("size", [7, 2**50])  # packed with the row number, and too large for that
def test_stable_argsort_matches_numpy(size: int) -> None:
    from evalnb.checks._rows import _stable_argsort

    keys = np.random.default_rng(size).integers(0, size, 50_000)  # many ties when size is small
    np.testing.assert_array_equal(_stable_argsort(keys, size), np.argsort(keys, kind="stable"))


def test_bad_rows_shape_is_a_failure_not_a_crash() -> None:
    s = run_check(RowsCheck(expected=[{"a": 1}]), "not rows")
    assert s.passed is False
    assert "not a list of dicts or a DataFrame" in s.reason


def test_score_fields() -> None:
    spec = RowsCheck(
        expected=[{"f": "Food", "v": 1}, {"f": "Drink", "v": 2}], tolerance=Tolerance(relative=0.1)
    )
    ok = run_check(spec, [{"f": "Food", "v": 1.05}, {"f": "Drink", "v": 2}])
    assert (ok.value, ok.passed, ok.details) == (1.0, True, None)
    bad = run_check(spec, [{"f": "Food", "v": 1.5}, {"f": "Drink", "v": 2}])
    assert bad.value == 0.75
    assert bad.passed is False
    assert bad.reason == "rows[0].v: expected 1 ± (abs 0, rel 0.1), got 1.5"
    assert set(bad.details[0]) == {"row", "key", "expected", "actual", "tolerance", "reason"}


# -- reference queries ---------------------------------------------------------------------------------


def test_reference_query_rows_become_the_expectation() -> None:
    src = connect({"sales": pd.DataFrame({"state": ["CA", "WA"], "units": [3, 4]})})
    spec = RowsCheck(
        reference_query=ReferenceQuery(
            sql="SELECT state, SUM(units) AS units FROM sales GROUP BY state ORDER BY state"
        )
    )
    assert run_check(spec, [{"State": "CA", "Units": 3}, {"State": "WA", "Units": 4}], data=src).passed
    s = run_check(spec, [{"State": "CA", "Units": 3}, {"State": "WA", "Units": 5}], data=src)
    assert s.reason == "rows[1].units: expected 4 ± (abs 0, rel 0), got 5"


def test_failing_reference_query_is_an_authoring_mismatch() -> None:
    src = connect({"sales": pd.DataFrame({"state": ["CA"]})})
    spec = RowsCheck(reference_query=ReferenceQuery(sql="SELECT nope FROM sales"))
    s = run_check(spec, [{"nope": 1}], data=src)
    assert s.passed is False
    assert s.reason.startswith("referenceQuery: ")
    assert "nope" in s.reason
    assert s.details[0]["key"] == "referenceQuery"


# -- the fast paths agree with the cell-by-cell reading ------------------------------------------------

CELLS: list[Any] = [
    *LABELS,
    *NUMBERS,
    "$565,238.13",
    "(500)",
    "1,000",
    "1,5",  # malformed groups: text (docs/cube-yaml.md, numbers and text in rows)
    "1.234,5",
    "1,,5",
    "1 234",
    1200,
    -5,
    12.0,
    0,
    True,
    False,
    1,
    "1",
    "1.0",
    1.0,
    "5",
    5,
    5.0,
    float("inf"),
    1e-12,
    -0.0,
]
TEXTS = ["East", " East", "East ", "west", "", "  ", None, "$1,200", "(5)", "12%", " 42 ", "abc", "5", "5.0"]


def text_dtypes() -> list[Any]:
    """The string storages this pandas has: its defaults (Arrow where pyarrow is installed) and Python."""
    return ["str", "string", pd.StringDtype("python"), object]


def random_sides(seed: int) -> tuple[Any, Any]:
    """Expected and actual rows of every kind the comparison reads, as lists of dicts or frames."""
    rng = np.random.default_rng(seed)
    n_e = int(rng.choice([1, 2, 7, 40, 300]))
    n_a = n_e if rng.random() < 0.6 else int(rng.choice([0, 1, 5, 40, 300]))
    keys = {"Store Name": "text", "code": "mixed", "storeSales": "number", "region": "label", "flag": "flag"}
    pools: dict[str, list[Any]] = {
        "text": TEXTS,
        "mixed": CELLS,
        "number": [1.0, 2.5, math.nan, 0.0, 100.0, 100.04, -3.0, -0.0],
        "label": ["A", "B", "C"],
        "flag": [True, False],
    }

    def cell(kind: str) -> Any:
        pool = pools[kind]
        return pool[int(rng.integers(len(pool)))]

    expected = [{k: cell(kind) for k, kind in keys.items()} for _ in range(n_e)]
    actual = []
    for i in range(n_a):
        row = dict(expected[i % n_e]) if rng.random() < 0.8 else {k: cell(kind) for k, kind in keys.items()}
        for k, kind in keys.items():
            if rng.random() < 0.15:
                row[k] = cell(kind)
        actual.append(row)
    if rng.random() < 0.3:
        rng.shuffle(actual)
    # frames of one storage, or lists of dicts with key spellings that vary row by row and missing keys
    dtype = text_dtypes()[int(rng.integers(4))]
    as_frames = rng.random() < 0.5

    def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
        out = pd.DataFrame(rows, columns=list(keys))
        for k in ("Store Name", "region"):
            out[k] = out[k].astype(dtype)
        return out

    if as_frames:
        act: Any = frame(actual)
        act.columns = ["store_name", "CODE", "Store Sales", "Region", "flag"]
        return frame(expected), act
    spellings = {"Store Name": ["Store Name", "store_name", "STORE-NAME"], "storeSales": ["store sales"]}
    answer = []
    for row in actual:
        written = {}
        for k, v in row.items():
            if rng.random() < 0.05:
                continue  # a missing key
            names = spellings.get(k, [k])
            written[names[int(rng.integers(len(names)))]] = v
        answer.append(written)
    for row in expected:
        if rng.random() < 0.05:
            del row["code"]  # an expected row that does not give a key
    return expected, answer


def outcome(d: Any) -> tuple[Any, ...]:
    return (d.value, d.mismatches, d.matched, d.cells, d.lines, repr(d.details))


def reference_sorted(combined: np.ndarray, size: int, *, ranks: bool) -> tuple[np.ndarray, bool]:
    """What rows._sorted computes, by NumPy's stable argsort."""
    order = np.argsort(combined, kind="stable")
    ordered = combined[order]
    ties = bool((ordered[1:] == ordered[:-1]).any())
    return (np.argsort(order) if ranks else order), ties


@pytest.mark.parametrize("seed", range(40))
def test_fast_paths_agree_with_reading_every_cell(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalnb.checks import _rows as rows

    expected, actual = random_sides(seed)
    kw: dict[str, Any] = {"relative": 0.001, "absolute": 0.05 * (seed % 2), "max_details": 50}
    fast = [outcome(compare_rows(expected, actual, order_matters=o, **kw)) for o in (True, False)]
    with monkeypatch.context() as m:
        m.setattr(rows, "same_text", lambda e, a: None)  # every cell read, parsed and trimmed
        m.setattr(rows, "_sorted", reference_sorted)  # a comparison sort instead of counting
        slow = [outcome(compare_rows(expected, actual, order_matters=o, **kw)) for o in (True, False)]
    assert fast == slow


def test_same_text_cells_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from evalnb.checks import _rows as rows

    n = 5000
    labels = pd.Series([f" Store {i % 40} " for i in range(n)], dtype="str")
    expected = pd.DataFrame({"store": labels, "sales": np.arange(n, dtype=float)})
    actual = expected.copy()
    actual.loc[7, "store"] = "Store 7"  # the same after trimming: read, and a match
    actual.loc[9, "store"] = "$1,200"
    read: list[int] = []
    prepare = rows._prepare

    def counting(key: str, e_series: pd.Series, *args: Any, **kw: Any) -> Any:
        read.append(len(e_series))
        return prepare(key, e_series, *args, **kw)

    monkeypatch.setattr(rows, "_prepare", counting)
    d = compare_rows(expected, actual)
    assert d.lines == ['rows[9].store: expected "Store 9", got "$1,200"']
    assert (d.matched, d.cells) == (2 * n - 1, 2 * n)
    assert read == [2, n]  # two text cells differ as written; the numbers are compared as arrays


@pytest.mark.parametrize("e_dtype", text_dtypes())
@pytest.mark.parametrize("a_dtype", text_dtypes())
def test_same_text_by_storage(e_dtype: Any, a_dtype: Any) -> None:
    from evalnb.checks._rowdata import same_text

    e = pd.Series(["a", None, " b", "c", "d", None], dtype=e_dtype)
    a = pd.Series(["a", None, "b", "c", None, "x"], dtype=a_dtype)
    got = same_text(e, a)
    kinds = {str(getattr(s.dtype, "storage", "python")) for s in (e, a)}  # object: Python strings
    if len({k.startswith("pyarrow") for k in kinds}) > 1:
        assert got is None  # Arrow against Python strings: read the cells instead
        return
    assert got is not None
    # equal strings only; a null is the same as nothing, except None for None (a null matches a null)
    both_none = e.dtype == object and a.dtype == object
    assert got.tolist() == [True, both_none, False, True, False, False]


@pytest.mark.parametrize("cells", [[True, 1], ["1", 1], [1, 1.0], ["a", pd.NA, "b"], [1.5, "x"]])
def test_same_text_needs_text_on_both_sides(cells: list[Any]) -> None:
    from evalnb.checks._rowdata import same_text

    e = pd.Series(cells, dtype=object)
    a = pd.Series(list(reversed(cells)), dtype=object)
    got = same_text(e, a)
    if all(isinstance(v, str) or v is pd.NA for v in cells):
        assert got is not None and got.tolist() == [False, False, False]  # pd.NA compares as nothing
    else:
        assert got is None  # True == 1 in Python, yet "True" and 1 are different cells


@pytest.mark.parametrize(
    "column",
    [
        [1, 2, 3, None],
        [1.5, -0.0, math.nan],
        [1, -0.0, 12],  # pandas alone would read these as integers and lose the sign of the zero
        [True, False, None],
        ["$1,200", "(5)", None, math.nan, "abc"],
        [1, "2", True, None, 2.5, "x", np.int64(7), np.float32(0.5)],
        [None, math.nan],
    ],
)
@pytest.mark.parametrize("strict_types", [True, False])
def test_object_columns_of_one_kind_parse_as_cell_by_cell(
    column: list[Any], strict_types: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalnb.checks import _rowdata as rowdata

    s = pd.Series(column, dtype=object)
    values, ok = rowdata.parse_series(s, strict_types=strict_types)
    monkeypatch.setattr(rowdata, "_ONE_KIND", {})  # every cell typed on its own
    values_slow, ok_slow = rowdata.parse_series(s, strict_types=strict_types)
    np.testing.assert_array_equal(ok, ok_slow)
    np.testing.assert_array_equal(values, values_slow)
    np.testing.assert_array_equal(np.signbit(values), np.signbit(values_slow))
    for v, parsed, good in zip(column, values, ok, strict=True):
        if isinstance(v, bool) and strict_types:
            assert not good
        elif v is None or (isinstance(v, float) and math.isnan(v)):
            assert good and math.isnan(parsed)
        else:
            scalar = float(v) if isinstance(v, bool) else parse_number(v)
            assert good == (scalar is not None)
            if scalar is not None:
                assert repr(float(parsed)) == repr(scalar)  # -0.0 stays -0.0


def test_negative_zero_reads_the_same_whatever_its_neighbours() -> None:
    alone = compare_rows([{"v": 1}], [{"v": -0.0}])
    among_ints = compare_rows([{"v": 1}, {"v": 5}], [{"v": -0.0}, {"v": 5}])
    assert alone.lines == among_ints.lines == ["rows[0].v: expected 1 ± (abs 0, rel 0), got -0"]


def numpy_lexsort(keys: list[np.ndarray]) -> np.ndarray:
    """NumPy's lexsort with the comparison's null order: -1 codes and NaN last."""
    ranked = []
    for k in keys:
        if k.dtype.kind in "iu":
            k = np.where(k < 0, k.max() + 1, k)
        ranked.append(k)
    return np.lexsort(ranked[::-1])


@pytest.mark.parametrize("card", [3, 50, 100_000])  # counting (few ranks) or a comparison sort
@pytest.mark.parametrize("presorted", [False, True])
def test_lexsort_matches_numpy(card: int, presorted: bool) -> None:
    from evalnb.checks._rows import _lexsort

    rng = np.random.default_rng(card)
    n = 20_000
    codes = rng.integers(-1, card, n)  # -1: a null text cell
    values = np.round(rng.normal(size=n), 1)
    values[rng.random(n) < 0.05] = np.nan
    more = rng.integers(-1, card, n)
    for keys in ([codes], [codes, values], [values], [codes, more], [codes, more, values]):
        if presorted:
            order = numpy_lexsort(keys)
            keys = [k[order] for k in keys]
            if len(keys) > 1:  # in order but for two neighbours that a strided sample does not see
                swap = np.array([n // 2 + 1, n // 2 + 2])
                keys = [k.copy() for k in keys]
                for k in keys:
                    k[swap] = k[swap[::-1]]
        want = numpy_lexsort(keys)
        np.testing.assert_array_equal(_lexsort(iter(keys), n), want)
        np.testing.assert_array_equal(_lexsort(iter(keys), n, ranks=True), np.argsort(want))
    distinct = rng.permutation(n)  # ids: no ties, so the counting sort has no comparison to make
    np.testing.assert_array_equal(_lexsort(iter([distinct]), n), np.argsort(distinct))


def test_unordered_mismatches_are_listed_in_sorted_order() -> None:
    d = compare_rows(
        [{"k": "b", "v": 1}, {"k": "a", "v": 1}],
        [{"k": "a", "v": 2}, {"k": "b", "v": 2}],
        order_matters=False,
    )
    assert d.lines == [
        'rows[k="a"].v: expected 1 ± (abs 0, rel 0), got 2',
        'rows[k="b"].v: expected 1 ± (abs 0, rel 0), got 2',
    ]
    assert [x["row"] for x in d.details] == [1, 0]


def test_a_missing_key_is_no_null_cell() -> None:
    # The answer's second row has no `k`: its frame holds None there, like the expected null beside it.
    d = compare_rows([{"k": "a"}, {"k": None}], [{"k": "a"}, {"x": 1}])
    assert d.lines == ["rows[1].k: expected null, got nothing (no such key)"]


def test_unordered_ties_and_different_row_counts() -> None:
    expected = [{"k": "a", "v": 1}, {"k": "a", "v": 1}, {"k": "b", "v": 2}, {"k": "a", "v": 3}]
    actual = [{"K": "a", "v": 3}, {"K": "b", "v": 2}, {"K": "a", "v": 1}]
    d = compare_rows(expected, actual, order_matters=False)
    # sorted: a/1, a/1, a/3, b/2 against a/1, a/3, b/2: the second a/1 meets a/3, a/3 meets b/2
    assert d.lines == [
        "rows: expected 4 row(s), got 3",
        'rows[k="a"].v: expected 1 ± (abs 0, rel 0), got 3',
        'rows[k="a"].k: expected "a", got "b"',
        'rows[k="a"].v: expected 3 ± (abs 0, rel 0), got 2',
    ]
    assert [x["row"] for x in d.details[1:]] == [1, 3, 3]  # the expected rows as written
    assert (d.cells, d.matched) == (8, 3)


# -- the cube spec's rules, cell by cell: a scalar reference -------------------------------------------


def reference_counts(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]], absolute: float, relative: float
) -> tuple[int, int, int]:
    """(cells, matched, mismatches) of row i against row i, straight from the rules in the docstring."""

    def null(v: Any) -> bool:
        return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))

    def number(v: Any) -> float | None:
        return math.nan if null(v) else parse_number(v)  # a null reads as NaN

    def cell_matches(ev: Any, av: Any) -> bool:
        e = number(ev)
        if e is None:  # text, trimmed, case-sensitive; an actual null is no text
            return not null(av) and str(ev).strip() == str(av).strip()
        if null(ev) and isinstance(av, str) and not av.strip():
            return True  # an expected null matches a blank string
        a = float(av) if isinstance(av, bool) else number(av)
        if a is None:
            return False  # not a number
        if math.isnan(a) or math.isnan(e):
            return math.isnan(a) and math.isnan(e)
        diff = abs(a - e)
        return a == e or diff <= absolute or (e != 0 and diff / abs(e) <= relative)

    cells = sum(len(r) for r in expected)
    matched, mismatches = 0, int(len(expected) != len(actual))
    for e_row, a_row in zip(expected, actual, strict=False):
        by_key: dict[str, Any] = {}
        for k, v in a_row.items():
            by_key.setdefault(normalise_key(k), v)
        for k, ev in e_row.items():
            ok = normalise_key(k) in by_key and cell_matches(ev, by_key[normalise_key(k)])
            matched += ok
            mismatches += not ok
    return cells, matched, mismatches


@pytest.mark.parametrize("seed", range(40))
def test_row_by_row_follows_the_scalar_rules(seed: int) -> None:
    expected, actual = random_sides(seed)

    def records(side: Any) -> list[dict[str, Any]]:
        return side.astype(object).to_dict("records") if isinstance(side, pd.DataFrame) else side

    e_rows, a_rows = records(expected), records(actual)
    for absolute, relative in ((0.0, 0.0), (0.05, 0.001)):
        d = compare_rows(expected, actual, absolute=absolute, relative=relative)
        assert (d.cells, d.matched, d.mismatches) == reference_counts(e_rows, a_rows, absolute, relative)
