"""Reading a table of cases from text: CSV (or TSV) and JSONL, every cell as text (docs/tables.md).

A parsed table is plain data, ``{"columns": [...], "rows": [{column: text or None}], "lines": [...]}``, with
the file line each row starts on, so the errors of the rows can name it. Nothing is inferred: a cell ``4``
is the text ``"4"``, an empty cell is no value (``None``).

Example::

    parse_csv("prompt,expected\\nWhat is 2+2?,4\\n")["rows"]
    # [{'prompt': 'What is 2+2?', 'expected': '4'}]
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from evalnb.formats._common import fail, shown, type_name

__all__ = ["DELIMITERS", "parse_csv", "parse_jsonl"]

DELIMITERS = (",", ";", "\t")
"""The cell separators a CSV header may use; the one it holds most of wins (a comma on a tie): a table saved
by a spreadsheet set to a language that writes decimal commas separates cells with semicolons."""


def _delimiter(header: str) -> str:
    counts = {d: header.count(d) for d in DELIMITERS}
    best = max(DELIMITERS, key=lambda d: (counts[d], d == ","))
    return best if counts[best] else ","


def parse_csv(text: str) -> dict[str, Any]:
    """A CSV table (a header line naming the columns, then one row per case) as plain data.

    Blank lines and rows whose cells are all empty are skipped; a row may end in extra empty cells (a
    spreadsheet's trailing separators), never in extra cells with text.

    Raises:
        SuiteError: ``MALFORMED_CSV`` for a quote left open, a row with more or fewer cells than the header
            has columns, or a column named twice (location ``line N``); ``INVALID_VALUE`` for an empty file.
    """
    if not text.strip():
        fail("INVALID_VALUE", "the file is empty: a CSV table starts with a header line naming its columns")
    first = text.lstrip("\r\n").split("\n", 1)[0]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(first), strict=True)
    header: list[str] | None = None
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    start = 1
    # A prompt may be a whole document: no cap on a cell's size (the csv module's default is 128 KiB).
    limit = csv.field_size_limit(2**31 - 1)
    try:
        for record in reader:
            at, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in record):
                continue
            if header is None:
                header = _header(record, at)
                continue
            rows.append(_row(header, record, at))
            lines.append(at)
    except csv.Error as exc:
        fail("MALFORMED_CSV", f"the CSV does not parse: {exc}", f"line {start}")
    finally:
        csv.field_size_limit(limit)
    assert header is not None  # a text that is not blank has a first record with text
    return {"columns": [c for c in header if c], "rows": rows, "lines": lines}


def _header(record: list[str], line: int) -> list[str]:
    names = [cell.strip() for cell in record]
    seen: dict[str, int] = {}
    for k, name in enumerate(names):
        if name and name in seen:
            fail(
                "MALFORMED_CSV",
                f"the header names column {shown(name)} twice (cells {seen[name] + 1} and {k + 1})",
                f"line {line}",
            )
        seen.setdefault(name, k)
    return names


def _row(header: list[str], record: list[str], line: int) -> dict[str, Any]:
    extra = record[len(header) :]
    if len(record) < len(header) or any(cell.strip() for cell in extra):
        fail(
            "MALFORMED_CSV",
            f"line {line} has {len(record)} cells but the header names {len(header)} columns "
            "(a cell holding the separator or a line break goes in double quotes)",
            f"line {line}",
        )
    # An empty cell is no value; a header cell left empty names no column (its cells are ignored).
    return {name: (cell if cell != "" else None) for name, cell in zip(header, record, strict=False) if name}


class _DuplicateKey(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _cell(value: Any) -> Any:
    # docs/tables.md, JSONL: a number is taken as written (the parser hands its text over), true/false as those
    # words, null as no value; an object or a list stays as it is (an error only in a column that must be text).
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def parse_jsonl(text: str) -> dict[str, Any]:
    """A JSONL table (one JSON object per line, one case per object) as plain data.

    Numbers are kept as they are written (``4.50`` is the text ``"4.50"``), ``true``/``false`` become those
    words and ``null`` no value. The columns are the keys, in the order they first appear. Blank lines are
    skipped.

    Raises:
        SuiteError: ``MALFORMED_JSONL`` for a line that is not JSON, or an object with a key twice (location
            ``line N, column C``); ``TYPE_MISMATCH`` for a line that is JSON but not an object;
            ``INVALID_VALUE`` for a file with no lines.
    """
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    columns: dict[str, None] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(
                line, object_pairs_hook=_object, parse_int=str, parse_float=str, parse_constant=_no_constant
            )
        except json.JSONDecodeError as exc:
            fail("MALFORMED_JSONL", f"line {n} is not JSON: {exc.msg}", f"line {n}, column {exc.colno}")
        except _DuplicateKey as exc:
            fail("MALFORMED_JSONL", f"line {n} gives the key {shown(exc.args[0])} twice", f"line {n}")
        except RecursionError:
            fail("MALFORMED_JSONL", f"line {n} is nested too deeply", f"line {n}")
        except ValueError as exc:
            fail("MALFORMED_JSONL", f"line {n} is not JSON: {exc}", f"line {n}")
        if not isinstance(value, dict):
            fail(
                "TYPE_MISMATCH",
                f"line {n} is {type_name(value)}; each line of a JSONL table is one object (one case)",
                ("rows", len(rows)),
            )
        rows.append({key: _cell(v) for key, v in value.items()})
        lines.append(n)
        columns.update(dict.fromkeys(value))
    if not rows:
        fail("INVALID_VALUE", "the file is empty: a JSONL table holds one JSON object (one case) per line")
    return {"columns": list(columns), "rows": rows, "lines": lines}
