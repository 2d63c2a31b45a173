"""Facts of an expected response that an answer states, omits or contradicts (evalnb.judges.offline._facts).

The examples are written here, not taken from the labelled pairs: the pairs measure the judge, these pin
the rules."""

from __future__ import annotations

import pytest

from evalnb.judges.offline._facts import FACT_KINDS, Facts, compare, names, quantities, register_fact_kind


def kinds(text: str, question: str | None = None) -> list[tuple[str, float, float]]:
    return [(q.kind, round(q.low, 3), round(q.high, 3)) for q in quantities(text, question=question)]


def test_numbers_in_digits_and_words_with_their_units() -> None:
    assert kinds("It costs $1,250.50.") == [("money:USD", 1250.5, 1250.5)]
    assert kinds("forty-two euros and one hundred and five pounds") == [
        ("money:EUR", 42, 42),
        ("money:GBP", 105, 105),
    ]
    assert kinds("3 million people") == [("count:people", 3e6, 3e6)]
    assert kinds("twelve weeks") == kinds("84 days") == [("time", 7_257_600, 7_257_600)]
    assert kinds("It is 5km away, 20% off, at 1999.") == [
        ("length", 5000, 5000),
        ("percent", 20, 20),
        ("year", 1999, 1999),
    ]
    # A number inside an identifier, an ordinal, or "one" as a pronoun is not a quantity.
    assert kinds("Run git reset HEAD~1 on COVID-19 data, the 2nd time; the long one.") == []
    # Ranges, with the unit after the second number; "three consecutive days" skips the modifier.
    assert kinds("2 to 3 litres") == kinds("2-3 litres") == [("volume", 2, 3)]
    assert kinds("after three consecutive days") == [("time", 259_200, 259_200)]


def test_rates_clock_times_temperature_and_counts() -> None:
    (rate,) = quantities("300,000 km per second")
    assert rate.per == 1 and rate.kind == "length"
    (daily,) = quantities("$40 a day")
    assert daily.per == 86_400
    assert kinds("9am, 5:30 pm and 17:30") == [
        ("clock", 540, 540),
        ("clock", 1050, 1050),
        ("clock", 1050, 1050),
    ]
    assert kinds("212 °F") == kinds("100 degrees Celsius") == [("temperature", 100, 100)]
    # A bare number counts what the question asks.
    assert kinds("Seven.", question="How many continents are there?") == [("count:continent", 7, 7)]
    assert kinds("Seven.") == [("number", 7, 7)]


@pytest.mark.parametrize(
    ("answer", "expected", "question"),
    [
        ("You can spend forty dollars per day.", "$40 a day.", "What is the meal allowance?"),
        ("Once every 36 months.", "Every three years.", "How often are laptops replaced?"),
        ("It opens at 9 am and closes at 5:30 pm.", "Open 9:00 to 17:30.", "When is it open?"),
        ("Roughly 186,000 miles per second.", "About 300,000 km/s.", "How fast is light?"),
        ("Drink 2.5 litres.", "2 to 3 litres a day.", "How much water?"),
        ("Of course: within 90 minutes.", "Yes, within an hour and a half, so 90 minutes.", "Can I?"),
    ],
)
def test_the_same_fact_in_other_words_or_units_is_stated(answer: str, expected: str, question: str) -> None:
    facts = compare(answer, expected, question=question)
    assert facts.matched and not facts.contradicts, facts


@pytest.mark.parametrize(
    ("answer", "expected", "question", "says"),
    [
        ("The allowance is $60 a day.", "$40 a day.", "What is the meal allowance?", "$60 a day"),
        ("Claims are due within 90 days.", "Within 30 days.", "How long do I have?", "90 days"),
        ("There are five continents.", "Seven.", "How many continents are there?", "five continents"),
        ("It travels 300,000 km per hour.", "About 300,000 km per second.", "How fast is light?", "per hour"),
        ("The office opens at 8:00.", "It opens at 9:00.", "When does it open?", "8:00"),
        ("It was written by Charlotte Brontë.", "Jane Austen.", "Who wrote Pride and Prejudice?", "Brontë"),
        ("No, never freeze it.", "Yes: cool it quickly first.", "Can I freeze rice?", "'no'"),
        ("Rub the stain hard.", "Blot it; do not rub.", "How do I clean it?", "'rub'"),
        ("You cannot claim it.", "Claim it through the portal.", "How do I claim?", "'claim'"),
    ],
)
def test_a_different_fact_contradicts(answer: str, expected: str, question: str, says: str) -> None:
    facts = compare(answer, expected, question=question)
    assert facts.contradicts and says in " ".join(facts.contradicted), facts


@pytest.mark.parametrize(
    ("answer", "expected", "question"),
    [
        # Detail beside a matched fact is not a contradiction.
        ("About 6 minutes, then 1 minute in cold water.", "About 6 minutes.", "How long do I boil an egg?"),
        ("Austen, in 1813, then Emma in 1815.", "Jane Austen.", "Who wrote Pride and Prejudice?"),
        # Numbers and names the question gives are not facts of the answer.
        ("Your $55 dinner is over the limit.", "It is over the $40 limit.", "I spent $55. Is that okay?"),
        # A fact in words the extractor does not read is missing, not contradicted.
        ("You have a month.", "Within 30 days.", "How long do I have?"),
        # A name beside other content: another capitalised word is not a contradiction.
        ("The Sun's short waves scatter most.", "Short light scatters (Rayleigh scattering) most.", "Why?"),
        # Negated on both sides, or not at all.
        ("Blot it; never rub, rubbing spreads it.", "Blot it; do not rub.", "How do I clean it?"),
    ],
)
def test_what_is_not_a_contradiction(answer: str, expected: str, question: str) -> None:
    assert not compare(answer, expected, question=question).contradicts


def test_missing_facts_and_the_name_reader() -> None:
    facts = compare("Call extension 4357.", "Call extension 4357 or email help@example.com.", question="How?")
    assert facts == Facts(matched=("4357",), missing=("help@example.com",), contradicted=())
    assert names("Jupiter.") == ["Jupiter"]
    assert names("Saturn is big, said Ada Lovelace in New York at 9 degrees Celsius.") == [
        "Ada",
        "Lovelace",
        "New",
        "York",
    ]
    assert compare("", "") == Facts()


def test_fact_kinds_are_a_registry() -> None:
    assert list(FACT_KINDS) == ["quantities", "names", "yes/no", "negation"]

    @register_fact_kind("test-always")
    def always(answer: str, expected: str, question: str) -> Facts:
        return Facts(contradicted=("always",))

    try:
        assert compare("a", "b").contradicted == ("always",)
    finally:
        FACT_KINDS.unregister("test-always")
    assert not compare("a", "b").contradicts
