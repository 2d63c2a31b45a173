"""The pairwise gate by simulation: false alarms on equal versions, a position-biased judge, power, coverage.

Figures on this suite (40 cases; the seeds below): equal versions with a noisy judge that leans to the first
answer (verdicts differ between the orders in 55 % of pairs) fire the gate in 3.0 % of 300 worlds judged in
both orders and 2.5 % of 200 judged once in a seeded order; a judge that always picks the first answer makes
every pair a tie in both orders, and fires in 4.5 % of 200 seeded single orders; b better by half a standard
deviation of quality is found better in 39 % of 100 worlds, b worse by as much fails the gate in 42 %; by a
whole SD, 87 % and 100 % of 30. The 95 % interval covers a known win rate of 0.7 in 96.5 % of 200 worlds.
A model-like judge whose verdicts come with their probabilities (the weighted shares) fires on equal versions in
4.5 % of 200 worlds, and finds b better by half an SD in 73 % of 60 worlds, against 42 % on its verdicts alone.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import evalnb
from tests.preference.conftest import noisy_judge, versions


def _worlds(a: Any, b: Any, worlds: int, **options: Any) -> list[Any]:
    shift = options.pop("shift", 0.0)
    return [
        evalnb.pairwise(a, b, judge=noisy_judge(k, shift=shift), seed=k, labels=("a", "b"), **options)
        for k in range(worlds)
    ]


def test_equal_versions_with_a_noisy_biased_judge_fire_the_gate_at_most_5_percent(forty: Any) -> None:
    a, b = forty
    runs = _worlds(a, b, 300)
    fired = sum(pw.exit_code for pw in runs) / len(runs)
    better = sum(pw.better for pw in runs) / len(runs)
    assert fired <= 0.05, fired
    assert better <= 0.05 + 2 * (0.05 * 0.95 / 300) ** 0.5, better  # the other side: within its noise
    # the judge's bias toward the first answer shows, and is not b's fault
    bias = sum(pw.position_bias for pw in runs) / len(runs)
    assert 0.3 < bias < 0.8
    assert 0.45 < sum(pw.win_rate for pw in runs) / len(runs) < 0.55


def test_equal_versions_judged_once_in_a_seeded_random_order_fire_at_most_5_percent(forty: Any) -> None:
    a, b = forty
    runs = _worlds(a, b, 200, orderings=1)
    fired = sum(pw.exit_code for pw in runs) / len(runs)
    assert fired <= 0.05, fired
    assert all(pw.position_bias != pw.position_bias for pw in runs)  # NaN: one order cannot show it


def test_a_judge_that_always_picks_the_first_answer_makes_no_side_win(forty: Any) -> None:
    a, b = forty
    pw = evalnb.pairwise(a, b, judge=lambda prompt, first, second: "first")
    assert pw.win_rate == 0.5 and pw.position_bias == 1.0
    assert set(pw.cases["winner"]) == {"tie"} and not pw.cases["consistent"].any()
    assert pw.exit_code == 0 and not pw.better and pw.p_value == 1.0
    assert pw.first_favoured == pw.flips == 40
    # one seeded random order: over many seeds neither side wins more often than the level allows
    once = [
        evalnb.pairwise(a, b, judge=lambda prompt, first, second: "first", orderings=1, seed=s)
        for s in range(200)
    ]
    assert sum(pw.exit_code for pw in once) / 200 <= 0.05
    assert sum(pw.better for pw in once) / 200 <= 0.05 + 2 * (0.05 * 0.95 / 200) ** 0.5
    # the seed decides the orders: the same seed, the same verdicts
    again = evalnb.pairwise(a, b, judge=lambda prompt, first, second: "first", orderings=1, seed=3)
    assert again.cases["winner"].tolist() == once[3].cases["winner"].tolist()
    assert 10 < (once[3].cases["winner"] == "b").sum() < 30


@pytest.mark.parametrize(("shift", "side"), [(0.5, "better"), (-0.5, "worse")])
def test_power_on_a_known_preference(forty: Any, shift: float, side: str) -> None:
    a, b = forty
    runs = _worlds(a, b, 100, shift=shift)
    found = sum(getattr(pw, side) for pw in runs) / len(runs)
    wrong = sum(getattr(pw, "worse" if side == "better" else "better") for pw in runs)
    assert found >= 0.3, found  # 39 % / 42 % with these seeds: half an SD of quality on 40 cases
    assert wrong == 0
    if side == "worse":
        assert sum(pw.exit_code for pw in runs) == sum(pw.worse for pw in runs)
    # a larger preference is found nearly always
    strong = _worlds(a, b, 30, shift=2 * shift)
    assert sum(getattr(pw, side) for pw in strong) >= 24  # 26 and 30 of 30


def test_the_interval_covers_a_known_win_rate() -> None:
    a, b = versions(30)
    covered = 0
    worlds = 200
    for k in range(worlds):

        async def judge(prompt: str, first: str, second: str, k: int = k) -> str:
            b_wins = random.Random(f"{k}:{prompt}").random() < 0.7  # the same verdict in both orders
            return (
                ("second" if first.startswith("a") else "first")
                if b_wins
                else ("first" if first.startswith("a") else "second")
            )

        pw = evalnb.pairwise(a, b, judge=judge, seed=k)
        assert pw.position_bias == 0.0
        covered += pw.ci_low <= 0.7 <= pw.ci_high
    assert covered / worlds >= 0.92, covered / worlds


class WeighingJudge:
    """A model-like judge object: it reads the two answers off the pairwise prompt, leans to the first, and
    answers a verdict drawn from its distribution, with that distribution as the verdict token's logprobs."""

    kind = "llm"
    cache = None

    def __init__(self, world: int, *, shift: float = 0.0, bias: float = 0.8) -> None:
        self.world, self.shift, self.bias = world, shift, bias
        self.name = self.label = f"weighing-{world}"

    def quality(self, answer: str) -> float:
        return random.Random(f"{self.world}:{answer}").gauss(0, 1) + (
            self.shift if answer.startswith("b") else 0
        )

    async def complete(self, prompt: Any) -> Any:
        import math

        from evalnb.judges import JudgeReply

        first, second = prompt.fields["first"], prompt.fields["second"]
        d = self.quality(first) - self.quality(second) + self.bias
        weights = {"1": math.exp(d), "2": math.exp(-d), "tie": 0.6}
        total = sum(weights.values())
        probs = {k: v / total for k, v in weights.items()}
        draw, acc, choice = random.Random(f"{self.world}:{first}|{second}").random(), 0.0, "tie"
        for k, p in probs.items():
            acc += p
            if draw < acc:
                choice = k
                break
        head, tail = '{"verdict": "', '", "reason": "weighed"}'
        top = [{"token": k, "logprob": math.log(p)} for k, p in probs.items()]
        tokens = [
            {"token": head, "logprob": 0.0},
            {"token": choice, "logprob": math.log(probs[choice]), "top_logprobs": top},
            {"token": tail, "logprob": 0.0},
        ]
        return JudgeReply(text=head + choice + tail, logprobs=tokens)


def test_probability_weighted_preferences_keep_the_false_alarm_rate_and_gain_power(forty: Any) -> None:
    a, b = forty
    equal = [evalnb.pairwise(a, b, judge=WeighingJudge(k), seed=k) for k in range(200)]
    assert all(pw.cases["weighted"].all() for pw in equal)
    fired = sum(pw.exit_code for pw in equal) / len(equal)
    assert fired <= 0.05, fired
    # a preference of b by half an SD: found more often on the weighted shares than on the same verdicts alone
    worlds = range(60)
    weighted = [evalnb.pairwise(a, b, judge=WeighingJudge(k, shift=0.5), seed=k) for k in worlds]
    plain = [evalnb.pairwise(a, b, judge=VerdictsOnly(k, shift=0.5), seed=k) for k in worlds]
    assert not any(pw.cases["weighted"].any() for pw in plain)
    found, found_plain = (sum(pw.better for pw in runs) / 60 for runs in (weighted, plain))
    assert found >= 0.6 and found > found_plain + 0.15, (found, found_plain)  # 73 % against 42 %


class VerdictsOnly(WeighingJudge):
    """The same judge on an endpoint that sends no token probabilities."""

    async def complete(self, prompt: Any) -> Any:
        from evalnb.judges import JudgeReply

        reply = await super().complete(prompt)
        return JudgeReply(text=reply.text)
