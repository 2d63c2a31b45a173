"""The labelled pairs, the agreement intervals, and the agreement table the README shows."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalnb.judges import HeuristicJudge, agreement
from evalnb.judges._agreement import bootstrap_intervals, kappa_gain, quadratic_kappa
from evalnb.judges.offline._labels import (
    compare_judges,
    judge_pairs,
    kappa_gains,
    labels_frame,
    markdown_table,
    measure,
    pairs_suite,
    read_pairs,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    return read_pairs()


def test_the_labelled_set(pairs: pd.DataFrame) -> None:
    assert len(pairs) >= 150 and pairs["pair_id"].is_unique
    assert set(pairs["check"]) == {"Similarity", "Relevance", "Coherence", "Groundedness"}
    assert pairs["value"].between(1, 5).all() and pairs["answer"].notna().all()
    test = pairs[pairs["split"] == "test"]
    for check in ("Similarity", "Relevance"):
        assert (test["check"] == check).sum() >= 50  # held apart, never fitted on
        # every level of the scale is used, so agreement is measured over the whole scale
        assert set(pairs.loc[pairs["check"] == check, "value"]) == {1, 2, 3, 4, 5}
    assert {"paraphrase", "fluent-wrong", "partial", "off-topic", "echo"} <= set(pairs["kind"])
    assert set(pairs["labeller"]) == {"assistant-1"}
    # Groundedness pairs carry the context they are judged against; Similarity pairs the expected response.
    assert pairs.loc[pairs["check"] == "Groundedness", "context"].notna().all()
    assert pairs.loc[pairs["check"] == "Similarity", "expected"].notna().all()


def test_the_split_follows_the_written_rule(pairs: pd.DataFrame) -> None:
    # RULES.md: within each check, in the order of sha256(pair_id), alternating fit, test, fit, ...
    for _, group in pairs.groupby("check"):
        ordered = sorted(group.itertuples(), key=lambda r: hashlib.sha256(r.pair_id.encode()).hexdigest())
        assert [r.split for r in ordered] == ["fit" if i % 2 == 0 else "test" for i in range(len(ordered))]


def test_pairs_become_a_suite_and_the_judge_sees_the_labelled_answer(pairs: pd.DataFrame) -> None:
    some = pairs[pairs["question_id"] == "hb-dinner"]
    suite = pairs_suite(some)
    assert [c.id for c in suite.cases] == sorted({p.rsplit("/", 1)[0] for p in some["pair_id"]}, key=str)
    result = judge_pairs(some, HeuristicJudge())
    assert (result.runs["response"].tolist()) == [c.turns[0].meta["answer"] for c in suite.cases]
    merged = result.scores.merge(labels_frame(some), on=["case_id", "turn", "check"])
    assert len(merged) == len(some)


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(1, 6, 60).astype(float)
    b = np.clip(a + rng.integers(-1, 2, 60), 1, 5).astype(float)
    scale = [1.0, 2.0, 3.0, 4.0, 5.0]
    one = bootstrap_intervals(a, b, scale, seed=3)
    assert one == bootstrap_intervals(a, b, scale, seed=3)
    assert one != bootstrap_intervals(a, b, scale, seed=4)
    kappa = quadratic_kappa(a, b, scale)
    assert one["kappa_low"] < kappa < one["kappa_high"]
    assert one["exact_low"] < float((a == b).mean()) < one["exact_high"]
    assert -1 <= one["spearman_low"] < one["spearman_high"] <= 1
    # The vectorised kappa of a resample equals the plain one: a single "resample" that is the data itself.
    same = bootstrap_intervals(a, b, scale, resamples=1, seed=0, interval=0.5)
    idx = np.random.default_rng(0).integers(0, 60, size=(1, 60))[0]
    assert same["kappa_low"] == pytest.approx(quadratic_kappa(a[idx], b[idx], scale))
    # Identical raters: every resample agrees perfectly.
    ident = bootstrap_intervals(a, a, scale)
    assert ident["kappa_low"] == ident["kappa_high"] == 1.0 == ident["exact_low"]


def test_agreement_with_intervals_adds_columns_only_when_asked(pairs: pd.DataFrame) -> None:
    labels = labels_frame(pairs)
    plain = agreement(labels, labels)
    assert list(plain.columns) == ["check", "n", "exact", "kappa", "spearman", "left_out", "note"]
    wide = agreement(labels, labels, interval=0.9)
    assert list(wide.columns)[5:] == [
        "exact_low",
        "exact_high",
        "kappa_low",
        "kappa_high",
        "spearman_low",
        "spearman_high",
        "left_out",  # what could not be compared: always last
        "note",
    ]
    assert (wide["kappa_low"] == 1.0).all() and str(wide["kappa_low"].dtype) == "float64"


def test_kappa_gain_is_paired_and_seeded() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(1, 6, size=80)
    close = np.clip(labels + rng.integers(-1, 2, size=80), 1, 5)
    noise = rng.integers(1, 6, size=80)
    g = kappa_gain(labels, close, noise)
    assert g["n"] == 80
    scale = [1, 2, 3, 4, 5]
    assert g["gain"] == pytest.approx(
        quadratic_kappa(labels, close, scale) - quadratic_kappa(labels, noise, scale)
    )
    assert 0 < g["gain_low"] < g["gain"] < g["gain_high"]
    assert kappa_gain(labels, close, noise) == g  # seeded
    # A judge against itself: no gain on any resample (the resamples are paired).
    same = kappa_gain(labels, close, close)
    assert same["gain"] == same["gain_low"] == same["gain_high"] == 0.0
    # Interval coverage by simulation: two equally good judges (independent noise on the same labels); the
    # 90% interval of the gain holds the true gain, 0, in most seeded worlds.
    covered = 0
    for world in range(60):
        r = np.random.default_rng(100 + world)
        y = r.integers(1, 6, size=60)
        a = np.clip(y + r.integers(-1, 2, size=60), 1, 5)
        b = np.clip(y + r.integers(-1, 2, size=60), 1, 5)
        w = kappa_gain(y, a, b, interval=0.9, resamples=500)
        covered += w["gain_low"] <= 0 <= w["gain_high"]
    assert (
        covered >= 48
    )  # 80% of 60: a 90% interval, allowing for the percentile bootstrap's slight undercover
    with pytest.raises(ValueError, match="paired"):
        kappa_gain(labels, close, noise[:-1])


@pytest.fixture(scope="module")
def table(pairs: pd.DataFrame) -> pd.DataFrame:
    return compare_judges(pairs=pairs)


def test_held_out_agreement_of_the_offline_judges(table: pd.DataFrame) -> None:
    t = table.set_index(["judge", "check"])
    for check in ("Similarity", "Relevance"):
        assert t.loc[("embedding", check), "n"] >= 50
    # Relevance: the embeddings read meaning where the heuristic counts the question's words (its cuts are
    # fitted on these labels' fit half). Similarity's cuts are fitted on people's STS Benchmark grades, not on
    # these labels, whose paraphrases were written to share few words: it still agrees with them better than
    # the heuristic, by less (README, "How far the offline judges agree").
    gains = {
        c: t.loc[("embedding", c), "kappa"] - t.loc[("heuristic", c), "kappa"]
        for c in ("Relevance", "Similarity")
    }
    assert gains["Relevance"] >= 0.2, (
        f"Relevance: the embedding judge gains {gains['Relevance']:.2f} in kappa"
    )
    assert gains["Similarity"] >= 0.05, (
        f"Similarity: the embedding judge gains {gains['Similarity']:.2f} in kappa"
    )
    # Coherence and Groundedness are the heuristic's in both (the embedding judge hands them over).
    for check in ("Coherence", "Groundedness"):
        cols = ["n", "exact", "kappa", "spearman"]
        assert t.loc[("embedding", check), cols].tolist() == t.loc[("heuristic", check), cols].tolist()
    # Only test rows were judged.
    assert measure(HeuristicJudge(), split="test")["n"].sum() == t.loc["heuristic", "n"].sum()


def test_kappa_gains_of_the_embedding_judge(table: pd.DataFrame, pairs: pd.DataFrame) -> None:
    gains = kappa_gains(pairs=pairs).set_index("check")
    t = table.set_index(["judge", "check"])
    for check in ("Similarity", "Relevance"):
        diff = t.loc[("embedding", check), "kappa"] - t.loc[("heuristic", check), "kappa"]
        assert gains.loc[check, "gain"] == pytest.approx(diff)
        assert gains.loc[check, "n"] == t.loc[("embedding", check), "n"]
        assert gains.loc[check, "gain_low"] < diff < gains.loc[check, "gain_high"]
    assert (gains.loc[["Coherence", "Groundedness"], "gain"] == 0).all()  # both judges' are the heuristic's
    assert set(gains["judges"]) == {"embedding - heuristic"}
    with pytest.raises(ValueError, match="two judges"):
        kappa_gains({"heuristic": HeuristicJudge()}, pairs)


def test_the_readme_shows_the_measured_table(table: pd.DataFrame) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table(table) in readme, "README's agreement table is stale: paste markdown_table(...)"
    assert re.search(r"held[- ]out", readme, re.I)
