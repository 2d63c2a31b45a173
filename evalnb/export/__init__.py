"""Scorecards to hand to colleagues: one self-contained HTML page, an Excel workbook, CSV files, versioned JSON,
and, for JSON datasets, the output document of the published dataset schema (read back with ``read_results``);
results for other tools: MLflow runs (:func:`to_mlflow`, :func:`store_to_mlflow`), Parquet folders
(:func:`to_parquet`, :func:`store_to_parquet`); and Inspect AI logs read in (:func:`read_inspect_log`).

One module per output: :mod:`~evalnb.export.html`, :mod:`~evalnb.export.excel`, :mod:`~evalnb.export.csv`,
:mod:`~evalnb.export.document` (the dataset output document), :mod:`~evalnb.export.comparison_page` (the page
``evalnb compare --html`` writes), :mod:`~evalnb.export.reading` (reading results
back) and :mod:`~evalnb.export.writers` (the format by file extension). Every file is written atomically.
The exports build on :mod:`evalnb.results`, never the other way round.

Example::

    evalnb.export.to_html(result, "scorecard.html")
    evalnb.export.to_excel(result, "scorecard.xlsx")
    evalnb.export.to_document(result, "evals/results/v1.6.0-results.json")
    evalnb.read_results("evals/results/v1.6.0-results.json").summary()
"""

from __future__ import annotations

from evalnb.export import comparison_page as _comparison_page  # noqa: F401  (registers the comparison page)
from evalnb.export._inspect import read_inspect_log
from evalnb.export._mlflow import store_to_mlflow, to_mlflow
from evalnb.export._parquet import store_to_parquet, to_parquet
from evalnb.export.csv import to_csv
from evalnb.export.document import DOCUMENT_SCHEMA_VERSION, to_document
from evalnb.export.excel import to_excel
from evalnb.export.html import to_html
from evalnb.export.junit import junit_xml, to_junit
from evalnb.export.reading import read_results
from evalnb.export.summary import gate_markdown, summary_markdown, to_summary
from evalnb.export.writers import write

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
