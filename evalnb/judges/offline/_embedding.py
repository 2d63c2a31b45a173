"""An offline judge that reads meaning: sentence embeddings from wordllama, calibrated onto the 1-5 scale.

wordllama (the ``offline-judge`` extra: ``pip install "evalnb[offline-judge]"``) ships a small static
embedding model inside its wheel (``l2_supercat``, 256 dimensions, 16 MB): a text's embedding is the mean of
its tokens' vectors, so there is no download, no network and no GPU, and two texts that say the same thing
in other words land close together. evalnb loads it with downloads disabled, from the package's own folder.

:class:`EmbeddingJudge` scores two of the judged checks, each by one number that a calibration maps onto the
rubric's 1-5 scale (cut points fitted on the ``fit`` half of the labelled pairs in ``evalnb/examples/labels/`` and
shipped as data: ``evalnb/judges/offline/calibration.json``; :mod:`evalnb.judges.offline._calibration` refits them):

* **Relevance**: the cosine of the response and the question;
* **Similarity**: how much of the meaning *and the facts* of the expected response the response carries
  (the rubric: "missing or different facts" lower the score). An embedding alone does not see numbers or
  negation ("$60 a day" sits as close to "$40 a day" as a paraphrase does), so the number has three parts
  (:func:`read`):

  1. meaning: the mean of the cosine of the two texts with the question's words taken out of both (words
     the question already gives state nothing; an answer that only repeats the question keeps nothing), and
     the recall of the expected response's content words in the response's, word vector to word vector
     (every fact of the expected response there; extra detail does not lower it);
  2. a contradicted fact of the expected response (:mod:`evalnb.judges.offline._facts`: a number with its unit, a
     clock time, a name, the yes or no, a negated rule) puts the answer below every cut: level 1, "different
     or opposite in meaning";
  3. a fact of the expected response that the answer states adds :data:`FACT_BONUS`.

The other checks (Coherence, Groundedness, ``llm_judge``) are not questions of closeness in meaning; it hands
them to the word-statistics :class:`~evalnb.judges.Heuristic` and their score rows name that judge, so a
result always says which judge gave which score. Neither is an LLM, and the labels say so.

Known blind spots (measured in notebook 04): a wrong fact that is not a number, a name, a yes/no or a negated
word ("404 means an internal error") still reads as similar; a name that starts a sentence ("Saturn is ...")
is not told from an ordinary first word; an answer that repeats the question scores as relevant.

Example::

    judge = EmbeddingJudge()
    result = evalnb.run(evalnb.examples.path("knowledge-base"), KBAssistant(), judge=judge)
    result.scores[["check", "value", "judge"]].drop_duplicates("check")
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._text import STOP_WORDS, content_words, nfc, words
from evalnb.errors import ConfigCode, ConfigError, JudgeError
from evalnb.judges._base import JudgeReply
from evalnb.judges._resolve import JudgeOptions, register_judge_string
from evalnb.judges.offline._facts import Facts, compare
from evalnb.judges.offline._heuristic import Heuristic

if TYPE_CHECKING:
    import numpy as np

    from evalnb.judges.offline._calibration import Calibration

__all__ = [
    "CONTRADICTED",
    "FACT_BONUS",
    "INSTALL_HINT",
    "LABEL",
    "MODEL",
    "EmbeddingJudge",
    "Reading",
    "available",
    "cosines",
    "load_model",
    "read",
    "without_question",
]

LABEL = "embedding (wordllama, not an LLM)"
MODEL = "wordllama l2_supercat 256"
INSTALL_HINT = 'pip install "evalnb[offline-judge]"'
TASKS = ("Similarity", "Relevance")
"""The checks the embeddings score; the others go to the fallback judge."""
FACT_BONUS = 0.2
"""What a stated fact of the expected response adds to Similarity's measure. Chosen on the ``fit`` half of
the labels (five-fold cross-validation of the whole fit, cuts included, among 0, 0.1, 0.2 and 0.3); the
``test`` half took no part."""
CONTRADICTED = -1.0
"""Similarity's measure of an answer that contradicts a fact of the expected response: below every cosine,
so below every cut (level 1)."""

_lock = threading.Lock()
_model: Any = None


def available() -> bool:
    """Whether wordllama can be imported (the ``offline-judge`` extra is installed)."""
    import importlib.util

    try:
        return importlib.util.find_spec("wordllama") is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules (hidden on purpose)
        return False


def load_model(*, what: str = "the embedding judge") -> Any:
    """The wordllama model, loaded once per process from the files inside the wheel (never downloaded).

    Raises:
        ConfigError: ``MISSING_DEPENDENCY`` when wordllama is not installed (with the install command), or
            when its packaged files cannot be read.
    """
    global _model
    with _lock:
        if _model is not None:
            return _model
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:
            raise ConfigError(
                f"{what} needs wordllama, which is not installed: {INSTALL_HINT}",
                code=ConfigCode.MISSING_DEPENDENCY,
            ) from exc
        finally:
            # wordllama calls logging.basicConfig(level=INFO) when imported; a library must not configure the
            # application's logging, so the root logger is put back as it was.
            for h in root.handlers[:]:
                if h not in handlers:
                    root.removeHandler(h)
            root.setLevel(level)
        # The wheel holds the weights under wordllama/weights/ and the tokenizer under wordllama/tokenizers/;
        # wordllama's own lookup finds the first but looks for the tokenizer under tokenizer/, then in a cache
        # folder: naming the package folder as that cache folder makes both resolve inside the wheel.
        package = Path(wordllama.__file__).resolve().parent
        try:
            _model = WordLlama.load(cache_dir=package, disable_download=True)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"wordllama is installed but its packaged model could not be read ({exc}); reinstall it: "
                f"{INSTALL_HINT}",
                code=ConfigCode.MISSING_DEPENDENCY,
            ) from exc
        return _model


def cosines(left: Sequence[str], right: Sequence[str]) -> np.ndarray:
    """The cosine similarity of each pair ``(left[i], right[i])`` of texts; 0.0 where either has no tokens.

    Example::

        cosines(["The allowance is $40 a day."], ["You may spend forty dollars daily."])
        # array([0.4...], dtype=float32)
    """
    import numpy as np

    if len(left) != len(right):
        raise ValueError(f"cosines needs pairs: {len(left)} texts on the left, {len(right)} on the right")
    if not left:
        return np.zeros(0, dtype=np.float32)
    model = load_model()
    # Unicode NFC: "Café" typed with a combining accent is the same text, and embeds the same
    vectors = model.embed([nfc(str(t)) for t in (*left, *right)], norm=False)
    a, b = vectors[: len(left)], vectors[len(left) :]
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (a * b).sum(axis=1) / (na * nb)
    # An empty text (no tokens) embeds as the zero vector: it resembles nothing.
    return np.where((na > 0) & (nb > 0), out, 0.0).astype(np.float32)


def without_question(text: str, question: str) -> str:
    """``text`` without the words the question has (case-insensitive), the rest joined by spaces.

    Example::

        without_question("The daily meal allowance is $40.", "What is the daily meal allowance?")
        # '40'
    """
    asked = set(words(question))
    return " ".join(w for w in words(text) if w not in asked)


def _word_vectors(vocabulary: Sequence[str]) -> dict[str, np.ndarray]:
    """Unit-length vectors of single words (a word's vector is the mean of its tokens'; zero stays zero)."""
    import numpy as np

    if not vocabulary:
        return {}
    vectors = load_model().embed(list(vocabulary), norm=False)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return dict(zip(vocabulary, unit, strict=True))


def _recall(answer: list[str], expected: list[str], vectors: dict[str, np.ndarray]) -> float:
    """The mean, over the expected words, of the best cosine with a word of the answer (0 with no answer)."""
    import numpy as np

    if not answer:
        return 0.0
    a = np.array([vectors[w] for w in answer])
    e = np.array([vectors[w] for w in expected])
    return float((e @ a.T).max(axis=1).mean())


@dataclass(frozen=True)
class Reading:
    """What the embedding judge read from one pair: the measure its calibration maps onto 1-5, and its parts.

    Attributes:
        value: the measure (Relevance: the cosine; Similarity: see the module docstring).
        cosine: the cosine it starts from (Similarity: without the question's words).
        recall: Similarity: the recall of the expected response's content words (None for Relevance, or when
            the expected response has no content word the question lacks).
        facts: Similarity: what the answer does with the expected response's facts (None for Relevance).
    """

    value: float
    cosine: float
    recall: float | None = None
    facts: Facts | None = None

    def describe(self, task: str) -> str:
        """The reading in words, for a score's reason."""
        if task != "Similarity":
            return f"cosine {self.cosine:.2f} between the response and the question"
        facts = self.facts or Facts()
        if facts.contradicts:
            return "the response contradicts the expected response: " + "; ".join(facts.contradicted)
        parts = [f"cosine {self.cosine:.2f} without the question's words"]
        if self.recall is not None:
            parts.append(f"recall {self.recall:.2f} of the expected response's words")
        if facts.matched:
            parts.append(f"states {', '.join(facts.matched)} (+{FACT_BONUS:g})")
        return f"similarity {self.value:.2f} to the expected response ({'; '.join(parts)})"


def _content(text: str, asked: set[str]) -> list[str]:
    """The content words of ``text`` that the question does not have."""
    return [w for w in content_words(text, stop=STOP_WORDS) if w not in asked]


def _read_relevance(responses: Sequence[str], questions: Sequence[str], _: Sequence[str]) -> list[Reading]:
    return [Reading(value=float(c), cosine=float(c)) for c in cosines(responses, questions)]


def _read_similarity(
    responses: Sequence[str], questions: Sequence[str], expecteds: Sequence[str]
) -> list[Reading]:
    left, right = [], []
    for response, question, expected in zip(responses, questions, expecteds, strict=True):
        kept = without_question(expected, question)
        # An expected response made of the question's words only (a bare "yes" to a question that says it
        # all) keeps its words: there is nothing else to compare.
        left.append(without_question(response, question) if kept else response)
        right.append(kept or expected)
    cos = cosines(left, right)
    asked = [set(words(q)) for q in questions]
    answer_words = [_content(r, a) for r, a in zip(responses, asked, strict=True)]
    expected_words = [_content(e, a) for e, a in zip(expecteds, asked, strict=True)]
    vectors = _word_vectors(sorted({w for ws in (*answer_words, *expected_words) for w in ws}))
    out = []
    for i, (response, question, expected) in enumerate(zip(responses, questions, expecteds, strict=True)):
        facts = compare(response, expected, question=question)
        recall = _recall(answer_words[i], expected_words[i], vectors) if expected_words[i] else None
        meaning = float(cos[i]) if recall is None else (float(cos[i]) + recall) / 2
        value = CONTRADICTED if facts.contradicts else meaning + (FACT_BONUS if facts.matched else 0.0)
        out.append(Reading(value=value, cosine=float(cos[i]), recall=recall, facts=facts))
    return out


_READERS: dict[str, Callable[[Sequence[str], Sequence[str], Sequence[str]], list[Reading]]] = {
    "Similarity": _read_similarity,
    "Relevance": _read_relevance,
}


def read(
    task: str, responses: Sequence[str], *, questions: Sequence[Any], expecteds: Sequence[Any]
) -> list[Reading]:
    """The readings of ``task`` (``"Similarity"`` or ``"Relevance"``) for each response: what the judge and
    the calibration fit both use, so the two cannot drift apart.

    Raises:
        KeyError: for a check the embedding judge does not score.

    Example::

        [r.value for r in read("Similarity", ["The allowance is $60 a day."],
                               questions=["What is the meal allowance?"], expecteds=["$40 a day."])]
        # [-1.0]
    """

    def text(v: Any) -> str:
        # NA / NaN: nothing; text in Unicode NFC, as every check and judge reads it (docs/dataset-json.md)
        return "" if v is None or v != v else nfc(str(v))

    return _READERS[task](
        [text(r) for r in responses], [text(q) for q in questions], [text(e) for e in expecteds]
    )


class EmbeddingJudge:
    """An offline judge for Similarity and Relevance from wordllama sentence embeddings. Not an LLM.

    Args:
        fallback: the judge for the checks embeddings do not score (Coherence, Groundedness, ``llm_judge``);
            the word-statistics :class:`~evalnb.judges.Heuristic` by default. Its score rows name it.
        calibration: cut points mapping a cosine onto 1-5 per check; the shipped ones by default
            (:func:`evalnb.judges.offline._calibration.load`).

    Raises:
        ConfigError: ``MISSING_DEPENDENCY`` when wordllama is not installed (``pip install
            "evalnb[offline-judge]"``), at construction, so a run stops before anything is called.

    Example::

        result = evalnb.run(suite, agent, judge=evalnb.judges.EmbeddingJudge())
        result.scores["judge"].unique()
        # <StringArray> ['embedding (wordllama, not an LLM)', 'heuristic (not an LLM)']
    """

    kind: str = "embedding"
    name: str = "embedding"
    label: str = LABEL
    model: str = MODEL
    cache: Any = None
    prices: Any = None

    def __init__(self, *, fallback: Any = None, calibration: Calibration | None = None) -> None:
        from evalnb.judges.offline._calibration import load

        load_model()  # fail now, with the install hint, rather than on every score row
        self.fallback = fallback if fallback is not None else Heuristic()
        self.calibration = calibration if calibration is not None else load()

    async def complete(self, prompt: str) -> JudgeReply:
        """Score a prompt built by ``evalnb.judges.evaluate`` (it reads the prompt's fields, not its text).

        Raises:
            JudgeError: for a prompt that was not built by evalnb.
        """
        task = getattr(prompt, "task", None)
        fields = getattr(prompt, "fields", None)
        if task is None or fields is None:
            raise JudgeError("the embedding judge only scores prompts built by evalnb.judges.evaluate")
        if task not in TASKS:
            reply = await self.fallback.complete(prompt)
            label = getattr(self.fallback, "label", None) or reply.label
            return JudgeReply(text=reply.text, usage=reply.usage, model=reply.model, label=label)
        answer = await asyncio.to_thread(self.judge, task, fields)
        return JudgeReply(text=json.dumps(answer), model=MODEL)

    def judge(self, task: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The answer for Similarity or Relevance, as a dict (``score`` and ``reason``)."""
        response = str(fields.get("response") or "")
        if not response.strip():
            return {"score": 1, "reason": "embedding: the response is empty"}
        reading = read(
            task, [response], questions=[fields.get("question")], expecteds=[fields.get("expected")]
        )[0]
        score = self.calibration.score(task, reading.value)
        return {
            "score": score,
            "reason": f"embedding: {reading.describe(task)} ({self.calibration.describe(task, score)})",
        }

    def __repr__(self) -> str:
        return f"EmbeddingJudge()  # offline wordllama embeddings, not an LLM; fallback {self.fallback!r}"


def _from_string(argument: str, options: JudgeOptions) -> EmbeddingJudge:
    if argument:
        raise ConfigError(f"the embedding judge takes nothing after 'embedding:', got {argument!r}")
    return EmbeddingJudge()


register_judge_string("embedding", _from_string)
