"""An offline judge that reads meaning: sentence embeddings from wordllama, calibrated onto the 1-5 scale.

wordllama (the ``offline-judge`` extra: ``pip install "evalnb[offline-judge]"``) ships a small static
embedding model inside its wheel (``l2_supercat``, 256 dimensions, 16 MB): a text's embedding is the mean of
its tokens' vectors, so there is no download, no network and no GPU, and two texts that say the same thing
in other words land close together. evalnb loads it with downloads disabled, from the package's own folder.

:class:`EmbeddingJudge` scores two of the judged checks, each by one number, its *measure*, that a calibration
maps onto the rubric's 1-5 scale (cut points fitted on human grades and shipped as data,
``evalnb/judges/offline/calibration.json``; :mod:`evalnb.judges.offline._calibration` says what each was fitted on):

* **Relevance**: the cosine of the response and the question;
* **Similarity**: the cosine of the response and the expected response with the question's words taken out of
  both (words the question already gives state nothing; an answer that only repeats the question keeps
  nothing). The level is a monotone function of it, so the judge ranks pairs as its model does (on people's
  grades of the STS Benchmark, this cosine ranks at least as well as the plain cosine of the two texts).
  One rule reads what an embedding cannot see: a fact the expected response states (:mod:`evalnb.judges.offline._facts`:
  a number with its unit, a clock time, a name, the yes or no, a negated rule) that the answer contradicts
  ("$60 a day" for "$40 a day") caps the level at :data:`CONTRADICTED_CAP`, the rubric's "the key facts are
  missing or different", so the check fails at the default threshold. Nothing else moves the score: a fact
  the answer states adds nothing the cosine has not seen.

Every score row also gets the measure on the 1-5 scale continuously (``weighted``; see
:meth:`~evalnb.judges.offline._calibration.Calibration.continuous`): within half a point of the level, in the order of the
measure, so a comparison of two runs sees a change that stays within one level. The pass decision stays with
the level (``value >= threshold``).

The other checks (Coherence, Groundedness, ``llm_judge``) are not questions of closeness in meaning; it hands
them to the word-statistics :class:`~evalnb.judges.HeuristicJudge` and their score rows name that judge, so a
result always says which judge gave which score. Neither is an LLM, and the labels say so.

Known blind spots (measured in notebook 04 and ``benchmarks/judge_agreement.py``): a wrong fact that is not a
number, a name, a yes/no or a negated word ("404 means an internal error") still reads as similar; a
paraphrase in other words sits lower than people would put it; a name that starts a sentence ("Saturn is ...")
is not told from an ordinary first word; an answer that repeats the question scores as relevant.

Example::

    judge = EmbeddingJudge()
    result = evalnb.run(evalnb.examples.path("knowledge-base"), KBAssistant(), judge=judge)
    result.scores[["check", "value", "weighted", "judge"]].drop_duplicates("check")
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

from evalnb._text import nfc, words
from evalnb.errors import ConfigCode, ConfigError, JudgeError
from evalnb.judges._base import JudgeReply
from evalnb.judges._resolve import JudgeOptions, register_judge_string
from evalnb.judges.offline._facts import Facts, compare
from evalnb.judges.offline._heuristic import HeuristicJudge

if TYPE_CHECKING:
    import numpy as np

    from evalnb.judges.offline._calibration import Calibration

__all__ = [
    "CONTRADICTED_CAP",
    "INSTALL_HINT",
    "LABEL",
    "MODEL",
    "EmbeddingJudge",
    "Reading",
    "available",
    "cosines",
    "grade",
    "load_model",
    "read",
    "without_question",
]

LABEL = "embedding (wordllama, not an LLM)"
MODEL = "wordllama l2_supercat 256"
INSTALL_HINT = 'pip install "evalnb[offline-judge]"'
TASKS = ("Similarity", "Relevance")
"""The checks the embeddings score; the others go to the fallback judge."""
CONTRADICTED_CAP = 2
"""The highest Similarity level of an answer that contradicts a fact of the expected response: the rubric's 2,
"the same topic, but the key facts are missing or different" (below the default threshold of 3). A cap, not a
fixed 1: on people's grades (STS Benchmark train and dev, SICK) a pair with a contradicted number is graded
lower than its cosine says, but not at the bottom; a contradicted answer with a low cosine keeps its lower level."""

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


@dataclass(frozen=True)
class Reading:
    """What the embedding judge read from one pair: the measure its calibration maps onto 1-5, and the facts.

    Attributes:
        value: the measure (Relevance: the cosine of the response and the question; Similarity: the cosine of
            the response and the expected response without the question's words).
        cosine: the cosine it is (the same number as ``value``; kept by that name for readers of a reason).
        facts: Similarity: what the answer does with the expected response's facts (None for Relevance).
    """

    value: float
    cosine: float
    facts: Facts | None = None

    @property
    def contradicts(self) -> bool:
        """Whether the answer contradicts a fact of the expected response (Similarity only)."""
        return self.facts is not None and self.facts.contradicts

    def describe(self, task: str) -> str:
        """The reading in words, for a score's reason."""
        if task != "Similarity":
            return f"cosine {self.cosine:.2f} between the response and the question"
        facts = self.facts or Facts()
        text = f"cosine {self.cosine:.2f} to the expected response without the question's words"
        if facts.contradicts:
            return (
                f"{text}; the response contradicts the expected response: {'; '.join(facts.contradicted)} "
                f"(at most level {CONTRADICTED_CAP})"
            )
        if facts.matched:
            text += f"; states {', '.join(facts.matched)}"
        return text


def grade(task: str, reading: Reading, calibration: Calibration) -> tuple[int, float]:
    """The 1-5 level of a reading and its continuous score (within half a point of the level): the
    calibration's, with a contradicted fact capping Similarity at :data:`CONTRADICTED_CAP`.

    Example::

        (wrong,) = read("Similarity", ["It is $60 a day."], questions=["What is the allowance?"],
                        expecteds=["$40 a day."])
        grade("Similarity", wrong, load())
        # (2, 2.0...)
    """
    level = calibration.score(task, reading.value)
    continuous = calibration.continuous(task, reading.value)
    if task == "Similarity" and reading.contradicts and level > CONTRADICTED_CAP:
        level, continuous = CONTRADICTED_CAP, CONTRADICTED_CAP + 0.5
    return level, continuous


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
    return [
        Reading(value=float(c), cosine=float(c), facts=compare(response, expected, question=question))
        for c, response, question, expected in zip(cos, responses, questions, expecteds, strict=True)
    ]


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
        # [0.19...]
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
            the word-statistics :class:`~evalnb.judges.HeuristicJudge` by default. Its score rows name it.
        calibration: cut points mapping a measure onto 1-5 per check; the shipped ones by default
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
        self.fallback = fallback if fallback is not None else HeuristicJudge()
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
        continuous = answer.pop("continuous")
        return JudgeReply(text=json.dumps(answer), model=MODEL, continuous=continuous)

    def judge(self, task: str, fields: dict[str, Any]) -> dict[str, Any]:
        """The answer for Similarity or Relevance, as a dict: ``score`` (the 1-5 level), ``continuous`` (the
        measure on the 1-5 scale, :func:`grade`) and ``reason``."""
        response = str(fields.get("response") or "")
        if not response.strip():
            return {"score": 1, "continuous": 1.0, "reason": "embedding: the response is empty"}
        reading = read(
            task, [response], questions=[fields.get("question")], expecteds=[fields.get("expected")]
        )[0]
        level, continuous = grade(task, reading, self.calibration)
        band = (
            f"capped from level {self.calibration.score(task, reading.value)}"
            if level < self.calibration.score(task, reading.value)
            else self.calibration.describe(task, level)
        )
        return {
            "score": level,
            "continuous": continuous,
            "reason": f"embedding: {reading.describe(task)} ({band}; {continuous:.2f} on the 1-5 scale)",
        }

    def __repr__(self) -> str:
        return f"EmbeddingJudge()  # offline wordllama embeddings, not an LLM; fallback {self.fallback!r}"


def _from_string(argument: str, options: JudgeOptions) -> EmbeddingJudge:
    if argument:
        raise ConfigError(f"the embedding judge takes nothing after 'embedding:', got {argument!r}")
    return EmbeddingJudge()


register_judge_string("embedding", _from_string)
