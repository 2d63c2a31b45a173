"""A folder of CSV files: one per frame and wide view."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._files import atomic_writer
from evalnb.export.tables import category_table
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
            frames[name].to_csv(fh, index=False)
    return out
