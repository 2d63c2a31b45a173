"""The failure browser: ``result.explore()`` and ``comparison.explore()`` in a notebook.

* :mod:`~evalnb.browser._data`: which cases a filter keeps, and one case x run x turn as the browser shows it;
* :mod:`~evalnb.browser._views`: its HTML (prompt, expected and actual side by side with the difference marked,
  the checks, the rows with the mismatched ones marked; both versions of a comparison side by side);
* :mod:`~evalnb.browser._widgets`: the ipywidgets around them (the ``notebooks`` extra), imported on first use.

Example::

    result.explore()                 # failed and degraded cases first
    evalnb.compare(v1, v2).explore()  # what changed, both answers side by side
    evalnb.compare(v1, v2).explore(pairwise=evalnb.pairwise(v1, v2, judge=judge))   # and the judge's verdicts
    evalnb.pairwise(v1, v2, judge=judge).explore()    # the pairs, filtered by winner
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any

from evalnb._lazy import homes

if TYPE_CHECKING:
    from evalnb.comparison import Comparison
    from evalnb.preference import Pairwise
    from evalnb.results import Result

__all__ = ["explore_comparison", "explore_pairwise", "explore_result"]


def _loaded_widgets() -> Any:
    if importlib.util.find_spec("ipywidgets") is None:
        raise ImportError('the failure browser needs ipywidgets: pip install "evalnb[notebooks]"')
    from evalnb.browser import _widgets as widgets

    return widgets


def explore_result(result: Result) -> Any:
    """The browser of one Result (what ``result.explore()`` returns)."""
    return _loaded_widgets().ResultBrowser(result)


def explore_comparison(
    comparison: Comparison, a: Result, b: Result, *, pairwise: Pairwise | None = None
) -> Any:
    """The browser of a comparison of the Results ``a`` and ``b`` (what ``comparison.explore()`` returns); with
    ``pairwise``, each case shows the judge's pairwise verdict beside the answers."""
    return _loaded_widgets().ComparisonBrowser(comparison, a, b, pairwise=pairwise)


def explore_pairwise(pairwise: Pairwise, a: Result, b: Result) -> Any:
    """The browser of a pairwise judgement of ``a`` and ``b`` (what ``pw.explore()`` returns): filter by winner,
    both answers side by side with the verdict in each order and the judge's reason."""
    return _loaded_widgets().PairwiseBrowser(pairwise, a, b)


homes(__name__, globals(), __all__)  # reprs and docs name the public path
