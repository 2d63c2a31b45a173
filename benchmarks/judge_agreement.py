"""How far the offline judges agree with people: the embedding judge, the heuristic and token F1 against public
human grades (STS Benchmark, SICK, WikiQA) and the project's own held-out labelled pairs.

    python benchmarks/judge_agreement.py [--test] [--sets sts-train,sts-dev,sick,wikiqa,pairs]
                                         [--resamples 2000] [--markdown]

Every judge score comes from the public API, as a user gets it: each set becomes a JSON dataset (the first
sentence the expected response, the second the answer; a neutral prompt, ``Paraphrase.``, that gives the judge
no words to take out), an agent answers each item with its sentence, and ``evalnb.run(path, agent,
judge="embedding")`` (or ``"heuristic"``) scores it; the ``value`` of each score row is the judge's 1-5 level.
Token F1 is the ``PartialMatch`` check of the same run. Per set and scorer it prints n, Spearman with the
people's grades and the quadratic-weighted kappa on the 1-5 levels (people's grades placed on the levels by
:func:`evalnb.judges.offline._public.sts_level` for STS, the nearest level for SICK; token F1 in bands of 0.2, as the
heuristic maps its shares), with 95% percentile bootstrap intervals over pairs. WikiQA (Relevance, a 0/1 label:
does the sentence answer the question) gets AUC and the point-biserial correlation instead, and the accuracy
and Cohen's kappa of the pass decision at the default threshold (level 3), with intervals from resampling
questions. Two reference rows show what the judge starts from: the embedding judge's measure without the fact
rule, and the model's plain cosine of the two texts.

The STS Benchmark **test** split is read only with ``--test``: the calibration was fitted on train, the design
chosen on dev, SICK and the project's fit pairs; test only measures. The public sets live in the repository's
``data/public/`` (their licences keep them out of the package), so this runs in a checkout.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path, and its http.py would shadow the standard library's
# http package: drop the folder, put the repository root there instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import evalnb  # noqa: E402
from evalnb.judges._agreement import bootstrap_intervals, quadratic_kappa, spearman  # noqa: E402
from evalnb.judges.offline import _public  # noqa: E402

PROMPT = "Paraphrase."
"""The neutral prompt of every public pair: the Similarity judge takes the question's words out of both texts,
and this one has no word a sentence of these sets would carry."""
LEVELS = [1.0, 2.0, 3.0, 4.0, 5.0]
SETS = ("sts-train", "sts-dev", "sick", "wikiqa", "pairs")


def f1_level(f1: pd.Series) -> pd.Series:
    """Token F1 (0-1) on the 1-5 scale in bands of 0.2 (as the heuristic maps a share)."""
    return (1 + np.minimum(4, np.floor(f1.astype(float) * 5 + 1e-9))).astype(float)


def similarity_pairs(name: str) -> pd.DataFrame:
    """A graded set as ``id, expected, answer, human, human_level``."""
    if name.startswith("sts-"):
        frame = _public.sts(name.removeprefix("sts-"))
        return pd.DataFrame(
            {
                "id": [f"{name}-{i:05d}" for i in range(len(frame))],
                "expected": frame["sentence1"],
                "answer": frame["sentence2"],
                "human": frame["score"],
                "human_level": _public.sts_level(frame["score"]).astype(float),
            }
        )
    frame = _public.sick()
    return pd.DataFrame(
        {
            "id": "sick-" + frame["pair_id"],
            "expected": frame["sentence_a"],
            "answer": frame["sentence_b"],
            "human": frame["score"],
            "human_level": _public.sick_level(frame["score"]).astype(float),
        }
    )


def run_similarity(pairs: pd.DataFrame, judge: str, folder: Path) -> pd.DataFrame:
    """The score rows of ``evalnb.run`` on the pairs as a JSON dataset (Similarity and PartialMatch)."""
    path = folder / f"{pairs['id'].iloc[0].rsplit('-', 1)[0]}-{judge}.json"
    items = [
        {"testId": i, "prompt": PROMPT, "expected_response": e}
        for i, e in zip(pairs["id"], pairs["expected"], strict=True)
    ]
    document = {
        "schemaVersion": "1.6.0",
        "metadata": {"name": path.stem},
        "default_evaluators": {"Similarity": {}, "PartialMatch": {}},
        "items": items,
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    answers = dict(zip(pairs["id"], pairs["answer"], strict=True))

    def agent(request: evalnb.Request) -> str:
        return str(answers[request.case])

    result = evalnb.run(path, agent, judge=judge, progress=False)
    return result.scores


def _row(
    data: str,
    check: str,
    scorer: str,
    score: np.ndarray,
    human: np.ndarray,
    levels: np.ndarray | None,
    resamples: int,
) -> dict[str, Any]:
    """n, Spearman (judge score against the people's grades) and quadratic kappa (on the 1-5 levels)."""
    out: dict[str, Any] = {"data": data, "check": check, "scorer": scorer, "n": len(score)}
    out["spearman"] = spearman(pd.Series(score), pd.Series(human))
    ci = bootstrap_intervals(score, human, None, resamples=resamples)
    out["spearman_low"], out["spearman_high"] = ci["spearman_low"], ci["spearman_high"]
    if levels is not None:
        out["kappa"] = quadratic_kappa(score, levels, LEVELS)
        ci = bootstrap_intervals(score, levels, LEVELS, resamples=resamples)
        out["kappa_low"], out["kappa_high"] = ci["kappa_low"], ci["kappa_high"]
    return out


def graded_rows(name: str, folder: Path, resamples: int) -> list[dict[str, Any]]:
    """The rows of one graded public set: the two judges and token F1, then the reference rows."""
    from evalnb.judges.offline._calibration import load
    from evalnb.judges.offline._embedding import cosines, read

    pairs = similarity_pairs(name)
    human, levels = pairs["human"].to_numpy(float), pairs["human_level"].to_numpy(float)
    rows = []
    for judge in ("embedding", "heuristic"):
        scores = run_similarity(pairs, judge, folder).set_index("case_id")
        sim = scores[scores["check"] == "Similarity"].loc[pairs["id"]]
        rows.append(_row(name, "Similarity", judge, sim["value"].to_numpy(float), human, levels, resamples))
        if judge == "embedding":
            rows[-1]["continuous_spearman"] = spearman(sim["weighted"].astype(float), pd.Series(human))
            f1 = scores[scores["check"] == "PartialMatch"].loc[pairs["id"], "value"].astype(float)
            f1_row = _row(name, "Similarity", "token F1", f1_level(f1).to_numpy(), human, levels, resamples)
            f1_row["continuous_spearman"] = spearman(f1, pd.Series(human))
    rows.append(f1_row)
    readings = read(
        "Similarity",
        list(pairs["answer"]),
        questions=[PROMPT] * len(pairs),
        expecteds=list(pairs["expected"]),
    )
    calibration = load()
    no_rule = np.array([calibration.score("Similarity", r.value) for r in readings], dtype=float)
    rows.append(
        _row(name, "Similarity", "embedding without the fact rule", no_rule, human, levels, resamples)
    )
    rows[-1]["contradicted"] = int(sum(r.contradicts for r in readings))
    rows[-1]["contradicted_human_mean"] = float(
        np.mean([h for h, r in zip(human, readings, strict=True) if r.contradicts])
    )
    rows[-1]["human_mean"] = float(human.mean())
    plain = cosines(list(pairs["answer"]), list(pairs["expected"]))
    rows.append(
        _row(name, "Similarity", "plain cosine (reference)", plain.astype(float), human, None, resamples)
    )
    return rows


def pairs_rows(resamples: int) -> list[dict[str, Any]]:
    """The project's own held-out labelled pairs (``evalnb/examples/labels/pairs.csv``, ``test`` split), and what
    the Similarity judge does with their fluent-but-wrong answers (the fact catches)."""
    from evalnb.checks import partial_match_f1
    from evalnb.judges.offline._labels import judge_pairs, labels_frame, read_pairs

    pairs = read_pairs()
    test = pairs[pairs["split"] == "test"]
    keys = ["case_id", "turn", "check"]
    rows = []
    for judge in ("embedding", "heuristic"):
        scored = judge_pairs(test, judge).scores
        side = scored.merge(labels_frame(test), on=keys, suffixes=("", "_label"))
        for check in ("Similarity", "Relevance"):
            part = side[side["check"] == check].dropna(subset=["value"])
            label = part["value_label"].to_numpy(float)
            rows.append(
                _row("pairs (held-out)", check, judge, part["value"].to_numpy(float), label, label, resamples)
            )
            if judge == "embedding" and check == "Similarity":
                wrong = part[part["kind"] == "fluent-wrong"]
                rows[-1]["fluent_wrong"] = len(wrong)
                rows[-1]["caught_as_contradictions"] = int(wrong["reason"].str.contains("contradicts").sum())
                rows[-1]["fluent_wrong_failing"] = int((~wrong["passed"].astype(bool)).sum())
                good = part[part["value_label"] >= 4]
                rows[-1]["labelled_4_5"] = len(good)
                rows[-1]["labelled_4_5_failing"] = int((~good["passed"].astype(bool)).sum())
    for check, other in (("Similarity", "expected"), ("Relevance", "question")):
        part = test[test["check"] == check]
        f1 = pd.Series(
            [partial_match_f1(a, str(o)) for a, o in zip(part["answer"], part[other], strict=True)]
        )
        label = part["value"].to_numpy(float)
        rows.append(
            _row("pairs (held-out)", check, "token F1", f1_level(f1).to_numpy(), label, label, resamples)
        )
    return rows


def _auc(score: np.ndarray, label: np.ndarray) -> float:
    """The area under the ROC curve (ties count half): the chance a positive outranks a negative."""
    ranks = pd.Series(score).rank().to_numpy()
    pos = label == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if not n_pos or not n_neg:
        return math.nan
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _binary(score: np.ndarray, label: np.ndarray) -> dict[str, float]:
    passed = (score >= 3).astype(float)
    agree = float((passed == label).mean())
    p_yes = passed.mean() * label.mean() + (1 - passed.mean()) * (1 - label.mean())
    return {
        "auc": _auc(score, label),
        "point_biserial": float(np.corrcoef(score, label)[0, 1]) if score.std() > 0 else math.nan,
        "accuracy": agree,
        "kappa_at_3": (agree - p_yes) / (1 - p_yes) if p_yes < 1 else math.nan,
        "pass_share": float(passed.mean()),
    }


def wikiqa_rows(folder: Path, resamples: int) -> list[dict[str, Any]]:
    """Relevance against WikiQA's answer labels; intervals from resampling questions (a question's candidates
    are one cluster)."""
    from evalnb.checks import partial_match_f1

    frame = _public.wikiqa()
    ids = [f"wikiqa-{i:05d}" for i in range(len(frame))]
    path = folder / "wikiqa.json"
    items = [{"testId": i, "prompt": q} for i, q in zip(ids, frame["question"], strict=True)]
    document = {
        "schemaVersion": "1.6.0",
        "metadata": {"name": "wikiqa"},
        "default_evaluators": {"Relevance": {}},
        "items": items,
    }
    path.write_text(json.dumps(document), encoding="utf-8")
    answers = dict(zip(ids, frame["answer"], strict=True))

    def agent(request: evalnb.Request) -> str:
        return str(answers[request.case])

    label = frame["label"].to_numpy(float)
    scores: dict[str, np.ndarray] = {}
    for judge in ("embedding", "heuristic"):
        s = evalnb.run(path, agent, judge=judge, progress=False).scores.set_index("case_id").loc[ids]
        scores[judge] = s["value"].to_numpy(float)
        if judge == "embedding":
            scores["embedding, continuous"] = s["weighted"].to_numpy(float)
    f1 = pd.Series([partial_match_f1(a, q) for a, q in zip(frame["answer"], frame["question"], strict=True)])
    scores["token F1"] = f1_level(f1).to_numpy()
    groups = frame.groupby("qid", sort=False).indices
    members = list(groups.values())
    rng = np.random.default_rng(0)
    draws = [
        np.concatenate([members[j] for j in rng.integers(0, len(members), len(members))])
        for _ in range(resamples)
    ]
    rows = []
    for scorer, score in scores.items():
        row: dict[str, Any] = {
            "data": "wikiqa-dev",
            "check": "Relevance",
            "scorer": scorer,
            "n": len(score),
            **_binary(score, label),
        }
        boot = pd.DataFrame([_binary(score[d], label[d]) for d in draws])
        for stat in ("auc", "point_biserial", "accuracy", "kappa_at_3"):
            low, high = np.nanpercentile(boot[stat], [2.5, 97.5])
            row[f"{stat}_low"], row[f"{stat}_high"] = float(low), float(high)
        rows.append(row)
    return rows


def cell(row: Any, stat: str) -> str:
    point = row.get(stat, math.nan)
    if point is None or point != point:
        return "n/a"
    low, high = row.get(f"{stat}_low", math.nan), row.get(f"{stat}_high", math.nan)
    return f"{point:.2f} [{low:.2f}, {high:.2f}]" if low == low else f"{point:.2f}"


def markdown(graded: pd.DataFrame, binary: pd.DataFrame) -> str:
    """The two tables the README shows."""
    lines = [
        "| data | check | scorer | n | Spearman | quadratic kappa |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in graded.to_dict("records"):
        lines.append(
            f"| {row['data']} | {row['check']} | {row['scorer']} | {row['n']:,} | "
            f"{cell(row, 'spearman')} | {cell(row, 'kappa')} |"
        )
    if len(binary):
        lines += [
            "",
            "| data | check | scorer | n | AUC | point-biserial | accuracy at 3 | kappa at 3 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in binary.to_dict("records"):
            lines.append(
                f"| {row['data']} | {row['check']} | {row['scorer']} | {row['n']:,} | "
                f"{cell(row, 'auc')} | {cell(row, 'point_biserial')} | {cell(row, 'accuracy')} | "
                f"{cell(row, 'kappa_at_3')} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", action="store_true", help="also measure the STS Benchmark test split")
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--markdown", action="store_true", help="print the README's tables")
    parser.add_argument("--json", default=None, help="write every row (all columns) to this JSON file")
    args = parser.parse_args()
    chosen = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SETS))
    if unknown:
        parser.error(f"unknown set(s) {unknown}; choose from {', '.join(SETS)}")
    if args.test:
        chosen.insert(chosen.index("sts-dev") + 1 if "sts-dev" in chosen else 0, "sts-test")
    graded: list[dict[str, Any]] = []
    binary: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="evalnb-agreement-") as tmp:
        for name in chosen:
            start = time.perf_counter()
            if name == "wikiqa":
                binary += wikiqa_rows(Path(tmp), args.resamples)
            elif name == "pairs":
                graded += pairs_rows(args.resamples)
            else:
                graded += graded_rows(name, Path(tmp), args.resamples)
            print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    g, b = pd.DataFrame(graded), pd.DataFrame(binary)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        if len(g):
            print(g.round(3).to_string(index=False))
        if len(b):
            print(b.round(3).to_string(index=False))
    if args.markdown:
        print(markdown(g, b))
    if args.json:
        Path(args.json).write_text(
            json.dumps({"graded": graded, "binary": binary}, indent=1, default=float) + "\n"
        )


if __name__ == "__main__":
    main()
