"""A folder of CSV files: one per frame and wide view."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._files import atomic_writer
from evalnb.export._tables import category_table, starts_formula
from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result

__all__ = ["CSV_FILES", "to_csv"]

#: The files :func:`to_csv` writes, in the order it writes them.
CSV_FILES = ("summary.csv", "categories.csv", "cases.csv", "runs.csv", "scores.csv", "mismatches.csv")


# No suffix: a folder is what it writes ("out.csv" names the folder "out" when given to evalnb.export.write).
@register_writer("csv")
def to_csv(result: Result, folder: str | Path) -> Path:
    """``summary.csv``, ``categories.csv``, ``cases.csv``, ``runs.csv``, ``scores.csv``, ``mismatches.csv``.

    A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is written with a leading
    ``'``, so a spreadsheet opening the file shows it as text instead of running it as a formula.

    Each file is written atomically: a reader or a crash sees a whole file, the old one or the new one (the
    folder as a whole is not one transaction: a crash between two files leaves the later ones as they were).

    Example::

        evalnb.export.to_csv(result, ".evals/results/v1")
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    frames: dict[str, pd.DataFrame] = {
        "summary.csv": result.summary(),
        "categories.csv": category_table(result),
        "cases.csv": result.cases,
        "runs.csv": result.runs,
        "scores.csv": result.scores,
        "mismatches.csv": result.mismatches,
    }
    for name in CSV_FILES:
        with atomic_writer(out / name) as fh:
            # RFC 4180 line ends (CRLF): the csv writer then quotes a field holding a lone carriage return too,
            # which a reader would otherwise take for the end of the row.
            _as_text(frames[name]).to_csv(fh, index=False, lineterminator="\r\n")
    return out


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells a spreadsheet would run as formulas get a leading ``'`` (OWASP's CSV injection advice); numbers,
    a negative one included, stay numbers."""
    text = [c for c in frame.columns if str(frame[c].dtype) in ("string", "str", "object")]
    hits = [c for c in text if any(starts_formula(v) for v in frame[c].tolist())]
    if not hits and not any(starts_formula(c) for c in frame.columns):
        return frame
    out = frame.copy()
    for col in hits:
        out[col] = [("'" + v) if starts_formula(v) else v for v in out[col].tolist()]
    out.columns = ["'" + c if starts_formula(c) else c for c in out.columns]
    return out
