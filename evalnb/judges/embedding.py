"""An offline judge that reads meaning: sentence embeddings from wordllama, calibrated onto the 1-5 scale.

wordllama (the ``offline-judge`` extra: ``pip install "evalnb[offline-judge]"``) ships a small static
embedding model inside its wheel (``l2_supercat``, 256 dimensions, 16 MB): a text's embedding is the mean of
its tokens' vectors, so there is no download, no network and no GPU, and two texts that say the same thing
in other words land close together. evalnb loads it with downloads disabled, from the package's own folder.

:class:`EmbeddingJudge` scores two of the judged checks by the cosine of two embeddings, mapped onto the
rubric's 1-5 scale by cut points fitted on the ``fit`` half of the labelled pairs in ``data/labels/`` and
shipped as data (``evalnb/judges/calibration.json``; :mod:`evalnb.judges.calibration` refits them):

* **Similarity**: the response against the expected response;
* **Relevance**: the response against the question.

The other checks (Coherence, Groundedness, ``llm_judge``) are not questions of closeness in meaning; it hands
them to the word-statistics :class:`~evalnb.judges.Heuristic` and their score rows name that judge, so a
result always says which judge gave which score. Neither is an LLM, and the labels say so.

Known blind spots (measured in notebook 04): an embedding does not see negation or numbers ("$40" and "$60",
"ahead" and "behind" land close), so a fluent answer with the wrong fact scores as similar; an answer that
repeats the question scores as relevant.

Example::

    judge = EmbeddingJudge()
    result = evalnb.run("data/suites/knowledge-base.json", KBAssistant(), judge=judge)
    result.scores[["check", "value", "judge"]].drop_duplicates("check")
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb.errors import ConfigCode, ConfigError, JudgeError
from evalnb.judges.base import JudgeReply
from evalnb.judges.heuristic import Heuristic
from evalnb.judges.resolve import JudgeOptions, register_judge_string

if TYPE_CHECKING:
    import numpy as np

    from evalnb.judges.calibration import Calibration

__all__ = [
    "INSTALL_HINT",
    "LABEL",
    "MODEL",
    "EmbeddingJudge",
    "available",
    "compared_with",
    "cosines",
    "load_model",
]

LABEL = "embedding (wordllama, not an LLM)"
MODEL = "wordllama l2_supercat 256"
INSTALL_HINT = 'pip install "evalnb[offline-judge]"'
TASKS = ("Similarity", "Relevance")
"""The checks the embeddings score; the others go to the fallback judge."""

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
    vectors = model.embed([*map(str, left), *map(str, right)], norm=False)
    a, b = vectors[: len(left)], vectors[len(left) :]
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (a * b).sum(axis=1) / (na * nb)
    # An empty text (no tokens) embeds as the zero vector: it resembles nothing.
    return np.where((na > 0) & (nb > 0), out, 0.0).astype(np.float32)


def compared_with(task: str, *, question: Any, expected: Any) -> str:
    """What the response is compared with: the expected response (Similarity) or the question (Relevance)."""
    other = expected if task == "Similarity" else question
    return "" if other is None or other != other else str(other)  # NA / NaN: nothing to compare with


class EmbeddingJudge:
    """An offline judge for Similarity and Relevance from wordllama sentence embeddings. Not an LLM.

    Args:
        fallback: the judge for the checks embeddings do not score (Coherence, Groundedness, ``llm_judge``);
            the word-statistics :class:`~evalnb.judges.Heuristic` by default. Its score rows name it.
        calibration: cut points mapping a cosine onto 1-5 per check; the shipped ones by default
            (:func:`evalnb.judges.calibration.load`).

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
        from evalnb.judges.calibration import load

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
        other = compared_with(task, question=fields.get("question"), expected=fields.get("expected"))
        what = "the expected response" if task == "Similarity" else "the question"
        if not response.strip():
            return {"score": 1, "reason": "embedding: the response is empty"}
        cos = float(cosines([response], [other])[0])
        score = self.calibration.score(task, cos)
        return {
            "score": score,
            "reason": f"embedding: cosine {cos:.2f} between the response and {what} "
            f"({self.calibration.describe(task, score)})",
        }

    def __repr__(self) -> str:
        return f"EmbeddingJudge()  # offline wordllama embeddings, not an LLM; fallback {self.fallback!r}"


def _from_string(argument: str, options: JudgeOptions) -> EmbeddingJudge:
    if argument:
        raise ConfigError(f"the embedding judge takes nothing after 'embedding:', got {argument!r}")
    return EmbeddingJudge()


register_judge_string("embedding", _from_string)
