"""Compare versions: the gate per check, the triage list per case, and power planning.

* :func:`compare` (also ``evalnb.compare``) compares a candidate with a baseline and returns a
  :class:`Comparison`; :func:`gate` gates several of them (one per suite) as one :class:`Comparisons`.
* :func:`power` (also ``evalnb.power``) plans how many cases and runs detect a given drop.
* :class:`Sequential` is the sequential gate's stop rule (``evalnb.run(..., baseline=, stop="decided")``
  builds it): decide with fewer cases, anytime-valid.

Only numpy, pandas and the standard library are used (no scipy). See ``docs/comparison.md``.

Example::

    cmp = evalnb.compare(baseline, candidate, margin=0.02)
    cmp.exit_code, cmp.checks[["check_id", "verdict", "words"]]
    evalnb.power(baseline, drop=0.05).report()
"""

from evalnb._lazy import homes
from evalnb.comparison._core import Comparison, compare
from evalnb.comparison._gate import Comparisons, gate
from evalnb.comparison._planning import PowerPlan, power
from evalnb.comparison._stopping import Sequential

__all__ = ["Comparison", "Comparisons", "PowerPlan", "Sequential", "compare", "gate", "power"]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
