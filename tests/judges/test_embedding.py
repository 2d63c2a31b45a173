"""The offline embedding judge (wordllama), its calibration, the SemanticSimilarity check, and what happens
without wordllama."""

from __future__ import annotations

import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.errors import ConfigError, JudgeError
from evalnb.judges import EmbeddingJudge, HeuristicJudge, as_judge, evaluate
from evalnb.judges.offline import _embedding as emb
from evalnb.judges.offline._calibration import Calibration, fit_cuts, load
from evalnb.judges.offline._labels import read_pairs
from evalnb.judges.offline.fitting import fit, main
from evalnb.suite import JudgedMetricCheck, LLMJudgeCheck
from tests.judges.conftest import make_ctx

LABEL = "embedding (wordllama, not an LLM)"


@pytest.fixture
def fresh_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the process's loaded model, so the test loads it again (restored afterwards)."""
    monkeypatch.setattr(emb, "_model", None)


def test_the_model_loads_from_the_wheel_with_no_network(
    fresh_model: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the embedding judge tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    model = emb.load_model()
    assert model is emb.load_model()  # loaded once per process
    # wordllama configures the root logger when imported; the application's logging is left as it was.
    assert (list(root.handlers), root.level) == before
    cos = emb.cosines(
        ["You can spend up to forty dollars a day on food.", "The cafeteria opens at noon.", ""],
        ["The daily meal allowance is $40.", "The daily meal allowance is $40.", "The allowance is $40."],
    )
    assert cos.shape == (3,) and cos.dtype == np.float32
    assert cos[0] > 0.3 > cos[1]  # a paraphrase sharing few words is closer than an unrelated sentence
    assert cos[2] == 0.0  # an empty text resembles nothing
    assert emb.cosines([], []).shape == (0,)
    with pytest.raises(ValueError, match="pairs"):
        emb.cosines(["a"], [])


async def test_similarity_and_relevance_by_embeddings_the_rest_by_the_heuristic() -> None:
    judge = EmbeddingJudge()
    exp = "The daily meal allowance is $40."
    para = await evaluate(
        JudgedMetricCheck(type="Similarity"),
        make_ctx(response="You may spend up to forty dollars per day on meals.", expected=exp),
        judge=judge,
    )
    far = await evaluate(
        JudgedMetricCheck(type="Similarity"),
        make_ctx(response="Report a lost badge to reception.", expected=exp),
        judge=judge,
    )
    same = await evaluate(
        JudgedMetricCheck(type="Similarity"), make_ctx(response=exp, expected=exp), judge=judge
    )
    assert para.judge == far.judge == LABEL
    assert (
        para.value is not None and far.value is not None and same.value == 5.0 > para.value > far.value == 1.0
    )
    assert "embedding: cosine" in para.reason and "the expected response" in para.reason
    assert "states $40" in para.reason  # the fact it shares with the expected response (it adds nothing)
    # Every score has its continuous value beside the level: within half a point of it, in the cosine's order.
    for score in (para, far, same):
        assert score.weighted is not None and score.spread is None
        assert abs(score.weighted - (score.value or 0)) <= 0.5
    assert same.weighted > para.weighted > far.weighted  # type: ignore[operator]
    # A fluent answer with the wrong number: words and embedding close, the fact contradicted: at most 2.
    wrong = await evaluate(
        JudgedMetricCheck(type="Similarity"),
        make_ctx(response="The daily meal allowance is $60.", expected=exp),
        judge=judge,
    )
    assert wrong.value == emb.CONTRADICTED_CAP and not wrong.passed and wrong.weighted == 2.5
    assert "contradicts the expected response: $60 where the expected response has $40" in wrong.reason
    assert "capped from level" in wrong.reason
    q = "I spent $55 on dinner on a business trip. Is that okay?"
    rel = await evaluate(
        JudgedMetricCheck(type="Relevance"),
        make_ctx(prompt=q, response="The daily meal allowance when travelling for work is $40 [5]."),
        judge=judge,
    )
    # The word-statistics judge gives this on-topic answer 1/5 (it shares no content word with the question).
    heur = await evaluate(
        JudgedMetricCheck(type="Relevance"),
        make_ctx(prompt=q, response="The daily meal allowance when travelling for work is $40 [5]."),
        judge=HeuristicJudge(),
    )
    assert heur.value == 1.0 and rel.value is not None and rel.value >= 3 and rel.passed
    assert rel.weighted is not None and abs(rel.weighted - rel.value) <= 0.5
    empty = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(response=""), judge=judge)
    assert empty.value == 1.0 and empty.weighted == 1.0 and "empty" in empty.reason
    # Coherence, Groundedness and llm_judge are handed to the heuristic, and their rows name it.
    coh = await evaluate(JudgedMetricCheck(type="Coherence"), make_ctx(), judge=judge)
    verdict = await evaluate(LLMJudgeCheck(rubric="mentions Paris"), make_ctx(), judge=judge)
    assert coh.judge == verdict.judge == "heuristic (not an LLM)"
    assert coh == await evaluate(JudgedMetricCheck(type="Coherence"), make_ctx(), judge=HeuristicJudge())
    with pytest.raises(JudgeError):
        await judge.complete("a plain string prompt")


def test_the_readings_of_similarity() -> None:
    q = "What is the daily meal allowance?"
    exp = "$40 a day."
    echo, para, wrong = emb.read(
        "Similarity",
        ["What is the daily meal allowance?", "You may spend forty dollars per day.", "It is $60 a day."],
        questions=[q] * 3,
        expecteds=[exp] * 3,
    )
    # An answer that only repeats the question keeps no words once the question's words are taken out.
    assert echo.cosine == 0.0 and echo.value == 0.0
    assert para.facts is not None and para.facts.matched == ("$40 a day",)
    # The measure is the cosine: a stated fact adds nothing, so the level keeps the model's order.
    assert para.value == para.cosine and not para.contradicts
    assert wrong.contradicts and wrong.value == wrong.cosine > 0.5
    cal = load()
    level, continuous = emb.grade("Similarity", wrong, cal)
    assert cal.score("Similarity", wrong.value) > emb.CONTRADICTED_CAP == level and continuous == 2.5
    # A contradicted answer already below the cap keeps its own (lower) level and score.
    low = emb.Reading(value=0.1, cosine=0.1, facts=wrong.facts)
    assert emb.grade("Similarity", low, cal) == (1, cal.continuous("Similarity", 0.1))
    # Relevance is the plain cosine of the response and the question; facts are not read.
    (rel,) = emb.read("Relevance", ["You may spend forty dollars."], questions=[q], expecteds=[None])
    assert (
        rel.value == rel.cosine == pytest.approx(float(emb.cosines(["You may spend forty dollars."], [q])[0]))
    )
    assert rel.facts is None and not rel.contradicts
    assert emb.grade("Relevance", emb.Reading(value=0.99, cosine=0.99, facts=wrong.facts), cal)[0] >= 4
    # A missing expected response (NA) reads as empty; an expected response made of the question's words
    # only is compared whole.
    (na,) = emb.read("Similarity", ["Yes."], questions=["Is it paid? Yes or no"], expecteds=[float("nan")])
    assert na.value == 0.0
    (whole,) = emb.read(
        "Similarity", ["Yes, it is."], questions=["Is it paid, yes?"], expecteds=["Yes, paid."]
    )
    assert whole.cosine > 0.5
    with pytest.raises(KeyError):
        emb.read("Coherence", ["a"], questions=["b"], expecteds=["c"])
    assert emb.without_question("The daily meal allowance is $40.", q) == "40"


def test_judge_string_and_label() -> None:
    judge = as_judge("embedding", cache=True)
    assert isinstance(judge, EmbeddingJudge) and judge.label == LABEL and judge.kind == "embedding"
    assert judge.cache is None  # computed here, deterministically: nothing to cache
    assert "not an LLM" in repr(judge)
    with pytest.raises(ConfigError, match="takes nothing"):
        as_judge("embedding:large")


def test_without_wordllama_a_clear_install_hint(fresh_model: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)
    assert not emb.available()
    with pytest.raises(ConfigError) as err:
        EmbeddingJudge()
    assert err.value.code == "MISSING_DEPENDENCY"
    assert 'pip install "evalnb[offline-judge]"' in str(err.value)
    with pytest.raises(ConfigError, match="offline-judge"):
        as_judge("embedding")
    # A suite with a SemanticSimilarity check stops before any agent is called.
    calls: list[str] = []
    suite = _semantic_suite()
    with pytest.raises(ConfigError, match=r"SemanticSimilarity check needs wordllama.*offline-judge"):
        evalnb.run(suite, lambda p: calls.append(p) or "x", progress=False)
    assert calls == []


def _semantic_suite(evaluator: dict[str, Any] | None = None, **item: Any) -> evalnb.Suite:
    doc = {
        "schemaVersion": "1.6.0",
        "items": [
            {
                "testId": "meal",
                "prompt": "What is the meal allowance?",
                "expected_response": "The daily meal allowance is $40.",
                "evaluators": {"SemanticSimilarity": evaluator or {}},
                "evaluators_mode": "replace",
                **item,
            }
        ],
    }
    return evalnb.load(json.dumps(doc), format="dataset-json")


def test_semantic_similarity_check_from_a_dataset() -> None:
    para = "You may spend up to forty dollars per day on meals."
    loose = evalnb.run(_semantic_suite({"threshold": 0.3}), lambda p: para, progress=False)
    row = loose.scores.iloc[0]
    assert row["check"] == "SemanticSimilarity" and pd.isna(row["judge"])
    assert 0.3 < row["value"] < 1 and bool(row["passed"])
    assert "cosine" in row["reason"] and "threshold 0.3" in row["reason"]
    assert json.loads(row["options"]) == {"threshold": 0.3, "value": None}
    strict = evalnb.run(_semantic_suite({"threshold": 0.95}), lambda p: para, progress=False)
    assert not bool(strict.scores.iloc[0]["passed"]) and strict.exit_code == 1
    # `value` compares with a text of its own; no expected response and no value: not evaluated, not passed.
    own = evalnb.run(
        _semantic_suite({"value": "Forty dollars a day for meals."}, expected_response=None),
        lambda p: para,
        progress=False,
    )
    assert own.scores.iloc[0]["value"] > 0.5
    none = evalnb.run(_semantic_suite(expected_response=None), lambda p: para, progress=False)
    assert pd.isna(none.scores.iloc[0]["value"]) and "not evaluated" in none.scores.iloc[0]["reason"]
    with pytest.raises(evalnb.SuiteError) as err:
        _semantic_suite({"threshold": 2})
    assert err.value.code == "INVALID_VALUE" and "SemanticSimilarity" in (err.value.location or "")
    with pytest.raises(evalnb.SuiteError) as err:
        _semantic_suite({"treshold": 0.5})
    assert err.value.code == "UNKNOWN_FIELD" and "threshold" in str(err.value)


# --------------------------------------------------------------------------------------------------
# Calibration
# --------------------------------------------------------------------------------------------------


def test_fit_cuts_known_placements() -> None:
    assert fit_cuts([0.1, 0.2, 0.5, 0.6, 0.9], [1, 1, 3, 4, 5]) == (0.35, 0.35, 0.55, 0.75)
    # Nothing labelled above 3: levels 4 and 5 are unreachable.
    assert fit_cuts([0.1, 0.5, 0.9], [1, 2, 3])[2:] == (None, None)
    # Equal measures share a level whatever their labels; the fit does not depend on input order.
    a = fit_cuts([0.3, 0.3, 0.8, 0.1], [1, 5, 5, 1])
    assert a == fit_cuts([0.8, 0.1, 0.3, 0.3], [5, 1, 5, 1])
    with pytest.raises(ValueError):
        fit_cuts([], [])


def _levels(x: np.ndarray, cuts: tuple[float | None, ...]) -> np.ndarray:
    return 1 + sum((x >= c).astype(int) for c in cuts if c is not None) + np.zeros(len(x), dtype=int)


def test_fit_cuts_finds_the_best_kappa_of_every_placement() -> None:
    """The fit is exact: on seeded random data, no placement of the cuts in the gaps between the values has a
    higher kappa (all of them tried), and it takes thousands of pairs in well under a second."""
    import itertools
    import time

    def kappa(labels: np.ndarray, levels: np.ndarray) -> float:
        observed = np.zeros((5, 5))
        np.add.at(observed, (labels - 1, levels - 1), 1)
        w = np.subtract.outer(np.arange(5.0), np.arange(5.0)) ** 2 / 16
        chance = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
        return float(1 - (w * observed).sum() / (w * chance).sum()) if (w * chance).sum() else -np.inf

    rng = np.random.default_rng(5)
    for _ in range(40):
        n = int(rng.integers(4, 13))
        x = rng.random(n).round(2)
        y = np.clip(np.round(x * 5 + rng.normal(0, 1.2, n)), 1, 5).astype(int)
        if len(set(y.tolist())) < 2:
            continue
        got = kappa(y, _levels(x, fit_cuts(list(x), list(y))))
        values = sorted(set(x.tolist()))
        gaps = [-1.0] + [(a + b) / 2 for a, b in itertools.pairwise(values)] + [2.0]
        best = max(kappa(y, _levels(x, c)) for c in itertools.combinations_with_replacement(gaps, 4))
        assert got == pytest.approx(best, abs=1e-12)
    x = rng.random(6000)
    y = np.clip(np.round(x * 5 + rng.normal(0, 1, 6000)), 1, 5).astype(int)
    start = time.perf_counter()
    cuts = fit_cuts(list(x), list(y))
    assert time.perf_counter() - start < 5
    assert all(c is not None for c in cuts) and list(cuts) == sorted(cuts)  # type: ignore[type-var]


def test_calibration_bands() -> None:
    cal = Calibration(cuts={"Similarity": (0.2, 0.4, 0.4, None)}, source={})
    assert [cal.score("Similarity", c) for c in (-0.5, 0.19, 0.2, 0.39, 0.4, 0.99)] == [1, 1, 2, 2, 4, 4]
    assert cal.describe("Similarity", 2) == "level 2 for cosine 0.20 to 0.40"
    assert cal.describe("Similarity", 1) == "level 1 below cosine 0.20"
    assert cal.describe("Similarity", 4) == "level 4 from cosine 0.40"
    named = Calibration(
        cuts={"Similarity": (0.2, 0.4, 0.4, None)},
        source={"checks": {"Similarity": {"measure": "similarity: the mean of ..."}}},
    )
    assert named.describe("Similarity", 2) == "level 2 for similarity 0.20 to 0.40"
    with pytest.raises(KeyError):
        cal.score("Coherence", 0.5)


def test_the_continuous_score_rounds_to_the_level_and_keeps_the_order() -> None:
    cal = Calibration(cuts={"S": (0.2, 0.4, 0.6, 0.8), "gaps": (0.2, 0.4, 0.4, None)}, source={})
    assert cal.continuous("S", 0.5) == pytest.approx(3.0)  # the middle of level 3's band
    assert cal.continuous("S", 0.2) == pytest.approx(1.5) and cal.continuous("S", -1.0) == 1.0
    assert cal.continuous("S", 1.0) == 5.0 and cal.continuous("S", 1.2) == 5.0  # clipped at the ends
    for name in cal.cuts:
        grid = np.linspace(-1, 1, 401)
        values = np.array([cal.continuous(name, float(m)) for m in grid])
        levels = np.array([cal.score(name, float(m)) for m in grid])
        assert (np.diff(values) >= 0).all()  # monotone in the measure
        assert (np.abs(values - levels) <= 0.5 + 1e-12).all()  # within half a point of the level
        assert values.min() >= 1 and values.max() <= 5
    # An empty band (level 3 here) and an unreachable level 5: level 4 runs from 0.4 up to the top of the range.
    assert cal.continuous("gaps", 0.4) == pytest.approx(3.5) and cal.continuous("gaps", 1.0) == pytest.approx(
        4.5
    )


def test_the_shipped_calibration_is_a_refit_on_the_fitted_sets_only(tmp_path: Path) -> None:
    shipped = load()
    assert set(shipped.cuts) == {"Similarity", "Relevance"} and shipped.source["model"] == emb.MODEL
    similarity = shipped.source["checks"]["Similarity"]
    assert "sts-train.csv" in similarity["fitted_on"] and similarity["n"] == 5749
    assert "split fit" in shipped.source["checks"]["Relevance"]["fitted_on"]
    assert main(["--check"]) == 0  # the file equals a refit
    pairs = read_pairs()
    assert fit(pairs).cuts == shipped.cuts
    # Only the STS train split takes part: a data folder holding nothing else fits the same cuts.
    only_train = tmp_path / "public" / "stsbenchmark"
    only_train.mkdir(parents=True)
    source = Path(__file__).resolve().parents[2] / "data" / "public" / "stsbenchmark" / "sts-train.csv"
    (only_train / "sts-train.csv").write_bytes(source.read_bytes())
    assert fit(pairs, public=tmp_path / "public").cuts == shipped.cuts
    # The labelled pairs' test half takes no part; their fit half fits Relevance only.
    flipped = pairs.copy()
    test = flipped["split"] == "test"
    flipped.loc[test, "value"] = 6 - flipped.loc[test, "value"]
    assert fit(flipped).cuts == shipped.cuts
    fit_rows = flipped["split"] == "fit"
    flipped.loc[fit_rows, "value"] = 6 - flipped.loc[fit_rows, "value"]
    refit = fit(flipped).cuts
    assert (
        refit["Relevance"] != shipped.cuts["Relevance"] and refit["Similarity"] == shipped.cuts["Similarity"]
    )


def test_check_reports_a_stale_calibration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evalnb.judges.offline.fitting as fitting

    monkeypatch.setattr(fitting, "target_file", lambda: tmp_path / "calibration.json")
    assert main(["--check"]) == 1  # no file there
    assert main([]) == 0 and main(["--check"]) == 0
    data = json.loads((tmp_path / "calibration.json").read_text())
    data["checks"]["Relevance"]["cuts"][0] = 0.5
    (tmp_path / "calibration.json").write_text(json.dumps(data))
    assert main(["--check"]) == 1


def test_semantic_similarity_as_a_toml_assertion(tmp_path: Path) -> None:
    suite = tmp_path / "sim.toml"
    suite.write_text(
        'name = "sim"\n\n[[tasks]]\nid = "meal"\nprompt = "What is the meal allowance?"\nruns = 2\n\n'
        '  [[tasks.assertions]]\n  type = "semantic_similarity"\n  value = "The daily meal allowance is $40."\n'
        "  threshold = 0.3\n",
        encoding="utf-8",
    )
    result = evalnb.run(suite, lambda p: "You may spend forty dollars a day on food.", progress=False)
    assert result.scores["check"].tolist() == ["semantic_similarity"] * 2  # as the suite writes it
    assert result.scores["passed"].all() and (result.scores["value"] > 0.3).all()
    suite.write_text(suite.read_text().replace("threshold", "treshold"), encoding="utf-8")
    with pytest.raises(evalnb.SuiteError) as err:
        evalnb.load(suite)
    assert err.value.code == "UNKNOWN_FIELD" and "threshold" in str(err.value)
    from evalnb.checks.scales import scale_of

    assert scale_of("semantic_similarity") == scale_of("SemanticSimilarity")
    assert scale_of("SemanticSimilarity").label == "cosine"  # type: ignore[union-attr]
