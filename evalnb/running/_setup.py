"""Everything a run checks and opens before the first case runs: options, agent routing, the judge, the
start-up reachability checks (preflight) and the data source.

README.md, Use it in CI: what can fail at start-up fails here, as a ``ConfigError`` (exit 2 on the command line),
before any agent is called or a store writes anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalnb._numbers import count, seconds
from evalnb._secrets import redact_urls
from evalnb.agents._base import Agent, as_agent
from evalnb.errors import ConfigError
from evalnb.suite import RowsCheck, Suite

__all__ = [
    "as_suite",
    "check_options",
    "fixed_workdir",
    "judge_name",
    "make_judge",
    "needs_data",
    "needs_judge",
    "open_data",
    "preflight",
    "route",
]


def as_suite(suite: Any) -> Suite:
    """A Suite from a Suite, a path (loaded with ``evalnb.load``) or a DataFrame (``evalnb.from_frame``)."""
    if isinstance(suite, Suite):
        return suite
    if isinstance(suite, (str, os.PathLike)):
        from evalnb.formats import load

        return load(suite)
    if type(suite).__name__ == "DataFrame" and type(suite).__module__.startswith("pandas"):
        # docs/tables.md: a DataFrame is a suite, one case per row, with from_frame's defaults
        from evalnb.formats._tables import from_frame

        return from_frame(suite)
    raise ConfigError(
        f"suite must be an evalnb.Suite, a path or a pandas DataFrame, not {type(suite).__name__}"
    )


def check_options(*, runs: int | None, concurrency: int, timeout: float | None, retries: int) -> None:
    """The run's own options, by the one rule of :mod:`evalnb._numbers` (a NaN timeout is no timeout at all).

    ``runs`` overrides every case's count, so it is at least 1: ``runs=0`` would run nothing and pass.
    """
    count("runs", runs, minimum=1, none=True)
    count("concurrency", concurrency, minimum=1)
    seconds("timeout", timeout, none=True)
    count("retries", retries, minimum=0)


def fixed_workdir(workdir: str | os.PathLike[str] | None, *, create: bool) -> Path | None:
    """The directory every case run uses (``workdir=``), checked before anything runs: it must exist and be a
    directory, unless ``create`` asks for it to be made (with its parents). A typo in ``--workdir`` must not
    make a tree of folders wherever the process may write."""
    if workdir is None:
        if create:
            raise ConfigError(
                "create_workdir=True (--workdir-create) goes with workdir=PATH (--workdir PATH)"
            )
        return None
    path = Path(workdir).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise ConfigError(f"the working directory {path} is not a directory", code="INVALID_VALUE")
    if not create:
        raise ConfigError(
            f"the working directory {path} does not exist: create it, or ask evalnb to "
            "(create_workdir=True in Python, --workdir-create on the command line)",
            code="INVALID_VALUE",
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"the working directory {path} could not be created: {exc.strerror or exc}", code="INVALID_VALUE"
        ) from None
    return path


def is_mapping_of_agents(agent: Any) -> bool:
    return isinstance(agent, Mapping) and not hasattr(agent, "respond")


def agent_name(agent: Any) -> str:
    """What runs, the meta, exports and the store call an agent: a URL in it without password or query."""
    name = getattr(agent, "name", None) or getattr(agent, "__qualname__", None) or type(agent).__name__
    return redact_urls(str(name))


def build_agent(agent: Any, label: str) -> Agent:
    try:
        return as_agent(agent)
    except TypeError as exc:
        raise ConfigError(f"{label}: {exc}") from exc


def route(suite: Suite | None, agent: Any) -> tuple[dict[str, Agent], dict[str, str]]:
    """README.md, agents: a single agent serves every case; a mapping routes by ``case.agent`` or ``"default"``.

    Returns the agents keyed by route id (``"default"`` for a single agent) and their display names.
    Raises ConfigError before anything runs when a case names an agent the mapping lacks (docs/tasks-toml.md, keys and
    assertions: `agent`).
    """
    if not is_mapping_of_agents(agent):
        return {"default": build_agent(agent, "agent")}, {"default": agent_name(agent)}
    routes = {str(k): build_agent(v, f"agent {k!r}") for k, v in agent.items()}
    missing: dict[str, list[str]] = {}
    for case in suite.cases if suite is not None else []:
        key = case.agent or "default"
        if key not in routes:
            missing.setdefault(key, []).append(case.id)
    if missing:
        detail = "; ".join(
            f"{k!r} (cases: {', '.join(v[:5])}{' ...' if len(v) > 5 else ''})" for k, v in missing.items()
        )
        raise ConfigError(
            f"no agent given for {detail}; agents given: {sorted(routes) or 'none'}. "
            "Pass a mapping with these ids (a case naming no agent uses 'default')."
        )
    return routes, {k: agent_name(v) for k, v in agent.items()}


def make_judge(judge: Any, cache: Any) -> Any:
    if judge is None:
        return None
    from evalnb.judges._resolve import as_judge

    return as_judge(judge, cache=cache)


def judge_name(judge: Any) -> str | None:
    if judge is None:
        return None
    from evalnb.judges._scoring import judge_label

    return judge_label(judge)


async def preflight(agents: list[Any], judge: Any) -> None:
    """Run the ``preflight()`` of each distinct agent and of the judge, concurrently, before any case runs.

    README.md, Use it in CI: an agent or judge that cannot be reached at start-up is a run that could not start (exit
    2), not a column of degraded rows. Agents and judges without ``preflight`` (plain callables, the heuristic
    judge) have nothing to check. Every failure is reported, not only the first.
    """
    checks: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for label, obj in [("agent", a) for a in agents] + ([("judge", judge)] if judge is not None else []):
        check = getattr(obj, "preflight", None)
        if id(obj) in seen or check is None or not callable(check):
            continue
        seen.add(id(obj))
        checks.append((f"{label} {agent_name(obj)}", check))
    if not checks:
        return
    outcomes = await asyncio.gather(*(_await_check(check) for _, check in checks), return_exceptions=True)
    problems: list[ConfigError] = []
    for (label, _), out in zip(checks, outcomes, strict=True):
        if isinstance(out, ConfigError):
            problems.append(out)
        elif isinstance(out, Exception):
            problems.append(ConfigError(f"{label} failed its start-up check: {type(out).__name__}: {out}"))
        elif isinstance(out, BaseException):
            raise out  # cancellation, Ctrl-C
    if len(problems) == 1:
        raise problems[0]
    if problems:
        lines = "\n".join(f"- {p.message}" for p in problems)
        raise ConfigError(f"the run cannot start:\n{lines}", code=problems[0].code)


async def _await_check(check: Any) -> None:
    out = check()
    if inspect.isawaitable(out):
        await out


def warn_unpriced(models: Sequence[str], *, stacklevel: int) -> None:
    """docs/costs.md: say once which models could not be priced (their calls cost NA); ``stacklevel`` counts
    from the caller of this function, as ``warnings.warn`` counts from its own."""
    if models:
        import warnings

        from evalnb.errors import CostWarning

        warnings.warn(
            f"no price for {', '.join(models)}: the cost of their calls is NA (add them to prices=)",
            CostWarning,
            stacklevel=stacklevel + 1,
        )


def check_dependencies(suite: Suite) -> None:
    """Stop a run whose checks need an optional package that is not installed (exit 2, with the install
    command), rather than record a column of degraded rows."""
    from evalnb.suite import SemanticSimilarityCheck

    if any(
        isinstance(spec, SemanticSimilarityCheck)
        for case in suite.cases
        for turn in case.turns
        for spec in turn.checks
    ):
        from evalnb.judges.offline._embedding import load_model

        load_model(what="the SemanticSimilarity check")


def needs_judge(suite: Suite) -> bool:
    return any(spec.judged for case in suite.cases for turn in case.turns for spec in turn.checks)


def needs_data(suite: Suite) -> bool:
    return any(
        isinstance(spec, RowsCheck) and spec.reference_query is not None
        for case in suite.cases
        for turn in case.turns
        for spec in turn.checks
    )


def open_data(suite: Suite, data: Any) -> Any:
    """Open the data source before anything runs (docs/cube-yaml.md, structured reference queries); ConfigError when
    it is needed and absent."""
    if data is None and not needs_data(suite):
        return None
    from evalnb.data._sources import open_source

    source = open_source(suite, data)
    if source is not None:
        # The reference rows are computed now, before any agent is called (each query once; an error is kept
        # for the cases that run that query): the SQL never competes with agent calls for the event loop, so
        # latency_ms measures the agent alone, and a connection that only works in the thread that made it
        # (a caller's sqlite3.connect()) is used in that thread.
        from evalnb.data._sources import reference_checks

        for _, spec in reference_checks(suite):
            if spec.reference_query is not None:
                with contextlib.suppress(Exception):
                    source.reference(spec.reference_query)
    return source
