"""Where the README names the labelled-pairs functions (``evalnb.judges.labels.compare_judges()``); their home
is :mod:`evalnb.judges.offline`, and these are the same objects.

Example::

    from evalnb.judges.labels import compare_judges
    compare_judges()[["judge", "check", "n", "kappa"]]
"""

from evalnb._lazy import homes
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
    "compare_judges",
    "judge_pairs",
    "kappa_gains",
    "labels_frame",
    "markdown_table",
    "measure",
    "read_pairs",
]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
