"""The same text in NFC and NFD ("Café crème à Zürich" typed on two systems) is the same text to every check and
judge: ExactMatch, PartialMatch, regex, the cube checks, the rows check's keys and cells, the offline judges and
the prompt a model judge is sent (docs/dataset-json.md, text comparison)."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalnb._text import caseless, content_words, nfc, normalize_tokens
from evalnb.checks._rows import compare_rows, normalise_key
from evalnb.checks._text import exact_match, partial_match_f1
from evalnb.judges import HeuristicJudge, OpenAIJudge, evaluate
from evalnb.judges._rubrics import build_prompt
from evalnb.suite import (
    ExactMatchCheck,
    InsightCheck,
    IntentCheck,
    JudgedMetricCheck,
    LLMJudgeCheck,
    PartialMatchCheck,
    RefusalCheck,
    RegexCheck,
)
from tests.checks._ctx import score
from tests.judges.conftest import blocks, make_ctx
from tests.support.openai_server import OpenAIServer

TEXT = "Café crème à Zürich"
NFC, NFD = unicodedata.normalize("NFC", TEXT), unicodedata.normalize("NFD", TEXT)
PROFILE = settings(
    max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
# Text rich in what has two forms: accented Latin, Hangul syllables, Greek with tonos, combining marks.
FORMS = st.text(
    st.sampled_from(list("aeiouAEIOU ,.") + list("éèàüöÅçñÉÜΆώ가힣ǰẞß") + ["\u0301", "\u0308", "\u0327"]),
    min_size=1,
    max_size=20,
)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_the_two_forms_differ_as_code_points() -> None:
    assert NFC != NFD and len(NFD) > len(NFC)


@pytest.mark.parametrize("case_sensitive", [False, True])
def test_exact_match_and_partial_match(case_sensitive: bool) -> None:
    for got, want in ((NFD, NFC), (NFC, NFD)):
        s = score(ExactMatchCheck(case_sensitive=case_sensitive), expected=want, text=f"Meet at {got}.")
        assert s.passed is True, s.reason
        s = score(PartialMatchCheck(case_sensitive=case_sensitive), expected=want, text=got)
        assert s.value == 1.0, s.reason
    # case folding happens between the forms too: ZÜRICH with a combining diaeresis is zürich
    assert exact_match(nfd("IN ZÜRICH"), "in zürich")
    assert exact_match("STRASSE", "straße")
    assert caseless(nfd("ZÜRICH")) == caseless("zürich") == "zürich"


def test_regex_searches_text_and_pattern_in_nfc() -> None:
    for pattern, text in ((r"\bZürich\b", NFD), (nfd(r"\bZürich\b"), NFC), (r"crème à", NFD)):
        s = score(RegexCheck(on="result", pattern=pattern), text=text)
        assert s.passed is True, s.reason
    # a letter class matches the composed letter as one character
    assert score(RegexCheck(on="result", pattern=r"^Caf\w "), text=NFD).passed is True


def test_cube_checks() -> None:
    assert score(RefusalCheck(contains="Zürich"), refusal=f"nothing about {NFD} here").passed is True
    assert score(InsightCheck(contains=[nfd("crème"), "Zürich"]), insight=NFC).passed is True
    assert score(InsightCheck(contains=["Zürich"]), insight=NFD).value == 1.0
    assert score(IntentCheck(expected="QUERY"), intent="query").passed is True


@pytest.mark.parametrize("order_matters", [True, False])
def test_rows_keys_and_cells(order_matters: bool) -> None:
    expected = [{"Stadt": NFC, "Straße Größe": 1}, {"Stadt": "Genève", "Straße Größe": 2}]
    actual = [{"stadt": NFD, nfd("straße_größe"): 1}, {"STADT": nfd("Genève"), nfd("STRASSE-GRÖSSE"): 2}]
    d = compare_rows(expected, actual, order_matters=order_matters)
    # the keys: NFC and case-insensitive (lower-case, as keys always compared: ß is not ss there)
    assert normalise_key(nfd("Straße Größe")) == normalise_key("straße_größe") == "straßegröße"
    row = "1" if order_matters else 'Stadt="Genève"'  # unordered: the row named by its label, as written
    # the second answer's key spells ß as SS: lower-case keys keep ß, so it is another key
    assert d.lines == [f"rows[{row}].Straße Größe: expected 2 ± (abs 0, rel 0), got nothing (no such key)"]
    actual[1] = {"STADT": nfd("Genève"), nfd("straße größe"): 2}
    assert compare_rows(expected, actual, order_matters=order_matters).passed


@PROFILE
@given(FORMS, st.booleans())
def test_any_text_in_either_form_is_the_same_to_every_text_check(text: str, order_matters: bool) -> None:
    composed, decomposed = nfc(text), nfd(text)
    assert partial_match_f1(decomposed, composed) == partial_match_f1(composed, composed)
    assert normalize_tokens(decomposed) == normalize_tokens(composed)
    assert content_words(decomposed) == content_words(composed)
    if composed.strip():
        assert exact_match(decomposed, composed) and exact_match(composed, decomposed, case_sensitive=True)
    d = compare_rows(
        [{composed or "k": composed}], [{decomposed or "k": decomposed}], order_matters=order_matters
    )
    assert d.passed, d.lines
    # a long column takes the per-distinct-value path: the same answer
    n = 50
    many = compare_rows([{"k": composed}] * n, [{"k": decomposed}] * n, order_matters=order_matters)
    assert many.passed and many.matched == n


# -- the judges' inputs ----------------------------------------------------------------------------------------


def test_the_prompt_holds_every_field_in_nfc() -> None:
    def prompt(t: str) -> Any:
        return build_prompt(
            "llm_judge",
            question=f"Where is {t}?",
            response=t,
            context=t,
            expected=t,
            rubric=f"Names {t}",
            conversation=[{"role": "user", "content": t}],
        )

    composed, decomposed = prompt(NFC), prompt(NFD)
    assert str(decomposed) == str(composed)  # the same text, so the same judge cache key too
    assert decomposed.fields == composed.fields
    assert NFD not in str(decomposed)


def test_the_heuristic_judge_scores_both_forms_alike() -> None:
    judge = HeuristicJudge()
    for task, field in (("Similarity", "expected"), ("Relevance", "question"), ("Groundedness", "context")):
        same = judge.judge(task, {"response": NFC, field: NFC})
        mixed = judge.judge(task, {"response": NFD, field: NFC})
        assert mixed == same, task
    assert judge.judge("Similarity", {"response": NFD, "expected": NFC})["score"] == 5
    assert judge.judge("llm_judge", {"response": NFD, "rubric": "Mentions Zürich"})["verdict"] == "PASS"


def test_the_embedding_judge_and_semantic_similarity_read_nfc() -> None:
    from evalnb.judges.offline._embedding import EmbeddingJudge, cosines, read
    from evalnb.suite import SemanticSimilarityCheck

    assert cosines([NFD], [NFC])[0] == pytest.approx(1.0, abs=1e-5)
    (a,) = read("Similarity", [NFD], questions=["Where?"], expecteds=[NFC])
    (b,) = read("Similarity", [NFC], questions=["Where?"], expecteds=[NFC])
    assert a == b
    judge = EmbeddingJudge()
    assert judge.judge("Relevance", {"response": NFD, "question": f"Is {NFC} nice?"}) == judge.judge(
        "Relevance", {"response": NFC, "question": f"Is {NFC} nice?"}
    )
    s = score(SemanticSimilarityCheck(value=NFC), text=NFD)
    assert s.value == pytest.approx(1.0, abs=1e-5), s.reason


async def test_a_model_judge_is_sent_nfc(openai_server: OpenAIServer) -> None:
    openai_server.default = '{"verdict": "PASS", "score": 5, "reason": "names the city"}'
    judge = OpenAIJudge("judge-model", base_url=openai_server.base_url, cache=False, timeout=5.0)
    for check in (LLMJudgeCheck(rubric=nfd("Names Zürich")), JudgedMetricCheck(type="Similarity")):
        ctx = make_ctx(prompt=nfd("Où est Zürich ?"), response=NFD, expected=NFD, judge=judge)
        await evaluate(check, ctx)
    sent = [r.last_user for r in openai_server.requests]
    assert len(sent) == 2
    for prompt in sent:
        assert prompt == nfc(prompt) and NFC in prompt
    assert blocks(sent[1])["response"] == NFC and blocks(sent[1])["expected-response"] == NFC
