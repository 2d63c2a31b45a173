"""Results: what a run returns (:class:`Result`); its frames' shapes are documented in docs/results.md.

* :mod:`~evalnb.results._frames`: the columns, order and dtypes of ``runs``, ``scores``, ``cases``,
  ``mismatches`` and ``tool_calls``, and the typed frames built from rows;
* :mod:`~evalnb.results._result`: :class:`Result`, whose views are derived from its frames;
* :mod:`~evalnb.results._meta`: :class:`RunMeta`, what a run records about itself (``Result.meta``);
* :mod:`~evalnb.results._report`: the summary, category view, text report and notebook scorecard;
* :mod:`~evalnb.results._files`: the versioned JSON of a Result;
* :mod:`~evalnb.results.outputs`: the registry of writers (HTML, Excel, CSV ... from ``evalnb.export``).

Example::

    result = evalnb.run(suite, agent)
    result.cases[["case_id", "status", "pass_rate"]]
    print(result.report())
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.results._meta import RunMeta
from evalnb.results._result import Result

__all__ = ["Result", "RunMeta"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
