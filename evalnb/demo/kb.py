"""An offline knowledge-base assistant: answers questions from a markdown handbook by simple retrieval.

It plays the "retrieval-augmented assistant" of the JSON dataset example without any model: the handbook
(``evalnb/examples/kb/handbook.md``, package data) is split into numbered sections and sentences; a question is answered with the
sentences whose content words overlap it most (with light stemming and a small synonym table), followed by
a bracket citation of the section they come from (``[5]``, the dataset spec's ``bracket`` format). The
retrieved section goes into ``Response.context`` so that Groundedness has something to check against, and
the retrieval diagnostics go into ``Response.meta["retrieval"]`` (RetrievalQuery / RetrievalResult).

``KBAssistant(flaw="no-citations")`` is the "previous version": it answers with the whole matching section
and cites nothing, so answers are long (PartialMatch drops) and Citations fails.

Example::

    from evalnb.demo.kb import KBAssistant
    print(KBAssistant().answer("How often are laptops replaced?").text)
    # Laptops are replaced every three years [6].
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from evalnb._text import STOP_WORDS, is_content, sentences, word_set, words
from evalnb.agents._base import Request, Response

__all__ = ["KBAssistant", "Section", "handbook_path"]

MODEL = "kb-retrieval-1"
Flaw = Literal["no-citations"]

# Words here are lower-case ASCII runs that keep a leading "$" ("$40" is not "40 days"), with an
# apostrophe suffix ("employee's"); the handbook and the suite are in plain English.
_WORD = re.compile(r"[a-z0-9$]+(?:'[a-z]+)?")
# Chat words that say nothing about which handbook section is meant ("okay, how many days do I get?").
_STOP = STOP_WORDS | word_set("get gets got have has had ok okay per")
# A small query expansion: words staff use for what the handbook calls something else.
_SYNONYMS = {
    "dinner": ("meal",),
    "lunch": ("meal",),
    "breakfast": ("meal",),
    "food": ("meal",),
    "trip": ("travel",),
    "business": ("work",),
    "extra": ("overage", "above"),
    "over": ("overage", "above"),
    "spent": ("spend",),
    "holiday": ("leave",),
    "vacation": ("leave",),
    "ill": ("sick",),
    "doctor": ("doctor",),
    "hours": ("open",),
    "time": ("hours",),
    "computer": ("laptop",),
    "password": ("password", "reset"),
}


def handbook_path() -> Path:
    """The handbook the demo assistant answers from (``kb/handbook.md`` of :mod:`evalnb.examples`)."""
    from evalnb.examples import resource

    return resource("kb/handbook.md")


def _stem(word: str) -> str:
    """Crude suffix stripping, enough to match ``replaced``/``replace``, ``expenses``/``expense``."""
    if word.isdigit() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # submitted -> submit
            elif len(word) > 3 and word[-1] == word[-2] == "l":
                word = word[:-1]  # travelling -> travel
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _terms(text: str, *, expand: bool = False) -> list[str]:
    found = [w for w in words(text.lower().replace("’", "'"), pattern=_WORD) if w not in _STOP]
    found = [w.removesuffix("'s") for w in found]
    if expand:
        found = found + [s for w in found for s in _SYNONYMS.get(w, ())]
    # Possessives are cut before the length test: "x's" is the one-letter word "x", dropped.
    return [_stem(w) for w in found if is_content(w)]


@dataclass
class Section:
    """One numbered section of the handbook: its number, title, body and sentences."""

    number: str
    title: str
    body: str
    sentences: list[str] = field(default_factory=list)


def parse_handbook(text: str) -> list[Section]:
    """Split a markdown handbook into sections at ``## N. Title`` headings (the preamble is section 0).

    Example::

        [s.number for s in parse_handbook(handbook_path().read_text())][:3]
        # ['0', '1', '2']
    """
    sections: list[Section] = []
    number, title, lines = "0", "Introduction", list[str]()
    for line in text.splitlines():
        m = re.match(r"^##\s+(\d+)\.?\s*(.*)$", line)
        if m:
            sections.append(Section(number, title, "\n".join(lines).strip()))
            number, title, lines = m.group(1), m.group(2).strip(), []
        elif not line.startswith("# "):
            lines.append(line)
    sections.append(Section(number, title, "\n".join(lines).strip()))
    for s in sections:
        # A sentence ends at . ! ? followed by a capital letter: keeps "9 a.m. to 5 p.m." in one piece.
        s.sentences = sentences(s.body, capital=True)
    return [s for s in sections if s.body]


class KBAssistant:
    """The demo knowledge-base assistant (``model="kb-retrieval-1"``); offline and deterministic.

    Args:
        handbook: the markdown file to answer from (default: the shipped ``evalnb/examples/kb/handbook.md``).
        flaw: ``"no-citations"`` answers with the whole matching section and no citation (the previous
            version of the demo).

    Example::

        result = evalnb.run(evalnb.examples.path("knowledge-base"), KBAssistant(), judge="heuristic")
    """

    def __init__(self, handbook: str | Path | None = None, *, flaw: Flaw | None = None) -> None:
        if flaw not in (None, "no-citations"):
            raise ValueError(f"unknown flaw {flaw!r}: use 'no-citations'")
        self.path = Path(handbook) if handbook is not None else handbook_path()
        self.flaw = flaw
        self.model = MODEL if flaw is None else f"{MODEL}-{flaw}"
        self.sections = parse_handbook(self.path.read_text(encoding="utf-8"))

    def __repr__(self) -> str:
        return f"KBAssistant(flaw={self.flaw!r})" if self.flaw else "KBAssistant()"

    async def respond(self, request: Request) -> Response:
        """The Agent protocol: answer one turn; earlier user turns help with follow-up questions."""
        return self.answer(request.prompt, request.history)

    def _ranked(self, question: str, history: list[dict[str, str]]) -> list[tuple[float, Section, str]]:
        want = Counter(_terms(question, expand=True))
        # A follow-up ("what should I do about the extra $15?") leans on the earlier question's words at
        # half weight, so it stays in the same part of the handbook.
        earlier = [m.get("content", "") for m in history if m.get("role") == "user"]
        before = Counter(_terms(" ".join(earlier[-1:]), expand=True))
        scored = []
        for section in self.sections:
            title = set(_terms(section.title))
            for sentence in section.sentences:
                have = set(_terms(sentence))
                score = sum(1.0 for w in want if w in have) + sum(0.5 for w in before if w in have)
                score += 0.25 * sum(1 for w in want if w in title)
                scored.append((score, section, sentence))
        scored.sort(key=lambda t: -t[0])  # stable: handbook order among equals
        return scored

    def answer(self, question: str, history: list[dict[str, str]] | None = None) -> Response:
        """Answer a question synchronously (handy in a notebook).

        Example::

            KBAssistant().answer("What is the daily meal allowance?").text
            # 'The daily meal allowance when travelling for work is $40 [5].'
        """
        ranked = self._ranked(question, history or [])
        best_score, section, sentence = ranked[0] if ranked else (0.0, None, "")
        if section is None or best_score < 1.0:
            text = "I could not find that in the handbook. Please ask HR at hr@brightside.example."
            return Response(
                text=text, model=self.model, meta={"retrieval": {"queries": [question], "results": []}}
            )
        # Keep a second sentence of the same section when it matches as well (answers that span two).
        picked = [sentence]
        for score, sec, other in ranked[1:3]:
            if sec is section and score >= max(2.0, best_score) and other not in picked:
                picked.append(other)
        picked.sort(key=section.sentences.index)
        if self.flaw == "no-citations":
            text = " ".join(section.body.split())
        else:
            # The citation goes inside the last sentence ("... $40 [5].") so it reads as part of the claim.
            body = " ".join(picked)
            end = body[-1] if body[-1] in ".!?" else ""
            text = f"{body[: len(body) - len(end)]} [{section.number}]{end}"
        retrieval = {
            "queries": [question],
            "results": [{"section": section.number, "title": section.title, "score": best_score}],
        }
        return Response(
            text=text,
            context=" ".join(section.body.split()),
            model=self.model,
            meta={"retrieval": retrieval},
        )
