"""regex, ExactMatch, PartialMatch, Citations and the retrieval checks on the specs' examples and edge cases."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from evalnb.checks import _text as text
from evalnb.suite import (
    CitationsCheck,
    ExactMatchCheck,
    PartialMatchCheck,
    RegexCheck,
    RetrievalQueryCheck,
    RetrievalResultCheck,
)
from tests.checks._ctx import score

# --- regex -------------------------------------------------------------------------------------------


def test_the_regex_engine_is_loaded_by_the_first_pattern_not_by_the_checks() -> None:
    # A fresh process: every run loads the built-in checks, and most runs have no pattern to search.
    code = (
        "import json, sys\n"
        "from evalnb.checks import _registry\n"
        "_registry._CHECKS.names()\n"
        "loaded = ['regex' in sys.modules]\n"
        "from evalnb.checks._text import regex_search\n"
        "loaded += [bool(regex_search(r'\\p{L}+', 'Zürich')), 'regex' in sys.modules]\n"
        "print(json.dumps(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [False, True, True]


def test_regex_tasks_spec_example_on_stdout() -> None:
    spec = RegexCheck(on="stdout", pattern=r"\b(summary|synthesis)\b")
    s = score(spec, stdout="Here is the summary of the text.", text="ignored")
    assert s.passed is True and s.value == 1.0
    assert "summary" in s.reason


def test_regex_is_search_not_fullmatch_and_reads_the_chosen_channel() -> None:
    spec = RegexCheck(on="result", pattern=r"\d+")
    assert score(spec, text="the answer is 42 today", stdout="").passed is True
    assert score(spec, text="no digits", stdout="123").passed is False


def test_regex_no_channel_fails_with_reason() -> None:
    s = score(RegexCheck(on="stdout", pattern="x"), text="x")
    assert s.passed is False
    assert "no stdout" in s.reason


def test_regex_empty_and_unicode() -> None:
    assert score(RegexCheck(on="result", pattern="^$"), text="").passed is True
    assert score(RegexCheck(on="result", pattern="café|日本"), text="un café au 日本").passed is True


def test_regex_very_long_output() -> None:
    long = "x" * 2_000_000 + " needle"
    t0 = time.perf_counter()
    assert score(RegexCheck(on="result", pattern="needle$"), text=long).passed is True
    assert time.perf_counter() - t0 < 2


def test_regex_pathological_pattern_is_bounded() -> None:
    # The classic catastrophic pattern: `(a+)+$` on "a"*40 + "b" must not hang.
    t0 = time.perf_counter()
    s = score(RegexCheck(on="result", pattern=r"(a+)+$"), text="a" * 40 + "b")
    assert time.perf_counter() - t0 < 3
    assert s.passed is False


def test_regex_timeout_reports_degraded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "REGEX_TIMEOUT", 0.05)
    t0 = time.perf_counter()
    s = score(RegexCheck(on="result", pattern=r"(a|aa)+$"), text="a" * 60 + "b")
    assert time.perf_counter() - t0 < 1
    assert s.status == "degraded" and s.passed is False
    assert s.reason == "regex timed out after 0.05s"


# --- ExactMatch ----------------------------------------------------------------------------------------


def test_exact_match_contains_trimmed_case_insensitive() -> None:
    spec = ExactMatchCheck()
    expected = "  A unified API endpoint for Microsoft services. "
    assert score(
        spec, expected=expected, text="Graph is a unified api endpoint for microsoft services."
    ).passed
    assert not score(spec, expected=expected, text="An API.").passed


def test_exact_match_case_sensitive() -> None:
    spec = ExactMatchCheck(case_sensitive=True)
    assert not score(spec, expected="Request manager approval.", text="request manager approval.").passed
    assert score(spec, expected="Request manager approval.", text="Please Request manager approval.").passed


def test_exact_match_missing_expected_fails_with_reason() -> None:
    s = score(ExactMatchCheck(), expected=None, text="anything")
    assert s.passed is False
    assert "expected_response is missing" in s.reason


def test_exact_match_none_response_and_unicode() -> None:
    assert score(ExactMatchCheck(), expected="x", text=None).passed is False
    assert score(ExactMatchCheck(), expected="STRASSE", text="die Straße").passed is True  # casefold


# --- PartialMatch ----------------------------------------------------------------------------------------


def test_partial_match_reason_format_and_value() -> None:
    # response tokens: unified api endpoint (3); expected: unified api endpoint for services (5, "A" removed)
    s = score(
        PartialMatchCheck(), expected="A unified API endpoint for services", text="unified API endpoint"
    )
    assert s.value == pytest.approx(0.75)
    assert s.reason == "Match score: 0.750 (threshold 0.5)"
    assert s.passed is True


def test_partial_match_two_thirds() -> None:
    s = score(PartialMatchCheck(), expected="red green blue", text="red green yellow")
    assert s.reason == "Match score: 0.667 (threshold 0.5)"


def test_partial_match_normalisation_punctuation_articles_whitespace() -> None:
    assert text.normalize_tokens("The  cat, an   owl & a DOG!") == ["cat", "owl", "dog"]
    assert text.partial_match_f1("The cat!", "cat") == 1.0


def test_partial_match_threshold_and_case_sensitive() -> None:
    spec = PartialMatchCheck(threshold=0.9, case_sensitive=True)
    s = score(spec, expected="Paris France", text="paris France")
    assert s.value == pytest.approx(0.5) and s.passed is False


def test_partial_match_edge_cases() -> None:
    assert score(PartialMatchCheck(), expected="x", text="").value == 0.0
    assert score(PartialMatchCheck(), expected="x", text=None).passed is False
    s = score(PartialMatchCheck(), expected=None, text="x")
    assert s.passed is False and "expected_response is missing" in s.reason
    assert text.partial_match_f1("¿Qué tal? Très bien.", "que tal tres bien") < 1.0
    assert text.partial_match_f1("Très bien", "très bien") == 1.0


# --- Citations -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "body", "count"),
    [
        ("oai_unicode", "Graph is an API 【3:0†source】 and more 【4:1†docs.md】.", 2),
        ("bracket", "As shown [1] and [2, 3].", 3),
        ("bracket", "A footnote [^1] and a link [1](http://x) are not brackets.", 0),
        ("markdown", "See [the docs](https://learn.microsoft.com) and note[^1].\n\n[^1]: a note", 2),
        ("mixed", "A 【3:0†source】 B [1] C [docs](https://x.org) D [^2]", 4),
        ("oai_unicode", "", 0),
    ],
)
def test_citation_formats(fmt: str, body: str, count: int) -> None:
    assert text.citation_count(body, fmt) == count


def test_citations_check_threshold_and_structured() -> None:
    spec = CitationsCheck(citation_format="mixed", threshold=2)
    s = score(spec, text="see [1]")
    assert s.value == 1.0 and s.passed is False
    s = score(spec, text="see [1]", citations=[{"url": "https://a"}])
    assert s.value == 2.0 and s.passed is True
    assert "structured" in s.reason
    assert score(CitationsCheck(), text=None).value == 0.0


# --- Retrieval ---------------------------------------------------------------------------------------------


def test_retrieval_checks_never_pass_without_diagnostics() -> None:
    for spec in (RetrievalQueryCheck(), RetrievalResultCheck()):
        s = score(spec, text="answer")
        assert s.passed is False and s.value is None
        assert "not evaluated" in s.reason and "retrieval diagnostics" in s.reason


def test_retrieval_checks_with_diagnostics() -> None:
    meta = {"retrieval": {"queries": ["graph api"], "results": [{"id": 1}, {"id": 2}]}}
    assert score(RetrievalQueryCheck(), text="a", meta=meta).passed is True
    s = score(RetrievalResultCheck(settings={"threshold": 3}), text="a", meta=meta)
    assert s.value == 2.0 and s.passed is False


# --- the matchers' fast paths ------------------------------------------------------------------------------

_WORDS = [
    "The",
    "a",
    "AN",
    "end.",
    "it's",
    "$5",
    "x+y",
    "Café",
    "STRASSE",
    "straße",
    "“quoted”",
    "the's",
    "-",
    "",
]


def test_ascii_tokens_are_the_documented_normalisation() -> None:
    import itertools

    from evalnb._text import normalize_tokens

    for n in (1, 2, 3):
        for words in itertools.product(_WORDS, repeat=n):
            for sep in (" ", "\t", "  \n"):
                sample = sep.join(words)
                for sensitive in (False, True):
                    assert text._tokens(sample, sensitive) == normalize_tokens(
                        sample, case_sensitive=sensitive
                    )
    assert text._tokens(None, False) == []


def test_equal_match_scores_are_one_object_and_say_the_same() -> None:
    exact, partial = ExactMatchCheck(), PartialMatchCheck(threshold=0.5)
    first, again = (
        score(exact, text="It is Paris.", expected="paris"),
        score(exact, text="paris", expected="Paris"),
    )
    assert first is again and first.passed is True and "case-insensitive" in first.reason
    sensitive = score(ExactMatchCheck(case_sensitive=True), text="Paris", expected="Paris")
    assert sensitive.passed is True and "case-sensitive" in sensitive.reason
    assert score(exact, text="Rome", expected="Paris").passed is False
    a = score(partial, text="answer one two", expected="answer one three")
    b = score(partial, text="answer four five", expected="answer four six")
    assert a is b and a.value == pytest.approx(2 / 3) and a.reason == "Match score: 0.667 (threshold 0.5)"
    c = score(PartialMatchCheck(threshold=0.7), text="answer one two", expected="answer one three")
    assert c.passed is False and c.reason == "Match score: 0.667 (threshold 0.7)"
