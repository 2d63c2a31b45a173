"""The ``rows`` check: an analytics answer's rows against expected rows (cube spec, "Row comparison").

Rules, each from the cube spec:

* keys compare case-insensitively with whitespace, ``_`` and ``-`` removed; mismatch paths use the expected
  key as written (``rows[1].storeSales``);
* expected values that parse as numbers compare numerically: numbers as they are; strings trimmed, with
  ``$ £ € ¥`` and thousands separators removed, ``(x)`` read as ``-x``, a trailing ``%`` dropped, exponents
  allowed. The actual value must then parse too, or the cell is a mismatch ("not a number"). Other values
  compare as trimmed strings, case-sensitively;
* a numeric cell passes when ``|a-e| <= absolute`` or (``e != 0`` and ``|a-e|/|e| <= relative``); NaN equals
  NaN only; an expected null matches an actual null or an empty (blank) string, as saiku reads one;
* an expected key missing from the actual row is a mismatch; an actual key not in the expectation is not;
* a different number of rows is a mismatch, and the first rows are still compared pair by pair;
* ``orderMatters: false`` sorts both sides by the same normalised keys and values before comparing.

The comparison works column by column on whole arrays (pandas and NumPy); text columns with few distinct
values are parsed and trimmed once per distinct value; only the mismatches that are reported are formatted
one by one, so a million-row answer is compared in well under a second.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.checks.registry import CheckContext, Score, builtin

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalnb.suite import RowsCheck

__all__ = ["RowsDiff", "compare_rows", "normalise_key", "parse_number"]

MAX_DETAILS = 1000
"""How many mismatching cells are listed in ``Score.details``; the reason always gives the full count."""
REASON_LINES = 5

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_NOISE = r"[$£€¥,\s]"  # currency symbols, thousands separators and blanks inside a number
_MAYBE_NUMBER = r"\s*[-+($£€¥.\d]"


def normalise_key(key: object) -> str:
    """The form under which row keys compare: ``Store Sales``, ``store_sales``, ``STORE-SALES`` -> ``storesales``.

    Example::

        normalise_key("Store Sales") == normalise_key("store_sales") == normalise_key("storeSales")
        # True
    """
    return re.sub(r"[\s_\-]+", "", str(key)).lower()


def parse_number(value: Any) -> float | None:
    """Parse one value the lenient way the cube spec reads expected numbers; ``None`` if it is not a number.

    Example::

        parse_number("$565,238.13"), parse_number("(500)"), parse_number("12%"), parse_number("Food")
        # (565238.13, -500.0, 12.0, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if value is None:
        return float("nan")
    if not isinstance(value, str):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    text = re.sub(_NOISE, "", value.strip())
    neg = text.startswith("(") and text.endswith(")")
    if neg:
        text = text[1:-1]
    text = text.removesuffix("%")
    if not _NUMBER_RE.fullmatch(text):
        return None
    return -float(text) if neg else float(text)


# --------------------------------------------------------------------------------------------------
# Vectorised parsing
# --------------------------------------------------------------------------------------------------


def _parse_series(s: pd.Series, *, strict_types: bool) -> tuple[np.ndarray, np.ndarray]:
    """Lenient numbers for a whole column: ``(values, parsed)``; nulls parse as NaN.

    ``strict_types`` (the expected side) keeps booleans out of the numbers.
    """
    import numpy as np
    import pandas as pd
    from pandas.api import types as pdt

    n = len(s)
    if pdt.is_bool_dtype(s.dtype):
        values = np.full(n, np.nan)
        ok = s.isna().to_numpy() if strict_types else np.ones(n, dtype=bool)
        if not strict_types:
            values = s.astype("float64").to_numpy(dtype="float64", na_value=np.nan)
        return values, ok
    if pdt.is_numeric_dtype(s.dtype):
        return s.to_numpy(dtype="float64", na_value=np.nan), np.ones(n, dtype=bool)

    values = np.full(n, np.nan)
    ok = np.zeros(n, dtype=bool)
    isnull = s.isna().to_numpy()
    ok |= isnull
    if pdt.is_string_dtype(s.dtype) and s.dtype != object:
        is_str = ~isnull
        is_other = np.zeros(n, dtype=bool)
    else:
        arr = s.to_numpy(dtype=object)
        is_str = np.fromiter((isinstance(v, str) for v in arr), dtype=bool, count=n)
        is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in arr), dtype=bool, count=n)
        is_other = ~(is_str | isnull | is_bool)
        if not strict_types and is_bool.any():
            values[is_bool] = arr[is_bool].astype(float)
            ok |= is_bool
    if is_other.any():
        other = pd.to_numeric(pd.Series(s.to_numpy(dtype=object)[is_other]), errors="coerce").to_numpy(
            dtype="float64", na_value=np.nan
        )
        values[is_other] = other
        ok[np.flatnonzero(is_other)[~np.isnan(other)]] = True
    if is_str.any():
        idx = np.flatnonzero(is_str)
        text = (s if len(idx) == n else s.iloc[idx]).astype("string").reset_index(drop=True)
        # Cheap first pass: only a cell that starts like a number can be one, so labels are skipped at once.
        maybe = text.str.match(_MAYBE_NUMBER).to_numpy(dtype=bool, na_value=False)
        if maybe.any():
            idx, text = idx[maybe], text[maybe].reset_index(drop=True)
            text = text.str.replace(_NOISE, "", regex=True)
            neg = (text.str.startswith("(") & text.str.endswith(")")).to_numpy(dtype=bool, na_value=False)
            text = text.str.replace(r"^\((.*)\)$", r"\1", regex=True).str.replace(r"%$", "", regex=True)
            valid = text.str.fullmatch(_NUMBER).to_numpy(dtype=bool, na_value=False)
            nums = pd.to_numeric(text.where(valid), errors="coerce").to_numpy(
                dtype="float64", na_value=np.nan
            )
            nums = np.where(neg, -nums, nums)
            values[idx[valid]] = nums[valid]
            ok[idx[valid]] = True
    return values, ok


def _strings(s: pd.Series) -> pd.Series:
    """Trimmed text of every cell (``None`` for nulls), as a pandas string column."""
    from pandas.api import types as pdt

    if not (pdt.is_string_dtype(s.dtype) and s.dtype != object):
        s = s.map(lambda v: None if v is None or v != v else str(v), na_action="ignore")
    return s.astype("string").str.strip()


_DISTINCT_SAMPLE = 10_000
"""Cells in the strided sample that decides whether a long text column has few enough distinct values."""
_DISTINCT_MAX_SHARE = 0.5
"""Above this share of distinct values a text column is parsed and trimmed cell by cell."""


@dataclass
class _Distinct:
    """A text column factorised: its distinct raw values and, per row, the index of its value (-1: null)."""

    values: pd.Series  # same dtype as the column, so parsing takes the same branch as on the whole column
    codes: np.ndarray

    def spread(self, per_value: np.ndarray, null: Any) -> np.ndarray:
        """Per-value results broadcast back to the rows; the appended ``null`` is what code -1 picks."""
        import numpy as np

        return np.append(per_value, null)[self.codes]


def _distinct(s: pd.Series) -> _Distinct | None:
    """``s`` factorised when it holds only text and nulls with few distinct values, else ``None``.

    Analytics keys repeat a few labels over many rows: parsing and trimming each label once, then
    broadcasting through the codes, replaces work on every cell by one factorisation. Parsing and trimming
    are per-cell functions, so the results are the same either way.
    """
    import pandas as pd
    from pandas.api import types as pdt

    if s.dtype == object:
        # Only all-text object columns: factorize merges values equal across types (1, 1.0 and True),
        # which parse and print differently.
        if pdt.infer_dtype(s, skipna=True) != "string":
            return None
    elif not pdt.is_string_dtype(s.dtype):
        return None
    n = len(s)
    if n > 2 * _DISTINCT_SAMPLE:
        # A sample decides before the full factorisation, so a column of ids costs no more than before.
        sample = s.iloc[:: n // _DISTINCT_SAMPLE]
        if sample.nunique() > _DISTINCT_MAX_SHARE * len(sample):
            return None
    codes, uniques = pd.factorize(s)  # nulls (None, NaN, pd.NA) -> -1
    if n <= 2 * _DISTINCT_SAMPLE and len(uniques) > _DISTINCT_MAX_SHARE * n:
        return None
    return _Distinct(pd.Series(uniques), codes)


def _parse(s: pd.Series, d: _Distinct | None, *, strict_types: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_parse_series` on the distinct values when the column is factorised."""
    import numpy as np

    if d is None:
        return _parse_series(s, strict_types=strict_types)
    values, ok = _parse_series(d.values, strict_types=strict_types)
    return d.spread(values, np.nan), d.spread(ok, True)  # nulls parse as NaN


def _texts(s: pd.Series, d: _Distinct | None) -> tuple[pd.Series, np.ndarray | None]:
    """Trimmed text of every cell, or of every distinct value with the codes that spread it to the rows."""
    if d is None:
        return _strings(s), None
    return _strings(d.values), d.codes


# --------------------------------------------------------------------------------------------------
# Sides
# --------------------------------------------------------------------------------------------------


@dataclass
class _Side:
    frame: pd.DataFrame
    keys: list[str]  # column names as written
    present: pd.DataFrame | None  # per-cell key presence, None when every row has every key


def _side(rows: Any, what: str, *, normalise: bool = False) -> _Side:
    import pandas as pd

    if rows is None:
        return _Side(pd.DataFrame(), [], None)
    if isinstance(rows, pd.DataFrame):
        frame = rows.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        return _Side(frame, list(frame.columns), None)
    if isinstance(rows, (Mapping, str, bytes)) or not isinstance(rows, Sequence):
        raise TypeError(f"the {what} rows are a {type(rows).__name__}, not a list of dicts or a DataFrame")
    keys: dict[str, None] = {}
    records: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"the {what} rows[{i}] is a {type(row).__name__}, not a mapping")
        record: dict[str, Any] = {}
        for k, v in row.items():
            # The answer's rows may spell a key differently from row to row: merge them by normalised key.
            record.setdefault(normalise_key(k) if normalise else str(k), v)
        records.append(record)
        keys.update(dict.fromkeys(record))
    names = list(keys)
    frame = pd.DataFrame.from_records(records, columns=names)
    frame = frame.astype(object) if len(frame) else frame
    present = None
    if any(len(r) != len(names) for r in records):
        present = pd.DataFrame({k: [k in r for r in records] for k in names})
    return _Side(frame, names, present)


# --------------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------------


@dataclass
class RowsDiff:
    """Outcome of :func:`compare_rows`.

    Attributes:
        expected_rows: number of expected rows.
        actual_rows: number of actual rows.
        cells: number of expected cells (rows x keys each row gives).
        matched: cells that matched.
        mismatches: number of mismatching cells, plus one for a row-count mismatch.
        details: one dict per listed mismatch (row, key, expected, actual, tolerance, reason), at most
            ``max_details``; the row-count mismatch first.
    """

    expected_rows: int
    actual_rows: int
    cells: int
    matched: int
    mismatches: int
    details: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.mismatches == 0

    @property
    def value(self) -> float:
        """Share of expected cells that matched (1.0 or 0.0 when there are no cells)."""
        if self.cells == 0:
            return 1.0 if self.passed else 0.0
        return self.matched / self.cells

    @property
    def lines(self) -> list[str]:
        return [d["reason"] for d in self.details]

    def reason(self, max_lines: int = REASON_LINES) -> str:
        """The first mismatch lines, one per line, and how many more there are."""
        if self.passed:
            return f"{self.expected_rows} row(s) match"
        shown = self.lines[:max_lines]
        rest = self.mismatches - len(shown)
        return "\n".join(shown + ([f"... and {rest} more mismatch(es)"] if rest > 0 else []))


def _fmt_num(x: float) -> str:
    return repr(float(x))


def _fmt_tol(absolute: float, relative: float) -> str:
    return f"abs {absolute:g}, rel {relative:g}"


def _quoted(text: Any) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def compare_rows(
    expected: Any,
    actual: Any,
    *,
    absolute: float = 0.0,
    relative: float = 0.0,
    order_matters: bool = True,
    max_details: int = MAX_DETAILS,
) -> RowsDiff:
    """Compare rows by the cube spec's rules.

    Args:
        expected: a list of dicts or a DataFrame (the expectation or a reference query's result).
        actual: the answer's rows: a list of dicts, a DataFrame, or ``None`` (no rows).
        absolute: absolute numeric tolerance.
        relative: relative numeric tolerance.
        order_matters: compare row i with row i; otherwise sort both sides first.
        max_details: how many mismatching cells to list.

    Raises:
        TypeError: when a side is neither a list of mappings nor a DataFrame.

    Example::

        d = compare_rows([{"productFamily": "Food"}], [{"product_family": "Drink"}])
        d.lines
        # ['rows[0].productFamily: expected "Food", got "Drink"']
    """
    import numpy as np

    exp = _side(expected, "expected")
    act = _side(actual, "actual", normalise=True)
    n_e, n_a = len(exp.frame), len(act.frame)
    tol = _fmt_tol(absolute, relative)

    # cube spec: keys are matched after normalisation; the first actual column wins a duplicate.
    act_cols: dict[str, str] = {}
    for name in act.keys:
        act_cols.setdefault(normalise_key(name), name)

    # Everything is prepared column by column on whole arrays, in each side's own row order.
    cols = [_prepare(k, exp, act, act_cols.get(normalise_key(k)), sort=not order_matters) for k in exp.keys]

    e_order, a_order = np.arange(n_e), np.arange(n_a)
    labels: list[_Column] | None = None
    if not order_matters and cols:
        # cube spec: both sides sorted by the same keys; text keys first (rows pair up on their labels even
        # when a measure is slightly off), then numbers, each group by normalised key name.
        ranked = sorted(cols, key=lambda c: (c.numeric_only, normalise_key(c.key)))
        e_order = _lexsort([c.e_sort for c in ranked], n_e)
        a_order = _lexsort([c.a_sort for c in ranked], n_a)
        # A sorted position means nothing to the author: a mismatch names its row by the row's text keys.
        labels = [c for c in ranked if not c.numeric_only][:3] or ranked[:3]

    n = min(n_e, n_a)
    e_take, a_take = e_order[:n], a_order[:n]
    # Row i against row i: slices give views of the prepared arrays where a take would copy each one.
    e_sel: slice | np.ndarray = slice(0, n) if order_matters else e_take
    a_sel: slice | np.ndarray = slice(0, n) if order_matters else a_take
    cells = int(sum(int(c.e_pres.sum()) for c in cols))
    matched = 0
    mism_rows: list[np.ndarray] = []
    mism_cols: list[np.ndarray] = []
    for ci, c in enumerate(cols):
        e_pres = c.e_pres[e_sel]
        ok = np.zeros(n, dtype=bool)
        if c.a_name is not None and n:
            e_num = c.e_num[e_sel]
            if c.a_vals is not None and c.a_ok is not None and e_num.any():
                e_vals, a_vals = c.e_vals[e_sel], c.a_vals[a_sel]
                with np.errstate(invalid="ignore", divide="ignore"):
                    diff = np.abs(a_vals - e_vals)
                    within = (
                        (a_vals == e_vals)
                        | (diff <= absolute)
                        | ((e_vals != 0) & (diff / np.abs(e_vals) <= relative))
                    )
                # cube spec: NaN equals NaN only
                within |= np.isnan(a_vals) & np.isnan(e_vals)
                ok |= e_num & c.a_ok[a_sel] & within
                if c.e_null is not None and c.a_blank is not None:
                    ok |= c.e_null[e_sel] & c.a_blank[a_sel]
            if c.e_code is not None and c.a_code is not None:
                e_code, a_code = c.e_code[e_sel], c.a_code[a_sel]
                ok |= ~e_num & (e_code == a_code) & (e_code >= 0)
            ok &= c.a_pres[a_sel]
        bad = e_pres & ~ok
        matched += int((e_pres & ok).sum())
        idx = np.flatnonzero(bad)
        if len(idx):
            mism_rows.append(idx)
            mism_cols.append(np.full(len(idx), ci))

    details: list[dict[str, Any]] = []
    count = 0
    if n_e != n_a:
        count += 1
        line = f"rows: expected {n_e} row(s), got {n_a}"
        details.append(_row_detail(None, None, line, expected=n_e, actual=n_a))
    if mism_rows:
        rows_all = np.concatenate(mism_rows)
        cols_all = np.concatenate(mism_cols)
        count += len(rows_all)
        order = np.lexsort((cols_all, rows_all))[: max(0, max_details - len(details))]
        for r, ci in zip(rows_all[order].tolist(), cols_all[order].tolist(), strict=True):
            details.append(_detail(r, int(e_take[r]), int(a_take[r]), cols[ci], tol, labels))
    return RowsDiff(n_e, n_a, cells, matched, count, details)


@dataclass
class _Column:
    """One expected key, prepared on both sides (arrays in each side's original row order)."""

    key: str
    a_name: str | None
    e_pres: np.ndarray
    a_pres: np.ndarray
    e_vals: np.ndarray
    e_num: np.ndarray
    e_series: pd.Series  # the raw cells, kept for the mismatch lines
    a_series: pd.Series | None
    a_vals: np.ndarray | None = None
    a_ok: np.ndarray | None = None
    e_code: np.ndarray | None = None  # text cells as integer codes shared by both sides (-1: null)
    a_code: np.ndarray | None = None
    e_null: np.ndarray | None = None  # expected cells that are null (only when some are)
    a_blank: np.ndarray | None = None  # actual cells that are blank strings (then)

    @property
    def numeric_only(self) -> bool:
        return bool(self.e_num.all())

    @property
    def e_sort(self) -> np.ndarray:
        return self.e_vals if self.e_code is None else self.e_code

    @property
    def a_sort(self) -> np.ndarray:
        import numpy as np

        if self.e_code is None:
            if self.a_vals is None or self.a_ok is None:
                return np.full(len(self.a_pres), np.nan)
            return np.where(self.a_ok, self.a_vals, np.nan)
        assert self.a_code is not None
        return self.a_code


def _prepare(key: str, exp: _Side, act: _Side, a_name: str | None, *, sort: bool) -> _Column:
    import numpy as np
    import pandas as pd

    n_e, n_a = len(exp.frame), len(act.frame)
    e_series = exp.frame[key]
    e_dist = _distinct(e_series) if n_e else None
    e_vals, e_num = _parse(e_series, e_dist, strict_types=True)
    e_pres = exp.present[key].to_numpy(dtype=bool) if exp.present is not None else np.ones(n_e, dtype=bool)
    if a_name is None:
        a_pres = np.zeros(n_a, dtype=bool)
    elif act.present is not None:
        a_pres = act.present[a_name].to_numpy(dtype=bool)
    else:
        a_pres = np.ones(n_a, dtype=bool)
    a_series = act.frame[a_name] if a_name is not None else None
    col = _Column(key, a_name, e_pres, a_pres, e_vals, e_num, e_series, a_series)
    a_dist = _distinct(a_series) if a_series is not None and n_e and n_a else None
    if a_series is not None and e_num.any():
        col.a_vals, col.a_ok = _parse(a_series, a_dist, strict_types=False)
        e_null = e_series.isna().to_numpy(dtype=bool) & e_pres
        if e_null.any():
            # an expected null (YAML `~`) matches an actual empty string, as saiku writes an empty cell
            col.e_null = e_null
            col.a_blank = a_series.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy(dtype=bool)
    if not e_num.all():
        e_str, e_inv = _texts(e_series, e_dist)
        a_str: pd.Series
        a_inv: np.ndarray | None
        if a_series is not None:
            a_str, a_inv = _texts(a_series, a_dist)
        else:
            a_str, a_inv = pd.Series([], dtype="string"), np.full(n_a, -1)
        # One factorisation of both sides turns text equality (and, sorted, text order) into integers. On
        # distinct values it gives the same codes: the same set of texts, first seen in the same order.
        codes, _ = pd.factorize(pd.concat([e_str, a_str], ignore_index=True), sort=sort)
        col.e_code = _spread_codes(codes[: len(e_str)], e_inv)
        col.a_code = _spread_codes(codes[len(e_str) :], a_inv)
    return col


def _spread_codes(codes: np.ndarray, inverse: np.ndarray | None) -> np.ndarray:
    """Joint text codes per row; ``inverse`` maps rows to distinct values (-1, a null, stays -1)."""
    import numpy as np

    return codes if inverse is None else np.append(codes, -1)[inverse]


def _lexsort(keys: list[np.ndarray], n: int) -> np.ndarray:
    """A stable row order sorting by ``keys[0]``, then ``keys[1]`` ...; nulls (-1 codes, NaN) last.

    Every key is turned into dense ranks and the ranks are packed into one int64, so a single stable
    argsort does the work of a multi-key lexsort.
    """
    import numpy as np

    if not keys or n == 0:
        return np.arange(n)
    combined = np.zeros(n, dtype=np.int64)
    size = 1
    for k in keys:
        if k.dtype.kind in "iu":  # factorised text: codes are already dense ranks; -1 (null) goes last
            card = int(k.max()) + 2
            ranks = np.where(k < 0, card - 1, k).astype(np.int64)
        else:
            if size > 1:
                # Labels usually identify the rows already: then numbers cannot change the order.
                order = _stable_argsort(combined, size)
                ordered = combined[order]
                if not (ordered[1:] == ordered[:-1]).any():
                    return order
            uniq, ranks = np.unique(k, return_inverse=True)
            card = len(uniq)
        if size * card >= 2**62:  # re-rank before the packed key would overflow
            uniq_c, combined = np.unique(combined, return_inverse=True)
            size = len(uniq_c)
        combined = combined * card + ranks.reshape(-1)
        size *= card
    return _stable_argsort(combined, size)


def _stable_argsort(combined: np.ndarray, size: int) -> np.ndarray:
    """``np.argsort(combined, kind="stable")`` for keys in ``[0, size)``, usually by a faster sort."""
    import numpy as np

    n = len(combined)
    if size * n < 2**62:
        # The row number as a last key makes every key distinct, and with no ties the default sort (several
        # times faster than the stable one on int64) can only give the stable order.
        return np.argsort(combined * n + np.arange(n, dtype=np.int64))
    return np.argsort(combined, kind="stable")


def _row_label(e_row: int, labels: list[_Column], c: _Column) -> str:
    """``country="USA"``: an expected row named by its key values (the cells of ``labels`` it has)."""
    parts = []
    for k in labels:
        if (k is c and len(labels) > 1) or not k.e_pres[e_row]:
            continue  # the mismatching cell itself names the row only when nothing else can
        cell = (
            f"{float(k.e_vals[e_row]):g}" if k.e_num[e_row] else _quoted(str(k.e_series.iloc[e_row]).strip())
        )
        parts.append(f"{k.key}={cell}")
    return ", ".join(parts) or str(e_row)


def _detail(
    r: int, e_row: int, a_row: int, c: _Column, tol: str, labels: list[_Column] | None = None
) -> dict[str, Any]:
    import pandas as pd

    # The detail keeps typed cells (a float for a number, a str for text) and the full line as ``reason``.
    numeric = bool(c.e_num[e_row])
    e_cell: Any
    if numeric and c.e_null is not None and c.e_null[e_row]:
        e_cell, e_text = None, "null"
    elif numeric:
        e_cell = float(c.e_vals[e_row])
        e_text = f"{_fmt_num(e_cell)} ± ({tol})"
    else:
        e_cell = str(c.e_series.iloc[e_row]).strip()
        e_text = _quoted(e_cell)
    # cube spec paths: `rows[0].productFamily` in order; unordered, `rows[country="USA"].storeSales`, and
    # `row` is the expected row as the suite writes it (not its sorted position)
    path = f"rows[{r}].{c.key}" if labels is None else f"rows[{_row_label(e_row, labels, c)}].{c.key}"
    row = r if labels is None else e_row
    out = {"row": row, "key": c.key, "expected": e_cell, "tolerance": tol if numeric else None}
    if c.a_name is None or not c.a_pres[a_row]:
        return {**out, "actual": None, "reason": f"{path}: expected {e_text}, got nothing (no such key)"}
    assert c.a_series is not None
    raw = c.a_series.iloc[a_row]
    if numeric:
        assert c.a_ok is not None and c.a_vals is not None
        if not c.a_ok[a_row]:
            a_disp = str(raw).strip()
            return {
                **out,
                "actual": a_disp,
                "reason": f"{path}: expected {e_text}, got {_quoted(a_disp)} (not a number)",
            }
        a_num = float(c.a_vals[a_row])
        return {**out, "actual": a_num, "reason": f"{path}: expected {e_text}, got {_fmt_num(a_num)}"}
    if raw is None or (not isinstance(raw, str) and pd.isna(raw)):
        return {**out, "actual": None, "reason": f"{path}: expected {e_text}, got null"}
    a_disp = str(raw).strip()
    return {**out, "actual": a_disp, "reason": f"{path}: expected {e_text}, got {_quoted(a_disp)}"}


# --------------------------------------------------------------------------------------------------
# The registered check
# --------------------------------------------------------------------------------------------------


@builtin("rows", needs={"cpu", "data"})
def rows_check(spec: RowsCheck, ctx: CheckContext) -> Score:
    """Score the answer's rows against ``expectedRows`` or the live ``referenceQuery`` result.

    A reference query that cannot run is an authoring mismatch at ``referenceQuery`` carrying the
    database's message: the check fails, the run goes on.

    Example::

        rows_check(RowsCheck(expected=[{"state": "CA"}]), ctx).passed
    """
    from evalnb.data import ReferenceQueryError

    if spec.reference_query is not None:
        if ctx.data is None:
            return _authoring("no data source: pass data=... to run referenceQuery")
        try:
            expected: Any = ctx.data.reference(spec.reference_query)
        except ReferenceQueryError as exc:
            return _authoring(exc.message)
    else:
        expected = spec.expected or []
    try:
        diff = compare_rows(
            expected,
            ctx.response.rows,
            absolute=spec.tolerance.absolute,
            relative=spec.tolerance.relative,
            order_matters=spec.order_matters,
        )
    except TypeError as exc:
        line = f"rows: {exc}"
        return Score(value=0.0, passed=False, reason=line, details=[_row_detail(None, None, line)])
    return Score(value=diff.value, passed=diff.passed, reason=diff.reason(), details=diff.details or None)


def _authoring(message: str) -> Score:
    line = f"referenceQuery: {message}"
    return Score(value=0.0, passed=False, reason=line, details=[_row_detail("referenceQuery", None, line)])


def _row_detail(
    key: str | None, row: int | None, line: str, *, expected: Any = None, actual: Any = None
) -> dict[str, Any]:
    return {"row": row, "key": key, "expected": expected, "actual": actual, "tolerance": None, "reason": line}
