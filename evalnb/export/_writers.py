"""Writing a result in the format a path's extension names (what the CLI's ``--output`` does).

The extensions come from the writer registry of :mod:`evalnb.results.outputs`, where each export module
registers itself; a path ending in ``.csv``, or with no extension, is a folder of CSV files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._files import atomic_write
from evalnb.errors import ConfigError
from evalnb.export._csv import to_csv
from evalnb.export._document import to_document
from evalnb.export._html import to_html
from evalnb.results.outputs import register_writer, suffixes, writer_for

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


@register_writer("text", suffixes=(".txt", ".md", ".log"))
def to_text(result: Result, path: str | Path) -> Path:
    """The text report (the cube spec's report, for a suite of any format)."""
    return atomic_write(path, result.report())


def write(result: Result | Sequence[Result], path: str | Path) -> Path:
    """Write ``result`` in the format its extension names: ``.json`` (the dataset document for a JSON dataset,
    else our versioned JSON), ``.html``, ``.xlsx``, ``.txt``/``.md`` (the text report), or a folder of ``.csv``
    files (a path ending in ``.csv`` or a directory). Every file is written atomically.

    Several results (one per suite of a run): ``.json`` holds a list of our versioned JSON, a text report holds
    them one after the other, ``.html`` is one scorecard with a section per suite; other kinds hold one suite
    each.

    Raises:
        ConfigError: for another extension, naming the ones there are, or several results for a one-suite kind.

    Example::

        evalnb.export.write(result, "scorecard.html")
        evalnb.export.write([tasks, cube], "results.json")
    """
    from evalnb.results import Result

    results = [result] if isinstance(result, Result) else list(result)
    p = Path(path)
    ext = p.suffix.lower()
    if len(results) != 1:
        if ext == ".json":
            data = [r.to_dict() for r in results]
            return atomic_write(p, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        if ext in (".txt", ".md", ".log"):
            return atomic_write(p, "\n".join(r.report() for r in results))
        if ext in (".html", ".htm"):
            return to_html(results, p)
        raise ConfigError(
            f"--output {p}: a {ext or 'folder'} holds one suite and this run has {len(results)}; "
            "use .json, .txt or .html for all of them, or run one suite"
        )
    if ext in ("", ".csv"):
        return to_csv(results[0], p.with_suffix(""))
    found = writer_for(p)
    if found is None:
        raise ConfigError(f"--output {p}: use one of {', '.join(suffixes())}, or a folder for CSV files")
    return found[1](results[0], p)
