"""Writing a result in the format a path's extension names: the table the CLI's ``--output`` reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._files import atomic_write
from evalnb.errors import ConfigError
from evalnb.export.csv import to_csv
from evalnb.export.document import to_document
from evalnb.export.excel import to_excel
from evalnb.export.html import to_html

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["SUFFIXES", "write"]


def _json(result: Result, path: Path) -> Path:
    # A JSON dataset's result goes back into its own format; every other suite's into our versioned JSON.
    if result.suite.format == "dataset-json":
        to_document(result, path)
    else:
        atomic_write(path, result.to_json() + "\n")
    return path


def _csv_named(result: Result, path: Path) -> Path:
    return to_csv(result, path.with_suffix(""))  # "out.csv" names the folder "out"


#: file extension -> writer; "" (no extension) is a folder of CSV files.
SUFFIXES: dict[str, Callable[[Result, Path], Path]] = {
    ".json": _json,
    ".html": to_html,
    ".htm": to_html,
    ".xlsx": to_excel,
    ".csv": _csv_named,
    "": to_csv,
}


def write(result: Result, path: str | Path) -> Path:
    """Write ``result`` in the format its extension names: ``.json`` (the dataset document for a JSON dataset,
    else our versioned JSON), ``.html``, ``.xlsx``, or a folder of ``.csv`` files (a path ending in ``.csv``
    or a directory). Every file is written atomically.

    Raises:
        ConfigError: for another extension, naming the ones there are.

    Example:
        >>> evalnb.export.write(result, "scorecard.html")
    """
    p = Path(path)
    writer = SUFFIXES.get(p.suffix.lower())
    if writer is None:
        known = [s for s in SUFFIXES if s and s != ".htm"]
        raise ConfigError(f"--output {p}: use {', '.join(known[:-1])} or {known[-1]}")
    return writer(result, p)
