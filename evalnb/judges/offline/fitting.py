"""Fit the embedding judge's calibration on human grades, and check the shipped one.

Similarity is fitted on the STS Benchmark train split (``data/public/stsbenchmark/sts-train.csv`` of the
repository, read by :mod:`evalnb.judges.offline._public`; never the dev or test split), Relevance on the ``fit`` half
of the shipped labels (``evalnb/examples/labels/pairs.csv``). ``python -m evalnb.judges.offline.fitting`` refits the cut
points (:func:`evalnb.judges.offline._calibration.fit_cuts`) and writes ``evalnb/judges/offline/calibration.json``; ``--check``
exits 1 when the shipped file differs from a refit. Both need a checkout (the public sets are not in the
package). Runs never call this: they read the shipped file.

Example::

    fit().cuts["Relevance"]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from evalnb._files import atomic_write
from evalnb.errors import ConfigError
from evalnb.judges.offline._calibration import FILE, Calibration, fit_cuts
from evalnb.judges.offline._embedding import CONTRADICTED_CAP, MODEL, TASKS, read
from evalnb.judges.offline._labels import read_pairs

__all__ = ["LABELS", "fit", "main"]

LABELS = "evalnb/examples/labels/pairs.csv"
"""Where the labels the calibration is fitted on live, as the calibration's ``source`` names them (the same in
every installation: the file of the package, not of one machine)."""


STS_TRAIN = "data/public/stsbenchmark/sts-train.csv"
"""The file Similarity's cuts are fitted on, as the calibration's ``fitted_on`` names it (a file of the
repository, not of the package)."""


def fit(pairs: Any = None, *, public: Any = None) -> Calibration:
    """Fit the cut points: Similarity on the STS Benchmark train split, Relevance on the ``fit`` rows of the
    labelled pairs.

    Args:
        pairs: the labelled pairs (default :func:`~evalnb.judges.offline._labels.read_pairs`).
        public: the ``data/public`` folder (default: the checkout's, :func:`evalnb.judges.offline._public.data_root`).
    """
    from evalnb.judges.offline import _public

    frame = read_pairs() if pairs is None else pairs
    frame = frame[frame["split"] == "fit"]
    rows = frame[frame["check"] == "Relevance"]
    readings = read(
        "Relevance", list(rows["answer"]), questions=list(rows["question"]), expecteds=list(rows["expected"])
    )
    cuts: dict[str, tuple[float | None, ...]] = {
        "Relevance": fit_cuts([r.value for r in readings], [int(v) for v in rows["value"]])
    }
    checks: dict[str, Any] = {
        "Relevance": {
            "fitted_on": f"{LABELS}, split fit",
            "n": len(rows),
            "labels": "one labeller's 1-5 levels (evalnb/examples/labels/README.md)",
            "compares": "the response with the question",
            "measure": "cosine: of the response and the question",
        }
    }
    # Similarity: the expected response is the first sentence, the answer the second, no question.
    train = _public.sts("train", root=public)
    readings = read(
        "Similarity",
        list(train["sentence2"]),
        questions=[""] * len(train),
        expecteds=list(train["sentence1"]),
    )
    cuts["Similarity"] = fit_cuts(
        [r.value for r in readings], [int(v) for v in _public.sts_level(train["score"])]
    )
    checks["Similarity"] = {
        "fitted_on": f"{STS_TRAIN} (STS Benchmark train split, sha256 {_public.digest('sts-train', public)})",
        "n": len(train),
        "labels": "people's 0-5 similarity grades placed on the rubric's levels at the grades 0.5, 2.5, 3.5 "
        "and 4.5 (evalnb.judges.offline._public.sts_level)",
        "compares": "the response with the expected response",
        "measure": "cosine: of the response and the expected response, the question's words taken out of both",
        "contradicted": f"a contradicted fact of the expected response caps the level at {CONTRADICTED_CAP}",
    }
    source = {
        "model": MODEL,
        "method": "monotone step function of the check's measure with the highest quadratic kappa on the "
        "fitted pairs (exact); cuts half-way between neighbouring fitted values; level = 1 + number of cuts at "
        "or below the measure",
        "checks": {check: checks[check] for check in TASKS},
    }
    return Calibration(cuts={check: cuts[check] for check in TASKS}, source=source)


def target_file() -> Path:
    """Where the shipped calibration lives (``evalnb/judges/offline/calibration.json``): a file of the package, which
    this developer tool rewrites in place (runs read it with importlib.resources, :func:`calibration.load`)."""
    found = resources.files("evalnb.judges.offline").joinpath(FILE)
    if not isinstance(found, Path):
        raise ConfigError("the calibration can be refitted only in an unzipped evalnb (a checkout)")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evalnb.judges.offline.fitting [--check]``: refit and write, or compare with the shipped file."""
    args = list(sys.argv[1:] if argv is None else argv)
    fitted = fit().to_dict()
    target = target_file()
    text = json.dumps(fitted, indent=2) + "\n"
    if "--check" in args:
        shipped = target.read_text(encoding="utf-8") if target.is_file() else ""
        if shipped != text:
            print(
                f"{target.name} differs from a refit on the labels: run python -m evalnb.judges.offline.fitting"
            )
            return 1
        print(f"{target.name} matches a refit on the labels")
        return 0
    atomic_write(target, text)
    print(f"wrote {target.name}: " + ", ".join(f"{c} cuts {v['cuts']}" for c, v in fitted["checks"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
