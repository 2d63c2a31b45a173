"""Agreement of two judges, or a judge and people (evalnb/judges/_agreement.py): the numbers by hand, and no
pairing of many rows with many."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalnb.judges import agreement


def _labels(values: list[float], check: str = "Relevance", cases: list[str] | None = None) -> pd.DataFrame:
    ids = cases or [f"q{i}" for i in range(len(values))]
    return pd.DataFrame(
        {"case_id": ids, "turn": [0] * len(values), "check": [check] * len(values), "value": values}
    )


def test_agreement_numbers_by_hand() -> None:
    a, b = [1, 2, 3, 4, 5, 3, 2], [1, 2, 3, 5, 5, 2, 2]
    out = agreement(_labels(a), _labels(b)).iloc[0]
    # Quadratic-weighted kappa over 1..5, computed from its definition.
    obs = np.zeros((5, 5))
    for x, y in zip(a, b, strict=True):
        obs[x - 1, y - 1] += 1
    w = np.array([[(i - j) ** 2 / 16 for j in range(5)] for i in range(5)])
    exp = np.outer(obs.sum(1), obs.sum(0)) / obs.sum()
    kappa = 1 - (w * obs).sum() / (w * exp).sum()
    assert out["n"] == 7 and out["exact"] == pytest.approx(5 / 7)
    assert out["kappa"] == pytest.approx(kappa)
    ra, rb = pd.Series(a).rank(), pd.Series(b).rank()
    assert out["spearman"] == pytest.approx(np.corrcoef(ra, rb)[0, 1])
    # Pass/fail (0/1) values: quadratic weights on two categories give Cohen's plain kappa, here 0.5.
    pf = agreement(_labels([1, 0, 1, 1], "llm_judge"), _labels([1, 0, 0, 1], "llm_judge")).iloc[0]
    assert (pf["exact"], pf["kappa"]) == (0.75, pytest.approx(0.5))


def test_agreement_refuses_to_pair_many_rows_with_many() -> None:
    # Two llm_judge checks in one turn, matched on `check` against labels that also have two rows: every
    # row would meet every other and invent pairs.
    a = _labels([1, 0], "llm_judge", cases=["t", "t"])
    b = _labels([1, 1], "llm_judge", cases=["t", "t"])
    with pytest.raises(ValueError, match=r"several rows for case_id=t.*check_id"):
        agreement(a, b)
    # Many to one is fine: every run of a judge against one human label.
    runs = pd.DataFrame(
        {
            "case_id": ["t"] * 3,
            "run": [0, 1, 2],
            "turn": [0] * 3,
            "check": ["Relevance"] * 3,
            "value": [3, 4, 4],
        }
    )
    out = agreement(runs, _labels([4], cases=["t"])).iloc[0]
    assert out["n"] == 3 and out["exact"] == pytest.approx(2 / 3)
