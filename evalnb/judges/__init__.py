"""Judges: who scores the judged checks (``llm_judge`` and Relevance, Coherence, Groundedness, Similarity).

* :class:`OpenAIJudge`: any OpenAI-compatible endpoint (OpenAI, Azure OpenAI, Ollama, vLLM, llama.cpp), with
  retries, ``Retry-After``, an adaptive concurrency limit shared with agent calls, and a disk cache;
* :class:`CallableJudge`: any function ``f(prompt) -> str``;
* :class:`HeuristicJudge`: an offline judge from word statistics, labelled ``heuristic (not an LLM)``;
* :class:`EmbeddingJudge`: an offline judge of Similarity and Relevance from wordllama sentence embeddings
  (the ``offline-judge`` extra; Similarity also reads the expected response's facts), calibrated on labelled
  pairs, labelled ``embedding (wordllama, not an LLM)``; it hands the other checks to the heuristic. Both, and
  how they are measured against labelled pairs, live in :mod:`evalnb.judges.offline`;
* :func:`as_judge`: strings (``"openai:gpt-4o-mini"``, ``"heuristic"``, ``"module:function"``), callables
  and judge objects into a Judge; :func:`register_judge_string` adds a string;
* `evaluate`: one judged check on one response (``evalnb.rescore`` judges a Result again, without the
  agent); :func:`agreement`: per-check agreement of two judges or a judge and people.

Example::

    judge = evalnb.judges.OpenAIJudge("llama3.1", base_url="http://127.0.0.1:11434/v1")
    result = evalnb.run("evals/knowledge-base.json", agent, judge=judge)
    result.scores[["check", "value", "reason", "judge"]]
"""

from __future__ import annotations

from evalnb import _hooks
from evalnb._deprecation import Renamed, module_getattr
from evalnb._lazy import homes, submodule
from evalnb.judges._agreement import agreement
from evalnb.judges._base import CallableJudge, Judge, JudgeCache, JudgeReply
from evalnb.judges._openai import OpenAIJudge
from evalnb.judges._resolve import JudgeOptions, as_judge, register_judge_string
from evalnb.judges._scoring import evaluate
from evalnb.judges.offline._embedding import EmbeddingJudge
from evalnb.judges.offline._heuristic import HeuristicJudge

__all__ = [
    "CallableJudge",
    "EmbeddingJudge",
    "HeuristicJudge",
    "Judge",
    "JudgeCache",
    "JudgeOptions",
    "JudgeReply",
    "OpenAIJudge",
    "agreement",
    "as_judge",
    "evaluate",
    "register_judge_string",
]


# Deprecated names keep working with a warning (docs/extending.md, Deprecations). ``rescore`` moved beside
# ``run``; running sits above the judges, so it is reached through the slots evalnb/__init__.py fills.
_MOVED = {
    "Heuristic": Renamed(
        "evalnb.judges.Heuristic", "evalnb.judges.HeuristicJudge", target=lambda: HeuristicJudge
    ),
    "rescore": Renamed(
        "evalnb.judges.rescore",
        "evalnb.rescore (or evalnb.running.rescore)",
        target=lambda: _hooks.implementation("rescore"),
    ),
    "rescore_async": Renamed(
        "evalnb.judges.rescore_async",
        "evalnb.running.rescore_async",
        target=lambda: _hooks.implementation("rescore_async"),
    ),
}
# evalnb.judges.labels ... after `import evalnb` alone
__getattr__ = module_getattr(__name__, _MOVED, fallback=lambda name: submodule(__name__, name))


homes(__name__, globals(), __all__)  # reprs and docs name the public path
