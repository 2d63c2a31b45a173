"""Tables of cases, one case per row: a DataFrame (:func:`from_frame`), a CSV file (``"table-csv"``, ``.csv`` /
``.tsv``) and a JSONL file (``"table-jsonl"``, ``.jsonl``). docs/tables.md has the rules.

The columns: ``prompt`` (required), ``expected`` or ``expected_response``, ``id`` or ``testId`` (else an id
from the prompt), ``category``; other columns are ignored. Cells are text: nothing is inferred, so an expected
answer ``4`` is the text ``"4"``. Each row's checks are ``checks=`` (default ExactMatch and PartialMatch, the
deterministic matchers); a row with no expected answer leaves out the checks that need one, and the suite's
``warnings`` say which rows.

Example::

    suite = evalnb.from_frame(pd.DataFrame({"prompt": ["What is 2+2?"], "expected": ["4"]}))
    [c.name for c in suite.cases[0].turns[0].checks]
    # ['ExactMatch', 'PartialMatch']
    suite = evalnb.load("evals/cases.csv")            # the same columns, read as text
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._lazy import homes
from evalnb.errors import SuiteError, SuiteWarning
from evalnb.formats._common import EXPECTED_CHECKS
from evalnb.formats._registry import Format, Sniff, register
from evalnb.formats._tables._build import ALIASES, Checks, build
from evalnb.formats._tables._parse import parse_csv, parse_jsonl
from evalnb.suite import Suite

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ALIASES", "FRAME", "from_frame", "schema"]

FRAME = "table-frame"
"""The format name of a suite built from a DataFrame (``Suite.format``)."""

_DEFAULT_NAME = "table"


def from_frame(
    df: pd.DataFrame,
    prompt: str = "prompt",
    expected: str | None = "expected",
    id: str | None = None,
    category: str | None = None,
    checks: Checks = EXPECTED_CHECKS,
    name: str | None = None,
) -> Suite:
    """A suite from a DataFrame: one case per row (one turn, run once).

    Args:
        df: the table of cases.
        prompt: the column of the prompts (required; each row needs one).
        expected: the column of the expected answers; the default reads ``expected``, else
            ``expected_response``; ``None`` reads none. A row without one leaves out the checks that need one.
        id: the column of the case ids (unique, none empty); by default ``id`` or ``testId`` when present, else
            an id made from the prompt (``row-<hash>``, the same wherever the row moves).
        category: the column of the categories; by default ``category`` when present.
        checks: each row's checks: names of built-in checks or evaluators (``"ExactMatch"``,
            ``"Similarity"``, ``"Citations"``, ``"regex"``, a registered check's name), or a mapping name ->
            options (``{"PartialMatch": {"threshold": 0.7}}``), or check spec objects.
        name: the suite's name (default ``df.attrs["name"]``, else ``"table"``).

    Cells are turned into text with ``str()`` (an empty cell, ``None`` or ``NaN`` is no value); a float column
    of whole numbers (``4.0``, what pandas makes of integers beside an empty cell) is named in the warnings.

    Returns:
        The suite (``format="table-frame"``); its ``warnings`` (also issued as :class:`~evalnb.errors.SuiteWarning`)
        name the rows whose checks were left out.

    Raises:
        SuiteError: ``MISSING_FIELD`` (no ``prompt`` column, location ``columns.prompt``), ``UNKNOWN_FIELD``
            (a near miss such as ``Prompt``), ``INVALID_VALUE`` (no rows; a duplicate id at ``rows[3].id``; two
            columns of one role), ``BLANK_FIELD`` (an empty prompt or id at ``rows[3].prompt``), and the errors
            of the checks' options (``checks.PartialMatch.threshold``); every one in ``.errors``.

    Example::

        df = pd.DataFrame({"prompt": ["What is 2+2?", "Capital of France?"], "expected": ["4", "Paris"]})
        result = evalnb.run(evalnb.from_frame(df), my_agent)   # or evalnb.run(df, my_agent)
        evalnb.from_frame(df, checks={"PartialMatch": {"threshold": 0.8}, "Similarity": {}})
    """
    data = _frame_data(df, (prompt, expected, id, category))
    title = name or str(df.attrs.get("name") or "") or _DEFAULT_NAME
    suite = build(
        data,
        name=title,
        format=FRAME,
        prompt=prompt,
        expected=expected,
        id=id,
        category=category,
        checks=checks,
    )
    column = suite.meta["columns"].get("expected")
    if column is not None and df[column].dtype.kind == "f":
        whole = df[column].dropna()
        if len(whole) and bool((whole == whole.round()).any()):
            suite.warnings.append(
                f"column {column!r} holds numbers ({df[column].dtype}), compared as their text such as "
                f"{str(float(whole.iloc[0]))!r}; read the table as text (evalnb.load('cases.csv'), or "
                "pandas.read_csv(..., dtype=str, keep_default_na=False))"
            )
    for line in suite.warnings:
        warnings.warn(line, SuiteWarning, stacklevel=2)
    return suite


def _frame_data(df: Any, named: tuple[str | None, ...]) -> dict[str, Any]:
    """The plain table of a DataFrame: only the columns a role may be read from are turned into text."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise SuiteError(
            "TYPE_MISMATCH",
            f"from_frame takes a pandas DataFrame, got {type(df).__name__} (rows: pandas.DataFrame(rows))",
        )
    columns = [str(c) for c in df.columns]
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise SuiteError(
            "INVALID_VALUE",
            f"the DataFrame has the column {twice[0]!r} twice",
            location=f"columns.{twice[0]}",
        )
    wanted = {c for c in named if c is not None} | {a for names in ALIASES.values() for a in names}
    values = {
        col: [_cell(v) for v in df.iloc[:, k].tolist()] for k, col in enumerate(columns) if col in wanted
    }
    rows = [{col: cells[i] for col, cells in values.items()} for i in range(len(df))]
    index = df.index
    plain = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    return {"columns": columns, "rows": rows, "labels": None if plain else index.tolist()}


def _cell(value: Any) -> str | None:
    # docs/tables.md, DataFrames: a missing value (None, NaN, NA, NaT) is no value; anything else its str().
    import pandas as pd

    if value is None or isinstance(value, str):
        return value
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass  # a list or an array in a cell: not a missing value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def schema() -> dict[str, Any]:
    """The JSON Schema of one row of a table (for editors of JSONL files)."""
    text = {"type": ["string", "number", "boolean", "null"]}
    return {
        "title": "TableRow",
        "description": "One case of a table (docs/tables.md): other keys are ignored.",
        "type": "object",
        "properties": {
            "prompt": {"type": ["string", "number", "boolean"]},
            "expected": text,
            "expected_response": text,
            "id": text,
            "testId": text,
            "category": text,
        },
        "required": ["prompt"],
    }


def _stem(path: Path | None) -> str:
    if path is None:
        return _DEFAULT_NAME
    return path.name[: -len(path.suffix)] if path.suffix else path.name


def _frame_text(_: str) -> Any:
    raise SuiteError(
        "INVALID_VALUE", "a DataFrame is not read from text: give it to evalnb.from_frame (or evalnb.run)"
    )


def _build_frame(df: Any, _path: Path | None) -> Suite:
    return from_frame(df)


def _never(_: Any) -> bool:
    return False


def _register() -> None:
    never = Sniff(order=90, tries=_never)  # no content sniffing: a table is told by its extension or format=
    register(
        Format(
            name="table-csv",
            suffixes=(".csv", ".tsv"),
            malformed="MALFORMED_CSV",
            parse=parse_csv,
            build=lambda data, path: build(data, name=_stem(path), format="table-csv"),
            schema=schema,
            sniff=never,
            what="CSV tables",
        )
    )
    register(
        Format(
            name="table-jsonl",
            suffixes=(".jsonl",),
            malformed="MALFORMED_JSONL",
            parse=parse_jsonl,
            build=lambda data, path: build(data, name=_stem(path), format="table-jsonl"),
            schema=schema,
            sniff=never,
            what="JSONL tables",
        )
    )
    register(
        Format(
            name=FRAME,
            suffixes=(),
            malformed="INVALID_VALUE",
            parse=_frame_text,
            build=_build_frame,
            schema=schema,
            sniff=never,
            what="DataFrames",
        )
    )


_register()

# exported lazily by evalnb.formats: its public home from the start, whoever imports this module first
homes("evalnb.formats", globals(), ["from_frame"])
