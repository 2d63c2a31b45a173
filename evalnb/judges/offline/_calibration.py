"""The calibration of the embedding judge: cut points that map its measure of a pair onto the rubric's 1-5 scale.

The measure (:func:`evalnb.judges.offline._embedding.read`) says how close an answer is: for Relevance the cosine of
the answer and the question, for Similarity the cosine of the answer and the expected response with the
question's words taken out of both. A rubric level says how good an answer is. The mapping between them is
learnt from human grades, per check (what each was fitted on is in the file, ``checks.CHECK.fitted_on``):

* Similarity: the STS Benchmark **train** split (5,749 sentence pairs graded 0-5 by people; the grades placed
  on the rubric's levels by :func:`evalnb.judges.offline._public.sts_level`). Its dev split and SICK served the design
  choices, its test split none: it only measures (``benchmarks/judge_agreement.py``);
* Relevance: the ``fit`` half of ``evalnb/examples/labels/pairs.csv`` (no public set grades answer relevance
  on a 1-5 scale; WikiQA's yes/no answer labels only measure it).

Per check, the pairs are sorted by their measure and four cut points split the axis into the bands of levels
1..5 (``level = 1 + number of cuts at or below the measure``): the placement with the highest quadratic-weighted
kappa against the labels (:func:`fit_cuts`, exact; a cut lies half-way between the neighbouring values). Kappa,
not squared error: the least-squares step function pulls every answer toward the middle of the scale, the
regression to the mean a judge must not have. A level that the fitted function never gives has no band: its cut
coincides with the next one, and a level above every fitted value is unreachable (its cut is ``null``).

Beside the level, :meth:`Calibration.continuous` places the measure on the 1-5 scale continuously: linear
within each band, level k's band onto ``[k - 0.5, k + 0.5]`` (so it rounds to the level), the lowest and highest
band from the ends of the measure's range (-1 and 1). It keeps the order of the measure where the level ties
pairs, and it is what a comparison of two runs compares (the ``weighted`` column).

The fitted cuts ship as data (``calibration.json`` beside this module): a run reads them and never refits.
``python -m evalnb.judges.offline.fitting`` refits them (in a checkout: it reads ``data/public/``) and writes the file;
``python -m evalnb.judges.offline.fitting --check`` exits 1 when the shipped file differs from a refit (a test runs
it, so the data cannot drift from the labels silently).

Example::

    cal = load()
    cal.score("Similarity", 0.9), cal.score("Similarity", 0.05)
    # (4, 1)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from evalnb.errors import ConfigError

__all__ = ["FILE", "Calibration", "fit_cuts", "from_dict", "load"]

FILE = "calibration.json"
LEVELS = (1, 2, 3, 4, 5)
MEASURE_RANGE = (-1.0, 1.0)
"""Where the measures of :func:`evalnb.judges.offline._embedding.read` lie (cosines): the outer ends of the outer bands."""


@dataclass(frozen=True)
class Calibration:
    """Cut points per check: ``cuts[check] = (c2, c3, c4, c5)``, the measure at which level k starts.

    ``None`` marks a level that no measure reaches.
    """

    cuts: Mapping[str, tuple[float | None, ...]]
    source: Mapping[str, Any]

    def score(self, check: str, measure: float) -> int:
        """The 1-5 level of a measure for ``check``.

        Raises:
            KeyError: for a check the calibration does not cover.
        """
        cuts = self.cuts[check]
        return 1 + sum(1 for c in cuts if c is not None and measure >= c)

    def continuous(self, check: str, measure: float) -> float:
        """The measure on the 1-5 scale, continuously: linear within its level's band, which maps onto
        ``[level - 0.5, level + 0.5]`` (clipped to 1..5), so it rounds to :meth:`score` (see the module
        docstring). The lowest band starts at a measure of -1 and the highest ends at 1 (a cosine's range).

        Example::

            Calibration(cuts={"S": (0.2, 0.4, 0.6, 0.8)}, source={}).continuous("S", 0.5)
            # 3.0
        """
        level = self.score(check, measure)
        low, high = self.band(check, level)
        low = MEASURE_RANGE[0] if low is None or low < MEASURE_RANGE[0] else low
        high = MEASURE_RANGE[1] if high is None or high > MEASURE_RANGE[1] else high
        share = 0.5 if high <= low else min(1.0, max(0.0, (measure - low) / (high - low)))
        return float(min(5.0, max(1.0, level - 0.5 + share)))

    def band(self, check: str, level: int) -> tuple[float | None, float | None]:
        """The measures ``[low, high)`` of a level (None: unbounded below / above, or unreachable)."""
        cuts = (None, *self.cuts[check], None)
        return cuts[level - 1], cuts[level]

    def describe(self, check: str, level: int) -> str:
        """The band of a level in words: ``level 4 for cosine 0.55 to 0.71`` (the word before the first ``:``
        of the check's ``measure`` in the file, ``cosine`` without one)."""
        low, high = self.band(check, level)
        entry = self.source.get("checks", {}).get(check, {})
        what = str(entry.get("measure", "cosine")).split(":")[0]
        if low is None and high is None:
            return f"level {level}"
        if low is None:
            return f"level {level} below {what} {high:.2f}"
        if high is None:
            return f"level {level} from {what} {low:.2f}"
        return f"level {level} for {what} {low:.2f} to {high:.2f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            **dict(self.source),
            "checks": {
                check: {**dict(self.source.get("checks", {}).get(check, {})), "cuts": list(cuts)}
                for check, cuts in self.cuts.items()
            },
        }


def load() -> Calibration:
    """The shipped calibration (``evalnb/judges/offline/calibration.json``).

    Raises:
        ConfigError: when the file is missing or malformed (a broken installation).
    """
    try:
        text = resources.files("evalnb.judges.offline").joinpath(FILE).read_text(encoding="utf-8")
        return from_dict(json.loads(text))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"the embedding judge's calibration ({FILE}) cannot be read: {exc}") from exc


def from_dict(data: Mapping[str, Any]) -> Calibration:
    cuts: dict[str, tuple[float | None, ...]] = {}
    for check, entry in data["checks"].items():
        values = tuple(None if c is None else float(c) for c in entry["cuts"])
        if len(values) != len(LEVELS) - 1:
            raise ValueError(f"{check} needs {len(LEVELS) - 1} cuts, has {len(values)}")
        cuts[check] = values
    return Calibration(cuts=cuts, source=dict(data))


def fit_cuts(measures: Sequence[float], labels: Sequence[int]) -> tuple[float | None, ...]:
    """The cut points of the monotone 1-5 step function of a measure with the highest quadratic kappa against
    the labels (see the module docstring).

    Exact, and fast enough for thousands of pairs: kappa is ``1 - observed / chance``, and for a given placement
    both sums add up over the five bands, so Dinkelbach's method finds the best ratio by solving, a few times,
    "minimise ``observed - lambda * chance``" (a shortest path over the sorted distinct values, one pass per
    level) with ``lambda`` the ratio of the last placement, until it no longer falls. Among equally good
    placements each band starts at the first value that reaches the best, so the fit is deterministic.

    Example::

        fit_cuts([0.1, 0.2, 0.5, 0.6, 0.9], [1, 1, 3, 4, 5])
        # (0.35, 0.35, 0.55, 0.75)
    """
    import numpy as np

    if len(measures) != len(labels) or not measures:
        raise ValueError("fit_cuts needs as many labels as measures, and at least one")
    # Round so that float noise cannot reorder equal measures; equal measures share a level.
    rounded = np.round(np.asarray(measures, dtype=float), 6)
    values, group = np.unique(rounded, return_inverse=True)
    m, k = len(values), len(LEVELS)
    counts = np.zeros((m, k))  # counts[i, a]: labels of level a+1 among the pairs with the i-th value
    np.add.at(counts, (group, np.asarray(labels, dtype=np.int64) - 1), 1)
    n = counts.sum()
    levels = np.arange(k, dtype=float)
    weights = np.subtract.outer(levels, levels) ** 2 / (k - 1) ** 2  # weights[a, b]: label a, level b
    # Prefix sums over groups: disagreement weight of giving groups [0, i) level b, and their sizes.
    cost = np.vstack([np.zeros(k), np.cumsum(counts @ weights, axis=0)])
    size = np.concatenate([[0.0], np.cumsum(counts.sum(1))])
    chance_rate = (counts.sum(0) @ weights) / n  # chance disagreement per pair given level b
    ratio = 0.0
    starts = _best_starts(cost, size, chance_rate, ratio)
    for _ in range(100):
        observed = sum(cost[starts[b + 1], b] - cost[starts[b], b] for b in range(k))
        chance = sum((size[starts[b + 1]] - size[starts[b]]) * chance_rate[b] for b in range(k))
        if chance <= 0:
            break  # one label only: every placement is as good (kappa undefined); keep the lowest
        new = float(observed / chance)
        if new >= ratio - 1e-12 and ratio > 0:
            break
        ratio = new
        starts = _best_starts(cost, size, chance_rate, ratio)
    out: list[float | None] = []
    for p in starts[1:k]:
        if p == m:
            out.append(None)  # no fitted value reaches this level
        elif p == 0:
            out.append(-1.0)  # every fitted value is at this level or above: from the bottom of the scale
        else:
            out.append(round(float(values[p - 1] + values[p]) / 2, 6))
    return tuple(out)


def _best_starts(cost: Any, size: Any, chance_rate: Any, ratio: float) -> list[int]:
    """The band starts ``[0, p2, p3, p4, p5, m]`` minimising ``observed - ratio * chance`` (see
    :func:`fit_cuts`): band b of groups ``[p, q)`` costs ``a[q, b] - a[p, b]``, so the best start of each band
    given its end is a running minimum."""
    import numpy as np

    k = cost.shape[1]
    m = cost.shape[0] - 1
    a = cost - ratio * size[:, None] * chance_rate[None, :]
    reach = np.full(m + 1, np.inf)
    reach[0] = 0.0  # the first band starts at the bottom
    index = np.arange(m + 1)
    choices = []
    for b in range(k):
        h = reach - a[:, b]
        running = np.minimum.accumulate(h)
        # the first position of each running minimum: where h sets a new (strictly lower) minimum
        new = np.concatenate([[True], h[1:] < running[:-1]])
        choices.append(np.maximum.accumulate(np.where(new, index, 0)))
        reach = running + a[:, b]
    starts = [m]
    for b in range(k - 1, -1, -1):
        starts.append(int(choices[b][starts[-1]]))
    return starts[::-1]
