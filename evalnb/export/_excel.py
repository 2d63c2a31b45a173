"""The Excel workbook: the sheets ``summary``, ``categories``, ``cases`` and ``scores``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb._unicode import xml_text
from evalnb.export._tables import case_table, category_table, starts_formula
from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result

__all__ = ["to_excel"]

_MAX_CELL = 32000
"""Characters kept of a text cell: Excel cells hold at most 32,767."""


def _cell_text(value: Any) -> Any:
    # A workbook is XML: openpyxl refuses control characters, and U+FFFE/U+FFFF make a file no reader opens
    # (docs/results.md, text that cannot be encoded: shown as visible escapes, as in JUnit XML).
    return xml_text(value)[:_MAX_CELL] if isinstance(value, str) else value


def _excel_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell and column name as a workbook can hold it."""
    out = frame.copy()
    out.columns = [_cell_text(c) for c in out.columns]
    for i, dtype in enumerate(out.dtypes):
        if str(dtype) in ("string", "str", "object"):
            out.isetitem(i, out.iloc[:, i].map(_cell_text, na_action="ignore"))
    return out


@register_writer("xlsx", suffixes=(".xlsx",))
def to_excel(result: Result, path: str | Path) -> Path:
    """One workbook with the sheets ``summary``, ``categories``, ``cases`` and ``scores``, written atomically.

    Text that starts like a formula (``=``, ``+``, ``-``, ``@``, a tab, a carriage return) is written as text.

    Example::

        evalnb.export.to_excel(result, "scorecard.xlsx")
    """
    import pandas as pd

    try:
        import openpyxl  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError('Excel export needs openpyxl: pip install "evalnb[excel]"') from exc
    sheets = {
        "summary": result.summary(),
        "categories": category_table(result),
        "cases": case_table(result),
        "scores": result.scores,
    }

    # The workbook is built in memory, then written in one go: when the disk fails part-way, the failure is a
    # plain write (the target keeps its old content) instead of openpyxl's zip half-closed on a dead file.
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as xl:
        for name, frame in sheets.items():
            _excel_safe(frame).to_excel(xl, sheet_name=name, index=False)
            _as_text(xl.sheets[name])
    return atomic_write(path, buffer.getvalue())


def _as_text(sheet: Any) -> None:
    """Text cells a spreadsheet would take for formulas are text cells (OWASP's CSV injection advice).

    openpyxl writes a string that starts with ``=`` as a live formula; evalnb writes no formulas, so such a cell
    becomes a string again, and every cell that starts like a formula gets Excel's quote prefix: it shows the
    text as written and stays text when someone edits it.
    """
    for row in sheet.iter_rows():
        for cell in row:
            if starts_formula(cell.value):
                cell.data_type = "s"
                cell.quotePrefix = True
