"""Facts of an expected response that an answer states, omits or contradicts: the part of Similarity that
an embedding cannot see.

The Similarity rubric (``prompts/similarity.md``) scores "the meaning and facts of the expected response":
"missing or different facts" lower the score, and "different or opposite in meaning" is a 1. A mean of
word vectors hears "$60 a day" as close to "$40 a day" as a paraphrase, and "do not rub" as close to "rub".
This module reads the facts that can be read without a model, deterministically and with the standard
library only:

* **quantities**: numbers (digits or words, ``forty``, ``one hundred``) with their units, converted to one
  scale per dimension (``36 months`` is ``three years``; ``300,000 km per hour`` is not ``per second``), money,
  percentages, clock times (``5:30 pm`` is ``17:30``), calendar years, ranges (``2 to 3 litres``), and counts
  (``five continents``; a bare ``Seven.`` counts what the question asks, "how many continents");
* **names**: capitalised words inside a sentence, multi-word names, an answer that is only a name, e-mail
  addresses and web addresses;
* **yes / no**: the polarity a yes-or-no answer starts with;
* **negation**: a word the one text negates ("do not rub") and the other asserts ("rub it hard").

Each kind is a function registered in :data:`FACT_KINDS`; :func:`compare` runs them all. Numbers and names
that the question already gives are not facts of the answer (an answer that repeats "$55" from the question
states nothing about the allowance).

What counts as a contradiction is deliberately narrow, because a false one turns a right answer into a 1:

* a quantity: a quantity of the expected response is not stated, and the answer states one of the same kind
  (same unit dimension, or the same counted noun) that matches no quantity of the expected response; an extra
  quantity beside a matched one is detail, not a contradiction;
* names: the names are what the expected response says (at least half of its content words that the
  question lacks: "Jane Austen.", "Seven: Africa, Antarctica, ..."), the answer names none of them, and it
  names others. A name beside other content ("... (Rayleigh scattering) ...") is missed when absent, not
  contradicted by whatever the answer capitalises ("the Sun's light");
* yes / no: the answer starts with the opposite word;
* negation: a content word is negated on one side and only asserted on the other.

Example::

    facts = compare("The allowance is $60 a day.", "$40 a day.", question="What is the meal allowance?")
    facts.contradicted
    # ('$60 a day where the expected response has $40 a day',)
    compare("You can spend forty dollars per day.", "$40 a day.").matched
    # ('$40 a day',)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from evalnb._registry import Registry
from evalnb._text import (
    ALNUM_WORD,
    HANDLE_WORD,
    LETTER_WORD,
    LETTERS,
    NAME_WORD,
    STOP_WORDS,
    content_words,
    word_set,
)

__all__ = ["FACT_KINDS", "Facts", "Quantity", "compare", "names", "quantities", "register_fact_kind"]

# --------------------------------------------------------------------------------------------------
# Numbers and units
# --------------------------------------------------------------------------------------------------

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
)
_SMALL = {w: i for i, w in enumerate(_NUMBER_WORDS.split())}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * i for i, w in enumerate(_TENS_WORDS.split(), 2)}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 10**6, "billion": 10**9}

_UNITS: dict[str, tuple[str, float]] = {}
"""Unit word (lower case) -> (dimension, factor to the dimension's base unit)."""


def _units(dimension: str, factor: float, spellings: str) -> None:
    for spelling in spellings.split():
        _UNITS[spelling] = (dimension, factor)


_DAY = 86_400.0
_YEAR = 365.25 * _DAY
_units("time", 1, "second seconds sec secs s")
_units("time", 60, "minute minutes min mins")
_units("time", 3_600, "hour hours hr hrs h")
_units("time", _DAY, "day days")
_units("time", 7 * _DAY, "week weeks wk wks")
_units("time", _YEAR / 12, "month months")
_units("time", _YEAR, "year years yr yrs")
_units("time", 10 * _YEAR, "decade decades")
_units("length", 0.001, "millimetre millimetres millimeter millimeters mm")
_units("length", 0.01, "centimetre centimetres centimeter centimeters cm")
_units("length", 1, "metre metres meter meters m")
_units("length", 1_000, "kilometre kilometres kilometer kilometers km")
_units("length", 0.0254, "inch inches")
_units("length", 0.3048, "foot feet ft")
_units("length", 1_609.344, "mile miles mi")
_units("volume", 0.001, "millilitre millilitres milliliter milliliters ml")
_units("volume", 1, "litre litres liter liters l")
_units("mass", 0.001, "milligram milligrams mg")
_units("mass", 1, "gram grams g")
_units("mass", 1_000, "kilogram kilograms kilo kilos kg")
_units("mass", 453.59237, "lb lbs")
_units("money:USD", 1, "dollar dollars usd $")
_units("money:GBP", 1, "pound pounds gbp £")
_units("money:EUR", 1, "euro euros eur €")
_units("percent", 1, "percent % per-cent")
_units("data", 1, "byte bytes")
_units("data", 1e3, "kilobyte kilobytes kb")
_units("data", 1e6, "megabyte megabytes mb")
_units("data", 1e9, "gigabyte gigabytes gb")
_units("temperature", 1, "degree degrees °c ° celsius")
_units("temperature", 1, "°f fahrenheit")
_FAHRENHEIT = word_set("°f fahrenheit")
_SCALE_NAMES = word_set("°c celsius °f fahrenheit")
_RATE = word_set("a an per each every /")
_HEDGES = word_set("about around roughly approximately approx nearly almost some ~ circa")
_CONVERSION_TOLERANCE = 0.02
"""Relative difference under which two quantities in different units are the same: conversions round (a
month is not exactly 30 days, a mile is 1.609 km). In the same unit, numbers are equal or not: 24 days are
not 25 days."""
_HEDGED_TOLERANCE = 0.10
"""... and when either side hedges ("about 300,000 km per second"). Clock times and years are exact."""

# A number's unit suffix is a run of letters (evalnb._text.LETTERS), a word one of a name's words (NAME_WORD).
_TOKEN = re.compile(
    r"""
    (?P<clock>\b\d{1,2}:\d{2}(?:\s*[ap]\.?m\b\.?)?|\b\d{1,2}\s*[ap]\.?m\b\.?)
    | (?P<currency>[$£€])\s?(?P<amount>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)
    | (?<![\w~./])(?<![^\W\d_]-)(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<suffix>%|"""
    + LETTERS.pattern
    + r""")?
    | (?P<word>"""
    + NAME_WORD.pattern
    + r"""|[%°]\w?)
    | (?P<punct>[^\w\s])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Quantity:
    """A quantity as a text states it.

    Attributes:
        low: the value in the base unit of its dimension (seconds, metres, litres, grams, minutes after
            midnight for a clock time, the number itself for a count); the lower end of a range.
        high: the upper end of a range (``low`` when it is one value).
        kind: what it measures: a dimension (``"time"``, ``"money:USD"``, ``"clock"``, ``"year"`` ...), or
            ``"count:<noun>"`` for a count, or ``"number"`` for a bare number.
        per: the seconds of the rate's period (``$40 a day``: 86400), or None.
        hedged: the text says "about", "roughly" ...
        text: the words it was read from (``"forty dollars"``).
        unit: the factor of its unit to the base unit (two quantities in different units were converted).
    """

    low: float
    high: float
    kind: str
    per: float | None = None
    hedged: bool = False
    text: str = ""
    unit: float = 1.0

    def intervals(self) -> list[tuple[float, float]]:
        """The values it may mean: a clock time without am/pm may be either half of the day."""
        out = [(self.low, self.high)]
        if self.kind == "clock:12h":
            out.append((self.low + 720, self.high + 720))
        return out

    @property
    def dimension(self) -> str:
        return "clock" if self.kind.startswith("clock") else self.kind

    def same(self, other: Quantity) -> bool:
        """Whether the two state the same amount (within the tolerance; rates compared per second when both
        are rates)."""
        if self.dimension in ("clock", "year"):
            tolerance = 0.0
        elif self.hedged or other.hedged:
            tolerance = _HEDGED_TOLERANCE
        elif self.unit != other.unit or self.per != other.per:
            tolerance = _CONVERSION_TOLERANCE
        else:
            tolerance = 1e-9
        scale_a = self.per if self.per and other.per else 1.0
        scale_b = other.per if self.per and other.per else 1.0
        for lo_a, hi_a in self.intervals():
            for lo_b, hi_b in other.intervals():
                lo_a_, hi_a_, lo_b_, hi_b_ = lo_a / scale_a, hi_a / scale_a, lo_b / scale_b, hi_b / scale_b
                slack = tolerance * max(abs(hi_a_), abs(hi_b_))
                if lo_a_ <= hi_b_ + slack and lo_b_ <= hi_a_ + slack:
                    return True
        return False


@dataclass
class _Tok:
    kind: str
    text: str
    value: float | None = None
    unit: str | None = None


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    for m in _TOKEN.finditer(text):
        if m.group("clock"):
            out.append(_Tok("clock", m.group("clock")))
        elif m.group("currency"):
            amount = float(m.group("amount").replace(",", ""))
            out.append(_Tok("number", m.group(0), amount, unit=m.group("currency")))
        elif m.group("number"):
            suffix = (m.group("suffix") or "").lower()
            if suffix and suffix not in _UNITS and suffix not in _SCALES:
                continue  # 3x, 2nd, 4th, v2-like tokens are not quantities
            out.append(_Tok("number", m.group(0), float(m.group("number").replace(",", ""))))
            if suffix in _SCALES:
                out[-1].value = (out[-1].value or 0) * _SCALES[suffix]
            elif suffix:
                out[-1].unit = suffix
        elif m.group("word"):
            out.append(_Tok("word", m.group("word")))
        else:
            out.append(_Tok("punct", m.group("punct")))
    return _number_words(out)


def _number_words(tokens: list[_Tok]) -> list[_Tok]:
    """Merge number words (``one hundred and five``, ``forty-two``) and scale words after digits
    (``3 million``) into number tokens."""
    out: list[_Tok] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.kind == "number" and t.unit is None and i + 1 < len(tokens):
            nxt = tokens[i + 1].text.lower()
            if tokens[i + 1].kind == "word" and nxt in _SCALES and t.value is not None:
                out.append(_Tok("number", f"{t.text} {nxt}", t.value * _SCALES[nxt]))
                i += 2
                continue
        parts = t.text.lower().split("-") if t.kind == "word" else []
        if parts and all(p in _SMALL or p in _TENS for p in parts):
            total, current, j = 0, 0, i
            used: list[str] = []
            while j < len(tokens) and tokens[j].kind == "word":
                w = tokens[j].text.lower()
                ps = w.split("-")
                if all(p in _SMALL or p in _TENS for p in ps):
                    current += sum(_SMALL.get(p, _TENS.get(p, 0)) for p in ps)
                elif w in _SCALES:
                    current = max(current, 1) * _SCALES[w]
                    if _SCALES[w] >= 1000:
                        total, current = total + current, 0
                elif w == "and" and used and j + 1 < len(tokens) and _is_number_word(tokens[j + 1].text):
                    pass  # "one hundred and five"
                else:
                    break
                used.append(tokens[j].text)
                j += 1
            out.append(_Tok("number", " ".join(used), float(total + current), unit="word"))
            i = j
            continue
        out.append(t)
        i += 1
    return out


def _is_number_word(word: str) -> bool:
    return all(p in _SMALL or p in _TENS or p in _SCALES for p in word.lower().split("-"))


def _clock_minutes(text: str) -> tuple[float, bool]:
    """Minutes after midnight, and whether it is a 12-hour time without am/pm (either half of the day)."""
    t = text.lower().replace(".", "").replace(" ", "")
    pm, am = t.endswith("pm"), t.endswith("am")
    hours, _, minutes = t.rstrip("apm").partition(":")
    h, m = int(hours), int(minutes or 0)
    if pm and h < 12:
        h += 12
    if am and h == 12:
        h = 0
    return float(h * 60 + m), not (am or pm) and 1 <= h <= 12


def _lemma(word: str) -> str:
    """A light singular of an English noun (``continents`` -> ``continent``, ``boxes`` -> ``box``)."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("es") and len(w) > 4 and w[-3] in "sxz":
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


_HOW_MANY = re.compile(rf"\bhow\s+(?:many|much)\s+({LETTERS.pattern})", re.IGNORECASE)


def quantities(text: str, *, question: str | None = None) -> list[Quantity]:
    """The quantities a text states, in order.

    A number's unit is the word after it (or after one modifier: ``three consecutive days``); a number
    before a noun that is not a unit counts that noun; a bare number counts what the question asks
    ("How many continents ...?" makes ``Seven.`` seven continents). ``one`` with nothing after it is a
    pronoun, not a number.

    Example::

        [(q.kind, q.low, q.per) for q in quantities("About 2 to 3 litres a day")]
        # [('volume', 2.0, 86400.0)]
    """
    tokens = _tokens(text or "")
    asked = _HOW_MANY.search(question or "")
    counted = _lemma(asked.group(1)) if asked else None
    out: list[Quantity] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        prev = tokens[i - 1].text.lower() if i else ""
        hedged = prev in _HEDGES
        if t.kind == "clock":
            minutes, ambiguous = _clock_minutes(t.text)
            out.append(Quantity(minutes, minutes, "clock:12h" if ambiguous else "clock", text=t.text))
            i += 1
            continue
        if t.kind != "number" or t.value is None:
            i += 1
            continue
        q, used = _read_quantity(tokens, i, counted)
        if q is None:
            i += 1
            continue
        out.append(Quantity(q.low, q.high, q.kind, q.per, hedged, q.text, q.unit))
        i = used
    return out


def _unit_of(word: str) -> tuple[str, float] | None:
    return _UNITS.get(word.lower())


class _Words:
    """The tokens of a text with each word lower-cased (``None`` for a token that is not a word, or past the end)."""

    __slots__ = ("tokens", "words")

    def __init__(self, tokens: list[_Tok]) -> None:
        self.tokens = tokens
        self.words = [tk.text.lower() if tk.kind == "word" else None for tk in tokens]

    def __call__(self, k: int) -> str | None:
        return self.words[k] if k < len(self.words) else None


def _read_quantity(tokens: list[_Tok], i: int, counted: str | None) -> tuple[Quantity | None, int]:
    """The quantity whose number is ``tokens[i]``, and the index after what it used."""
    t = tokens[i]
    value = float(t.value or 0.0)
    word = _Words(tokens)
    high, j = _range_end(word, i)
    unit_word, text, j = _unit_word(word, i, j)
    unit = _unit_of(unit_word) if unit_word else None
    if unit is not None:
        return _measured(word, j, value, high, unit_word, unit, text)
    noun = word(j)
    if noun is not None and noun not in STOP_WORDS and not _is_number_word(noun):
        return Quantity(value, high, f"count:{_lemma(noun)}", text=f"{text} {tokens[j].text}"), j + 1
    if t.unit == "word" and value == 1:
        return None, j  # "one" on its own is a pronoun ("the long ones", "one of them")
    if high == value and value == int(value) and 1000 <= value <= 2100 and "," not in t.text:
        return Quantity(value, high, "year", text=text), j
    return Quantity(value, high, f"count:{counted}" if counted else "number", text=text), j


def _range_end(word: _Words, i: int) -> tuple[float, int]:
    """A range: "2 to 3 litres", "2-3 litres", "between 2 and 3 litres" (the unit after the second number): its
    high end and the index after it; else the number itself and the index after it."""
    tokens, t, j = word.tokens, word.tokens[i], i + 1
    if (
        j + 1 < len(tokens)
        and (word(j) in ("to", "and") or tokens[j].text in ("-", "–"))
        and tokens[j + 1].kind == "number"
        and tokens[j + 1].unit in (None, "word")
        and (t.unit in (None, "word"))
    ):
        return float(tokens[j + 1].value or 0.0), j + 2
    return float(t.value or 0.0), j


def _unit_word(word: _Words, i: int, j: int) -> tuple[str, str, int]:
    """The unit of the number at ``i`` (its own: "$40", "60%", "5km"; the next word; or the one after an
    adjective: "three consecutive days"), the text read so far, and the index after the unit."""
    tokens, t = word.tokens, word.tokens[i]
    if t.unit not in (None, "word"):
        return (t.unit or "").lower(), t.text, j
    if word(j) is not None and _unit_of(word(j) or ""):
        return word(j) or "", f"{t.text} {tokens[j].text}", j + 1
    if (
        word(j) is not None
        and word(j) not in STOP_WORDS
        and len(word(j + 1) or "") > 2
        and _unit_of(word(j + 1) or "")
    ):
        return word(j + 1) or "", f"{t.text} {tokens[j].text} {tokens[j + 1].text}", j + 2
    return "", t.text, j


def _measured(
    word: _Words, j: int, value: float, high: float, unit_word: str, unit: tuple[str, float], text: str
) -> tuple[Quantity, int]:
    """A number with a unit, in the unit's base (Fahrenheit to Celsius), with its rate ("a day") if one follows."""
    tokens = word.tokens
    dimension, factor = unit
    fahrenheit = unit_word in _FAHRENHEIT or (dimension == "temperature" and word(j) in _FAHRENHEIT)
    if dimension == "temperature" and word(j) in _SCALE_NAMES:
        j += 1  # "100 degrees Celsius"
    low_v, high_v = value * factor, high * factor
    if fahrenheit:
        low_v, high_v = (value - 32) * 5 / 9, (high - 32) * 5 / 9
    per = None
    if (word(j) in _RATE or (j < len(tokens) and tokens[j].text == "/")) and _unit_of(word(j + 1) or ""):
        period = _unit_of(word(j + 1) or "")
        if period is not None and period[0] == "time":
            per = period[1]  # "$40 a day", "300,000 km per second", "5 km/h"
            text = f"{text} {tokens[j].text} {tokens[j + 1].text}"
            j += 2
    return Quantity(low_v, high_v, dimension, per, text=text, unit=factor), j


# --------------------------------------------------------------------------------------------------
# The comparison
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """What an answer does with the facts of an expected response, each fact described in words."""

    matched: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    contradicted: tuple[str, ...] = ()

    @property
    def contradicts(self) -> bool:
        return bool(self.contradicted)

    def __add__(self, other: Facts) -> Facts:
        return Facts(
            self.matched + other.matched, self.missing + other.missing, self.contradicted + other.contradicted
        )


FactKind = Callable[[str, str, str], Facts]
FACT_KINDS: Registry[FactKind] = Registry("fact kind")
"""The kinds of fact compared, by name: ``f(answer, expected, question) -> Facts`` (a read-only mapping)."""


def register_fact_kind(name: str) -> Callable[[FactKind], FactKind]:
    """Register a kind of fact for :func:`compare` (a decorator); a name registered again is replaced."""

    def add(function: FactKind) -> FactKind:
        FACT_KINDS.register(name, function, replace=True)
        return function

    return add


def compare(answer: str, expected: str, *, question: str | None = None) -> Facts:
    """The facts of ``expected`` (those the question does not already give) that ``answer`` states, omits
    or contradicts, over every kind of :data:`FACT_KINDS`.

    Example::

        compare("There are five continents.", "Seven.", question="How many continents are there?")
        # Facts(matched=(), missing=('Seven',), contradicted=('five continents where the expected response has Seven',))
    """
    total = Facts()
    for kind in FACT_KINDS.values():
        total = total + kind(answer or "", expected or "", question or "")
    return total


def _numbers_in(text: str) -> set[float]:
    return {float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", text)} | {
        q.low for q in quantities(text)
    }


def _comparable(a: Quantity, e: Quantity) -> bool:
    return a.dimension == e.dimension or "number" in (a.dimension, e.dimension)


@register_fact_kind("quantities")
def _compare_quantities(answer: str, expected: str, question: str) -> Facts:
    given = _numbers_in(question)

    def new(q: Quantity) -> bool:
        # A number the question gives is not a fact of the answer ("I spent $55 ..." -> "$55 is over ...").
        written = re.findall(r"\d[\d,]*(?:\.\d+)?", q.text)
        return not (q.low in given or (written and float(written[0].replace(",", "")) in given))

    want = [q for q in quantities(expected, question=question) if new(q)]
    got = [q for q in quantities(answer, question=question) if new(q)]
    # Stating a fact may be lenient (a bare number of the expected response is stated by the same number
    # of anything); contradicting one is strict (the same kind of quantity, another amount).
    matched = [e for e in want if any(_comparable(a, e) and a.same(e) for a in got)]
    missing = [e for e in want if e not in matched]
    contradicted = []
    for a in got:
        # A quantity the expected response does not have is a contradiction only where the expected one of
        # its kind is not stated: beside a matched one it is detail ("6 minutes, then 1 minute in cold water").
        rivals = [e for e in missing if e.dimension == a.dimension]
        if rivals and not any(_comparable(a, e) and a.same(e) for e in want):
            contradicted.append(f"{a.text} where the expected response has {rivals[0].text}")
    return Facts(
        tuple(q.text for q in matched), tuple(q.text for q in missing), tuple(dict.fromkeys(contradicted))
    )


# --------------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------------

_NAME_WORD = NAME_WORD
_ADDRESS = re.compile(
    r"^(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?://)?[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?:/\S*)?)$"
)
_SENTENCE_END = re.compile(r"[.!?:;]['\")\]]*$")


def _stem(word: str) -> str:
    """A light stem that lets ``rubbing``, ``rubbed`` and ``rub`` (and ``LEDs`` and ``LED``) meet."""
    w = word.lower().strip(".'’")
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


def _not_a_name(word: str) -> bool:
    """Capitalised words that are not names: stop words, numbers in words, units (``Celsius``)."""
    return word in STOP_WORDS or _is_number_word(word) or word in _UNITS


def names(text: str) -> list[str]:
    """The names a text states, in order: capitalised words that do not start a sentence, words of a
    multi-word name (``Charlotte Brontë``), a text that is only a name (``Jupiter.``), e-mail and web
    addresses.

    A capitalised word that starts a sentence on its own (``Saturn is ...``) is not told apart from an
    ordinary first word; it is not read as a name.

    Example::

        names("Call the helpdesk or email help@example.com; the office is in New York.")
        # ['help@example.com', 'New', 'York']
    """
    raw = (text or "").split()
    cleaned = [re.sub(r"^[^\w@]+|[^\w@]+$", "", t) for t in raw]
    present = [w for w in cleaned if w]
    only_names = 0 < len(present) <= 3 and all(w[:1].isupper() for w in present)
    out: list[str] = []
    for i, w in enumerate(cleaned):
        if not w:
            continue
        if _ADDRESS.match(w) and not w.replace(".", "").isdigit():
            out.append(w)
            continue
        if not _NAME_WORD.fullmatch(w) or not w[0].isupper() or len(w) < 2 or _not_a_name(w.lower()):
            continue
        starts = i == 0 or _SENTENCE_END.search(raw[i - 1]) is not None
        nxt = cleaned[i + 1] if i + 1 < len(cleaned) else ""
        joined = (
            nxt[:1].isupper() and _NAME_WORD.fullmatch(nxt) is not None and not _SENTENCE_END.search(raw[i])
        )
        if not starts or only_names or joined:
            out.append(w)
    return out


def _stems(text: str) -> set[str]:
    lowered = (text or "").lower()
    return {_stem(w) for w in HANDLE_WORD.findall(lowered)} | {_stem(w) for w in ALNUM_WORD.findall(lowered)}


@register_fact_kind("names")
def _compare_names(answer: str, expected: str, question: str) -> Facts:
    asked = _stems(question)
    want = list(dict.fromkeys(n for n in names(expected) if _stem(n) not in asked))
    said = _stems(answer)
    matched = [n for n in want if _stem(n) in said]
    missing = [n for n in want if n not in matched]
    known = asked | _stems(expected)
    others = list(dict.fromkeys(n for n in names(answer) if _stem(n) not in known))
    contradicted: tuple[str, ...] = ()
    content = [w for w in content_words(expected) if _stem(w) not in asked]
    named = {_stem(w) for n in want for w in ALNUM_WORD.findall(n.lower())}
    central = bool(content) and 2 * sum(1 for w in content if _stem(w) in named) >= len(content)
    if central and not matched and others:
        contradicted = (f"names {' '.join(others)}, not {' '.join(want)}",)
    return Facts(tuple(matched), tuple(missing), contradicted)


# --------------------------------------------------------------------------------------------------
# Yes / no, and negation
# --------------------------------------------------------------------------------------------------

_YES = word_set("yes yeah yep sure certainly absolutely definitely")
_NO = word_set("no nope")


_FIRST_WORDS = re.compile(rf"\W*({LETTERS.pattern})(?:\s+({LETTERS.pattern}))?")


def _polarity(text: str) -> str | None:
    m = _FIRST_WORDS.match(text or "")
    if not m:
        return None
    first = m.group(1).lower()
    if first in _YES or (first == "of" and (m.group(2) or "").lower() == "course"):
        return "yes"
    return "no" if first in _NO else None


@register_fact_kind("yes/no")
def _compare_polarity(answer: str, expected: str, question: str) -> Facts:
    want, said = _polarity(expected), _polarity(answer)
    if want is None:
        return Facts()
    if said is None:
        return Facts(missing=(want,))
    if said == want:
        return Facts(matched=(want,))
    return Facts(contradicted=(f"'{said}' where the expected response says '{want}'",))


_NEGATORS = word_set("not no never without cannot nor neither")
_SCOPE_SKIPS = STOP_WORDS | word_set("be been being ever always really to one any")
_CLAUSE = re.compile(rf"{LETTER_WORD.pattern}|[.,;:!?()]")


def _negated_and_asserted(text: str) -> tuple[set[str], set[str]]:
    """The stems of the content words the text negates (the first content word after a negator in the same
    clause), and those it only asserts."""
    negated: set[str] = set()
    asserted: set[str] = set()
    pending = False
    for token in _CLAUSE.findall(text or ""):
        w = token.lower().replace("’", "'")
        if w in ".,;:!?()":
            pending = False
        elif w in _NEGATORS or w.endswith("n't"):
            pending = True
        elif w not in _SCOPE_SKIPS and len(w) >= 3:
            (negated if pending else asserted).add(_stem(w))
            pending = False
    return negated, asserted - negated


@register_fact_kind("negation")
def _compare_negation(answer: str, expected: str, question: str) -> Facts:
    neg_e, pos_e = _negated_and_asserted(expected)
    neg_a, pos_a = _negated_and_asserted(answer)
    flipped = sorted(neg_e & pos_a)
    reversed_ = sorted(neg_a & pos_e)
    return Facts(
        contradicted=tuple(f"asserts '{w}', which the expected response negates" for w in flipped)
        + tuple(f"negates '{w}', which the expected response asserts" for w in reversed_)
    )
