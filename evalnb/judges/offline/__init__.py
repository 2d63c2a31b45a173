"""The offline judges, and how they are measured: no model server, no API key, nothing sent anywhere.

Two judges score judged checks on this machine. :class:`HeuristicJudge` (``judge="heuristic"``) reads word
statistics; it is labelled ``heuristic (not an LLM)``. :class:`EmbeddingJudge` (``judge="embedding"``, the
``offline-judge`` extra) scores Similarity and Relevance from wordllama sentence embeddings (:func:`cosines`),
Similarity also from the facts of the expected response an answer states or contradicts (numbers with their
units, names, yes or no, a negated rule); its cut points onto 1-5 ship as data (``calibration.json`` here,
:func:`load_calibration`), fitted on the ``fit`` half of labelled pairs, and it hands the other checks to the
heuristic.

The labelled pairs (``evalnb/examples/labels/pairs.csv``) measure a judge: :func:`read_pairs` reads them,
:func:`judge_pairs` runs a judge on them through ``evalnb.run``, :func:`measure` gives its agreement with the
labels of the held-out ``test`` half (exact share, quadratic kappa, Spearman, bootstrap intervals),
:func:`compare_judges` does so for several judges, :func:`kappa_gains` says by how much one beats another.
``python -m evalnb.judges.offline.fitting --check`` confirms the shipped cut points are a refit of the labels.

Neither offline judge is good enough to gate a release on its own: they are cheap smoke tests. Measure a model
judge the same way (``measure(evalnb.judges.OpenAIJudge(...))``).

Example::

    from evalnb.judges.offline import compare_judges, markdown_table

    print(markdown_table(compare_judges()))   # judge x check agreement with the labels, with intervals
"""

from __future__ import annotations

from evalnb._deprecation import Renamed, module_getattr
from evalnb._lazy import homes
from evalnb.judges.offline import _calibration
from evalnb.judges.offline._calibration import Calibration
from evalnb.judges.offline._embedding import EmbeddingJudge, Reading, cosines, read
from evalnb.judges.offline._heuristic import HeuristicJudge
from evalnb.judges.offline._labels import (
    compare_judges,
    judge_pairs,
    kappa_gains,
    labels_frame,
    markdown_table,
    measure,
    read_pairs,
)

__all__ = [
    "Calibration",
    "EmbeddingJudge",
    "HeuristicJudge",
    "Reading",
    "compare_judges",
    "cosines",
    "judge_pairs",
    "kappa_gains",
    "labels_frame",
    "load_calibration",
    "markdown_table",
    "measure",
    "read",
    "read_pairs",
]


def load_calibration() -> Calibration:
    """The embedding judge's shipped calibration (``calibration.json``): per check, the cut points of its measure
    onto 1-5, and what they were fitted on.

    Example::

        load_calibration().cuts["Similarity"]
    """
    return _calibration.load()


# docs/extending.md, Deprecations: the old class name keeps working with a warning
__getattr__ = module_getattr(
    __name__,
    {
        "Heuristic": Renamed(
            "evalnb.judges.offline.Heuristic",
            "evalnb.judges.offline.HeuristicJudge",
            target=lambda: HeuristicJudge,
        )
    },
)

homes(__name__, globals(), __all__)  # reprs and docs name the public path
