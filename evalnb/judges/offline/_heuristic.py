"""An offline, deterministic judge built from word statistics: for demos, tests and smoke runs, not for
decisions. It is labelled ``heuristic (not an LLM)`` wherever a score names its judge.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from evalnb._text import STOP_WORDS, content_words, nfc, sentences, token_f1, word_set, words
from evalnb.errors import ConfigError, JudgeError
from evalnb.judges._base import JudgeReply
from evalnb.judges._resolve import JudgeOptions, register_judge_string

__all__ = ["HeuristicJudge"]

LABEL = "heuristic (not an LLM)"

# The judge's stop words: the shared English ones, more function words, the words of a request ("please
# explain"), contraction pieces, and the commonest French function words (questions come in both).
_STOP = STOP_WORDS | word_set(
    """
    again being done down else few here him more most now off once only other over own same such then under
    us whom whose please tell give explain describe s t don i'm it's
    que de la le les des un une et est en du pour pas
    """
)
# Words a rubric uses to talk about the answer rather than about its subject.
_RUBRIC_META = word_set(
    """
    answer answers response responses reply output text mention mentions mentioned include includes
    including contain contains containing state states say says must should needs need clearly correct
    correctly accurate accurately user question model assistant agent
    """
)
# Linking words whose absence makes a multi-sentence answer read as a list of fragments.
_CONNECTIVES = word_set(
    """
    because therefore so however then first second finally also thus since although while but and which
    this that
    """
)


def _content(text: str) -> list[str]:
    return content_words(text, stop=_STOP)


def _sentences(text: str) -> list[str]:
    # Line breaks end sentences too: list items and headings are claims of their own.
    return sentences(text, lines=True)


def _lcs_ratio(a: Sequence[str], b: Sequence[str]) -> float:
    if not a or not b:
        return 0.0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1] / max(len(a), len(b))


def _to_1_5(x: float) -> int:
    """Map a 0..1 share onto the 1..5 scale: equal-width bands of 0.2."""
    return 1 + min(4, max(0, int(x * 5 + 1e-9)))


def _banded(share: float, reason: str) -> dict[str, Any]:
    """The judge's answer for a 0..1 share: its 1..5 band and the reason."""
    return {"score": _to_1_5(share), "reason": reason}


class HeuristicJudge:
    """An offline judge from word overlap and simple structure. Not an LLM; honest about it.

    How each check is scored (a 0..1 share mapped onto 1..5 in bands of 0.2):

    * **Similarity**: the larger of token F1 and longest-common-subsequence ratio between the response and
      the expected response (content words).
    * **Relevance**: the share of the question's content words that the response mentions.
    * **Groundedness**: the share of response sentences whose content words are mostly (60 %) found in the
      context; a response with no content words makes no claim and gets the rubric's no-claim level, 3.
    * **Coherence**: starts at 5 and loses points for an empty or one-word answer, repeated sentences, very
      long or very short sentences, a missing final punctuation mark, and a low share of distinct words.
    * **llm_judge**: PASS when the response mentions at least half of the rubric's content words.

    Known blind spots (why it must not replace a model judge or a person):

    * It reads words, not meaning: a negation ("is not the capital") scores like the statement, paraphrase
      and synonyms score as different, and a response that copies the question scores as relevant.
    * Groundedness cannot see contradictions whose words appear in the context, nor inferences.
    * Coherence measures surface structure; fluent nonsense scores well.
    * The ``llm_judge`` rubric is read as a bag of keywords; instructions like "three sentences" or "must not
      mention" are not understood.
    * Tokenisation splits on non-letters: languages written without spaces are scored poorly.

    Example::

        result = evalnb.run(suite, agent, judge=evalnb.judges.HeuristicJudge())
        result.scores["judge"].unique()
        # <StringArray> ['heuristic (not an LLM)']
    """

    kind: str = "heuristic"
    name: str = "heuristic"
    label: str = LABEL
    model: str = "heuristic"
    cache: Any = None
    prices: Any = None

    async def complete(self, prompt: str) -> JudgeReply:
        """Score a prompt built by ``evalnb.judges.evaluate``; answers JSON like a model would.

        Raises:
            JudgeError: for a prompt that was not built by evalnb (it has no structure to read).
        """
        task = getattr(prompt, "task", None)
        fields = getattr(prompt, "fields", None)
        if task is None or fields is None:
            raise JudgeError("the heuristic judge only scores prompts built by evalnb.judges.evaluate")
        answer = self.judge(task, fields)
        return JudgeReply(text=json.dumps(answer), usage={}, model="heuristic")

    def judge(self, task: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The answer for one task, as a dict (``score``/``verdict`` and ``reason``); texts are read in Unicode
        NFC, as every check and judge reads them."""

        def field(name: str) -> str:
            return nfc(str(fields.get(name) or ""))

        response = field("response")
        if task == "Similarity":
            return self._similarity(response, field("expected"))
        if task == "Relevance":
            return self._relevance(response, field("question"))
        if task == "Groundedness":
            return self._groundedness(response, field("context"))
        if task == "Coherence":
            return self._coherence(response)
        if task == "llm_judge":
            return self._rubric(response, field("rubric"))
        raise JudgeError(f"the heuristic judge does not know the task {task!r}")

    @staticmethod
    def _similarity(response: str, expected: str) -> dict[str, Any]:
        a, b = _content(response), _content(expected)
        f1, lcs = token_f1(a, b), _lcs_ratio(a, b)
        share = max(f1, lcs)
        return _banded(
            share, f"heuristic: token F1 {f1:.2f}, LCS ratio {lcs:.2f} against the expected response"
        )

    @staticmethod
    def _relevance(response: str, question: str) -> dict[str, Any]:
        want = set(_content(question))
        have = set(_content(response))
        if not have:
            return {"score": 1, "reason": "heuristic: the response has no content words"}
        if not want:
            return {"score": 3, "reason": "heuristic: the question has no content words to look for"}
        share = len(want & have) / len(want)
        missing = sorted(want - have)
        more = ", ..." if len(missing) > 5 else ""  # the list is cut at five words: say so
        tail = f"; missing: {', '.join(missing[:5])}{more}" if missing else ""
        return _banded(
            share, f"heuristic: covers {len(want & have)}/{len(want)} content words of the question{tail}"
        )

    @staticmethod
    def _groundedness(response: str, context: str) -> dict[str, Any]:
        ctx = set(_content(context))
        claims = [c for c in (_content(s) for s in _sentences(response)) if c]
        if not claims:
            return {"score": 3, "reason": "heuristic: the response makes no claim, nothing to ground"}
        supported = sum(1 for c in claims if sum(w in ctx for w in c) / len(c) >= 0.6)
        share = supported / len(claims)
        return _banded(
            share, f"heuristic: {supported}/{len(claims)} sentences have their words in the context"
        )

    @staticmethod
    def _coherence(response: str) -> dict[str, Any]:
        tokens = words(response)
        if len(tokens) < 2:
            return {"score": 1, "reason": "heuristic: empty or a single word"}
        sents = _sentences(response)
        score = 5
        notes = []
        norm = [" ".join(words(s)) for s in sents]
        if len(set(norm)) < len(norm):
            score -= 2
            notes.append("repeated sentences")
        lengths = [len(words(s)) for s in sents]
        if any(n > 60 for n in lengths):
            score -= 1
            notes.append("a very long sentence")
        if len(sents) > 1 and sum(n < 3 for n in lengths) > len(sents) / 2:
            score -= 1
            notes.append("mostly fragments")
        if not response.rstrip().endswith((".", "!", "?", ":", ")", "`", '"', "'")) and len(tokens) > 8:
            score -= 1
            notes.append("no final punctuation")
        distinct = len(set(tokens)) / len(tokens)
        if len(tokens) >= 12 and distinct < 0.4:
            score -= 1
            notes.append("many repeated words")
        if len(sents) > 2 and not (set(tokens) & _CONNECTIVES):
            score -= 1
            notes.append("no linking words")
        score = max(1, score)
        detail = ", ".join(notes) if notes else "no structural problems found"
        return {"score": score, "reason": f"heuristic: {len(sents)} sentence(s); {detail}"}

    @staticmethod
    def _rubric(response: str, rubric: str) -> dict[str, Any]:
        want = set(_content(rubric)) - _RUBRIC_META
        have = set(_content(response))
        if not have:
            return {"verdict": "FAIL", "reason": "heuristic: the response is empty"}
        if not want:
            return {"verdict": "PASS", "reason": "heuristic: the rubric has no keywords to look for"}
        share = len(want & have) / len(want)
        verdict = "PASS" if share >= 0.5 else "FAIL"
        return {
            "verdict": verdict,
            "reason": f"heuristic: mentions {len(want & have)}/{len(want)} keywords of the rubric",
        }

    def __repr__(self) -> str:
        return "HeuristicJudge()  # offline word statistics, not an LLM"


def _from_string(argument: str, options: JudgeOptions) -> HeuristicJudge:
    if argument:
        raise ConfigError(f"the heuristic judge takes nothing after 'heuristic:', got {argument!r}")
    return HeuristicJudge()


register_judge_string("heuristic", _from_string)
register_judge_string("offline", _from_string, usage="")
