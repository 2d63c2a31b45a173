"""``evalnb.pairwise`` with callable and offline judges: what is judged, in which order, and what fails how."""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb.errors import ConfigError
from tests.preference.conftest import versions


def test_every_pair_is_judged_in_both_orders_with_neutral_positions() -> None:
    a, b = versions(5)
    seen: list[tuple[str, str, str]] = []
    lock = threading.Lock()

    def judge(prompt: str, first: str, second: str) -> str:
        with lock:
            seen.append((prompt, first, second))
        return "second" if second.startswith("b") else "first"  # always prefers b, wherever it is

    pw = evalnb.pairwise(a, b, judge=judge, labels=("v1", "v2"))
    assert len(seen) == 10
    assert sorted(seen) == sorted(
        [(f"question {i}", f"a says question {i}", f"b says question {i}") for i in range(5)]
        + [(f"question {i}", f"b says question {i}", f"a says question {i}") for i in range(5)]
    )
    c = pw.cases
    assert list(c.columns[:10]) == [
        "case_id", "case_name", "category", "turn", "run", "winner", "verdict_ab", "verdict_ba", "consistent",
        "score",
    ]  # fmt: skip
    assert len(c) == 5 and set(c["winner"]) == {"b"} and c["consistent"].all()
    assert c["verdict_ab"].tolist() == ["b"] * 5 and c["verdict_ba"].tolist() == ["b"] * 5
    assert str(c["consistent"].dtype) == "boolean" and str(c["turn"].dtype) == "Int64"
    assert pw.win_rate == 1.0 and pw.position_bias == 0.0 and pw.better and pw.exit_code == 0
    assert 0.3 < pw.ci_low < pw.ci_high == 1.0  # 5 cases won: not known to be 100 % (two-sided, t with 4 df)
    assert "v2 against v1" in pw.headline() and "v2 is better" in pw.headline()
    assert (
        pw.judge == "callable:test_every_pair_is_judged_in_both_orders_with_neutral_positions.<locals>.judge"
    )


def test_b_worse_is_exit_1_and_the_report_lists_the_pairs_a_won() -> None:
    a, b = versions(12)
    pw = evalnb.pairwise(a, b, judge=lambda p, first, second: "first" if first.startswith("a") else "second")
    assert pw.win_rate == 0.0 and pw.worse and pw.exit_code == 1 and pw.p_value < 0.001
    report = pw.report()
    assert "is worse" in report and "Won by" in report
    assert "Pairwise(" in repr(pw) and "worse" in repr(pw)
    assert "<b>Pairwise</b>" in pw._repr_html_()


def test_identical_answers_still_go_to_the_judge() -> None:
    suite = evalnb.from_frame(pd.DataFrame({"prompt": ["q1", "q2", "q3"]}), checks=())
    a = evalnb.run(suite, lambda p: "same", progress=False)
    b = evalnb.run(suite, lambda p: "same", progress=False)
    calls = []
    pw = evalnb.pairwise(a, b, judge=lambda p, first, second: calls.append(p) or "tie")
    assert len(calls) == 6 and set(pw.cases["winner"]) == {"tie"} and pw.win_rate == 0.5


def test_answers_with_a_reason_async_judges_and_a_verdict_that_flips() -> None:
    a, b = versions(4)

    async def judge(prompt: str, first: str, second: str) -> Any:
        if prompt == "question 0":
            return {"verdict": "first", "reason": "the first one reads better"}
        return ("second", "fuller") if first.startswith("a") else ("first", "fuller")

    pw = evalnb.pairwise(a, b, judge=judge, labels=("a", "b"))
    c = pw.cases.set_index("case_name")
    assert c.loc["question 0", "winner"] == "tie" and not c.loc["question 0", "consistent"]
    assert (
        c.loc["question 0", "reason"]
        == "a first: the first one reads better; b first: the first one reads better"
    )
    assert c.loc["question 1", "reason"] == "fuller"
    assert pw.position_bias == 0.25 and pw.first_favoured == 1


def test_a_judge_failure_or_an_answer_that_is_no_verdict_is_a_degraded_row() -> None:
    a, b = versions(6)

    def judge(prompt: str, first: str, second: str) -> str:
        if prompt == "question 0":
            raise RuntimeError("rate limited")
        if prompt == "question 1":
            return "maybe"
        return "second" if second.startswith("b") else "first"

    pw = evalnb.pairwise(a, b, judge=judge)
    c = pw.cases.set_index("case_name")
    assert (
        c.loc["question 0", "status"] == "degraded"
        and "RuntimeError: rate limited" in c.loc["question 0", "reason"]
    )
    assert c.loc["question 1", "status"] == "degraded"
    assert "answers 'first', 'second' or 'tie'" in c.loc["question 1", "reason"]
    assert pd.isna(c.loc["question 1", "winner"]) and pd.isna(c.loc["question 1", "score"])
    assert pw.counts == {"a": 0, "b": 4, "tie": 0, "degraded": 2}
    assert pw.cases_counted == 4 and pw.win_rate == 1.0
    assert "2 pair(s) not judged" in pw.headline()


def test_runs_are_paired_by_number_and_a_case_counts_once() -> None:
    a, b = versions(4, runs=3)
    pw = evalnb.pairwise(a, b, judge=lambda p, first, second: "second" if second.startswith("b") else "first")
    assert len(pw.cases) == 12 and sorted(set(pw.cases["run"])) == [0, 1, 2]
    assert pw.cases_counted == 4


def test_turns_one_side_did_not_answer_are_left_out_and_counted() -> None:
    suite = evalnb.from_frame(pd.DataFrame({"prompt": ["q1", "q2", "boom"]}), checks=())
    a = evalnb.run(suite, lambda p: f"a {p}", progress=False)

    def flaky(p: str) -> str:
        if p == "boom":
            raise ValueError("agent down")
        return f"b {p}"

    b = evalnb.run(suite, flaky, progress=False)
    pw = evalnb.pairwise(a, b, judge=lambda p, first, second: "tie")
    assert len(pw.cases) == 2
    assert pw.left_out is not None and pw.left_out["why"].tolist() == ["no answer from b"]
    assert "Left out: no answer from b: 1" in pw.headline()


@pytest.mark.parametrize(
    ("judge", "words"),
    [
        (None, "pairwise needs a judge"),
        (lambda prompt: "PASS", "must take (prompt, first, second)"),
        (42, "is not a judge"),
    ],
)
def test_no_usable_judge_is_a_config_error_naming_the_options(judge: Any, words: str) -> None:
    a, b = versions(2)
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        evalnb.pairwise(a, b, judge=judge)


@pytest.mark.parametrize(
    ("options", "words"),
    [({"orderings": 3}, "orderings must be 1 or 2"), ({"confidence": 1.5}, "confidence must be")],
)
def test_bad_options_are_config_errors(options: dict[str, Any], words: str) -> None:
    a, b = versions(2)
    with pytest.raises(ConfigError, match=words):
        evalnb.pairwise(a, b, judge=lambda p, f, s: "tie", **options)


def test_two_results_of_different_suites_have_nothing_to_compare() -> None:
    a, _ = versions(2)
    other = evalnb.run(
        evalnb.from_frame(pd.DataFrame({"prompt": ["x"]}), checks=()), lambda p: "y", progress=False
    )
    with pytest.raises(ConfigError, match="nothing to compare"):
        evalnb.pairwise(a, other, judge=lambda p, f, s: "tie")


def test_the_offline_judges_prefer_the_answer_closer_to_the_expected_one() -> None:
    frame = pd.DataFrame(
        {
            "prompt": ["capital of France?", "largest planet?"],
            "expected": ["Paris is the capital of France", "Jupiter is the largest planet"],
        }
    )
    suite = evalnb.from_frame(frame, checks=())
    answers_a = {"capital of France?": "The capital of France is Paris", "largest planet?": "Saturn maybe"}
    answers_b = {"capital of France?": "Lyon", "largest planet?": "The largest planet is Jupiter"}
    a = evalnb.run(suite, answers_a.__getitem__, progress=False)
    b = evalnb.run(suite, answers_b.__getitem__, progress=False)
    for judge in ("heuristic", evalnb.judges.HeuristicJudge(), "embedding"):
        pw = evalnb.pairwise(a, b, judge=judge)
        assert pw.cases["winner"].tolist() == ["a", "b"], judge
        assert pw.position_bias == 0.0
        assert "not an LLM" in pw.judge and pw.cases["reason"].str.contains("not an LLM").all()
        assert "closer to the expected answer" in pw.cases["reason"].iloc[0]


def test_the_offline_judges_without_expected_answers_are_a_plain_error_naming_the_options() -> None:
    a, b = versions(3)
    with pytest.raises(ConfigError) as info:
        evalnb.pairwise(a, b, judge="heuristic")
    message = str(info.value)
    assert "3 of 3 turns have none" in message
    assert "openai:MODEL" in message and "f(prompt, first, second)" in message
