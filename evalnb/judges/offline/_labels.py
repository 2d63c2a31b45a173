"""The labelled judged pairs (``labels/pairs.csv`` of :mod:`evalnb.examples`): read them, judge them, measure a
judge against them.

Each row is one answer labelled for one check (see ``evalnb/examples/labels/RULES.md``); ``split`` says whether it may
calibrate a judge (``fit``) or only measure one (``test``). :func:`pairs_suite` turns the rows into a suite of
one case per answer, so a judge is measured through ``evalnb.run`` exactly as it scores real runs.

Example::

    pairs = read_pairs()
    table = measure(evalnb.judges.HeuristicJudge(), pairs, split="test")
    table[["check", "n", "kappa", "kappa_low", "kappa_high"]]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result
    from evalnb.suite import Suite

__all__ = [
    "COLUMNS",
    "compare_judges",
    "judge_pairs",
    "kappa_gains",
    "labels_frame",
    "markdown_table",
    "measure",
    "offline_judges",
    "pairs_path",
    "pairs_suite",
    "read_pairs",
]

COLUMNS = {
    "pair_id": "string",
    "split": "string",
    "check": "string",
    "value": "Int64",
    "kind": "string",
    "question_id": "string",
    "question": "string",
    "expected": "string",
    "context": "string",
    "answer": "string",
    "labeller": "string",
    "note": "string",
}


def pairs_path() -> Path:
    """The shipped labelled pairs (``evalnb/examples/labels/pairs.csv``, package data), on disk."""
    from evalnb._resources import resource

    return resource("labels/pairs.csv")


def read_pairs(path: str | Path | None = None) -> pd.DataFrame:
    """The labelled pairs with the dtypes of :data:`COLUMNS` (empty cells as NA).

    Raises:
        ConfigError: when the file is missing or lacks a column.
    """
    import pandas as pd

    p = Path(path) if path is not None else pairs_path()
    if not p.is_file():
        raise ConfigError(f"no labelled pairs at {p}")
    frame = pd.read_csv(p, dtype=str, keep_default_na=False)
    missing = sorted(set(COLUMNS) - set(frame.columns))
    if missing:
        raise ConfigError(f"{p.name} lacks column(s) {missing}")
    frame = frame[list(COLUMNS)].replace({"": pd.NA})
    frame["value"] = pd.to_numeric(frame["value"])
    return frame.astype(COLUMNS)


def _answer_id(pair_id: str) -> str:
    return pair_id.rsplit("/", 1)[0]


def pairs_suite(pairs: pd.DataFrame) -> Suite:
    """One case per labelled answer (id ``question_id.n``), its turn carrying the checks it was labelled for."""
    import pandas as pd

    from evalnb.suite import Case, CheckSpec, JudgedMetricCheck, Suite, Turn

    cases = []
    frame = pairs.assign(answer_id=[_answer_id(p) for p in pairs["pair_id"]])
    for answer_id, group in frame.groupby("answer_id", sort=False):
        first = group.iloc[0]
        checks: list[CheckSpec] = [
            JudgedMetricCheck(type=str(c))  # type: ignore[arg-type]
            for c in dict.fromkeys(group["check"])
        ]
        turn = Turn(
            prompt=str(first["question"]),
            expected=None if pd.isna(first["expected"]) else str(first["expected"]),
            context=None if pd.isna(first["context"]) else str(first["context"]),
            checks=checks,
            meta={"answer": str(first["answer"])},
        )
        cases.append(Case(id=str(answer_id), name=str(answer_id), category=str(first["kind"]), turns=[turn]))
    return Suite(name="labelled-pairs", format="dataset-json", cases=cases)


def judge_pairs(pairs: pd.DataFrame, judge: Any, *, concurrency: int = 8) -> Result:
    """Run ``judge`` on the labelled answers (the "agent" answers each case with its labelled answer)."""
    from evalnb import _hooks
    from evalnb.agents._base import Request

    # The runner sits above the judges: it is reached through the slot evalnb/__init__.py fills.
    run = _hooks.implementation("run")
    suite = pairs_suite(pairs)
    answers = {case.id: case.turns[0].meta["answer"] for case in suite.cases}

    def labelled(request: Request) -> str:
        return str(answers[request.case])

    return run(suite, labelled, judge=judge, concurrency=concurrency, progress=False)


def labels_frame(pairs: pd.DataFrame) -> pd.DataFrame:
    """The labels shaped like ``result.scores`` (``case_id``, ``turn``, ``check``, ``value``) for ``agreement``."""
    return pairs.assign(case_id=[_answer_id(p) for p in pairs["pair_id"]], turn=0)[
        ["case_id", "turn", "check", "value", "split", "kind"]
    ]


def measure(
    judge: Any,
    pairs: pd.DataFrame | None = None,
    *,
    split: str | None = "test",
    interval: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    result: Result | None = None,
) -> pd.DataFrame:
    """Per check: agreement of ``judge`` with the labels of ``split`` (``None``: all rows), with intervals.

    Args:
        judge: the judge to measure (anything ``evalnb.run`` takes as ``judge=``).
        pairs: the labelled pairs (default :func:`read_pairs`).
        split: ``"test"`` (the held-apart half, the default), ``"fit"``, or None for both.
        interval: the confidence of the bootstrap intervals.
        resamples: bootstrap resamples (pairs resampled with replacement, per check).
        seed: the bootstrap's seed (the table is the same every time).
        result: the judge's result on these pairs, when already computed (:func:`judge_pairs`).

    Returns:
        ``evalnb.judges.agreement``'s table with ``*_low`` / ``*_high`` interval columns, and ``judge``.
    """
    from evalnb.judges._agreement import agreement
    from evalnb.judges._scoring import judge_label

    pairs = read_pairs() if pairs is None else pairs
    if split is not None:
        pairs = pairs[pairs["split"] == split]
    if result is None:
        result = judge_pairs(pairs, judge)
    table = agreement(
        result.scores, labels_frame(pairs), interval=interval, resamples=resamples, seed=seed, on="check"
    )
    return table.assign(judge=judge_label(judge) if judge is not None else "")


def offline_judges() -> dict[str, Any]:
    """The offline judges, by short name: ``heuristic`` and ``embedding``."""
    from evalnb.judges.offline._embedding import EmbeddingJudge
    from evalnb.judges.offline._heuristic import HeuristicJudge

    return {"heuristic": HeuristicJudge(), "embedding": EmbeddingJudge()}


def compare_judges(
    judges: dict[str, Any] | None = None, pairs: pd.DataFrame | None = None, *, split: str | None = "test"
) -> pd.DataFrame:
    """:func:`measure` for several judges (the offline ones by default), one table: judge x check."""
    import pandas as pd

    judges = offline_judges() if judges is None else judges
    pairs = read_pairs() if pairs is None else pairs
    frames = [measure(j, pairs, split=split).assign(judge=name) for name, j in judges.items()]
    return pd.concat(frames, ignore_index=True)


def kappa_gains(
    judges: dict[str, Any] | None = None,
    pairs: pd.DataFrame | None = None,
    *,
    split: str | None = "test",
    interval: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Per check: how much higher the first judge's quadratic kappa with the labels is than the second's
    (the embedding judge over the heuristic by default), on the same pairs, with a paired bootstrap interval
    (``kappa_gain`` of ``evalnb/judges/_agreement.py``).

    Returns:
        One row per check both judges scored: ``check``, ``n``, ``gain``, ``gain_low``, ``gain_high``, and
        ``judges`` (``"embedding - heuristic"``).

    Example::

        kappa_gains().set_index("check").loc["Similarity", ["n", "gain", "gain_low", "gain_high"]]
    """
    import pandas as pd

    from evalnb.judges._agreement import kappa_gain

    if judges is None:
        offline = offline_judges()
        judges = {"embedding": offline["embedding"], "heuristic": offline["heuristic"]}
    if len(judges) != 2:
        raise ValueError(f"kappa_gains compares two judges, got {len(judges)}")
    pairs = read_pairs() if pairs is None else pairs
    if split is not None:
        pairs = pairs[pairs["split"] == split]
    labels = labels_frame(pairs)[["case_id", "turn", "check", "value"]]
    keys = ["case_id", "turn", "check"]
    (a, judge_a), (b, judge_b) = judges.items()
    scored = [judge_pairs(pairs, j).scores[[*keys, "value"]] for j in (judge_a, judge_b)]
    side = labels.merge(scored[0], on=keys, suffixes=("", "_a")).merge(
        scored[1], on=keys, suffixes=("", "_b")
    )
    side = side.dropna(subset=["value", "value_a", "value_b"])
    rows = []
    for check, group in side.groupby("check", sort=True):
        gain = kappa_gain(
            group["value"].to_numpy(dtype=float),
            group["value_a"].to_numpy(dtype=float),
            group["value_b"].to_numpy(dtype=float),
            [1.0, 2.0, 3.0, 4.0, 5.0],
            interval=interval,
            resamples=resamples,
            seed=seed,
        )
        rows.append({"check": str(check), **gain, "judges": f"{a} - {b}"})
    columns = {
        "check": "string",
        "n": "Int64",
        "gain": "float64",
        "gain_low": "float64",
        "gain_high": "float64",
    }
    return pd.DataFrame(rows, columns=[*columns, "judges"]).astype({**columns, "judges": "string"})


def markdown_table(table: pd.DataFrame) -> str:
    """The agreement table as Markdown (what the README shows): n, exact, kappa and Spearman with intervals."""

    def cell(row: Any, stat: str) -> str:
        low, high = row[f"{stat}_low"], row[f"{stat}_high"]
        point = row[stat]
        if point != point:  # NaN
            return "n/a"
        return f"{point:.2f} [{low:.2f}, {high:.2f}]"

    lines = [
        "| check | judge | n | exact share | quadratic kappa | Spearman |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in table.sort_values(["check", "judge"], kind="stable").to_dict("records"):
        lines.append(
            f"| {row['check']} | {row['judge']} | {row['n']} | {cell(row, 'exact')} | "
            f"{cell(row, 'kappa')} | {cell(row, 'spearman')} |"
        )
    return "\n".join(lines)
