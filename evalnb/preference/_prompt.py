"""The pairwise prompt a model judge sees, and the reading of its verdict (and of the verdict's probabilities).

docs/comparison.md, pairwise: the two answers are labelled neutrally (Answer 1, Answer 2) in DATA blocks, after
the request, the conversation before it and the expected answer when there is one; the judge answers
``{"verdict": "1" | "2" | "tie", "reason": ...}``. When the endpoint returns token probabilities, the
probabilities of ``1``, ``2`` and ``tie`` at the verdict's token are the verdict's distribution.

Example::

    parse_preference('{"verdict": "2", "reason": "complete"}')
    # ('second', 'complete')
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from evalnb._text import nfc
from evalnb.judges._rubrics import fence, template

__all__ = [
    "DEFAULT_RUBRIC",
    "PairPrompt",
    "build_pair_prompt",
    "parse_preference",
    "preference_distribution",
]

DEFAULT_RUBRIC = (
    "The better answer responds better to the request: it is correct, complete for what was asked, clear and "
    "to the point."
)
REMINDER = (
    "\n\nReminder: your previous reply could not be read. Reply with the JSON object described under "
    '"How to answer" and nothing else: {"verdict": "1" or "2" or "tie", "reason": "..."}.'
)
CHOICES = ("first", "second", "tie")


@cache
def _own(name: str) -> str:
    return resources.files("evalnb.preference").joinpath(name).read_text(encoding="utf-8").strip()


class PairPrompt(str):
    """The prompt text; it also remembers what it was built from (``fields``: question, first, second,
    expected, rubric, conversation), for judges that read the material rather than the text."""

    task: str = "pairwise"
    fields: dict[str, Any]

    def __new__(cls, text: str, *, fields: Mapping[str, Any]) -> PairPrompt:
        obj = super().__new__(cls, text)
        obj.fields = dict(fields)
        return obj

    def with_reminder(self) -> PairPrompt:
        """The same prompt with a note that the previous answer was unreadable (a retry is a new prompt)."""
        return PairPrompt(str(self) + REMINDER, fields=self.fields)


def _conversation(history: Sequence[Mapping[str, str]], earlier: Sequence[tuple[str, str, str]]) -> str:
    parts = [f"[{m.get('role', 'user')}]\n{nfc(str(m.get('content', '')))}" for m in history]
    for prompt, first, second in earlier:
        parts.append(f"[user]\n{nfc(prompt)}")
        parts.append(f"[assistant, the author of Answer 1]\n{nfc(first)}")
        parts.append(f"[assistant, the author of Answer 2]\n{nfc(second)}")
    return "\n\n".join(parts)


def build_pair_prompt(
    *,
    question: str,
    first: str,
    second: str,
    expected: str | None = None,
    rubric: str | None = None,
    history: Sequence[Mapping[str, str]] = (),
    earlier: Sequence[tuple[str, str, str]] = (),
) -> PairPrompt:
    """The full pairwise prompt: ``first`` is shown as Answer 1, ``second`` as Answer 2.

    Args:
        question: the prompt both agents answered.
        first: the answer shown first.
        second: the answer shown second.
        expected: the expected answer, when the suite has one.
        rubric: the criterion (default :data:`DEFAULT_RUBRIC`).
        history: messages the suite writes before the prompt.
        earlier: earlier turns: ``(prompt, first's answer, second's answer)``.

    Example::

        p = build_pair_prompt(question="2+2?", first="4", second="5")
        "<<<DATA answer-1" in p, p.fields["second"]
        # (True, '5')
    """
    criterion = nfc(rubric) if rubric else DEFAULT_RUBRIC
    parts = [template("preamble"), _own("prompt.md"), "Criterion:\n\n" + fence("criterion", criterion)]
    parts.append("## Material")
    if history or earlier:
        parts.append(
            "The conversation before the request, for context only (compare the last answers):\n\n"
            + fence("conversation-so-far", _conversation(history, earlier))
        )
    parts.append("The request:\n\n" + fence("request", nfc(question)))
    if expected is not None:
        parts.append("The expected answer:\n\n" + fence("expected-answer", nfc(expected)))
    parts.append("Answer 1:\n\n" + fence("answer-1", nfc(first)))
    parts.append("Answer 2:\n\n" + fence("answer-2", nfc(second)))
    parts.append(_own("prompt_answer.md"))
    fields = {
        "question": question,
        "first": first,
        "second": second,
        "expected": expected,
        "rubric": criterion,
        "conversation": [*history],
    }
    return PairPrompt("\n\n".join(parts) + "\n", fields=fields)


# --------------------------------------------------------------------------------------------------
# Reading the verdict
# --------------------------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_KEYS = ("verdict", "winner", "better", "preference", "choice")
_JSON_VERDICT = re.compile(r'"(?:verdict|winner|better|preference|choice)"\s*:\s*"?([^",}\n]*)"?', re.I)
_LINE_VERDICT = re.compile(r"^\W*(?:verdict|winner|better)\W*[:=-]\s*\**\s*([^\n.,;]*)", re.I | re.M)
_REASON = re.compile(r'"(?:reason|reasoning|explanation|rationale)"\s*:\s*"((?:[^"\\]|\\.)*)"', re.I | re.S)


def choice_of(value: Any) -> str | None:
    """``first``, ``second`` or ``tie`` from what a judge wrote (``"1"``, ``"Answer 2"``, ``"tie"``,
    ``"first"``, ``"equal"`` ...); None when it names none of them.

    Example::

        choice_of("Answer 1"), choice_of(" TIE "), choice_of("maybe")
        # ('first', 'tie', None)
    """
    v = re.sub(r"[\s*\"'\[\]().]+", " ", str(value)).strip().lower()
    v = re.sub(r"^(?:answer|response|option)\s*", "", v)
    if v in ("1", "first", "a1", "one"):
        return "first"
    if v in ("2", "second", "a2", "two"):
        return "second"
    if v in ("tie", "0", "equal", "neither", "both", "draw", "same", "none"):
        return "tie"
    return None


def parse_preference(text: str) -> tuple[str, str] | None:
    """``(choice, reason)`` from a judge's answer (JSON, JSON in prose, or a ``Verdict: 2`` line), or None.

    Example::

        parse_preference("Verdict: tie. Both are right.")
        # ('tie', 'Verdict: tie. Both are right.')
    """
    body = _THINK.sub("", str(text))
    found = {c for c in (choice_of(m.group(1)) for m in _JSON_VERDICT.finditer(body)) if c is not None}
    if not found:
        found = {c for c in (choice_of(m.group(1)) for m in _LINE_VERDICT.finditer(body)) if c is not None}
    if len(found) != 1:
        return None  # none, or two different verdicts: asked again, never guessed
    reason = ""
    m = _REASON.search(body)
    if m:
        try:
            reason = str(json.loads(f'"{m.group(1)}"'))
        except ValueError:
            reason = m.group(1)
    elif "{" not in body:
        reason = body.strip()
    return found.pop(), reason.strip()


def preference_distribution(
    text: str, logprobs: Sequence[Mapping[str, Any]] | None
) -> dict[str, float] | None:
    """The probabilities of ``first``, ``second`` and ``tie`` at the token where the answer states its verdict.

    The token covering the verdict's first character gives them: its alternatives that read as a verdict
    (``"1"``, ``" 2"``, ``"tie"``; several spellings of one add up), renormalised. None without logprobs, when
    the verdict cannot be found, or when no alternative is a verdict.

    Example::

        lp = [{"token": '{"verdict": "', "logprob": 0.0},
              {"token": "2", "logprob": -0.2, "top_logprobs": [{"token": "2", "logprob": -0.2},
                                                               {"token": "1", "logprob": -1.8}]},
              {"token": '"}', "logprob": 0.0}]
        {k: round(v, 2) for k, v in preference_distribution('{"verdict": "2"}', lp).items()}
        # {'first': 0.17, 'second': 0.83, 'tie': 0.0}
    """
    if not logprobs:
        return None
    tokens = [str(t.get("token") or "") for t in logprobs]
    joined = "".join(tokens)
    m = _JSON_VERDICT.search(_THINK.sub(lambda x: " " * len(x.group(0)), joined))
    if m is None or not m.group(1):
        return None
    start = m.start(1)
    pos = 0
    for token, entry in zip(tokens, logprobs, strict=True):
        if pos <= start < pos + len(token):
            alternatives = list(entry.get("top_logprobs") or [])
            if not any(str(a.get("token")) == token for a in alternatives):
                alternatives.append({"token": token, "logprob": entry.get("logprob")})
            probs = dict.fromkeys(CHOICES, 0.0)
            for alt in alternatives:
                c = _token_choice(str(alt.get("token") or ""))
                lp = alt.get("logprob")
                if c is None or not isinstance(lp, (int, float)) or lp != lp:
                    continue
                probs[c] += math.exp(float(lp))
            total = sum(probs.values())
            if total <= 0:
                return None
            return {k: v / total for k, v in probs.items()}
        pos += len(token)
    return None


def _token_choice(token: str) -> str | None:
    t = token.strip().strip("\"',}").lower()
    if t in ("1", "2"):
        return "first" if t == "1" else "second"
    if t == "tie" or (len(t) >= 2 and "tie".startswith(t)):
        return "tie"
    return None
