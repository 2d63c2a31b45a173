"""How the ``rows`` check reads its two sides (docs/cube-yaml.md, row comparison).

:func:`read_side` turns rows (a DataFrame or a list of dicts) into one frame, merging an answer's key
spellings by :func:`normalise_key`. :func:`parse_number` reads one cell as a lenient number;
:func:`parse_series` and :func:`strings` read a whole column by the same rules with pandas string methods;
:func:`same_text` finds the cells two text columns hold alike, which match under every rule unread.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb._text import nfc

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "Side",
    "normalise_key",
    "parse_number",
    "parse_series",
    "presence",
    "read_side",
    "same_text",
    "strings",
]

# docs/cube-yaml.md, numbers and text in rows: the one grammar of a number written as text. Both readings (one
# cell, a whole column through pandas) use these patterns, which Python's `re` and Arrow's RE2 read alike:
# explicit character classes, no look-around, no back-references.
_BLANK = "[ \t\n\r\f\v\u00a0\u2009\u202f]"  # around a number and its parts: spaces, tabs, no-break spaces
_SPACE_GROUP = "[ \u00a0\u2009\u202f]"  # a space between thousands groups (1 234 567)
_CURRENCY = "[$£€¥]"


def _number_pattern(*, decimal_comma: bool) -> str:
    point, group = (",", "[.]") if decimal_comma else ("[.]", ",")
    lead = "[1-9][0-9]{0,2}"  # a first group: 0,123 is no thousands grouping
    integer = f"(?:{lead}(?:{group}[0-9]{{3}})+|{lead}(?:{_SPACE_GROUP}[0-9]{{3}})+|[0-9]+)"
    body = f"(?:{integer}(?:{point}[0-9]*)?|{point}[0-9]+)(?:[eE][+-]?[0-9]+)?"
    pct = f"(?:{_BLANK}*%)?"
    b = f"{_BLANK}*"
    # one currency symbol at most, before or after the digits; a sign before the symbol or just after it
    unsigned = f"(?:{_CURRENCY}{b}{body}{pct}|{body}(?:{b}{_CURRENCY})?{pct})"
    signed = f"(?:(?:[+-]{b})?{unsigned}|{_CURRENCY}{b}[+-]{b}{body}{pct})"
    return f"{b}(?:[(]{b}{unsigned}{b}[)]|{signed}){b}"


_NUMBER = {comma: _number_pattern(decimal_comma=comma) for comma in (False, True)}
_NOT_DIGITS = {False: "[^0-9.eE+-]", True: "[^0-9,eE+-]"}  # what a matched number loses before float()


@functools.cache
def _compiled(decimal_comma: bool) -> tuple[re.Pattern[str], re.Pattern[str]]:
    # Compiled when a cell is first read, not when the check modules load: every run loads them (5 ms).
    return re.compile(_NUMBER[decimal_comma]), re.compile(_NOT_DIGITS[decimal_comma])


_MAYBE_NUMBER = f"{_BLANK}*[-+($£€¥.,0-9]"  # a cheap first test: labels fail it at their first character


def normalise_key(key: object) -> str:
    """The form under which row keys compare: ``Store Sales``, ``store_sales``, ``STORE-SALES`` -> ``storesales``
    (in Unicode NFC, so ``Café`` typed with a combining accent is the same key).

    Example::

        normalise_key("Store Sales") == normalise_key("store_sales") == normalise_key("storeSales")
        # True
    """
    return nfc(nfc(re.sub(r"[\s_\-]+", "", str(key))).lower())


@dataclass
class Side:
    """One side's rows as a frame, and which keys each row gives."""

    frame: pd.DataFrame
    keys: list[str]  # column names as written
    present: pd.DataFrame | None  # per-cell key presence, None when every row has every key


def read_side(rows: Any, what: str, *, normalise: bool = False) -> Side:
    """``rows`` (a DataFrame, a list of mappings or ``None``) as one frame; ``normalise`` merges key spellings.

    Raises:
        TypeError: when ``rows`` is neither a list of mappings nor a DataFrame.

    Example::

        read_side([{"Store Sales": 1}, {"store_sales": 2, "x": 3}], "actual", normalise=True).keys
        # ['storesales', 'x']
    """
    import pandas as pd

    if rows is None:
        return Side(pd.DataFrame(), [], None)
    if isinstance(rows, pd.DataFrame):
        frame = rows.reset_index(drop=True)
        frame.columns = [str(c) for c in frame.columns]
        return Side(frame, list(frame.columns), None)
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
    return Side(frame, names, present)


def presence(side: Side, name: str | None, n: int) -> np.ndarray:
    """Per row, whether it gives the key ``name`` (``None``: a key the side does not have).

    Example::

        presence(read_side([{"a": 1}, {"b": 2}], "expected"), "a", 2)
        # array([ True, False])
    """
    import numpy as np

    if name is None:
        return np.zeros(n, dtype=bool)
    if side.present is None:
        return np.ones(n, dtype=bool)
    return side.present[name].to_numpy(dtype=bool)


def parse_number(value: Any, *, decimal_comma: bool = False) -> float | None:
    """Parse one value the lenient way the rows check reads expected numbers; ``None`` if it is not a number.

    Text is a number when it is one as people write them (docs/cube-yaml.md, numbers and text in rows):
    digits with well-formed thousands groups (``1,234,567``, ``1 234``), a decimal point, an exponent, a sign
    or accounting parentheses, one currency symbol and a trailing ``%``. ``"1,5"``, ``"12,34"`` or ``"1,,5"`` are
    text. With ``decimal_comma`` the comma is the decimal mark and dots group thousands (``"1.234,5"``).

    Example::

        parse_number("$565,238.13"), parse_number("(500)"), parse_number("12%"), parse_number("1,5")
        # (565238.13, -500.0, 12.0, None)
        parse_number("1.234,5", decimal_comma=True)
        # 1234.5
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
    number_re, not_digits_re = _compiled(decimal_comma)
    if not number_re.fullmatch(value):
        return None
    digits = not_digits_re.sub("", value)
    number = float(digits.replace(",", ".") if decimal_comma else digits)
    return -number if "(" in value else number


_ONE_KIND = {
    "string": "text",
    "boolean": "bool",
    "integer": "number",
    "floating": "number",
    "mixed-integer-float": "number",
    "empty": "number",  # nulls only
}
"""``pandas.api.types.infer_dtype`` kinds (nulls skipped) in which every cell is text, a bool or a number."""


def parse_series(
    s: pd.Series, *, strict_types: bool, decimal_comma: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Lenient numbers for a whole column: ``(values, parsed)``; nulls parse as NaN.

    ``strict_types`` (the expected side) keeps booleans out of the numbers. A cell that parsed holds a
    number in ``values``; every other cell holds NaN. Text cells are read as :func:`parse_number` reads them
    (with ``decimal_comma`` too), by the same patterns.

    Example::

        parse_series(pd.Series(["$1,200", "(5)", "Food", None]), strict_types=True)
        # (array([1200., -5., nan, nan]), array([ True,  True, False,  True]))
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
    kind: str | None = "text"
    if pdt.is_string_dtype(s.dtype) and s.dtype != object:
        is_str = ~isnull
        is_other = np.zeros(n, dtype=bool)
    else:
        arr = s.to_numpy(dtype=object)
        # pandas names a column of one kind at C speed; only a column of mixed kinds is typed cell by cell
        kind = _ONE_KIND.get(pdt.infer_dtype(arr, skipna=True))
        if kind is not None:
            is_str = ~isnull if kind == "text" else np.zeros(n, dtype=bool)
            is_bool = ~isnull if kind == "bool" else np.zeros(n, dtype=bool)
        else:
            is_str = np.fromiter((isinstance(v, str) for v in arr), dtype=bool, count=n)
            is_bool = np.fromiter((isinstance(v, (bool, np.bool_)) for v in arr), dtype=bool, count=n)
        is_other = ~(is_str | isnull | is_bool)
        if not strict_types and is_bool.any():
            values[is_bool] = arr[is_bool].astype(float)
            ok |= is_bool
    if is_other.any():
        other = _numbers(arr[is_other], plain=kind == "number")
        values[is_other] = other
        ok[np.flatnonzero(is_other)[~np.isnan(other)]] = True
    if is_str.any():
        idx = np.flatnonzero(is_str)
        text = (s if len(idx) == n else s.iloc[idx]).astype("string").reset_index(drop=True)
        # Cheap first pass: only a cell that starts like a number can be one, so labels are skipped at once.
        maybe = text.str.match(_MAYBE_NUMBER).to_numpy(dtype=bool, na_value=False)
        if maybe.any():
            idx, text = idx[maybe], text[maybe].reset_index(drop=True)
            valid = text.str.fullmatch(_NUMBER[decimal_comma]).to_numpy(dtype=bool, na_value=False)
            if valid.any():
                idx, text = idx[valid], text[valid].reset_index(drop=True)
                neg = text.str.contains("(", regex=False).to_numpy(dtype=bool, na_value=False)
                digits = text.str.replace(_NOT_DIGITS[decimal_comma], "", regex=True)
                if decimal_comma:
                    digits = digits.str.replace(",", ".", regex=False)
                nums = pd.to_numeric(digits, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
                # "-0" reads as the integer 0 there: keep its sign, as float("-0") does cell by cell
                zero = nums == 0
                if zero.any():
                    minus = digits.str.startswith("-").to_numpy(dtype=bool, na_value=False)
                    nums = np.where(zero & minus, -0.0, nums)
                values[idx] = np.where(neg, -nums, nums)
                ok[idx] = True
    return values, ok


def _numbers(objs: np.ndarray, *, plain: bool) -> np.ndarray:
    """Cells that are neither text nor bools, as floats (NaN: not a number), each read on its own.

    ``plain``: every cell is a Python or NumPy int or float, which ``float`` reads as pandas does.
    """
    import numpy as np
    import pandas as pd

    if plain:
        try:
            return np.array(objs, dtype="float64")
        except (TypeError, ValueError, OverflowError):
            pass  # an int too large for a float: pandas says so
    read = pd.to_numeric(pd.Series(objs), errors="coerce")
    if read.dtype.kind in "iu":
        # Every cell an integral number: pandas read them as integers, losing the sign of a -0.0 that its
        # neighbours decided about. Each cell as its own float keeps the reading of a cell its own.
        try:
            return np.array(objs, dtype="float64")
        except (TypeError, ValueError, OverflowError):
            pass
    return read.to_numpy(dtype="float64", na_value=np.nan)


def strings(s: pd.Series) -> pd.Series:
    """Trimmed text of every cell (``None`` for nulls) in Unicode NFC, as a pandas string column.

    Example::

        strings(pd.Series([" East ", 5, None])).tolist()
        # ['East', '5', <NA>]
    """
    from pandas.api import types as pdt

    if not (pdt.is_string_dtype(s.dtype) and s.dtype != object):
        s = s.map(lambda v: None if v is None or v != v else str(v), na_action="ignore")
    return _composed(s.astype("string").str.strip())


def _composed(s: pd.Series) -> pd.Series:
    """``s`` (a string column) in Unicode NFC; only cells that are not ASCII are looked at again.

    docs/cube-yaml.md, numbers and text in rows: text compares in NFC. Nearly every column is ASCII, which
    one test of the joined text finds many times faster than normalising (or testing) cell by cell.
    """
    import numpy as np
    import pandas as pd

    if isinstance(s.dtype, pd.StringDtype) and str(s.dtype.storage).startswith("pyarrow"):
        other = ~s.str.isascii().to_numpy(dtype=bool, na_value=False)
    else:
        cells = np.asarray(s.array, dtype=object)
        try:
            joined = "".join(cells)
        except TypeError:  # nulls among the text
            joined = "".join(v for v in cells if type(v) is str)
        if joined.isascii():
            return s
        other = np.fromiter((type(v) is str and not v.isascii() for v in cells), dtype=bool, count=len(cells))
    if not other.any():
        return s
    s = s.copy()
    s[other] = s[other].str.normalize("NFC")
    return s


def same_text(e: pd.Series, a: pd.Series) -> np.ndarray | None:
    """Per row, whether ``e`` and ``a`` (as long) hold the same string; ``None`` unless both hold only text.

    Two equal strings parse alike and trim alike, so such a cell matches whether its expected value reads
    as a number or as text: the comparison reads only the other cells. Two ``None`` cells are the same too
    (an expected null matches an actual null); other nulls follow their own rule. Compared as they are stored: Arrow strings by Arrow, Python strings (an
    ``object`` column of text, pandas' Python-backed strings) by Python's ``==``; a column of one kind
    against one of the other gives ``None``.

    Example::

        same_text(pd.Series(["a", " b", "c"]), pd.Series(["a", "b", "d"]))
        # array([ True, False, False])
    """
    import numpy as np

    kind = _text_kind(e)
    if kind is None or kind != _text_kind(a):
        return None
    if kind == "arrow":
        eq = e.array == a.array
        if isinstance(eq, np.ndarray):  # the NaN-null string dtype: a null is unequal
            return eq.astype(bool, copy=False)
        return eq.to_numpy(dtype=bool, na_value=False)
    e_obj = np.asarray(e.array, dtype=object)
    a_obj = np.asarray(a.array, dtype=object)
    try:
        # None == None holds, and an expected null matches an actual null anyway; NaN equals nothing here.
        return np.asarray(e_obj == a_obj, dtype=bool)
    except TypeError:
        pass
    # A pd.NA null has no truth value: only the cells where both sides hold text compare.
    nulls = e.isna().to_numpy(dtype=bool) | a.isna().to_numpy(dtype=bool)
    out = np.zeros(len(e), dtype=bool)
    keep = np.flatnonzero(~nulls)
    out[keep] = e_obj[keep] == a_obj[keep]
    return out


def _text_kind(s: pd.Series) -> str | None:
    """``"arrow"`` or ``"python"`` for a column of text and nulls only, by how it stores its strings."""
    import pandas as pd
    from pandas.api import types as pdt

    if isinstance(s.dtype, pd.StringDtype):
        return "arrow" if str(s.dtype.storage).startswith("pyarrow") else "python"
    if s.dtype == object and pdt.infer_dtype(s, skipna=True) == "string":
        return "python"
    return None
