"""Pairwise judges: who says which of two answers is better, in one order.

Three kinds (docs/comparison.md, pairwise):

* a **model judge** (``OpenAIJudge``, ``"openai:MODEL"``, any object with ``async complete(prompt)``): it gets
  the pairwise prompt (:mod:`._prompt`); its answers are cached like every judge answer, the key holding the
  whole prompt, so both answers and their order; the verdict's token probabilities, when the endpoint sends
  them, give the probability-weighted preference;
* a **callable** ``f(prompt, first, second) -> "first" | "second" | "tie"`` (sync or async; a
  ``(verdict, reason)`` tuple or a ``{"verdict", "reason"}`` mapping also reads);
* the **offline judges** (``"heuristic"``, ``"embedding"``): the answer closer to the expected answer wins
  (token F1 of content words; the cosine of wordllama embeddings), labelled "not an LLM"; without an expected
  answer there is nothing they can compare, and :func:`pair_judge`'s caller says so before judging anything.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evalnb._caps import cap
from evalnb._secrets import redact_urls
from evalnb._text import content_words, token_f1
from evalnb.errors import ConfigError, JudgeError
from evalnb.judges import JudgeCache, JudgeReply, as_judge
from evalnb.judges._base import cost_of
from evalnb.judges._resolve import judge_strings, load_callable
from evalnb.preference._prompt import PairPrompt, build_pair_prompt, parse_preference, preference_distribution

__all__ = ["OFFLINE", "PairJudge", "Verdict", "pair_judge"]

OFFLINE = frozenset({"heuristic", "embedding"})
PARSE_RETRIES = 1
CALLABLE_ANSWERS = ("first", "second", "tie")


@dataclass(frozen=True)
class Verdict:
    """One order's verdict.

    Attributes:
        choice: ``"first"``, ``"second"`` or ``"tie"``; None when the judge gave no usable verdict.
        reason: why (the judge's words, or why there is no verdict).
        probs: the verdict's distribution (``first``, ``second``, ``tie``) from token probabilities, or None.
        usage: the judge's token usage for this verdict (not for a cached answer).
        cost: what it cost, when the judge has prices.
        cached: the answer came from the cache.
    """

    choice: str | None
    reason: str = ""
    probs: Mapping[str, float] | None = None
    usage: Mapping[str, int] | None = None
    cost: float | None = None
    cached: bool = False


class PairJudge(Protocol):
    """What :func:`evalnb.pairwise` asks: a verdict on two answers, in the order given."""

    label: str
    kind: str

    async def verdict(
        self,
        *,
        question: str,
        first: str,
        second: str,
        expected: str | None,
        history: Sequence[Mapping[str, str]],
        earlier: Sequence[tuple[str, str, str]],
    ) -> Verdict:  # pragma: no cover - protocol
        ...


def _label(judge: Any) -> str:
    label = getattr(judge, "label", None) or getattr(judge, "name", None) or type(judge).__name__
    return redact_urls(str(label))


def _name_of(fn: Any) -> str:
    base = fn
    while isinstance(base, functools.partial):
        base = base.func
    return str(getattr(base, "__qualname__", None) or type(base).__name__)


def _is_async(fn: Any) -> bool:
    base = fn
    while isinstance(base, functools.partial):
        base = base.func
    call = getattr(base, "__call__", None)  # noqa: B004 - objects with an async __call__
    return inspect.iscoroutinefunction(base) or (call is not None and inspect.iscoroutinefunction(call))


def _takes_three(fn: Any) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True  # a builtin or an extension: let the call say
    try:
        sig.bind("prompt", "first", "second")
    except TypeError:
        return False
    return True


class CallablePairJudge:
    """``f(prompt, first, second) -> "first" | "second" | "tie"`` as a pairwise judge (sync in a thread)."""

    kind = "callable"

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = _name_of(fn)
        self.label = f"callable:{self.name}"
        self._async = _is_async(fn)

    async def verdict(
        self,
        *,
        question: str,
        first: str,
        second: str,
        expected: str | None,
        history: Sequence[Mapping[str, str]],
        earlier: Sequence[tuple[str, str, str]],
    ) -> Verdict:
        fn = self.fn
        out = (
            await fn(question, first, second)
            if self._async
            else await asyncio.to_thread(fn, question, first, second)
        )
        if inspect.isawaitable(out):
            out = await out
        reason = ""
        if isinstance(out, tuple) and len(out) == 2:
            out, reason = out
        elif isinstance(out, Mapping):
            reason = str(out.get("reason") or "")
            out = out.get("verdict")
        choice = str(out).strip().lower() if isinstance(out, str) else None
        if choice not in CALLABLE_ANSWERS:
            shown, _ = cap(repr(out), "the answer", limit=200)
            raise JudgeError(
                f"{self.label} answered {shown}: a pairwise judge answers 'first', 'second' or 'tie'"
            )
        return Verdict(choice, str(reason))


def _cache_key(judge: Any, prompt: str) -> str:
    key_of = getattr(judge, "cache_key", None)
    if key_of is not None:
        return str(key_of(prompt))
    label = _label(judge)
    model = str(getattr(judge, "model", None) or label)
    return JudgeCache.key(endpoint=f"judge:{label}", model=model, prompt=prompt, options={})


class ModelPairJudge:
    """A Judge object (``async complete(prompt)``) given the pairwise prompt."""

    def __init__(self, judge: Any, *, rubric: str | None = None) -> None:
        self.judge = judge
        self.label = _label(judge)
        self.kind = str(getattr(judge, "kind", "llm"))
        self.rubric = rubric

    async def preflight(self) -> None:
        """The model judge's start-up check (an unreachable endpoint stops before anything is judged)."""
        check = getattr(self.judge, "preflight", None)
        if check is not None:
            await check()

    async def _ask(self, prompt: PairPrompt) -> JudgeReply:
        cache = getattr(self.judge, "cache", None)
        if cache is not None:
            # The key holds the whole prompt: the request, both answers and their order.
            hit = cache.get(_cache_key(self.judge, prompt))
            if hit is not None:
                return hit
        reply = await self.judge.complete(prompt)
        if not isinstance(reply, JudgeReply):
            reply = JudgeReply(text=str(reply))
        text, cut = cap(reply.text, "the judge's answer")
        return dataclasses.replace(reply, text=text) if cut else reply

    async def verdict(
        self,
        *,
        question: str,
        first: str,
        second: str,
        expected: str | None,
        history: Sequence[Mapping[str, str]],
        earlier: Sequence[tuple[str, str, str]],
    ) -> Verdict:
        prompt = build_pair_prompt(
            question=question,
            first=first,
            second=second,
            expected=expected,
            rubric=self.rubric,
            history=history,
            earlier=earlier,
        )
        usage: dict[str, int] = {}
        cost: float | None = None
        prices = getattr(self.judge, "prices", None)
        raw = ""
        for attempt in range(PARSE_RETRIES + 1):
            asked = prompt if attempt == 0 else prompt.with_reminder()
            reply = await self._ask(asked)
            if not reply.cached:
                for k in ("prompt_tokens", "completion_tokens"):
                    v = (reply.usage or {}).get(k)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        usage[k] = usage.get(k, 0) + int(v)
                c = cost_of(reply.usage, reply.model or getattr(self.judge, "model", None), prices)
                if c is not None:
                    cost = (cost or 0.0) + c
            parsed = parse_preference(reply.text)
            if parsed is not None:
                cache = getattr(self.judge, "cache", None)
                if cache is not None and not reply.cached:
                    cache.put(_cache_key(self.judge, asked), reply)  # only readable answers are kept
                choice, reason = parsed
                probs = preference_distribution(reply.text, reply.logprobs)
                return Verdict(choice, reason, probs, usage or None, cost, reply.cached)
            raw = reply.text
        shown = raw.strip()[:400]
        return Verdict(
            None,
            f"judge {self.label} gave no readable verdict after {PARSE_RETRIES + 1} attempt(s); raw answer: "
            f"{shown!r}",
            usage=usage or None,
            cost=cost,
        )


class OfflinePairJudge:
    """The answer closer to the expected answer wins; an equally close one is a tie. Not an LLM."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.kind = str(judge.kind)
        self.label = _label(judge)

    def closeness(self, answers: Sequence[str], expected: str) -> list[float]:
        """Each answer's closeness to ``expected``: the embedding cosine, or token F1 of content words."""
        if self.kind == "embedding":
            from evalnb.judges.offline._embedding import cosines

            return [float(x) for x in cosines(list(answers), [expected] * len(answers))]
        want = content_words(expected)
        return [token_f1(content_words(a), want) for a in answers]

    async def verdict(
        self,
        *,
        question: str,
        first: str,
        second: str,
        expected: str | None,
        history: Sequence[Mapping[str, str]],
        earlier: Sequence[tuple[str, str, str]],
    ) -> Verdict:
        if expected is None:  # pairwise() checks every pair first; a direct caller gets the same sentence
            raise ConfigError(no_expected_message(self.label, 1, 1, []))
        one, two = await asyncio.to_thread(self.closeness, [first, second], expected)
        measure = "embedding cosine" if self.kind == "embedding" else "token F1"
        if abs(one - two) <= 1e-9:
            choice, words = "tie", "equally close to the expected answer"
        else:
            choice = "first" if one > two else "second"
            words = f"answer {1 if one > two else 2} is closer to the expected answer"
        return Verdict(
            choice, f"{words}: {measure} {one:.2f} (answer 1) against {two:.2f} (answer 2); not an LLM"
        )


def no_expected_message(label: str, missing: int, total: int, where: Sequence[str]) -> str:
    """The error for an offline judge asked to compare answers that have no expected answer."""
    shown = ", ".join(where[:3]) + (" ..." if len(where) > 3 else "")
    at = f" ({shown})" if shown else ""
    return (
        f"the offline judge {label} compares each answer with the expected answer, and {missing} of {total} "
        f"turns have none{at}. Without a reference, give a model judge (judge='openai:MODEL' or "
        "evalnb.judges.OpenAIJudge(...)) or a callable f(prompt, first, second) -> 'first' | 'second' | 'tie'"
    )


def pair_judge(
    judge: Any, *, rubric: str | None = None, cache: Any = None, base_url: str | None = None
) -> Any:
    """Normalise ``judge=`` of :func:`evalnb.pairwise` into a pairwise judge.

    A plain callable is a pairwise callable ``f(prompt, first, second)``; a string or an object from
    ``evalnb.judges`` is a model judge (given the pairwise prompt) or, for ``"heuristic"`` and
    ``"embedding"``, the offline mode.

    Raises:
        ConfigError: for no judge, or a callable that cannot take ``(prompt, first, second)``.

    Example::

        pair_judge(lambda prompt, first, second: "tie").label
        # 'callable:<lambda>'
    """
    if judge is None:
        raise ConfigError(
            "pairwise needs a judge: a model judge (judge='openai:MODEL' or evalnb.judges.OpenAIJudge(...)), a "
            "callable f(prompt, first, second) -> 'first' | 'second' | 'tie', or 'heuristic' / 'embedding' "
            "when the cases have expected answers"
        )
    if hasattr(judge, "verdict") and inspect.iscoroutinefunction(judge.verdict):
        return judge  # already a pairwise judge
    if isinstance(judge, str):
        prefix, colon, _ = judge.strip().partition(":")
        if colon and prefix.lower() not in judge_strings():
            # "module:function" / "file.py:function" names a pairwise callable, as --judge writes it
            return pair_judge(load_callable(judge.strip()), rubric=rubric, cache=cache, base_url=base_url)
    is_judge = hasattr(judge, "complete") and inspect.iscoroutinefunction(judge.complete)
    if callable(judge) and not isinstance(judge, str) and not is_judge:
        if not _takes_three(judge):
            raise ConfigError(
                f"the pairwise judge {_name_of(judge)} must take (prompt, first, second) and answer 'first', "
                "'second' or 'tie'; a one-argument f(prompt) -> str judge can be wrapped: "
                "evalnb.judges.CallableJudge(f) gets the pairwise prompt and answers its JSON"
            )
        return CallablePairJudge(judge)
    resolved = as_judge(judge, cache=cache, base_url=base_url)
    if str(getattr(resolved, "kind", "")) in OFFLINE:
        return OfflinePairJudge(resolved)
    return ModelPairJudge(resolved, rubric=rubric)
