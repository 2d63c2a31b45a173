"""The public human-labelled sets the offline judges are fitted and measured on, read from a checkout.

They live in the repository's ``data/public/`` (each folder's ``SOURCE.md`` gives provenance and licence), not
in the package or its wheel: none of them has a permissive licence. Only developer tools read them: the
calibration fit (``python -m evalnb.judges.offline.fitting``), ``benchmarks/judge_agreement.py``, the tests and notebook
04. What a run needs (the fitted cut points) ships as package data (``calibration.json``).

* STS Benchmark (``sts("train" | "dev" | "test")``): sentence pairs graded 0-5 by people. The calibration of
  Similarity is fitted on ``train`` only; ``dev`` is for choices; ``test`` only measures.
* SICK trial (``sick()``): sentence pairs with 1-5 relatedness (497 distinct pairs).
* WikiQA dev (``wikiqa()``): question / candidate-sentence pairs labelled 1 when the sentence answers the question.

The rubric's 1-5 level of an STS grade (:func:`sts_level`) matches the two scales' anchors: STS 5 "completely
equivalent", 4 "mostly equivalent", 3 "roughly equivalent, some important information differs" are the rubric's
5, 4 and 3; STS 2 "not equivalent but share some details" and 1 "not equivalent but on the same topic" are the
rubric's 2 "the same topic, but the key facts are missing or different"; STS 0 "on different topics" is its 1.
A mean grade takes the nearest anchor (``0.5``, ``2.5``, ``3.5``, ``4.5`` start levels 2 to 5).

Example::

    train = sts("train")
    train.assign(level=sts_level(train["score"]))["level"].value_counts().sort_index()
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FILES", "data_root", "digest", "sick", "sick_level", "sts", "sts_level", "wikiqa"]

FILES = {
    "sts-train": "stsbenchmark/sts-train.csv",
    "sts-dev": "stsbenchmark/sts-dev.csv",
    "sts-test": "stsbenchmark/sts-test.csv",
    "sick-trial": "sick/SICK_trial.txt",
    "wikiqa-dev": "wikiqa/wikiqa-dev.tsv",
}
"""Each set's file under ``data/public/``."""

STS_ANCHORS = (0.5, 2.5, 3.5, 4.5)
"""The STS grades at which the rubric's levels 2, 3, 4 and 5 start (see the module docstring)."""


def data_root(root: str | Path | None = None) -> Path:
    """The ``data/public`` folder of the checkout this evalnb was imported from (or ``root``).

    Raises:
        ConfigError: when the folder is not there (an installed wheel has no public data).
    """
    if root is None:
        # evalnb/judges/offline/ of a checkout: the repository is three folders up
        root = Path(__file__).resolve().parents[3] / "data" / "public"
    path = Path(root)
    if not path.is_dir():
        raise ConfigError(
            f"the public human-labelled sets are not at {path}: they live in the evalnb repository's data/public/ "
            "(never in the installed package); run this from a checkout, or pass root="
        )
    return path


def _file(name: str, root: str | Path | None) -> Path:
    path = data_root(root) / FILES[name]
    if not path.is_file():
        raise ConfigError(f"{FILES[name]} is missing from {data_root(root)}: see data/public/README.md")
    return path


def digest(name: str, root: str | Path | None = None) -> str:
    """The sha256 of a set's file (``"sts-train"``, ...), as its ``SOURCE.md`` lists it."""
    return hashlib.sha256(_file(name, root).read_bytes()).hexdigest()


def sts(split: str, *, root: str | Path | None = None) -> pd.DataFrame:
    """One STS Benchmark split: ``genre, file, year, sid, score, sentence1, sentence2`` (score 0-5).

    The files are tab-separated without quoting (sentences contain ``"``): read by splitting on tabs, as their
    ``SOURCE.md`` says.

    Raises:
        ConfigError: for a split other than train, dev or test, or a missing file.
    """
    import pandas as pd

    if split not in ("train", "dev", "test"):
        raise ConfigError(f"the STS Benchmark has the splits train, dev and test, not {split!r}")
    rows = []
    with _file(f"sts-{split}", root).open(encoding="utf-8") as handle:
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            rows.append((*fields[:4], float(fields[4]), fields[5], fields[6]))
    columns = ["genre", "file", "year", "sid", "score", "sentence1", "sentence2"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({c: "string" for c in columns if c != "score"})


def sick(*, root: str | Path | None = None) -> pd.DataFrame:
    """The SICK trial pairs, one row per distinct ``pair_id`` (the stored copy repeats one):
    ``pair_id, sentence_a, sentence_b, score, entailment`` (relatedness 1-5)."""
    import pandas as pd

    frame = pd.read_csv(_file("sick-trial", root), sep="\t", quoting=3, dtype=str, keep_default_na=False)
    frame = frame.drop_duplicates("pair_ID").reset_index(drop=True)
    out = pd.DataFrame(
        {
            "pair_id": frame["pair_ID"],
            "sentence_a": frame["sentence_A"],
            "sentence_b": frame["sentence_B"],
            "score": pd.to_numeric(frame["relatedness_score"]),
            "entailment": frame["entailment_judgment"],
        }
    )
    return out.astype({c: "string" for c in out.columns if c != "score"})


def wikiqa(*, root: str | Path | None = None) -> pd.DataFrame:
    """The WikiQA filtered dev pairs: ``qid, question, answer, label`` (1: the sentence answers the question)."""
    import pandas as pd

    frame = pd.read_csv(_file("wikiqa-dev", root), sep="\t", quoting=3, dtype=str, keep_default_na=False)
    frame["label"] = pd.to_numeric(frame["label"]).astype("Int64")
    return frame.astype({"qid": "string", "question": "string", "answer": "string"})


def sts_level(score: pd.Series) -> pd.Series:
    """The rubric's 1-5 level of STS grades (0-5), by the anchors of :data:`STS_ANCHORS`.

    Example::

        sts_level(pd.Series([0.0, 0.4, 1.0, 2.4, 2.5, 3.8, 4.6])).tolist()
        # [1, 1, 2, 2, 3, 4, 5]
    """
    level = 1 + sum((score >= a).astype(int) for a in STS_ANCHORS)
    return level.astype("Int64")


def sick_level(score: pd.Series) -> pd.Series:
    """The nearest 1-5 level of SICK relatedness (halves up: 3.5 is 4)."""
    import numpy as np

    return (np.floor(score.astype(float) + 0.5)).clip(1, 5).astype("Int64")
