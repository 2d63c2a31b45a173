"""Results: what a run returns (:class:`Result`), its documented frame shapes, and where it can be written.

* :mod:`~evalnb.results._frames`: the columns, order and dtypes of ``runs``, ``scores``, ``cases``,
  ``mismatches`` and ``tool_calls``, and the typed frames built from rows;
* :mod:`~evalnb.results._result`: :class:`Result`, whose views are derived from its frames;
* :mod:`~evalnb.results._report`: the summary, category view, text report and notebook scorecard;
* :mod:`~evalnb.results._files`: the versioned JSON of a Result;
* :mod:`~evalnb.results.outputs`: the registry of writers (HTML, Excel, CSV ... from ``evalnb.export``).

Example::

    result = evalnb.run(suite, agent)
    result.cases[["case_id", "status", "pass_rate"]]
    print(result.report())
"""

from __future__ import annotations

from evalnb._scoring import STATUSES
from evalnb.results._files import SCHEMA_VERSION
from evalnb.results._frames import (
    CASES_COLUMNS,
    MISMATCH_COLUMNS,
    RUNS_COLUMNS,
    SCORES_COLUMNS,
    TOOL_CALLS_COLUMNS,
    conform,
    frame_from_tuples,
    make_frame,
    mismatch_value,
)
from evalnb.results._result import Result

__all__ = [
    "CASES_COLUMNS",
    "MISMATCH_COLUMNS",
    "RUNS_COLUMNS",
    "SCHEMA_VERSION",
    "SCORES_COLUMNS",
    "STATUSES",
    "TOOL_CALLS_COLUMNS",
    "Result",
    "conform",
    "frame_from_tuples",
    "make_frame",
    "mismatch_value",
]
