"""Rubric prompts and the parsing of judge answers.

The prompts are readable Markdown templates shipped with the package (``evalnb/judges/prompts/*.md``): a
preamble that says how to read the material, one rubric per metric, and the answer format. The text under
judgment (question, response, context, expected response, the conversation so far) is put in labelled DATA
blocks whose end marker carries a hash of the block's own content, so no text inside a block can close it
early and pose as instructions (the text under judgment is data, never instructions).

Parsing is forgiving about form and strict about content: JSON, JSON in a code fence, JSON followed by prose,
``Score: 4`` or ``Verdict: PASS`` are read; a score that is not a whole number on the 1-5 scale (``-3``, ``0``,
``4/10``, ``5 out of 10``, ``1e999``, NaN) or an answer with no score is unreadable.

Example::

    p = build_prompt("Relevance", question="What is 2+2?", response="4")
    p.task, "<<<DATA response" in p
    # ('Relevance', True)
    parse_score('```json\\n{"score": 4, "reason": "ok"}\\n```')
    # (4.0, 'ok')
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from evalnb._text import nfc

__all__ = [
    "METRICS",
    "TASKS",
    "JudgePrompt",
    "build_prompt",
    "fence",
    "parse_score",
    "parse_verdict",
    "score_distribution",
    "template",
]

METRICS = ("Relevance", "Coherence", "Groundedness", "Similarity")
TASKS = (*METRICS, "llm_judge")

# Which pieces of material each rubric shows the judge, in order (the conversation always comes first).
_MATERIAL: dict[str, tuple[str, ...]] = {
    "Relevance": ("question", "response"),
    "Coherence": ("question", "response"),
    "Groundedness": ("question", "context", "response"),
    "Similarity": ("question", "expected", "response"),
    "llm_judge": ("question", "response"),
}
_LABELS = {
    "conversation": "conversation so far",
    "question": "question",
    "context": "context",
    "expected": "expected response",
    "response": "response",
}
REMINDER = (
    "\n\nReminder: your previous reply could not be read. Reply with the JSON object described under "
    '"How to answer" and nothing else.'
)


@cache
def template(name: str) -> str:
    """The text of a prompt template (``relevance``, ``groundedness``, ``preamble`` ...).

    Example::

        "Groundedness" in template("groundedness")
        # True
    """
    return (
        resources.files("evalnb.judges")
        .joinpath("prompts")
        .joinpath(f"{name}.md")
        .read_text(encoding="utf-8")
        .strip()
    )


class JudgePrompt(str):
    """The prompt text, which also remembers what it was built from.

    Model judges only see the string. The offline :class:`~evalnb.judges.HeuristicJudge` reads ``task`` and
    ``fields`` instead of parsing the text back.
    """

    task: str
    fields: dict[str, Any]

    def __new__(cls, text: str, *, task: str, fields: Mapping[str, Any]) -> JudgePrompt:
        obj = super().__new__(cls, text)
        obj.task = task
        obj.fields = dict(fields)
        return obj

    def with_reminder(self) -> JudgePrompt:
        """The same prompt with a note that the previous answer was unreadable (a retry is a new prompt)."""
        return JudgePrompt(str(self) + REMINDER, task=self.task, fields=self.fields)


def fence(name: str, text: str) -> str:
    """A labelled DATA block; its id is a hash of its content, so the content cannot contain its end marker.

    Example::

        print(fence("response", "hi"))  # doctest: +ELLIPSIS
        # <<<DATA response id=...>>>
        # hi
        # <<<END DATA response id=...>>>
    """
    tag = hashlib.sha256(f"{name}\0{text}".encode()).hexdigest()[:12]
    return f"<<<DATA {name} id={tag}>>>\n{text}\n<<<END DATA {name} id={tag}>>>"


def _conversation_text(conversation: Sequence[Mapping[str, Any]]) -> str:
    return "\n\n".join(f"[{m.get('role', 'user')}]\n{m.get('content', '')}" for m in conversation)


def build_prompt(
    task: str,
    *,
    question: str,
    response: str,
    context: str | None = None,
    expected: str | None = None,
    rubric: str | None = None,
    conversation: Sequence[Mapping[str, Any]] = (),
) -> JudgePrompt:
    """The full judge prompt for one metric (or ``llm_judge`` with its ``rubric``).

    Args:
        task: ``Relevance``, ``Coherence``, ``Groundedness``, ``Similarity`` or ``llm_judge``.
        question: the prompt the agent answered.
        response: the agent's answer (the text under judgment).
        context: grounding text (Groundedness).
        expected: the expected response (Similarity).
        rubric: the criterion (``llm_judge``).
        conversation: earlier messages of a multi-turn case, ``{role, content}`` dicts.

    Example::

        build_prompt("llm_judge", question="Summarise", response="...", rubric="Three sentences.").task
        # 'llm_judge'
    """
    if task not in TASKS:
        raise ValueError(f"unknown judge task {task!r}; expected one of {', '.join(TASKS)}")

    def composed(value: Any) -> Any:
        # Unicode NFC, as every check reads text: a judge sees "Café" alike however it was typed
        return nfc(value) if isinstance(value, str) else value

    values: dict[str, Any] = {
        "question": composed(question),
        "response": composed(response),
        "context": composed(context),
        "expected": composed(expected),
        "rubric": composed(rubric),
        "conversation": [{k: composed(v) for k, v in m.items()} for m in conversation],
    }
    parts = [template("preamble")]
    if task == "llm_judge":
        parts.append(template("llm_judge"))
        parts.append("Criterion:\n\n" + fence("criterion", values["rubric"] or ""))
    else:
        parts.append(template(task.lower()))
    parts.append("## Material")
    if conversation:
        parts.append(
            "The earlier turns of this conversation, for context only (grade the last response):\n\n"
            + fence(_LABELS["conversation"].replace(" ", "-"), _conversation_text(values["conversation"]))
        )
    for key in _MATERIAL[task]:
        text = values[key] if values[key] is not None else ""
        parts.append(f"The {_LABELS[key]}:\n\n" + fence(_LABELS[key].replace(" ", "-"), str(text)))
    parts.append(template("answer_verdict" if task == "llm_judge" else "answer_score"))
    return JudgePrompt("\n\n".join(parts) + "\n", task=task, fields=values)


# --------------------------------------------------------------------------------------------------
# Parsing answers
# --------------------------------------------------------------------------------------------------

_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_SCORE_KEYS = ("score", "rating", "grade", "value")
_REASON_KEYS = ("reason", "reasoning", "explanation", "rationale", "justification")
_VERDICT_KEYS = ("verdict", "result", "decision", "pass", "passed")
# "Score (1-5): 4" names the scale before the score: the parenthesis is skipped, and a number that starts a
# range ("1-5", "1 to 5") is the scale, never the score. The score is a whole number on its own: not the tail
# of "-3" or "0.4", not the head of "4.5", "1e999", "4/10", "5 out of 10" or "40%" (only "/5" and "out of 5"
# may follow it: rubric, a 1-5 scale).
_NUMBER_ENDS = r"(?<![-+.\d])([1-5](?:\.0+)?)(?!\.?\d)(?![eE][+-]?\d)(?!\s*%)"
_OTHER_SCALE = r"(?!\s*(?:/|out\s+of|of)\s*(?!5(?!\.?\d))[\d.])"
_SCORE_RE = re.compile(
    r"\b(?:score|rating|grade)\b(?:\s*\([^()\n]{0,30}\))?\W{0,6}?(?:is\W{0,3})?"
    + _NUMBER_ENDS
    + r"(?!(?:-|–)\d|\s+to\s+\d)"
    + _OTHER_SCALE
    + r"(?:\s*(?:/|out\s+of|of)\s*5\b)?\**",
    re.I,
)
_LEADING_RE = re.compile(
    r"^\s*\**([1-5])(?!\.\d)\**\s*" + _OTHER_SCALE + r"(?:(?:/|out\s+of)\s*5)?\s*(?:$|[\n.:\-–—,)])", re.I
)
# A score given as a string: "4", "4.0", "4/5", "4 out of 5" (any other scale is not this rubric's).
_SCORE_TEXT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:(?:/|out\s+of|of)\s*(\d+(?:\.\d+)?))?\s*", re.I)
# A verdict followed by "or FAIL" / "/FAIL" is the answer template echoed back, not a verdict.
_ECHO = r"(?!(?:ED)?\W{0,3}(?:or|/|\|)\W{0,3}(?:PASS|FAIL))"
_VERDICT_RE = re.compile(r"\b(?:verdict|result|decision)\b\W{0,6}?(PASS|FAIL)" + _ECHO + r"(?:ED)?\b", re.I)
_WORD_RE = re.compile(r"\b(PASS|FAIL)(?:ED)?\b")
# "does NOT PASS", "doesn't pass": a negated verdict word is not that verdict.
_NEGATED_RE = re.compile(r"(?:\b(?:not|never|cannot|no)|n't)\W{0,3}$", re.I)
# Reasoning models (deepseek-r1, qwen3 ... as served by Ollama or vLLM) put their deliberation, scores they
# considered and dropped included, in a think block before the answer: only the answer counts.
_THINK_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in the text, fenced ones first, then any ``{...}`` that decodes (prose around it ok)."""
    found: list[dict[str, Any]] = []
    nested: list[dict[str, Any]] = []
    chunks = [m.group(1) for m in _FENCED.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for chunk in chunks:
        i = chunk.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(chunk, i)
            except ValueError:
                i = chunk.find("{", i + 1)
                continue
            if isinstance(obj, dict):
                found.append(obj)
                nested.extend(_inner_objects(obj))
            i = chunk.find("{", end)
    # {"evaluation": {"score": 4, ...}}: objects inside come after every top-level one.
    return found + nested


def _inner_objects(obj: Mapping[str, Any], depth: int = 2) -> list[dict[str, Any]]:
    inner = [v for v in obj.values() if isinstance(v, dict)]
    if depth > 1:
        inner += [w for v in inner for w in _inner_objects(v, depth - 1)]
    return inner


def _answer_part(text: str) -> str:
    """The text without reasoning blocks (``<think>...</think>``); the whole text if nothing else is left."""
    stripped = _THINK_RE.sub("", text)
    return stripped if stripped.strip() else text


def _get(obj: Mapping[str, Any], keys: Sequence[str]) -> Any:
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for k in keys:
        if k in lowered:
            return lowered[k]
    return None


def _has(obj: Mapping[str, Any], keys: Sequence[str]) -> bool:
    return any(str(k).lower() in keys for k in obj)


def _reason_of(obj: Mapping[str, Any]) -> str:
    r = _get(obj, _REASON_KEYS)
    return "" if r is None else str(r).strip()


def _as_score(value: Any) -> float | None:
    """A value read as a score: an integer 1..5 (``4``, ``4.0``, ``"4"``, ``"4/5"``), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        v = float(value)
    elif isinstance(value, str):
        m = _SCORE_TEXT.fullmatch(value)
        if m is None or (m.group(2) is not None and float(m.group(2)) != 5.0):
            return None  # "4/10", "5 out of 10", "-3", "NaN": not a score on this rubric's scale
        v = float(m.group(1))
    else:
        return None
    # rubric: an integer 1..5; anything else (0, -3, 7, 3.5, NaN, infinity) is not an answer we may record.
    if v not in (1.0, 2.0, 3.0, 4.0, 5.0):
        return None
    return v


def _rest(text: str, match: re.Match[str]) -> str:
    # The reason is what follows the score (or what precedes it, when nothing follows).
    after = text[match.end() :].strip(" \n\t.:-–—*")
    rest = after or text[: match.start()].strip(" \n\t.:-–—*")
    return re.sub(r"\s+", " ", rest)[:500]


def parse_score(text: str) -> tuple[float, str] | None:
    """``(score, reason)`` from a 1..5 judge answer, or None when no valid score can be read.

    Example::

        parse_score('{"score": 5, "reason": "complete"} Hope this helps!')
        # (5.0, 'complete')
        parse_score("Score: 2\\nThe answer is off topic.")
        # (2.0, 'The answer is off topic')
        parse_score("I cannot decide") is None
        # True
    """
    text = _answer_part(text)
    for obj in _json_objects(text):
        if _has(obj, _SCORE_KEYS):
            # The first object that gives a score decides: {"score": -3} or {"score": "4/10"} is unreadable,
            # never read again by the patterns below as the "3" or "4" inside it.
            v = _as_score(_get(obj, _SCORE_KEYS))
            return None if v is None else (v, _reason_of(obj))
    for rx in (_SCORE_RE, _LEADING_RE):
        m = rx.search(text)
        if m:
            v = _as_score(m.group(1))
            if v is not None:
                return v, _rest(text, m)
    return None


def _as_verdict(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        v = value.strip().upper()
        if v in ("PASS", "PASSED", "TRUE", "YES"):
            return True
        if v in ("FAIL", "FAILED", "FALSE", "NO"):
            return False
    return None


def parse_verdict(text: str) -> tuple[bool, str] | None:
    """``(passed, reason)`` from a PASS/FAIL judge answer, or None when no single verdict can be read.

    Example::

        parse_verdict('{"verdict": "FAIL", "reason": "two sentences, not three"}')
        # (False, 'two sentences, not three')
        parse_verdict("Verdict: PASS - meets the criterion")
        # (True, 'meets the criterion')
    """
    text = _answer_part(text)
    for obj in _json_objects(text):
        v = _as_verdict(_get(obj, _VERDICT_KEYS))
        if v is not None:
            return v, _reason_of(obj)
    m = _VERDICT_RE.search(text)
    if m:
        return m.group(1).upper() == "PASS", _rest(text, m)
    words = {w.upper() for w in _WORD_RE.findall(text)}
    if len(words) == 1:
        m2 = _WORD_RE.search(text)
        assert m2 is not None
        if _NEGATED_RE.search(text[: m2.start()]):
            return None  # "does NOT PASS": asked again rather than read as the word it negates
        return words == {"PASS"}, _rest(text, m2)
    return None  # none, or both PASS and FAIL in prose: ambiguous, never guessed


# --------------------------------------------------------------------------------------------------
# Probability-weighted scores (G-Eval)
# --------------------------------------------------------------------------------------------------

# The score inside a JSON answer: "score": 4 (or "4", 4.0), the keys parse_score reads.
_JSON_SCORE_RE = re.compile(r'"(?:score|rating|grade|value)"\s*:\s*"?([1-5])(?:\.0+)?"?\s*[,}\n]', re.I)
# A token that is a score and nothing more: "4", " 4", "4," (tokenisers glue spaces and punctuation on).
_SCORE_TOKEN_RE = re.compile(r"\s*([1-5])[\s,.}\"']*")


def _score_start(text: str, value: float) -> int | None:
    """Where the digit of ``value`` that :func:`parse_score` read starts in ``text``, outside think blocks."""
    hidden = [(m.start(), m.end()) for m in _THINK_RE.finditer(text)]
    if hidden and not _answer_part(text).strip():
        hidden = []  # nothing but reasoning: parse_score read the whole text, so do we
    for rx in (_JSON_SCORE_RE, _SCORE_RE, _LEADING_RE):
        for m in rx.finditer(text):
            start = m.start(1)
            if any(a <= start < b for a, b in hidden):
                continue
            if float(m.group(1)) == value:
                return start
            break  # the first score there is another one: parse_score read something else, do not guess
    return None


def score_distribution(text: str, logprobs: Sequence[Mapping[str, Any]] | None) -> dict[int, float] | None:
    """The probability of each score 1..5 at the token where the answer states its score, or None.

    The tokens are joined back into the answer; the score is found in it as :func:`parse_score` finds it;
    the token covering the score's digit gives the distribution: its alternatives that are a score token
    (``"4"``, ``" 4"``, ``"4,"``; the same digit in several spellings adds up), renormalised over 1..5, as
    G-Eval weighs its scores. None when there are no logprobs, no readable score, the score's token is more
    than a digit (``"45"``), or no alternative is a score.

    Example::

        lp = [{"token": '{"score": ', "logprob": 0.0, "top_logprobs": []},
              {"token": "4", "logprob": -0.4, "top_logprobs": [{"token": "4", "logprob": -0.4},
                                                                {"token": "3", "logprob": -1.1}]},
              {"token": '}', "logprob": 0.0, "top_logprobs": []}]
        {k: round(v, 2) for k, v in score_distribution('{"score": 4}', lp).items()}
        # {3: 0.33, 4: 0.67}
    """
    import math

    if not logprobs:
        return None
    tokens = [str(t.get("token") or "") for t in logprobs]
    joined = "".join(tokens)
    parsed = parse_score(joined)
    if parsed is None:
        return None
    start = _score_start(joined, parsed[0])
    if start is None:
        return None
    pos = 0
    for token, entry in zip(tokens, logprobs, strict=True):
        if pos <= start < pos + len(token):
            if not _SCORE_TOKEN_RE.fullmatch(token):
                return None
            alternatives = list(entry.get("top_logprobs") or [])
            if not any(str(a.get("token")) == token for a in alternatives):
                alternatives.append({"token": token, "logprob": entry.get("logprob")})
            probs: dict[int, float] = {}
            for alt in alternatives:
                m = _SCORE_TOKEN_RE.fullmatch(str(alt.get("token") or ""))
                lp = alt.get("logprob")
                if m is None or not isinstance(lp, (int, float)) or lp != lp:
                    continue
                k = int(m.group(1))
                probs[k] = probs.get(k, 0.0) + math.exp(float(lp))
            total = sum(probs.values())
            if total <= 0:
                return None
            return {k: probs[k] / total for k in sorted(probs)}
        pos += len(token)
    return None
