"""Small text helpers shared by the text checks, the offline judges, the failure browser and the demo agents.

Word tokenising (the one home of evalnb's word patterns: :data:`WORD` and its named variants), stop words,
content words, sentence splitting, the normalisation and token F1 of the ``PartialMatch`` (docs/dataset-json.md,
text comparison), and :func:`nearest`, the "did you mean" of every message. Standard library only: it is imported by checks that run on
every turn.

Text compares in Unicode NFC (:func:`nfc`, :func:`caseless`): "é" typed as one code point and as "e" with a
combining accent are the same text to every check and judge (docs/dataset-json.md, text comparison).

Callers pick the variant they need with keyword options (a word pattern, a stop-word set, whether line
breaks end sentences), because their scores and answers are pinned by reference data: the demo's saved
results, the reference labels and the notebooks. Changing a default here changes those numbers.

Example::

    from evalnb._text import content_words, sentences, token_f1
    content_words("The meal allowance is $40 per day.")
    # ['meal', 'allowance', '40', 'per', 'day']
    sentences("It rains. We stay in.")
    # ['It rains.', 'We stay in.']
    round(token_f1(["meal", "allowance"], ["daily", "meal", "allowance"]), 3)
    # 0.8
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

__all__ = [
    "ALNUM_WORD",
    "ARTICLES",
    "FUNCTION_WORDS",
    "HANDLE_WORD",
    "LETTERS",
    "LETTER_WORD",
    "NAME_WORD",
    "PIECE",
    "PLAIN_WORD",
    "STOP_WORDS",
    "WORD",
    "caseless",
    "content_words",
    "f1",
    "is_content",
    "nearest",
    "nfc",
    "normalize_tokens",
    "pieces",
    "sentences",
    "strip_punctuation",
    "token_f1",
    "word_set",
    "words",
]


def nfc(text: str) -> str:
    """``text`` in Unicode normalisation form C (composed), the form text is compared in; the same object
    when it is ASCII or already composed, which is nearly always.

    Example::

        nfc("Cafe\u0301") == "Café"
        # True
    """
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", text)


def caseless(text: str) -> str:
    """``text`` for comparing without regard to case: case-folded (``ß`` -> ``ss``) between canonical
    decompositions, then composed again (Unicode's canonical caseless matching), so the case-insensitive
    checks find "ZÜRICH" in "Zürich" whichever way either was typed.

    Example::

        caseless("ZU\u0308RICH") == caseless("zürich")
        # True
    """
    if text.isascii():
        return text.casefold()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


# The word patterns of evalnb, one home for all: the checks, the judges and the browser take theirs from here.
# They differ on purpose, each for what its caller compares, and the offline judges' agreement with human
# labels (benchmarks/judge_agreement.py) is pinned to their exact tokens: add a named variant, never edit one.

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
"""A run of letters or digits in any script, with one inner apostrophe kept (``don't``, ``l’eau``): the default
of :func:`words` and :func:`content_words` (the heuristic and embedding judges)."""

PLAIN_WORD = re.compile(r"\w+")
"""A run of word characters (letters, digits, underscore), apostrophes split."""

ALNUM_WORD = re.compile(r"[^\W_]+")
"""A run of letters or digits, apostrophes, hyphens and underscores split (``o'brien`` -> ``o``, ``brien``):
the offline fact judge matches the parts of a name with it, so ``O'Brien`` is found in ``Brien's``."""

LETTERS = re.compile(r"[^\W\d_]+")
"""A run of letters only (no digits): a word where a number would be read apart, as in ``how many days``."""

LETTER_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
"""Letters with one inner apostrophe kept (``isn't``) and no digits: the fact judge reads negations with it,
where ``n't`` must stay on its word and a number is no word a negation can scope over."""

NAME_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
"""Letters joined by inner apostrophes or hyphens (``O'Brien``, ``Jean-Luc``, ``Saint-Étienne``): one word of
a proper name, as the fact judge finds names."""

HANDLE_WORD = re.compile(r"[\w@.+'’-]+")
"""A run that keeps e-mail addresses, handles and dotted names whole (``ana.lopez+hr@example.com``): the fact
judge looks names up in a text's words both ways, whole and split by :data:`ALNUM_WORD`."""

PIECE = re.compile(r"\s+|\w+|[^\w\s]")
"""White space runs, word-character runs and single other characters: :func:`pieces`, which join back into the
text, for a word diff that shows the text as written."""


def word_set(text: str) -> frozenset[str]:
    """The white-space separated words of ``text`` as a set: keeps long word lists readable.

    Example::

        sorted(word_set("to be or not to be"))
        # ['be', 'not', 'or', 'to']
    """
    return frozenset(text.split())


ARTICLES = word_set("a an the")

FUNCTION_WORDS = ARTICLES | word_set("and or of to in on at is are was were it this that for with as by be")
"""The most frequent English function words: enough to weigh sentences by what they are about."""

STOP_WORDS = FUNCTION_WORDS | word_set(
    """
    but from been its these those there what which who when where why how do does did can could should
    would may might must i you my your me we our they them their he she his her if so than too very just
    also about into not no yes any some all each up out will shall
    """
)
"""English stop words: function words, pronouns, auxiliaries and question words (lower-case)."""


def words(text: str | None, *, pattern: re.Pattern[str] = WORD) -> list[str]:
    """The words of ``text`` as ``pattern`` finds them, each lower-cased.

    Args:
        text: the text (None reads as empty).
        pattern: what a word is; :data:`WORD` by default, :data:`PLAIN_WORD` for ``\\w+`` runs.

    Example::

        words("Don't panic: 42 towels!")
        # ["don't", 'panic', '42', 'towels']
    """
    # Lower-case after matching: lower-casing first can split a letter into a letter and a combining
    # mark (``İ``), which would change where words end.
    # NFC first: in decomposed text a combining accent is no word character and would split "Café".
    return [w.lower() for w in pattern.findall(nfc(text or ""))]


def pieces(text: str | None) -> list[str]:
    """``text`` cut into words, white space and single other characters (:data:`PIECE`), as written: no case
    change and no normalisation, so ``"".join(pieces(t)) == t``.

    Example::

        pieces("Don't panic!")
        # ['Don', "'", 't', ' ', 'panic', '!']
    """
    return PIECE.findall(text or "")


def is_content(word: str, *, min_length: int = 2) -> bool:
    """Whether a non-stop word carries content: ``min_length`` characters or more, or a number.

    Example::

        [w for w in ["x", "7", "ox"] if is_content(w)]
        # ['7', 'ox']
    """
    return len(word) >= min_length or word.isdigit()


def content_words(
    text: str | None,
    *,
    stop: Collection[str] = STOP_WORDS,
    pattern: re.Pattern[str] = WORD,
    min_length: int = 2,
) -> list[str]:
    """The lower-cased words of ``text`` that are not stop words and carry content (:func:`is_content`).

    Args:
        text: the text (None reads as empty).
        stop: the words to drop (lower-case).
        pattern: what a word is (see :func:`words`).
        min_length: shorter words are dropped, numbers excepted; 1 keeps every non-stop word.

    Example::

        content_words("What is the capital of France?")
        # ['capital', 'france']
    """
    return [w for w in words(text, pattern=pattern) if w not in stop and is_content(w, min_length=min_length)]


_SENTENCE_BREAKS: dict[tuple[bool, bool], re.Pattern[str]] = {
    (False, False): re.compile(r"(?<=[.!?])\s+"),
    (False, True): re.compile(r"(?<=[.!?])\s+(?=[A-Z])"),
    (True, False): re.compile(r"(?<=[.!?])\s+|\n+"),
    (True, True): re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n+"),
}


def sentences(text: str | None, *, lines: bool = False, capital: bool = False) -> list[str]:
    """Split ``text`` into sentences at ``.``, ``!`` or ``?`` followed by white space; empty ones dropped.

    Args:
        text: the text (None reads as empty).
        lines: line breaks end sentences too (list items, headings); otherwise white space, line breaks
            included, is collapsed to single spaces first.
        capital: a sentence ends only where the next one starts with a capital letter A-Z, which keeps
            ``9 a.m. to 5 p.m.`` in one piece.

    Example::

        sentences("Meals cost $40. Trips need approval.\\nAsk HR", lines=True)
        # ['Meals cost $40.', 'Trips need approval.', 'Ask HR']
    """
    text = text or ""
    if not lines:
        text = " ".join(text.split())
    return [s.strip() for s in _SENTENCE_BREAKS[lines, capital].split(text) if s.strip()]


# --------------------------------------------------------------------------------------------------
# PartialMatch normalisation and token F1 (docs/dataset-json.md, text comparison)
# --------------------------------------------------------------------------------------------------

_ASCII_PUNCT = str.maketrans("", "", string.punctuation)


def strip_punctuation(text: str) -> str:
    """Remove ASCII punctuation and every Unicode punctuation character (category ``P*``).

    Example::

        strip_punctuation("¿Qué? «Oui», it's.")
        # 'Qué Oui its'
    """
    text = text.translate(_ASCII_PUNCT)
    if text.isascii():  # the common case needs no per-character look-up
        return text
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))


def normalize_tokens(text: str | None, *, case_sensitive: bool = False) -> list[str]:
    """docs/dataset-json.md, text comparison: Unicode NFC, lower-case unless case-sensitive, punctuation and
    articles removed, whitespace collapsed; returns the tokens.

    Example::

        normalize_tokens("The unified API, endpoint!")
        # ['unified', 'api', 'endpoint']
    """
    text = nfc(text or "")
    if not case_sensitive:
        text = nfc(text.lower())
    # Punctuation goes before splitting (so "end." and "end" are one token); articles are whole tokens.
    return [t for t in strip_punctuation(text).split() if t.lower() not in ARTICLES]


def f1(common: int, n_got: int, n_want: int) -> float:
    """The F1 of ``common`` shared tokens between ``n_got`` produced and ``n_want`` expected ones; 0.0
    when nothing is shared.

    Example::

        f1(2, 2, 3)
        # 0.8
    """
    if not common:
        return 0.0
    precision, recall = common / n_got, common / n_want
    return 2 * precision * recall / (precision + recall)


def token_f1(got: Sequence[str], want: Sequence[str]) -> float:
    """Token-level F1 of two token lists, counting repeated tokens as often as both have them; 0.0 when
    either is empty.

    Example::

        token_f1(["a", "b", "b"], ["b", "b", "c"])
        # 0.6666666666666666
    """
    if not got or not want:
        return 0.0
    return f1(sum((Counter(got) & Counter(want)).values()), len(got), len(want))


# --------------------------------------------------------------------------------------------------
# "Did you mean ...?"
# --------------------------------------------------------------------------------------------------


def nearest(word: object, candidates: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The candidate closest to ``word``, or None when nothing is close (or ``word`` is not a text): the one
    rule of every "did you mean" in evalnb's messages.

    Case does not count when matching (``Prompt`` is as near ``prompt`` as ``prompt`` is), and the suggestion
    is the candidate as it is spelled (``PartialMatch``, not ``partialmatch``): a message suggests what the
    user should type. Of candidates that differ only in case, the first is suggested. Closeness is difflib's
    ratio, at least ``cutoff``.

    Example::

        nearest("exactmatch", ["ExactMatch", "PartialMatch"])
        # 'ExactMatch'
        nearest("zzz", ["ExactMatch"]) is None
        # True
    """
    if not isinstance(word, str):
        return None
    import difflib  # a message's helper: not paid for by the checks that import this module on every turn

    pool: dict[str, str] = {}
    for candidate in candidates:
        pool.setdefault(caseless(candidate), candidate)
    hit = difflib.get_close_matches(caseless(word), list(pool), n=1, cutoff=cutoff)
    return pool[hit[0]] if hit else None
