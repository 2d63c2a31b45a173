"""How a mismatch of the ``rows`` check reads (docs/cube-yaml.md, row comparison): the path of the cell
(``rows[0].productFamily``, or ``rows[country="USA"].storeSales`` unordered), the expected cell with the tolerance
that applied, and what the answer had; a detail row per mismatch (docs/results.md, `mismatches`).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.checks._rows import _Column

__all__ = ["detail", "fmt_num", "fmt_tol", "quoted", "row_detail", "row_label"]


def fmt_num(x: float) -> str:
    # a count reads as a count (`expected 8, got 9`, not `8.0`); other numbers in full (repr round-trips)
    f = float(x)
    if f.is_integer() and abs(f) < 2**53:
        return "-0" if f == 0 and math.copysign(1.0, f) < 0 else str(int(f))
    return repr(f)


def fmt_tol(absolute: float, relative: float) -> str:
    return f"abs {absolute:g}, rel {relative:g}"


def quoted(text: Any) -> str:
    return json.dumps(str(text), ensure_ascii=False)


def row_label(e_row: int, labels: list[_Column], c: _Column) -> str:
    """``country="USA"``: an expected row named by its key values (the cells of ``labels`` it has)."""
    parts = []
    for k in labels:
        if (k is c and len(labels) > 1) or not k.e_pres[e_row]:
            continue  # the mismatching cell itself names the row only when nothing else can
        cell = fmt_num(k.e_vals[e_row]) if k.e_num[e_row] else quoted(str(k.e_series.iat[e_row]).strip())
        parts.append(f"{k.key}={cell}")
    return ", ".join(parts) or str(e_row)


def detail(
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
        e_text = f"{fmt_num(e_cell)} ± ({tol})"
    else:
        e_cell = str(c.e_series.iat[e_row]).strip()
        e_text = quoted(e_cell)
    # docs/cube-yaml.md, row comparison: `rows[0].productFamily` in order; unordered,
    # `rows[country="USA"].storeSales`, and `row` is the expected row as the suite writes it (not its sorted position)
    path = f"rows[{r}].{c.key}" if labels is None else f"rows[{row_label(e_row, labels, c)}].{c.key}"
    row = r if labels is None else e_row
    out = {"row": row, "key": c.key, "expected": e_cell, "tolerance": tol if numeric else None}
    if c.a_name is None or not c.a_pres[a_row]:
        return {**out, "actual": None, "reason": f"{path}: expected {e_text}, got nothing (no such key)"}
    assert c.a_series is not None
    raw = c.a_series.iat[a_row]
    if numeric:
        assert c.a_ok is not None and c.a_vals is not None
        if not c.a_ok[a_row]:
            a_disp = str(raw).strip()
            return {
                **out,
                "actual": a_disp,
                "reason": f"{path}: expected {e_text}, got {quoted(a_disp)} (not a number)",
            }
        a_num = float(c.a_vals[a_row])
        return {**out, "actual": a_num, "reason": f"{path}: expected {e_text}, got {fmt_num(a_num)}"}
    if raw is None or (not isinstance(raw, str) and pd.isna(raw)):
        return {**out, "actual": None, "reason": f"{path}: expected {e_text}, got null"}
    a_disp = str(raw).strip()
    return {**out, "actual": a_disp, "reason": f"{path}: expected {e_text}, got {quoted(a_disp)}"}


def row_detail(
    key: str | None, row: int | None, line: str, *, expected: Any = None, actual: Any = None
) -> dict[str, Any]:
    return {"row": row, "key": key, "expected": expected, "actual": actual, "tolerance": None, "reason": line}
