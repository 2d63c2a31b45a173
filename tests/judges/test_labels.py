"""The labelled pairs, the agreement intervals, and the agreement table the README shows."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalnb.judges import Heuristic, agreement
from evalnb.judges.agreement import bootstrap_intervals, quadratic_kappa
from evalnb.judges.labels import (
    compare_judges,
    judge_pairs,
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
    result = judge_pairs(some, Heuristic())
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
    assert list(plain.columns) == ["check", "n", "exact", "kappa", "spearman"]
    wide = agreement(labels, labels, interval=0.9)
    assert list(wide.columns)[5:] == [
        "exact_low",
        "exact_high",
        "kappa_low",
        "kappa_high",
        "spearman_low",
        "spearman_high",
    ]
    assert (wide["kappa_low"] == 1.0).all() and str(wide["kappa_low"].dtype) == "float64"


@pytest.fixture(scope="module")
def table(pairs: pd.DataFrame) -> pd.DataFrame:
    return compare_judges(pairs=pairs)


def test_held_out_agreement_of_the_offline_judges(table: pd.DataFrame) -> None:
    t = table.set_index(["judge", "check"])
    for check in ("Similarity", "Relevance"):
        assert t.loc[("embedding", check), "n"] >= 50
    # Relevance: the embeddings read meaning where the heuristic counts the question's words. Similarity:
    # meaning and the expected response's facts (a wrong number is a contradiction, not a paraphrase).
    for check in ("Relevance", "Similarity"):
        gain = t.loc[("embedding", check), "kappa"] - t.loc[("heuristic", check), "kappa"]
        assert gain >= 0.2, f"{check}: the embedding judge gains {gain:.2f} in kappa over the heuristic"
    # Coherence and Groundedness are the heuristic's in both (the embedding judge hands them over).
    for check in ("Coherence", "Groundedness"):
        cols = ["n", "exact", "kappa", "spearman"]
        assert t.loc[("embedding", check), cols].tolist() == t.loc[("heuristic", check), cols].tolist()
    # Only test rows were judged.
    assert measure(Heuristic(), split="test")["n"].sum() == t.loc["heuristic", "n"].sum()


def test_the_readme_shows_the_measured_table(table: pd.DataFrame) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table(table) in readme, "README's agreement table is stale: paste markdown_table(...)"
    assert re.search(r"held[- ]out", readme, re.I)
