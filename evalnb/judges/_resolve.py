"""``as_judge``: turn what a user passes as ``judge=`` (or ``--judge``) into a Judge; the judge strings.

A judge string is ``NAME`` or ``NAME:ARGUMENT``, resolved through a registry: ``openai:MODEL`` and
``azure:DEPLOYMENT`` (``evalnb.judges._openai``), ``heuristic`` (``evalnb.judges.offline._heuristic``), ``embedding``
(``evalnb.judges.offline._embedding``), and whatever a
module registers with :func:`register_judge_string`. Any other ``target:attr`` names user code
(``module:function``, ``path/to/file.py:function``).

Example::

    register_judge_string("always-pass", lambda arg, opts: CallableJudge(lambda p: "PASS", name="always"))
    as_judge("always-pass").label     # 'callable:always'
"""

from __future__ import annotations

import copy
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from evalnb._registry import Registry
from evalnb._usercode import load_object
from evalnb.errors import ConfigError
from evalnb.judges._base import CallableJudge, Judge, JudgeCache, cache_from

if TYPE_CHECKING:
    from evalnb.typing import JudgeLike

__all__ = [
    "JudgeOptions",
    "JudgeString",
    "as_judge",
    "judge_strings",
    "load_callable",
    "register_judge_string",
    "unregister_judge_string",
]

OFFLINE_KINDS = frozenset({"heuristic", "embedding"})
"""Judges computed on this machine, deterministically: nothing to cache."""
CacheOption = bool | str | os.PathLike[str] | JudgeCache | None


def _is_judge(obj: Any) -> TypeGuard[Judge]:
    return hasattr(obj, "complete") and inspect.iscoroutinefunction(obj.complete)


def as_judge(judge: JudgeLike, *, cache: CacheOption = None, base_url: str | None = None) -> Judge | None:
    """Normalise ``judge=`` into a Judge.

    Accepts a Judge object (``OpenAIJudge``, ``HeuristicJudge``, ``CallableJudge`` or your own with an async
    ``complete``); a plain callable ``f(prompt) -> str`` (sync or async); or a string:
    ``"openai:MODEL"`` (an OpenAI-compatible endpoint; ``base_url`` or ``$OPENAI_BASE_URL`` chooses it),
    ``"azure:DEPLOYMENT"`` (``$AZURE_OPENAI_ENDPOINT``), ``"heuristic"`` (offline word statistics),
    ``"embedding"`` (offline sentence embeddings, the ``offline-judge`` extra), or
    ``"module:function"`` / ``"path/to/file.py:function"`` naming a callable.

    Args:
        judge: the judge, as above. ``None`` gives ``None`` (judged checks then fail as not evaluated).
        cache: ``None`` keeps the judge's own setting (model judges cache in ``.evals/cache/`` by default,
            callables do not); ``False`` turns caching off; ``True`` or a folder turns it on there.
        base_url: the endpoint for ``"openai:MODEL"`` strings.

    Raises:
        ConfigError: for a string that names nothing usable, or an object that is not a judge.

    Example::

        as_judge("openai:gpt-4o-mini", cache=False).label
        # 'openai:gpt-4o-mini'
        as_judge("heuristic").label
        # 'heuristic (not an LLM)'
    """
    if judge is None:
        return None
    if isinstance(judge, str):
        built: Judge = _from_string(judge.strip(), cache=cache, base_url=base_url)
        return built
    if _is_judge(judge):
        if cache is None or getattr(judge, "kind", "") in OFFLINE_KINDS:
            return judge
        # Don't change the caller's object: the run's cache option applies to this run only.
        clone = copy.copy(judge)
        clone.cache = cache_from(cache, default_on=False)  # type: ignore[attr-defined]  # the judges with a cache
        return clone
    if callable(judge):
        return CallableJudge(judge, cache=cache if cache is not None else False)
    raise ConfigError(
        f"{type(judge).__name__} is not a judge: give a callable f(prompt) -> str, a string such as "
        "'openai:gpt-4o-mini' or 'heuristic', or an object from evalnb.judges"
    )


def _from_string(spec: str, *, cache: CacheOption, base_url: str | None) -> Any:
    prefix, _, rest = spec.partition(":")
    entry = _STRINGS.get(prefix.lower())
    if entry is not None:
        return entry.build(rest, JudgeOptions(cache=cache, base_url=base_url))
    if rest:
        return CallableJudge(load_callable(spec), cache=cache if cache is not None else False)
    usages = [e.usage for e in _STRINGS.values() if e.usage]
    raise ConfigError(f"unknown judge {spec!r}: use {', '.join(usages)}, or module:function")


def load_callable(spec: str, *, base: Path | None = None) -> Any:
    """Load ``module:function`` or ``path/to/file.py:function`` (relative paths first against ``base``).

    Raises:
        ConfigError: when the module, file or attribute cannot be found, or is not callable.
    """
    fn = load_object(spec, what="judge", code="CONFIG_ERROR", base=base)
    if not callable(fn):
        raise ConfigError(f"{spec!r} is not callable")
    return fn


# --------------------------------------------------------------------------------------------------
# Judge strings
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeOptions:
    """What ``as_judge`` passes on to a judge string's builder.

    Attributes:
        cache: the cache option (``None``: the judge's own default).
        base_url: the endpoint given with the string (``--judge-base-url``), if any.
    """

    cache: CacheOption = None
    base_url: str | None = None


@dataclass(frozen=True)
class JudgeString:
    """One judge string: ``NAME`` or ``NAME:ARGUMENT``.

    Attributes:
        name: the part before the colon, lower-case (``openai``).
        build: ``(argument after the colon, "" when none; JudgeOptions) -> Judge``; raise
            :class:`~evalnb.errors.ConfigError` for an argument it cannot use.
        usage: how to write it (``openai:MODEL``), listed when a string names nothing; ``""`` for an alias.
    """

    name: str
    build: Callable[[str, JudgeOptions], Any]
    usage: str = ""


# The built-in strings, declared like entry points (name -> module), in the order messages list them.
_STRINGS: Registry[JudgeString] = Registry(
    "judge string",
    builtins={
        "openai": "evalnb.judges._openai",
        "azure": "evalnb.judges._openai",
        "heuristic": "evalnb.judges.offline._heuristic",
        "offline": "evalnb.judges.offline._heuristic",
        "embedding": "evalnb.judges.offline._embedding",
    },
)


def register_judge_string(
    name: str, build: Callable[[str, JudgeOptions], Any], *, usage: str | None = None, replace: bool = False
) -> JudgeString:
    """Register ``NAME`` / ``NAME:ARGUMENT`` for ``judge=`` and ``--judge``; its module calls this when imported.

    Args:
        name: the part before the colon (matched case-insensitively).
        build: ``(argument, JudgeOptions) -> Judge``.
        usage: how to write it, for messages (default ``NAME``); ``""`` for an alias that is not listed.
        replace: replace a string registered under the same name.

    Raises:
        ValueError: when the name is taken (and ``replace`` is false) or holds a colon.
    """
    if ":" in name or name != name.lower():
        raise ValueError(f"judge string {name!r} must be lower-case, without a colon")
    entry = JudgeString(name=name, build=build, usage=name if usage is None else usage)
    return _STRINGS.register(name, entry, replace=replace)


def unregister_judge_string(name: str) -> JudgeString | None:
    """Remove a judge string (a test's toy one); the entry, or None."""
    return _STRINGS.unregister(name)


def judge_strings() -> tuple[str, ...]:
    """Every registered judge string's name: the built-ins first."""
    return _STRINGS.names()
