"""Scorecards to hand to colleagues: one self-contained HTML page, an Excel workbook, CSV files, versioned JSON,
and, for JSON datasets, the output document of the published dataset schema (read back with ``read_results``);
results for other tools: MLflow runs (:func:`to_mlflow`, :func:`store_to_mlflow`), Parquet folders
(:func:`to_parquet`, :func:`store_to_parquet`); and Inspect AI logs read in (:func:`read_inspect_log`).

One module per output: :mod:`~evalnb.export._html`, :mod:`~evalnb.export._excel`, :mod:`~evalnb.export._csv`,
:mod:`~evalnb.export._document` (the dataset output document), :mod:`~evalnb.export._comparison_page` (the page
``evalnb compare --html`` writes), :mod:`~evalnb.export._reading` (reading results
back) and :mod:`~evalnb.export._writers` (the format by file extension). Every file is written atomically.
The exports build on :mod:`evalnb.results`, never the other way round.

Example::

    evalnb.export.to_html(result, "scorecard.html")
    evalnb.export.to_excel(result, "scorecard.xlsx")
    evalnb.export.to_document(result, "evals/results/v1.6.0-results.json")
    evalnb.read_results("evals/results/v1.6.0-results.json").summary()
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.export import _comparison_page  # noqa: F401  (registers the comparison page)
from evalnb.export._csv import to_csv
from evalnb.export._document import DOCUMENT_SCHEMA_VERSION, to_document
from evalnb.export._excel import to_excel
from evalnb.export._html import to_html
from evalnb.export._inspect import read_inspect_log
from evalnb.export._junit import junit_xml, to_junit
from evalnb.export._mlflow import store_to_mlflow, to_mlflow
from evalnb.export._parquet import store_to_parquet, to_parquet
from evalnb.export._reading import read_results
from evalnb.export._summary import gate_markdown, summary_markdown, to_summary
from evalnb.export._writers import write

__all__ = [
    "DOCUMENT_SCHEMA_VERSION",
    "gate_markdown",
    "junit_xml",
    "read_inspect_log",
    "read_results",
    "store_to_mlflow",
    "store_to_parquet",
    "summary_markdown",
    "to_csv",
    "to_document",
    "to_excel",
    "to_html",
    "to_junit",
    "to_mlflow",
    "to_parquet",
    "to_summary",
    "write",
]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
