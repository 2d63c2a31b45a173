"""``as_judge``: turn what a user passes as ``judge=`` (or ``--judge``) into a Judge."""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from evalnb.errors import ConfigError
from evalnb.judges.base import CallableJudge, JudgeCache, cache_from

__all__ = ["as_judge", "load_callable"]

CacheOption = bool | str | os.PathLike[str] | JudgeCache | None


def _is_judge(obj: Any) -> bool:
    return hasattr(obj, "complete") and inspect.iscoroutinefunction(obj.complete)


def as_judge(judge: Any, *, cache: CacheOption = None, base_url: str | None = None) -> Any:
    """Normalise ``judge=`` into a Judge.

    Accepts a Judge object (``OpenAIJudge``, ``Heuristic``, ``CallableJudge`` or your own with an async
    ``complete``); a plain callable ``f(prompt) -> str`` (sync or async); or a string:
    ``"openai:MODEL"`` (an OpenAI-compatible endpoint; ``base_url`` or ``$OPENAI_BASE_URL`` chooses it),
    ``"azure:DEPLOYMENT"`` (``$AZURE_OPENAI_ENDPOINT``), ``"heuristic"`` (offline), or
    ``"module:function"`` / ``"path/to/file.py:function"`` naming a callable.

    Args:
        judge: the judge, as above. ``None`` gives ``None`` (judged checks then fail as not evaluated).
        cache: ``None`` keeps the judge's own setting (model judges cache in ``.evals/cache/`` by default,
            callables do not); ``False`` turns caching off; ``True`` or a folder turns it on there.
        base_url: the endpoint for ``"openai:MODEL"`` strings.

    Raises:
        ConfigError: for a string that names nothing usable, or an object that is not a judge.

    Example:
        >>> as_judge("openai:gpt-4o-mini", cache=False).label
        'openai:gpt-4o-mini'
        >>> as_judge("heuristic").label
        'heuristic (not an LLM)'
    """
    if judge is None:
        return None
    if isinstance(judge, str):
        return _from_string(judge.strip(), cache=cache, base_url=base_url)
    if _is_judge(judge):
        if cache is None or getattr(judge, "kind", "") == "heuristic":
            return judge
        # Don't change the caller's object: the run's cache option applies to this run only.
        clone = copy.copy(judge)
        clone.cache = cache_from(cache, default_on=False)
        return clone
    if callable(judge):
        return CallableJudge(judge, cache=cache if cache is not None else False)
    raise ConfigError(
        f"{type(judge).__name__} is not a judge: give a callable f(prompt) -> str, a string such as "
        "'openai:gpt-4o-mini' or 'heuristic', or an object from evalnb.judges"
    )


def _from_string(spec: str, *, cache: CacheOption, base_url: str | None) -> Any:
    from evalnb.judges.heuristic import Heuristic
    from evalnb.judges.openai import OpenAIJudge

    if spec.lower() in ("heuristic", "heuristic:", "offline"):
        return Heuristic()
    prefix, _, rest = spec.partition(":")
    if prefix.lower() == "openai":
        if not rest:
            raise ConfigError("'openai:' needs a model name, e.g. openai:gpt-4o-mini")
        return OpenAIJudge(rest, base_url=base_url, cache=cache)
    if prefix.lower() == "azure":
        if not rest:
            raise ConfigError("'azure:' needs a deployment name, e.g. azure:gpt-4o")
        endpoint = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise ConfigError(
                "'azure:DEPLOYMENT' needs the endpoint: set AZURE_OPENAI_ENDPOINT or a base URL"
            )
        return OpenAIJudge(deployment=rest, azure_endpoint=endpoint, cache=cache)
    if rest:
        return CallableJudge(load_callable(spec), cache=cache if cache is not None else False)
    raise ConfigError(
        f"unknown judge {spec!r}: use openai:MODEL, azure:DEPLOYMENT, heuristic, or module:function"
    )


def load_callable(spec: str) -> Any:
    """Load ``module:function`` or ``path/to/file.py:function``.

    Raises:
        ConfigError: when the module, file or attribute cannot be found, or is not callable.
    """
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ConfigError(f"expected module:function or file.py:function, got {spec!r}")
    try:
        if target.endswith(".py") or os.sep in target or "/" in target:
            path = Path(target)
            if not path.is_file():
                raise ConfigError(f"judge file {target!r} not found")
            name = f"_evalnb_judge_{abs(hash(str(path.resolve())))}"
            module_spec = importlib.util.spec_from_file_location(name, path)
            if module_spec is None or module_spec.loader is None:
                raise ConfigError(f"cannot import {target!r}")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"cannot import the judge {spec!r}: {type(exc).__name__}: {exc}") from exc
    fn = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            raise ConfigError(f"{target!r} has no attribute {attr!r}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise ConfigError(f"{spec!r} is not callable")
    return fn
