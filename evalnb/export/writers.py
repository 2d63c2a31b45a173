"""Writing a result in the format a path's extension names (what the CLI's ``--output`` does).

The extensions come from the writer registry of :mod:`evalnb.results.outputs`, where each export module
registers itself; a path ending in ``.csv``, or with no extension, is a folder of CSV files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._files import atomic_write
from evalnb.errors import ConfigError
from evalnb.export.csv import to_csv
from evalnb.export.document import to_document
from evalnb.results.outputs import register_writer, writer_for

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["write"]


@register_writer("json", suffixes=(".json",))
def to_json_file(result: Result, path: str | Path) -> Path:
    """A JSON dataset's result as the dataset output document; every other suite's as our versioned JSON."""
    if result.suite.format == "dataset-json":
        to_document(result, path)
    else:
        atomic_write(path, result.to_json() + "\n")
    return Path(path)


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
    if p.suffix.lower() in ("", ".csv"):
        return to_csv(result, p.with_suffix(""))
    found = writer_for(p)
    if found is None:
        raise ConfigError(f"--output {p}: use .json, .csv, .html or .xlsx")
    return found[1](result, p)
