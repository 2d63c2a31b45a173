"""The calibration of the embedding judge: cut points that map its measure of a pair onto the rubric's 1-5 scale.

The measure (:func:`evalnb.judges.offline._embedding.read`) says how close an answer is: for Relevance the cosine of
the answer and the question, for Similarity a fact-checked similarity to the expected response (a
contradicted fact at -1, below every cut). A rubric level says how good an answer is. The mapping between
them is learnt from people's (here: one labeller's) judgments, on the ``fit`` half of
``evalnb/examples/labels/pairs.csv`` only:

* per check (Similarity: response vs expected response; Relevance: response vs question), the labelled
  answers are sorted by their measure;
* four cut points split the axis into the bands of levels 1..5 (``level = 1 + number of cuts at or below the
  measure``); they are the placement with the highest quadratic-weighted kappa against the labels, found by
  trying every placement in the gaps between the sorted values (ties share a level; a cut lies half-way
  between the neighbouring values; the first best placement wins, so the fit is deterministic). Kappa, not
  squared error: the least-squares step function pulls every answer toward the middle of the scale (fitted on
  the same rows it never gave Relevance more than 3), which is the regression to the mean a judge must not
  have: a judge has to use the scale as people do;
* a level that the fitted function never gives has no band: its cut coincides with the next one, and a
  level above every fitted value is unreachable (its cut is ``null`` in the file).

The fitted cuts ship as data (``calibration.json`` beside this module): a run reads them and never refits.
``python -m evalnb.judges.offline.fitting`` refits them from the labels and writes the file;
``python -m evalnb.judges.offline.fitting --check`` exits 1 when the shipped file differs from a refit (a test runs
it, so the data cannot drift from the labels silently).

Example::

    cal = load()
    cal.score("Similarity", 0.9), cal.score("Similarity", 0.05)
    # (5, 1)
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


@dataclass(frozen=True)
class Calibration:
    """Cut points per check: ``cuts[check] = (c2, c3, c4, c5)``, the cosine at which level k starts.

    ``None`` marks a level that no cosine reaches.
    """

    cuts: Mapping[str, tuple[float | None, ...]]
    source: Mapping[str, Any]

    def score(self, check: str, cosine: float) -> int:
        """The 1-5 level of a cosine for ``check``.

        Raises:
            KeyError: for a check the calibration does not cover.
        """
        cuts = self.cuts[check]
        return 1 + sum(1 for c in cuts if c is not None and cosine >= c)

    def band(self, check: str, level: int) -> tuple[float | None, float | None]:
        """The cosines ``[low, high)`` of a level (None: unbounded below / above, or unreachable)."""
        cuts = (None, *self.cuts[check], None)
        return cuts[level - 1], cuts[level]

    def describe(self, check: str, level: int) -> str:
        """The band of a level in words: ``level 4 for cosine 0.55 to 0.71`` (Relevance) or ``level 4 for
        similarity 0.42 to 0.48`` (Similarity: its measure is not a plain cosine)."""
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


def fit_cuts(cosines: Sequence[float], labels: Sequence[int]) -> tuple[float | None, ...]:
    """The cut points of the monotone 1-5 step function of cosine with the highest quadratic kappa against
    the labels (see the module docstring).

    Every placement of the four cuts in the gaps between the distinct fitted cosines is tried (numpy, a few
    hundred thousand placements for sixty pairs); among equally good ones the first in order (lowest cuts)
    wins, so the fit is deterministic.

    Example::

        fit_cuts([0.1, 0.2, 0.5, 0.6, 0.9], [1, 1, 3, 4, 5])
        # (0.35, 0.35, 0.55, 0.75)
    """
    import itertools

    import numpy as np

    if len(cosines) != len(labels) or not cosines:
        raise ValueError("fit_cuts needs as many labels as cosines, and at least one")
    # Round so that float noise cannot reorder equal cosines; equal cosines share a level.
    values = sorted(set(round(float(c), 6) for c in cosines))
    m, k = len(values), len(LEVELS)
    group = {c: i for i, c in enumerate(values)}
    counts = np.zeros((m, k))  # counts[i, a]: labels of level a+1 among the pairs with the i-th cosine
    for c, v in zip(cosines, labels, strict=True):
        counts[group[round(float(c), 6)], int(v) - 1] += 1
    n = counts.sum()
    levels = np.arange(k, dtype=float)
    weights = np.subtract.outer(levels, levels) ** 2 / (k - 1) ** 2  # weights[a, b]: label a, level b
    # Prefix sums over groups: disagreement weight of giving groups [0, i) level b, and their sizes.
    cost = np.vstack([np.zeros(k), np.cumsum(counts @ weights, axis=0)])
    size = np.concatenate([[0.0], np.cumsum(counts.sum(1))])
    row = counts.sum(0)  # label marginals
    # A placement (p2 <= p3 <= p4 <= p5) gives level b to the groups in [p_b, p_{b+1}) (p1 = 0, p6 = m).
    cuts = np.array(list(itertools.combinations_with_replacement(range(m + 1), k - 1)), dtype=np.int64)
    bounds = np.hstack([np.zeros((len(cuts), 1), np.int64), cuts, np.full((len(cuts), 1), m, np.int64)])
    observed = np.zeros(len(cuts))
    chance = np.zeros(len(cuts))
    for b in range(k):
        lo, hi = bounds[:, b], bounds[:, b + 1]
        observed += cost[hi, b] - cost[lo, b]
        chance += (size[hi] - size[lo]) * (row @ weights[:, b]) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(chance > 0, 1 - observed / chance, -np.inf)
    best = cuts[int(np.argmax(kappa))]
    out: list[float | None] = []
    for p in best.tolist():
        if p == m:
            out.append(None)  # no fitted cosine reaches this level
        elif p == 0:
            out.append(-1.0)  # every fitted cosine is at this level or above: from the bottom of the scale
        else:
            out.append(round((values[p - 1] + values[p]) / 2, 6))
    return tuple(out)
