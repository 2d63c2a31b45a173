"""The shared text helpers: the variants the heuristic judge, the demo agents and PartialMatch rely on."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from evalnb._text import (
    ARTICLES,
    FUNCTION_WORDS,
    PLAIN_WORD,
    STOP_WORDS,
    content_words,
    f1,
    nearest,
    normalize_tokens,
    sentences,
    strip_punctuation,
    token_f1,
    word_set,
    words,
)


def test_words_keep_inner_apostrophes_and_any_script() -> None:
    assert words("Don't panic: 42 towels!") == ["don't", "panic", "42", "towels"]
    assert words("L’eau coûte 3 €, 日本 snake_case") == ["l’eau", "coûte", "3", "日本", "snake", "case"]
    assert words(None) == [] and words("") == []
    # Lower-cased after matching: "İ" stays one word with its letters instead of splitting at the dot.
    assert words("İstanbul") == ["i̇stanbul"]


def test_plain_words_split_apostrophes_and_keep_underscores() -> None:
    assert words("don't snake_case", pattern=PLAIN_WORD) == ["don", "t", "snake_case"]


def test_content_words_drop_stop_words_and_single_letters_but_not_numbers() -> None:
    assert content_words("What is the capital of France?") == ["capital", "france"]
    assert content_words("x y 7 ok") == ["7", "ok"]
    assert content_words("x y 7 ok", min_length=1) == ["x", "y", "7", "ok"]
    assert content_words("the summary is a list", stop=FUNCTION_WORDS) == ["summary", "list"]


def test_stop_word_sets_nest() -> None:
    assert ARTICLES < FUNCTION_WORDS < STOP_WORDS
    assert all(w == w.lower() and w.strip() == w for w in STOP_WORDS)
    assert {"what", "how", "you", "not"} <= STOP_WORDS and "capital" not in STOP_WORDS
    assert word_set(" a\nb  a ") == frozenset({"a", "b"})


def test_sentences_variants() -> None:
    text = "Open 9 a.m. to 5 p.m. daily.  Ask HR!\n- bring a badge\nWhy? Because."
    assert sentences(text) == [
        "Open 9 a.m.",
        "to 5 p.m.",
        "daily.",
        "Ask HR!",
        "- bring a badge Why?",
        "Because.",
    ]
    # Only a capital letter starts a sentence: "a.m. to" and "! - bring" do not.
    assert sentences(text, capital=True) == [
        "Open 9 a.m. to 5 p.m. daily.",
        "Ask HR! - bring a badge Why?",
        "Because.",
    ]
    assert sentences(text, lines=True) == [
        "Open 9 a.m.",
        "to 5 p.m.",
        "daily.",
        "Ask HR!",
        "- bring a badge",
        "Why?",
        "Because.",
    ]
    assert sentences("  \n ") == [] and sentences(None) == []


def test_partial_match_normalisation() -> None:
    assert normalize_tokens("The  cat, an   owl & a DOG!") == ["cat", "owl", "dog"]
    assert normalize_tokens("The Cat", case_sensitive=True) == ["Cat"]  # articles go in any case
    assert strip_punctuation("¿Qué? «Oui», it's.") == "Qué Oui its"


def test_f1_counts_repeats_once_per_side() -> None:
    assert token_f1(["a", "b", "b"], ["b", "b", "c"]) == f1(2, 3, 3) == 2 / 3
    assert token_f1([], ["a"]) == 0.0 and token_f1(["a"], []) == 0.0
    assert f1(0, 3, 4) == 0.0
    assert token_f1(["meal", "allowance"], ["daily", "meal", "allowance"]) == 0.8


def test_users_build_their_stop_words_on_the_shared_ones() -> None:
    from evalnb.demo import kb, task_agent  # noqa: F401 - the modules must import with the helpers
    from evalnb.judges.offline import _heuristic as heuristic

    assert STOP_WORDS < heuristic._STOP and STOP_WORDS < kb._STOP
    assert {"please", "explain", "que"} <= heuristic._STOP and {"okay", "per"} <= kb._STOP


def test_the_helpers_import_only_the_standard_library() -> None:
    # Checks import them on every turn: beyond what `import evalnb` loads, only the stdlib may come in.
    code = (
        "import sys, evalnb; before = set(sys.modules); import evalnb._text; "
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith('evalnb')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    new = ast.literal_eval(out)
    third_party = [m for m in new if m.split(".")[0] not in sys.stdlib_module_names]
    assert third_party == [], third_party


def test_nearest_ignores_case_and_suggests_the_spelling_of_the_candidate() -> None:
    assert nearest("exactmatch", ["ExactMatch", "PartialMatch"]) == "ExactMatch"
    assert nearest("PROMPT", ["prompt", "turns"]) == "prompt"
    assert nearest("Promt", ["prompt"]) == "prompt"
    assert nearest("ZÜRICH", ["zürich"]) == "zürich"  # caseless, as the text checks compare
    # of candidates that differ only in case, the first is suggested
    assert nearest("model", ["Model", "MODEL"]) == "Model"
    assert nearest("zzz", ["ExactMatch"]) is None
    assert nearest(3, ["3"]) is None  # a key that is no text has no near miss
    assert nearest("abc", ["abd"], cutoff=0.9) is None
    assert nearest("abc", []) is None


def test_every_did_you_mean_follows_the_one_rule(tmp_path: Path) -> None:
    import pytest

    import evalnb
    from evalnb import _costs
    from evalnb.config import Config
    from evalnb.errors import ConfigError, SuiteError
    from evalnb.formats._common import nearest as formats_nearest

    assert formats_nearest is nearest
    # the configuration file: an agent's key typed in another case is suggested as the key is spelled
    with pytest.raises(ConfigError, match=r"did you mean 'argv'\?"):
        Config.from_dict({"agents": {"x": {"type": "command", "ARGV": ["a"]}}})
    # the price table, which matched case-sensitively before
    with pytest.raises(ConfigError, match=r"unknown key 'Input' \(did you mean 'input'\?\)"):
        _costs.price_table({"m": {"Input": 1.0, "output": 2.0}})
    # a suite format
    path = tmp_path / "t.json"
    path.write_text('{"items": [{"Prompt": "hi"}]}', encoding="utf-8")
    with pytest.raises(SuiteError, match=r"did you mean 'prompt'\?"):
        evalnb.load(path)


def test_the_word_patterns_are_pinned() -> None:
    # The offline judges' agreement figures and the checks' scores rest on these exact tokens: a change is a
    # new named variant in evalnb/_text.py, never an edit of one of these.
    from evalnb import _text

    assert {name: getattr(_text, name).pattern for name in _WORD_PATTERNS} == _WORD_PATTERNS


_WORD_PATTERNS = {
    "WORD": r"[^\W_]+(?:['’][^\W_]+)?",
    "PLAIN_WORD": r"\w+",
    "ALNUM_WORD": r"[^\W_]+",
    "LETTERS": r"[^\W\d_]+",
    "LETTER_WORD": r"[^\W\d_]+(?:['’][^\W\d_]+)?",
    "NAME_WORD": r"[^\W\d_]+(?:['’-][^\W\d_]+)*",
    "HANDLE_WORD": r"[\w@.+'’-]+",
    "PIECE": r"\s+|\w+|[^\w\s]",
}


def test_the_named_variants_split_as_their_callers_need() -> None:
    from evalnb._text import ALNUM_WORD, HANDLE_WORD, LETTER_WORD, LETTERS, NAME_WORD, WORD, pieces

    text = "Don't e-mail ana.lopez+hr@example.com about Jean-Luc O'Brien's 3 days_off!"
    assert words(text) == ["don't", "e", "mail", "ana", "lopez", "hr", "example", "com", "about", "jean", "luc", "o'brien", "s", "3", "days", "off"]  # fmt: skip
    assert words(text, pattern=PLAIN_WORD)[-2:] == ["3", "days_off"]
    assert ALNUM_WORD.findall("O'Brien's 3rd") == ["O", "Brien", "s", "3rd"]
    assert LETTERS.findall("3rd day") == ["rd", "day"]
    assert LETTER_WORD.findall("isn't 3 l’eau") == ["isn't", "l’eau"]
    assert NAME_WORD.findall("Jean-Luc O'Brien-Smith 42") == ["Jean-Luc", "O'Brien-Smith"]
    assert HANDLE_WORD.findall("mail ana.lopez+hr@example.com now") == [
        "mail",
        "ana.lopez+hr@example.com",
        "now",
    ]
    assert WORD.findall("l’eau") == ["l’eau"]
    # pieces keep the text as written: they join back into it, case and accents untouched
    for sample in ("Don't  panic!\n", "Cafe\u0301 — ÉTÉ", "", "a_b\tc"):
        assert "".join(pieces(sample)) == sample
    assert pieces("Hi, you") == ["Hi", ",", " ", "you"]


def test_the_judges_and_the_browser_take_their_words_from_the_one_home() -> None:
    from evalnb import _text
    from evalnb.browser import _views
    from evalnb.judges.offline import _facts

    assert _facts._NAME_WORD is _text.NAME_WORD
    assert _facts._CLAUSE.pattern == _text.LETTER_WORD.pattern + "|[.,;:!?()]"
    assert (
        _text.NAME_WORD.pattern in _facts._TOKEN.pattern and _text.LETTERS.pattern in _facts._HOW_MANY.pattern
    )
    assert not hasattr(_views, "_TOKEN")
    left, right = _views.word_diff("the cat", "the dog")
    assert left.startswith("the <del") and left.endswith(">cat</del>") and right.endswith(">dog</ins>")
