"""The documented frame shapes (columns, order, dtypes) and the typed frames built from rows.

``docs/results.md`` documents each column. Every frame evalnb hands out has exactly these columns in this order
(extra columns a caller adds are kept last), with explicit dtypes (STYLE habit 6).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalnb._unicode import clean

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.suite import Suite

__all__ = [
    "CASES_COLUMNS",
    "FAILURE_COLUMNS",
    "MISMATCH_COLUMNS",
    "RUNS_COLUMNS",
    "SCORES_COLUMNS",
    "TOOL_CALLS_COLUMNS",
    "conform",
    "first_failing",
    "frame_from_tuples",
    "in_suite_order",
    "make_frame",
    "mismatch_value",
    "missing_array",
    "plain",
    "records",
]

RUNS_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "run": "Int64",
    "turn": "Int64",
    "prompt": "string",
    "expected": "string",
    "response": "string",
    "stdout": "string",
    "exit_code": "Int64",
    "intent": "string",
    "refusal": "string",
    "insight": "string",
    "context": "string",
    "status": "string",
    "error": "string",
    "latency_ms": "float64",
    "model": "string",
    "agent": "string",
    "workdir": "string",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "cached_tokens": "Int64",
    "reasoning_tokens": "Int64",
    "cost": "float64",
}

SCORES_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "run": "Int64",
    "turn": "Int64",
    "check": "string",
    "check_id": "string",
    "value": "float64",
    "passed": "boolean",
    "status": "string",
    "reason": "string",
    "judge": "string",
    "options": "string",
    "prompt_tokens": "Int64",
    "completion_tokens": "Int64",
    "cost": "float64",
    "weighted": "float64",
    "spread": "float64",
    "judge_model": "string",
    "cached_tokens": "Int64",
    "reasoning_tokens": "Int64",
}

CASES_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "status": "string",
    "runs": "Int64",
    "passed_runs": "Int64",
    "pass_rate": "float64",
    "latency_ms": "float64",
}

FAILURE_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "run": "Int64",
    "turn": "Int64",
    "check": "string",
    "check_id": "string",
    "status": "string",
    "value": "float64",
    "reason": "string",
    "prompt": "string",
    "expected": "string",
    "response": "string",
    "error": "string",
    "mismatches": "Int64",
}

MISMATCH_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "run": "Int64",
    "turn": "Int64",
    "row": "Int64",
    "key": "string",
    "expected": "string",
    "actual": "string",
    "tolerance": "string",
    "reason": "string",
}


TOOL_CALLS_COLUMNS: dict[str, str] = {
    "suite": "string",
    "case_id": "string",
    "case_name": "string",
    "category": "string",
    "run": "Int64",
    "turn": "Int64",
    "order": "Int64",
    "tool": "string",
    "plugin": "string",
    "function": "string",
    "arguments": "string",
    "status": "string",
    "http_status": "Int64",
    "allowed": "boolean",
    "call_id": "string",
    "output": "string",
}
"""One row per tool call an agent reported (``Response.tool_calls``), in the order it made them."""


def json_cell(value: Any) -> str | None:
    """How the tool-call frame stores arguments and outputs: JSON text (``None`` stays missing)."""
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return json.dumps(str(value), ensure_ascii=False)


def in_suite_order(frame: pd.DataFrame, suite: Suite | Sequence[str]) -> pd.DataFrame:
    """Rows sorted by the case's place in the suite (or in a sequence of its case ids), then run, then turn
    (stable: ties keep saved order)."""
    import numpy as np

    if not len(frame):
        return frame
    ids = [c.id for c in suite.cases] if hasattr(suite, "cases") else suite
    order = {case_id: i for i, case_id in enumerate(ids)}
    position = frame["case_id"].map(order).fillna(len(order)).to_numpy(dtype="int64")
    run = frame["run"].to_numpy(dtype="float64", na_value=0)
    turn = frame["turn"].to_numpy(dtype="float64", na_value=0)
    return frame.iloc[np.lexsort((turn, run, position))].reset_index(drop=True)


def make_frame(rows: Iterable[Mapping[str, Any]] | None, schema: Mapping[str, str]) -> pd.DataFrame:
    """A DataFrame with exactly ``schema``'s columns, in order, with its dtypes (missing columns are NA)."""
    from operator import itemgetter

    rows = list(rows or [])
    cols = list(schema)
    try:
        pick = itemgetter(*cols)
        columns = list(zip(*map(pick, rows), strict=True)) if rows else [() for _ in cols]
        data = {c: list(v) for c, v in zip(cols, columns, strict=True)}
    except KeyError:
        data = {c: [r.get(c) for r in rows] for c in cols}
    for col, dtype in schema.items():
        if dtype == "string":
            data[col] = _encodable(data[col])
    return _typed_frame(data, schema)


def _encodable(values: list[Any]) -> list[Any]:
    """Text cells as text every file and database can take: lone surrogates become U+FFFD (evalnb._unicode).

    Rows a run records are cleaned when recorded; a caller's rows and frames are cleaned here. A column whose
    text is all ASCII (nearly always) is returned as it is, after one check of all of it at once.
    """
    if "".join([v for v in values if type(v) is str]).isascii():
        return values
    return [clean(v) if isinstance(v, str) else v for v in values]


def frame_from_tuples(rows: Iterable[tuple[Any, ...]], schema: Mapping[str, str]) -> pd.DataFrame:
    """Like :func:`make_frame` for rows that are tuples holding every column of ``schema``, in its order.

    The runner's records become rows this way: no dict per row, and the columns come from one transpose.
    """
    rows = list(rows)
    cols = list(schema)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in cols]
    if len(columns) != len(cols):
        raise ValueError(f"rows hold {len(columns)} columns, the schema {len(cols)}")
    return _typed_frame({c: list(v) for c, v in zip(cols, columns, strict=True)}, schema)


def _typed_frame(data: dict[str, list[Any]], schema: Mapping[str, str]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    cols = list(schema)
    try:
        # Typed arrays straight from the values: several times faster than inferring then casting,
        # which shows at the tens of thousands of score rows a large run produces.
        arrays: dict[str, Any] = {}
        for col, dtype in schema.items():
            values = data[col]
            if dtype == "float64":
                arrays[col] = np.array(values, dtype="float64")  # None -> NaN
            else:
                arrays[col] = pd.array(values, dtype=dtype)
        return pd.DataFrame(arrays, columns=cols, copy=False)
    except (TypeError, ValueError):
        return conform(pd.DataFrame(data, columns=cols), schema)


def missing_array(dtype: str, n: int) -> Any:
    """A column of ``n`` missing values in ``dtype``, made from zeroed buffers and a mask, not value by value
    (a million case runs' scores: seconds for each column no run reported)."""
    import numpy as np
    import pandas as pd

    if dtype == "float64":
        return np.full(n, math.nan)
    if dtype == "Int64":
        return pd.arrays.IntegerArray(np.zeros(n, dtype="int64"), np.ones(n, dtype=bool))
    if dtype == "boolean":
        return pd.arrays.BooleanArray(np.zeros(n, dtype=bool), np.ones(n, dtype=bool))
    if dtype == "string" and pd.StringDtype().storage == "pyarrow":
        import pyarrow as pa

        return pd.arrays.ArrowStringArray(pa.nulls(n, pa.large_string()))
    return pd.array([pd.NA] * n, dtype=dtype)


def conform(frame: pd.DataFrame, schema: Mapping[str, str], *, copy: bool = True) -> pd.DataFrame:
    """Reorder, add missing columns as NA, and cast to the schema's dtypes (extra columns are kept last).

    ``copy=False`` changes ``frame`` itself where it can (a frame read for this purpose alone): a column that
    has its dtype already is kept as it is, text cleaned only where it needs it.
    """
    import pandas as pd

    if copy:
        frame = frame.copy()
    missing = {
        col: pd.Series(missing_array(dtype, len(frame)), index=frame.index, copy=False)
        for col, dtype in schema.items()
        if col not in frame.columns
    }
    if missing:  # made in their dtypes at once (a column of NA cast value by value took seconds at 1M rows)
        frame = pd.concat([frame, pd.DataFrame(missing, index=frame.index)], axis=1)
    extra = [c for c in frame.columns if c not in schema]
    if list(frame.columns) != [*schema, *extra]:
        frame = frame[list(schema) + extra]
    casts: dict[str, Any] = {}
    for col, dtype in schema.items():
        if not copy and str(frame[col].dtype) == dtype:
            if dtype == "string" and str(getattr(frame[col].dtype, "storage", "")).startswith("pyarrow"):
                continue  # Arrow holds text as valid UTF-8: no lone surrogate to clean
            if dtype == "string":
                values = frame[col].tolist()
                cleaned = _encodable(values)
                if cleaned is not values:
                    frame[col] = pd.array(cleaned, dtype="string")
            continue
        if dtype == "float64":
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
        elif dtype == "Int64":
            frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
        elif dtype == "boolean":
            frame[col] = frame[col].astype("object").where(frame[col].notna(), None).astype("boolean")
        else:
            frame[col] = _encodable(frame[col].tolist())
            casts[col] = dtype
    if casts:
        frame = frame.astype(casts)
    if (
        not copy
        and isinstance(frame.index, pd.RangeIndex)
        and frame.index.start == 0
        and frame.index.step == 1
    ):
        return frame
    return frame.reset_index(drop=True)


def is_na(value: Any) -> bool:
    """Whether a cell is missing (None, NaN, pd.NA)."""
    if value is None:
        return True
    try:
        import pandas as pd

        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def plain(value: Any) -> Any:
    """A JSON-friendly python value (NA -> None, numpy scalars -> python)."""
    if is_na(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return value.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as dicts of plain python values."""
    cols = list(frame.columns)
    return [
        {c: plain(v) for c, v in zip(cols, row, strict=False)}
        for row in frame.itertuples(index=False, name=None)
    ]


def first_failing(runs: pd.DataFrame) -> pd.DataFrame:
    """Per case of a ``runs`` frame, the run x turn to show first: its first that did not pass (failed or
    degraded, by run then turn), else its first. Columns ``case_id, run, turn``, in the frame's case order.

    The scorecard's case table shows that turn's answer, the failure browser opens on it.

    Example::

        first_failing(result.runs).set_index("case_id").loc["refund-policy", ["run", "turn"]]
    """
    ok = ~runs["status"].isin(["failed", "degraded"]).fillna(False).astype(bool)
    ordered = runs.assign(_ok=ok.to_numpy()).sort_values(["_ok", "run", "turn"], kind="stable")
    first = ordered.drop_duplicates("case_id")[["case_id", "run", "turn"]]
    order = {c: i for i, c in enumerate(dict.fromkeys(runs["case_id"].tolist()))}
    return first.sort_values("case_id", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def mismatch_value(value: Any) -> str | None:
    """How a mismatch frame stores an expected/actual cell: strings quoted (JSON), numbers bare."""
    if value is None:
        return None
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(plain(value), ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
