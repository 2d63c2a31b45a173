"""The Judge protocol, its reply, the on-disk answer cache, and the adapter for plain Python callables.

A judge is anything with ``name``, ``label``, ``kind`` and ``async complete(prompt) -> JudgeReply``. The
prompt is built by :func:`evalnb.judges.evaluate` from a rubric; the judge only answers it. ``kind`` is
``"llm"`` for model judges, ``"heuristic"`` and ``"embedding"`` for the offline ones and ``"callable"`` for user
functions, and
``label`` is what every score row names as its judge (``openai:gpt-4o-mini``, ``heuristic (not an LLM)``).

Model judges cache their answers on disk (re-scoring the same responses costs nothing); the cache is
keyed by base URL, model, prompt and options, one JSON file per answer, written atomically, so concurrent
runs sharing a cache folder never see half a file.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from evalnb._costs import PriceTable, price_table
from evalnb._files import atomic_write

__all__ = [
    "CallableJudge",
    "Judge",
    "JudgeCache",
    "JudgeKind",
    "JudgeReply",
    "Prices",
    "default_cache_dir",
]

JudgeKind = Literal["llm", "heuristic", "embedding", "callable"]
Prices = Mapping[str, Any]
"""Model name -> ``{"input", "output", "cached_input"}`` in USD per 1M tokens (docs/costs.md), or, as in evalnb
0.2, ``(price per 1k prompt tokens, price per 1k completion tokens)``; or a :class:`evalnb._costs.PriceTable`."""


@dataclass(frozen=True)
class JudgeReply:
    """What a judge answered.

    Attributes:
        text: the raw answer text (parsed by ``evaluate``).
        usage: token usage (``prompt_tokens``, ``completion_tokens``) when the judge reports it.
        model: the model that answered, when known.
        cached: True when the answer came from the on-disk cache (it cost nothing this time).
        label: the judge that answered, when it is not the judge that was asked (a judge that hands some
            checks to another names that one, and the score row says so); None otherwise.
        logprobs: the answer's tokens with their log probabilities and the most likely alternatives, as an
            OpenAI-compatible server returns them (``choices[0].logprobs.content``); None when the server
            sent none. ``evaluate`` reads the score's distribution from them.
        note: what the score's reason should add about the answer itself (bytes that were not UTF-8 and became
            U+FFFD); None when there is nothing to say.
        continuous: a continuous score on the check's 1-5 scale that the judge computed itself beside the level
            it wrote (the embedding judge's measure, placed within half a point of its level); ``evaluate``
            puts it in ``Score.weighted``, and the pass decision stays with the written level. None otherwise.
    """

    text: str
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    cached: bool = False
    label: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    note: str | None = None
    continuous: float | None = None


@runtime_checkable
class Judge(Protocol):
    """What ``evaluate`` calls: an async prompt-to-answer function with a name.

    Example::

        class Always5:
            name = label = "always-5"
            kind = "callable"
            async def complete(self, prompt):
                return JudgeReply('{"score": 5, "reason": "always"}')
    """

    name: str
    label: str
    kind: str

    async def complete(self, prompt: str) -> JudgeReply:  # pragma: no cover - protocol
        ...


def default_cache_dir() -> Path:
    """``.evals/cache/`` under the current working directory (the default cache place)."""
    return Path.cwd() / ".evals" / "cache"


class JudgeCache:
    """Judge answers on disk: ``<dir>/judge/<2 hex>/<sha256>.json``, one file per answer.

    Writes go through :func:`evalnb._files.atomic_write` (a temporary file in the same folder renamed into
    place), so concurrent writers of the same key leave one complete file, never a torn one.

    Example::

        cache = JudgeCache(".evals/cache")
        key = cache.key(endpoint="http://127.0.0.1:8000/v1", model="m", prompt="p", options={})
        cache.get(key) is None
        # True
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(path) if path is not None else default_cache_dir()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(*, endpoint: str, model: str, prompt: str, options: Mapping[str, Any]) -> str:
        blob = json.dumps(
            {"endpoint": endpoint, "model": model, "prompt": prompt, "options": dict(options)},
            sort_keys=True,
            separators=(",", ":"),
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def _file(self, key: str) -> Path:
        return self.root / "judge" / key[:2] / f"{key}.json"

    def get(self, key: str) -> JudgeReply | None:
        try:
            data = json.loads(self._file(key).read_text(encoding="utf-8"))
            logprobs = data.get("logprobs")
            reply = JudgeReply(
                text=data["text"],
                usage=data.get("usage") or {},
                model=data.get("model"),
                cached=True,
                logprobs=logprobs if isinstance(logprobs, list) else None,
                note=data.get("note") if isinstance(data.get("note"), str) else None,
                continuous=_number(data.get("continuous")),
            )
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return reply

    def put(self, key: str, reply: JudgeReply) -> None:
        data: dict[str, Any] = {"text": reply.text, "usage": reply.usage, "model": reply.model}
        if reply.note is not None:
            data["note"] = reply.note  # a cached answer's reason says what the first one said
        if reply.continuous is not None:
            data["continuous"] = reply.continuous
        if reply.logprobs is not None:
            data["logprobs"] = (
                reply.logprobs
            )  # the weighted score of a cached answer is the same as the first
        # Not fsynced: an entry lost to a power cut is a miss, and an fsync would cost ten times the write.
        atomic_write(self._file(key), json.dumps(data), durable=False)

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.root)!r})"


def _number(value: Any) -> float | None:
    """A cached number back as a float; None for anything else (an entry written before it existed)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return float(value)
    return None


def cache_from(option: Any, *, default_on: bool) -> JudgeCache | None:
    """Normalise a ``cache=`` option: None (the judge's default), False/True, a path, or a JudgeCache."""
    if isinstance(option, JudgeCache):
        return option
    if option is None:
        return JudgeCache() if default_on else None
    if option is False:
        return None
    if option is True:
        return JudgeCache()
    return JudgeCache(option)


def cost_of(usage: Mapping[str, Any] | None, model: str | None, prices: Prices | None) -> float | None:
    """Cost of one answer from a price table (evalnb._costs, the one cost rule); None when the model has no
    price or the answer no usage."""
    table = judge_prices(prices)
    return table.cost(usage, model) if table is not None else None


def judge_prices(prices: Any) -> PriceTable | None:
    """A judge's ``prices=`` as a price table (per-1k pairs of evalnb 0.2 taken too); None for none."""
    return price_table(prices, where="judge prices", per_1k_pairs=True)


class CallableJudge:
    """A plain Python function as a judge: ``f(prompt) -> str`` (or a :class:`JudgeReply`), sync or async.

    Sync functions run in a worker thread so a slow one does not stall other checks. Not cached unless
    asked (``cache=True`` or a folder).

    Example::

        judge = CallableJudge(lambda prompt: '{"score": 4, "reason": "fine"}')
        judge.label
        # 'callable:<lambda>'
    """

    kind: str = "callable"

    def __init__(
        self,
        fn: Callable[[str], Any],
        *,
        name: str | None = None,
        cache: bool | str | os.PathLike[str] | JudgeCache | None = None,
        prices: Prices | None = None,
        model: str | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.label = f"callable:{self.name}"
        self.model = model or self.name
        self.cache = cache_from(cache, default_on=False)
        self.prices = judge_prices(prices)
        base = fn
        while isinstance(base, functools.partial):
            base = base.func
        call = getattr(base, "__call__", None)  # noqa: B004 - objects with an async __call__
        self._async = inspect.iscoroutinefunction(base) or (
            call is not None and inspect.iscoroutinefunction(call)
        )

    def cache_key(self, prompt: str) -> str:
        return JudgeCache.key(endpoint=f"callable:{self.name}", model=self.model, prompt=prompt, options={})

    async def complete(self, prompt: str) -> JudgeReply:
        out = await self.fn(prompt) if self._async else await asyncio.to_thread(self.fn, prompt)
        if inspect.isawaitable(out):
            out = await out
        if isinstance(out, JudgeReply):
            return out
        if isinstance(out, (dict, list)):
            return JudgeReply(text=json.dumps(out), model=self.model)
        return JudgeReply(text="" if out is None else str(out), model=self.model)

    def __repr__(self) -> str:
        return f"CallableJudge({self.name})"
