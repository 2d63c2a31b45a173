"""Fit the embedding judge's calibration on the ``fit`` half of the labelled pairs, and check the shipped one.

``python -m evalnb.judges.offline.fitting`` refits the cut points (:func:`evalnb.judges.offline._calibration.fit_cuts`) from
the shipped labels (``evalnb/examples/labels/pairs.csv``) and writes ``evalnb/judges/offline/calibration.json``; ``--check`` exits 1 when the shipped
file differs from a refit. Runs never call this: they read the shipped file.

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
from evalnb.judges.offline._embedding import CONTRADICTED, FACT_BONUS, MODEL, TASKS, read
from evalnb.judges.offline._labels import read_pairs

__all__ = ["LABELS", "fit", "main"]

LABELS = "evalnb/examples/labels/pairs.csv"
"""Where the labels the calibration is fitted on live, as the calibration's ``source`` names them (the same in
every installation: the file of the package, not of one machine)."""


def fit(pairs: Any = None) -> Calibration:
    """Fit the cut points of Similarity and Relevance on the ``fit`` rows of the labelled pairs."""
    frame = read_pairs() if pairs is None else pairs
    frame = frame[frame["split"] == "fit"]
    cuts: dict[str, tuple[float | None, ...]] = {}
    checks: dict[str, Any] = {}
    for check in TASKS:
        rows = frame[frame["check"] == check]
        readings = read(
            check, list(rows["answer"]), questions=list(rows["question"]), expecteds=list(rows["expected"])
        )
        cuts[check] = fit_cuts([r.value for r in readings], [int(v) for v in rows["value"]])
        checks[check] = {
            "n": len(rows),
            "compares": f"the response with {_WITH[check]}",
            "measure": _MEASURE[check],
        }
    source = {
        "model": MODEL,
        "labels": LABELS,
        "split": "fit",
        "method": "monotone step function of the check's measure with the highest quadratic kappa on the fit "
        "rows (every placement of the cuts tried); cuts half-way between neighbouring fitted values; level = 1 "
        "+ number of cuts at or below the measure",
        "checks": checks,
    }
    return Calibration(cuts=cuts, source=source)


_WITH = {"Similarity": "the expected response", "Relevance": "the question"}
_MEASURE = {
    "Similarity": "similarity: the mean of the cosine without the question's words and the recall of the "
    f"expected response's content words, +{FACT_BONUS:g} when a fact of the expected response is stated, "
    f"{CONTRADICTED:g} when one is contradicted",
    "Relevance": "cosine",
}


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
