"""The offline heuristic judge and judge agreement statistics."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalnb.errors import JudgeError
from evalnb.judges import HeuristicJudge, agreement, evaluate
from evalnb.judges._agreement import quadratic_kappa, spearman
from evalnb.suite import JudgedMetricCheck, LLMJudgeCheck
from tests.judges.conftest import make_ctx

H = HeuristicJudge()


async def score(metric: str, **kw: object) -> float | None:
    s = await evaluate(JudgedMetricCheck(type=metric), make_ctx(**kw), judge=H)  # type: ignore[arg-type]
    assert s.judge == "heuristic (not an LLM)"
    assert "heuristic" in s.reason
    return s.value


async def test_similarity_orders_by_overlap() -> None:
    exp = "The per-diem meal allowance is $200."
    same = await score("Similarity", response="The per-diem meal allowance is $200.", expected=exp)
    close = await score("Similarity", response="Your meal allowance per diem is 200 dollars.", expected=exp)
    far = await score("Similarity", response="Please book flights through the portal.", expected=exp)
    assert same == 5.0 and far == 1.0
    assert same >= close > far  # type: ignore[operator]


async def test_relevance_from_question_words() -> None:
    q = "How many vacation days do new employees get?"
    good = await score("Relevance", prompt=q, response="New employees get 20 vacation days per year.")
    bad = await score("Relevance", prompt=q, response="The cafeteria opens at noon.")
    empty = await score("Relevance", prompt=q, response="")
    assert good == 5.0 and bad == 1.0 and empty == 1.0


async def test_groundedness_share_of_supported_sentences() -> None:
    ctx = "Employees get 20 vacation days. Unused days carry over up to 5 days."
    grounded = await score("Groundedness", response="You get 20 vacation days.", context=ctx)
    half = await score(
        "Groundedness", response="You get 20 vacation days. Managers approve bonuses quarterly.", context=ctx
    )
    invented = await score("Groundedness", response="Bonuses are paid in March.", context=ctx)
    no_claim = await score("Groundedness", response="?", context=ctx)
    assert grounded == 5.0 and invented == 1.0 and half == 3.0
    assert no_claim == 3.0  # rubric: a response that makes no claim has its own level


async def test_coherence_structure() -> None:
    good = await score(
        "Coherence",
        response="The policy allows $200 per day. Because your dinner cost $250, the extra $50 needs approval.",
    )
    repeated = await score("Coherence", response="It is fine. It is fine. It is fine. It is fine")
    one_word = await score("Coherence", response="Yes")
    assert good == 5.0 and one_word == 1.0
    assert repeated is not None and repeated <= 2


async def test_llm_judge_rubric_keywords() -> None:
    spec = LLMJudgeCheck(rubric="The answer must mention the refund deadline and the receipt.")
    ok = await evaluate(spec, make_ctx(response="Send the receipt before the refund deadline."), judge=H)
    bad = await evaluate(spec, make_ctx(response="Hello there."), judge=H)
    assert (ok.passed, ok.value) == (True, 1.0) and (bad.passed, bad.value) == (False, 0.0)


async def test_heuristic_is_deterministic_and_honest() -> None:
    a = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=H)
    b = await evaluate(JudgedMetricCheck(type="Relevance"), make_ctx(), judge=H)
    assert a == b
    assert H.kind == "heuristic" and "not an LLM" in H.label and "not an LLM" in repr(H)
    assert "blind spots" in (HeuristicJudge.__doc__ or "")
    with pytest.raises(JudgeError):
        await H.complete("a plain string prompt")


def test_quadratic_kappa_known_values() -> None:
    same = np.array([1, 2, 3, 4, 5])
    assert quadratic_kappa(same, same) == 1.0
    # By hand: three off-by-one pairs weigh 3 x 1 = 3 (in units of (d/4)^2 x 16); chance weighs
    # sum_ij rowA_i * colB_j * (i-j)^2 / n = 236 / 8. kappa = 1 - 3 / (236 / 8) = 212 / 236.
    a = np.array([1, 2, 3, 4, 5, 5, 4, 3])
    b = np.array([1, 2, 3, 5, 4, 5, 4, 2])
    assert quadratic_kappa(a, b, [1, 2, 3, 4, 5]) == pytest.approx(212 / 236)
    reversed_ = quadratic_kappa(same, same[::-1].copy())
    assert reversed_ == pytest.approx(-1.0)
    assert math.isnan(quadratic_kappa(np.array([3, 3]), np.array([3, 3])))


def test_spearman_known_values_without_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    # pandas' Series.corr(method="spearman") imports scipy; evalnb does not depend on it, so block it
    monkeypatch.setitem(__import__("sys").modules, "scipy", None)
    # The textbook example (IQ against hours of TV a week): d^2 sums to 194, rho = 1 - 6 * 194 / (10 * 99).
    iq = pd.Series([106, 100, 86, 101, 99, 103, 97, 113, 112, 110])
    tv = pd.Series([7, 27, 2, 50, 28, 29, 20, 12, 6, 17])
    assert spearman(iq, tv) == pytest.approx(-29 / 165)
    # Ties take their average rank: ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4) correlate at 0.9487
    assert spearman(pd.Series([1, 2, 2, 3]), pd.Series([1, 2, 3, 4])) == pytest.approx(3 / 10**0.5)
    # Pairs by position, not by index label
    assert spearman(pd.Series([1, 2, 3], index=[2, 1, 0]), pd.Series([1, 2, 3])) == pytest.approx(1.0)
    assert math.isnan(spearman(pd.Series([4, 4, 4]), pd.Series([1, 2, 3])))  # a constant side
    assert math.isnan(spearman(pd.Series([1.0]), pd.Series([2.0])))  # one pair


def test_agreement_per_check_with_human_labels() -> None:
    judge = pd.DataFrame(
        {
            "suite": ["s"] * 6,
            "case_id": ["a", "b", "c", "a", "b", "c"],
            "run": [0] * 6,
            "turn": [0] * 6,
            "check": ["Relevance"] * 3 + ["llm_judge"] * 3,
            "check_id": ["Relevance"] * 3 + ["llm_judge"] * 3,
            "value": [5.0, 3.0, 1.0, 1.0, 0.0, None],
        }
    )
    humans = pd.DataFrame(
        {
            "case_id": ["a", "b", "c", "a", "b", "c"],
            "turn": [0] * 6,
            "check": ["Relevance"] * 3 + ["llm_judge"] * 3,
            "value": [5, 4, 1, 1, 1, 0],
        }
    )
    out = agreement(judge, humans)
    assert list(out.columns) == ["check", "n", "exact", "kappa", "spearman", "left_out", "note"]
    rel = out.set_index("check").loc["Relevance"]
    assert rel["n"] == 3
    assert rel["exact"] == pytest.approx(2 / 3)
    assert rel["spearman"] == pytest.approx(1.0)  # same order
    assert 0.8 < rel["kappa"] < 1.0
    lj = out.set_index("check").loc["llm_judge"]
    assert lj["n"] == 2  # the row without a value is left out
    assert lj["exact"] == 0.5
    assert str(out["n"].dtype) == "Int64"


def test_agreement_identical_frames() -> None:
    f = pd.DataFrame(
        {"case_id": list("abcd"), "turn": [0] * 4, "check": ["Coherence"] * 4, "value": [1, 2, 4, 5]}
    )
    out = agreement(f, f)
    assert out.loc[0, ["exact", "kappa", "spearman"]].tolist() == [1.0, 1.0, 1.0]


def test_agreement_needs_columns() -> None:
    with pytest.raises(ValueError, match="lacks column"):
        agreement(pd.DataFrame({"case_id": []}), pd.DataFrame({"case_id": []}))
