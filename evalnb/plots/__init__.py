"""Plotly figures of results, comparisons, trends and judge agreement (plotly is imported only when a figure is
made).

Each figure says what its axes hold: checks on different scales (pass rates, 0-1 values, 1-5 scores, counts;
``evalnb.checks.scales``) get panels of their own instead of sharing an unlabelled axis, and every colour used
has a legend entry.

Example::

    evalnb.plots.scorecard(result).show()
    evalnb.plots.trend(store, "foodmart-sales-evals")
    evalnb.plots.compare(evalnb.compare(v1, v2))
    evalnb.plots.tradeoff(store, "knowledge-base")      # quality against cost per version, the Pareto front
    evalnb.plots.ranking(evalnb.rank([v1, v2, v3], judge=judge))
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.plots._agreement import agreement
from evalnb.plots._compare import compare
from evalnb.plots._ranking import ranking
from evalnb.plots._results import categories, scorecard
from evalnb.plots._tradeoff import tradeoff
from evalnb.plots._trend import trend

__all__ = ["agreement", "categories", "compare", "ranking", "scorecard", "tradeoff", "trend"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
