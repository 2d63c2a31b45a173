"""The ``rows`` check: an analytics answer's rows against expected rows (docs/cube-yaml.md, row comparison).

Rules, each from docs/cube-yaml.md, row comparison:

* keys compare case-insensitively in Unicode NFC with whitespace, ``_`` and ``-`` removed; mismatch paths
  use the expected key as written (``rows[1].storeSales``);
* expected values that parse as numbers compare numerically: numbers as they are; strings when they are
  numbers as people write them (docs/cube-yaml.md, numbers and text in rows: ``$1,234.5``, ``(5)``, ``12%``;
  ``"1,5"`` is text, unless ``decimalComma``). The actual value must then parse too, or the cell is a
  mismatch ("not a number"). Other values compare as trimmed strings in Unicode NFC, case-sensitively;
* a numeric cell passes when ``|a-e| <= absolute`` or (``e != 0`` and ``|a-e|/|e| <= relative``); NaN equals
  NaN only; an expected null matches an actual null or an empty (blank) string, as saiku reads one;
* an expected key missing from the actual row is a mismatch; an actual key not in the expectation is not;
* a different number of rows is a mismatch, and the first rows are still compared pair by pair;
* ``orderMatters: false`` sorts both sides by the same normalised keys and values before comparing.

The comparison works column by column on whole arrays (pandas and NumPy), and reads as few cells as the
rules allow: compared row by row, cells that hold the same string on both sides match under every rule and
are not read at all, and equal numbers pass before any tolerance is worked out; text columns with few
distinct values are parsed, trimmed and coded once per distinct value; unordered, both sides are ranked by
a counting sort on the packed ranks of their keys; only the mismatches that are reported are formatted one
by one. A million-row answer is compared in a fraction of a second (``benchmarks/rows.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.checks._registry import CheckContext, Score, builtin
from evalnb.checks._rowdata import (
    Side,
    normalise_key,
    parse_number,
    parse_series,
    presence,
    read_side,
    same_text,
    strings,
)
from evalnb.checks._rowlines import detail as _detail
from evalnb.checks._rowlines import fmt_tol as _fmt_tol
from evalnb.checks._rowlines import row_detail as _row_detail

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from evalnb.suite import RowsCheck

__all__ = ["RowsDiff", "compare_rows", "normalise_key", "parse_number"]

MAX_DETAILS = 1000
"""How many mismatching cells are listed in ``Score.details``; the reason always gives the full count."""
REASON_LINES = 5


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
    import numpy as np
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
    data: Any = s
    if isinstance(s.dtype, pd.StringDtype) and s.dtype.storage == "python":
        # pandas copies Python strings before it factorises them; their object array gives the same codes
        data = np.asarray(s.array, dtype=object)
    codes, uniques = pd.factorize(data)  # nulls (None, NaN, pd.NA) -> -1
    if n <= 2 * _DISTINCT_SAMPLE and len(uniques) > _DISTINCT_MAX_SHARE * n:
        return None
    return _Distinct(pd.Series(uniques, dtype=s.dtype), codes)


def _parse(
    s: pd.Series, d: _Distinct | None, *, strict_types: bool, decimal_comma: bool
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`parse_series` on the distinct values when the column is factorised."""
    import numpy as np

    if d is None:
        return parse_series(s, strict_types=strict_types, decimal_comma=decimal_comma)
    values, ok = parse_series(d.values, strict_types=strict_types, decimal_comma=decimal_comma)
    if not ok.any():  # no label is a number (the usual key column): no per-row values to spread
        return np.full(len(d.codes), np.nan), d.codes < 0
    return d.spread(values, np.nan), d.spread(ok, True)  # nulls parse as NaN


def _texts(s: pd.Series, d: _Distinct | None) -> tuple[pd.Series, np.ndarray | None]:
    """Trimmed text of every cell, or of every distinct value with the codes that spread it to the rows."""
    if d is None:
        return strings(s), None
    return strings(d.values), d.codes


def _blanks(s: pd.Series, d: _Distinct | None) -> np.ndarray:
    """Cells that are blank strings (what saiku writes for a null), tested once per distinct value."""
    if d is None:
        return s.map(_blank).to_numpy(dtype=bool)
    return d.spread(d.values.map(_blank).to_numpy(dtype=bool), False)


def _blank(v: Any) -> bool:
    return isinstance(v, str) and not v.strip()


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


def compare_rows(
    expected: Any,
    actual: Any,
    *,
    absolute: float = 0.0,
    relative: float = 0.0,
    order_matters: bool = True,
    decimal_comma: bool = False,
    max_details: int = MAX_DETAILS,
) -> RowsDiff:
    """Compare rows by the rules of docs/cube-yaml.md, row comparison.

    Args:
        expected: a list of dicts or a DataFrame (the expectation or a reference query's result).
        actual: the answer's rows: a list of dicts, a DataFrame, or ``None`` (no rows).
        absolute: absolute numeric tolerance.
        relative: relative numeric tolerance.
        order_matters: compare row i with row i; otherwise sort both sides first.
        decimal_comma: text numbers on both sides are written ``"1.234,5"`` (docs/cube-yaml.md).
        max_details: how many mismatching cells to list.

    Raises:
        TypeError: when a side is neither a list of mappings nor a DataFrame.

    Example::

        d = compare_rows([{"productFamily": "Food"}], [{"product_family": "Drink"}])
        d.lines
        # ['rows[0].productFamily: expected "Food", got "Drink"']
    """
    exp = read_side(expected, "expected")
    act = read_side(actual, "actual", normalise=True)
    n_e, n_a = len(exp.frame), len(act.frame)

    # docs/cube-yaml.md, row comparison: keys are matched after normalisation; the first actual column wins a
    # duplicate.
    act_cols: dict[str, str] = {}
    for name in act.keys:
        act_cols.setdefault(normalise_key(name), name)
    names = [(k, act_cols.get(normalise_key(k))) for k in exp.keys]
    e_pres = {k: presence(exp, k, n_e) for k in exp.keys}
    cells = int(sum(int(p.sum()) for p in e_pres.values()))

    # Everything is prepared column by column on whole arrays, in each side's own row order. A compared pair
    # is a position p: expected row p (or e_take[p]) against actual row p (or a_take[p]).
    if order_matters:
        pairs = _in_order(names, exp, act, e_pres, comma=decimal_comma)
    else:
        pairs = _sorted_pairs(names, exp, act, e_pres, comma=decimal_comma)
    found, matched = _mismatches(pairs, e_pres, cells, absolute=absolute, relative=relative)
    details = _details(pairs, found, _fmt_tol(absolute, relative), max_details)
    count = int(n_e != n_a) + sum(len(rows) for rows, _, _ in found)
    return RowsDiff(n_e, n_a, cells, matched, count, details)


@dataclass
class _Pairs:
    """How the rows of the two sides pair up, and the prepared columns compared pair by pair."""

    cols: list[_Column]
    n_e: int
    n_a: int
    e_take: np.ndarray | None = None  # expected row of each pair (None: pair p is row p)
    a_take: np.ndarray | None = None  # actual row of each pair (None: pair p is row p)
    e_rank: np.ndarray | None = None  # unordered: each expected row's place in sorted order
    labels: list[_Column] | None = None  # unordered: the columns that name a row in a mismatch path

    @property
    def n(self) -> int:
        return min(self.n_e, self.n_a)


def _in_order(
    names: list[tuple[str, str | None]], exp: Side, act: Side, e_pres: dict[str, np.ndarray], *, comma: bool
) -> _Pairs:
    """Row i against row i: only the first n rows of each side have a partner."""
    n_e, n_a = len(exp.frame), len(act.frame)
    n = min(n_e, n_a)
    cols = [_prepare_paired(k, a, exp, act, e_pres[k], n, comma=comma) for k, a in names]
    return _Pairs(cols, n_e, n_a)


def _sorted_pairs(
    names: list[tuple[str, str | None]], exp: Side, act: Side, e_pres: dict[str, np.ndarray], *, comma: bool
) -> _Pairs:
    """Both sides sorted the same way, the q-th expected row paired with the q-th actual row."""
    import numpy as np

    n_e, n_a = len(exp.frame), len(act.frame)
    n = min(n_e, n_a)
    sides = [(k, a, act.frame[a] if a is not None else None) for k, a in names]
    cols = [
        _prepare(k, exp.frame[k], e_pres[k], a, s, presence(act, a, n_a), sort=True, comma=comma)
        for k, a, s in sides
    ]
    # docs/cube-yaml.md, row comparison: both sides sorted by the same keys; text keys first (rows pair up on
    # their labels even when a measure is slightly off), then numbers, each group by normalised key name.
    ranked = sorted(cols, key=lambda c: (c.numeric_only, normalise_key(c.key)))
    e_rank = _lexsort((c.e_sort for c in ranked), n_e, ranks=True)
    a_order = _lexsort((c.a_sort for c in ranked), n_a)
    # The expected side is read in its own row order (no column of it is gathered) and each row fetches its
    # partner.
    e_take = None if n == n_e else np.flatnonzero(e_rank < n)
    a_take = a_order[e_rank if e_take is None else e_rank[e_take]]
    # A sorted position means nothing to the author: a mismatch names its row by the row's text keys.
    labels = [c for c in ranked if not c.numeric_only][:3] or ranked[:3]
    return _Pairs(cols, n_e, n_a, e_take, a_take, e_rank, labels)


def _mismatches(
    pairs: _Pairs, e_pres: dict[str, np.ndarray], cells: int, *, absolute: float, relative: float
) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    """The mismatching cells, as (reported row, column, pair) arrays per column, and how many cells matched."""
    import numpy as np

    n, e_take, a_take = pairs.n, pairs.e_take, pairs.a_take
    complete = cells == pairs.n_e * len(pairs.cols)  # every expected row gives every key
    matched = 0
    found: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (row, column, pair) per mismatch
    for ci, c in enumerate(pairs.cols):
        m = len(c.e_pres) if e_take is None else n
        ok = _matching(c, e_take, a_take, m, absolute=absolute, relative=relative)
        bad = np.flatnonzero(~ok if c.e_all else _pick(c.e_pres, e_take) & ~ok)
        paired = (
            n if complete else int((e_pres[c.key][:n] if e_take is None else e_pres[c.key][e_take]).sum())
        )
        matched += paired - len(bad)
        if len(bad):
            # The row a mismatch reports: row i compared with row i, else the pair's place in sorted order.
            if pairs.e_rank is None:
                row = bad if c.rows is None else c.rows[bad]
            else:
                row = pairs.e_rank[bad if e_take is None else e_take[bad]]
            found.append((row, np.full(len(bad), ci), bad))
    return found, matched


def _details(
    pairs: _Pairs, found: list[tuple[np.ndarray, np.ndarray, np.ndarray]], tol: str, max_details: int
) -> list[dict[str, Any]]:
    """The listed mismatches: a row-count line first, then cells in row order, up to ``max_details``."""
    import numpy as np

    details: list[dict[str, Any]] = []
    if pairs.n_e != pairs.n_a:
        line = f"rows: expected {pairs.n_e} row(s), got {pairs.n_a}"
        details.append(_row_detail(None, None, line, expected=pairs.n_e, actual=pairs.n_a))
    if found:
        rows_all, cols_all, pos_all = (np.concatenate(parts) for parts in zip(*found, strict=True))
        # Only the listed mismatches are formatted, in row order.
        order = np.lexsort((cols_all, rows_all))[: max(0, max_details - len(details))]
        for r, ci, p in zip(*(a[order].tolist() for a in (rows_all, cols_all, pos_all)), strict=True):
            e_row = p if pairs.e_take is None else int(pairs.e_take[p])
            a_row = p if pairs.a_take is None else int(pairs.a_take[p])
            details.append(_detail(r, e_row, a_row, pairs.cols[ci], tol, pairs.labels))
    return details


def _pick(values: np.ndarray, take: np.ndarray | None) -> np.ndarray:
    """The prepared cells of the compared pairs, in pair order (``take=None``: they are in order already)."""
    return values if take is None else values[take]


def _at(values: np.ndarray, take: np.ndarray | None, idx: np.ndarray) -> np.ndarray:
    """``_pick(values, take)[idx]`` without gathering every pair first."""
    return values[idx] if take is None else values[take[idx]]


def _matching(
    c: _Column,
    e_take: np.ndarray | None,
    a_take: np.ndarray | None,
    m: int,
    *,
    absolute: float,
    relative: float,
) -> np.ndarray:
    """Per compared pair, whether column ``c``'s actual cell matches the expected one (presence aside)."""
    import numpy as np

    ok = np.zeros(m, dtype=bool)
    if c.a_name is None or m == 0:
        return ok
    e_num = _pick(c.e_num, e_take) if c.e_num_any and c.e_code is not None else None  # numbers and text
    if c.e_code is not None and c.a_code is not None:
        # text cells: the same trimmed text (codes shared by both sides), not null
        e_code = _pick(c.e_code, e_take)
        np.equal(e_code, _pick(c.a_code, a_take), out=ok)
        ok &= e_code >= 0
        if e_num is not None:
            ok &= ~e_num
    if c.a_vals is not None and c.a_ok is not None:
        # numeric cells: equal numbers pass at once (a value that is not NaN parsed on both sides); the
        # tolerance, NaN and null rules are worked out for the other cells only
        e_vals = _pick(c.e_vals, e_take)
        ok |= e_vals == _pick(c.a_vals, a_take)
        rest = np.flatnonzero(~ok)
        if len(rest):
            ev, av = e_vals[rest], _at(c.a_vals, a_take, rest)
            with np.errstate(invalid="ignore", divide="ignore"):
                diff = np.abs(av - ev)
                within = (av == ev) | (diff <= absolute) | ((ev != 0) & (diff / np.abs(ev) <= relative))
            # docs/cube-yaml.md, row comparison: NaN equals NaN only
            within |= np.isnan(av) & np.isnan(ev)
            hit = within & _at(c.a_ok, a_take, rest)
            if e_num is not None:
                hit &= e_num[rest]
            if c.e_null is not None and c.a_blank is not None:
                hit |= _at(c.e_null, e_take, rest) & _at(c.a_blank, a_take, rest)
            ok[rest] = hit
    if not c.a_all:
        ok &= _pick(c.a_pres, a_take)
    return ok


@dataclass
class _Column:
    """One expected key, prepared on both sides (arrays in each side's original row order).

    Compared row by row, a column may hold only the rows whose cells need reading (``rows``): the others hold
    the same text on both sides, which matches under every rule.
    """

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
    rows: np.ndarray | None = None  # the row each array position stands for (None: position i is row i)
    e_all: bool = field(init=False)  # every expected row gives the key
    a_all: bool = field(init=False)
    e_num_any: bool = field(init=False)

    def __post_init__(self) -> None:
        self.e_all, self.a_all = bool(self.e_pres.all()), bool(self.a_pres.all())
        self.e_num_any = bool(self.e_num.any())

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


def _prepare_paired(
    key: str, a_name: str | None, exp: Side, act: Side, e_pres: np.ndarray, n: int, *, comma: bool
) -> _Column:
    """The first ``n`` rows of key ``key`` on both sides, for comparing row i with row i."""
    import numpy as np

    e_series, e_pres = exp.frame[key].iloc[:n], e_pres[:n]
    a_series = act.frame[a_name].iloc[:n] if a_name is not None else None
    a_pres = presence(act, a_name, len(act.frame))[:n]
    same = same_text(e_series, a_series) if a_series is not None and n else None
    rows = None if same is None else np.flatnonzero(~(same & e_pres & a_pres))
    if a_series is None or rows is None or len(rows) > n // 2:
        return _prepare(key, e_series, e_pres, a_name, a_series, a_pres, sort=False, comma=comma)
    # The same string on both sides matches under every rule: only the other cells are read (when they are
    # few enough that picking them out costs less than reading every cell).
    col = _prepare(
        key,
        e_series.iloc[rows].reset_index(drop=True),
        e_pres[rows],
        a_name,
        a_series.iloc[rows].reset_index(drop=True),
        a_pres[rows],
        sort=False,
        comma=comma,
    )
    col.rows = rows
    return col


def _prepare(
    key: str,
    e_series: pd.Series,
    e_pres: np.ndarray,
    a_name: str | None,
    a_series: pd.Series | None,
    a_pres: np.ndarray,
    *,
    sort: bool,
    comma: bool,  # numbers written with a decimal comma
) -> _Column:
    import numpy as np
    import pandas as pd

    n_e, n_a = len(e_series), len(a_pres)
    e_dist = _distinct(e_series) if n_e else None
    e_vals, e_num = _parse(e_series, e_dist, strict_types=True, decimal_comma=comma)
    col = _Column(key, a_name, e_pres, a_pres, e_vals, e_num, e_series, a_series)
    a_dist = _distinct(a_series) if a_series is not None and n_e and n_a else None
    if a_series is not None and col.e_num_any:
        col.a_vals, col.a_ok = _parse(a_series, a_dist, strict_types=False, decimal_comma=comma)
        e_null = e_series.isna().to_numpy(dtype=bool) & e_pres
        if e_null.any():
            # an expected null (YAML `~`) matches an actual empty string, as saiku writes an empty cell
            col.e_null = e_null
            col.a_blank = _blanks(a_series, a_dist)
    if not col.numeric_only:
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

    # int32 codes: half the memory traffic of int64 when they are spread, sorted on and compared
    return codes if inverse is None else np.append(codes, -1).astype(np.int32)[inverse]


def _lexsort(keys: Iterable[np.ndarray], n: int, *, ranks: bool = False) -> np.ndarray:
    """A stable row order sorting by ``keys[0]``, then ``keys[1]`` ...; nulls (-1 codes, NaN) last.

    Every key is turned into dense ranks and the ranks are packed into one int64, so a single stable
    sort does the work of a multi-key lexsort. The keys are read one by one, and only while rows tie.
    ``ranks=True`` gives each row's place in that order instead (the inverse permutation).
    """
    import numpy as np

    if n == 0:
        return np.arange(n)
    combined: np.ndarray | None = None
    size = 1
    for k in keys:
        if k.dtype.kind in "iu":  # factorised text: codes are already dense ranks; -1 (null) goes last
            card = int(k.max()) + 2
            rank = np.where(k < 0, np.int64(card - 1), k)
        else:
            if combined is not None and size > 1:
                # Labels usually identify the rows already: then numbers cannot change the order.
                order, ties = _sorted(combined, size, ranks=ranks)
                if not ties:
                    return order
            uniq, rank = np.unique(k, return_inverse=True)
            card = len(uniq)
        rank = rank.reshape(-1).astype(np.int64, copy=False)
        if combined is None:
            combined = rank
        else:
            if size * card >= 2**62:  # re-rank before the packed key would overflow
                uniq_c, combined = np.unique(combined, return_inverse=True)
                combined, size = combined.reshape(-1).astype(np.int64), len(uniq_c)
            combined *= card  # in place: `combined` is this function's own array by now
            combined += rank
        size *= card
    if combined is None or size == 1:
        return np.arange(n)
    return _sorted(combined, size, ranks=ranks)[0]


def _sorted(combined: np.ndarray, size: int, *, ranks: bool) -> tuple[np.ndarray, bool]:
    """The stable order (or each row's place in it) of packed keys in ``[0, size)``, and whether rows tie."""
    import numpy as np

    n = len(combined)
    if combined[0] <= combined[-1] and (np.diff(combined[:: max(1, n // 1024)]) >= 0).all():
        # A strided sample is in order: the rows may already be (a reference query's ORDER BY).
        step = np.diff(combined)
        if (step >= 0).all():
            return np.arange(n), bool((step == 0).any())
    if size <= 4 * n:
        # Keys in a range not much larger than the rows: count them. Distinct keys sort by a running count
        # (a row's place is the number of smaller keys), with no comparison sort at all.
        counts = np.bincount(combined, minlength=size)
        if counts.max() <= 1:
            before = np.cumsum(counts, out=counts)
            before -= 1
            place = before[combined]
            return (place if ranks else _inverse(place)), False
        order, ties = _stable_argsort(combined, size), True
    else:
        order = _stable_argsort(combined, size)
        ordered = combined[order]
        ties = bool((ordered[1:] == ordered[:-1]).any())
    return (_inverse(order) if ranks else order), ties


def _inverse(perm: np.ndarray) -> np.ndarray:
    """The inverse of a permutation of ``range(len(perm))``."""
    import numpy as np

    out = np.empty(len(perm), dtype=np.intp)
    out[perm] = np.arange(len(perm))
    return out


def _stable_argsort(combined: np.ndarray, size: int) -> np.ndarray:
    """``np.argsort(combined, kind="stable")`` for keys in ``[0, size)``, usually by a faster sort."""
    import numpy as np

    n = len(combined)
    if size * n < 2**62:
        # The row number as a last key makes every key distinct, and with no ties the default sort (several
        # times faster than the stable one on int64) can only give the stable order.
        return np.argsort(combined * n + np.arange(n, dtype=np.int64))
    return np.argsort(combined, kind="stable")


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
    from evalnb.errors import ReferenceQueryError

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
            decimal_comma=spec.decimal_comma,
        )
    except TypeError as exc:
        line = f"rows: {exc}"
        return Score(value=0.0, passed=False, reason=line, details=[_row_detail(None, None, line)])
    return Score(value=diff.value, passed=diff.passed, reason=diff.reason(), details=diff.details or None)


def _authoring(message: str) -> Score:
    line = f"referenceQuery: {message}"
    return Score(value=0.0, passed=False, reason=line, details=[_row_detail("referenceQuery", None, line)])
