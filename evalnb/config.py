"""Named agents and a judge from ``evalnb.toml`` (or ``[tool.evalnb]`` in ``pyproject.toml``).

The file is searched from the current directory upwards; in each folder ``evalnb.toml`` wins over a
``pyproject.toml`` with a ``[tool.evalnb]`` table. Everything is strict: an unknown key is an error naming the
key, the file and the nearest valid key. Secrets never go in the file: name the environment variable that
holds them (``api_key_env``, ``${NAME}`` in ``secret_headers``, ``pass_env``).

.. code-block:: toml

    [agents.summarizer]
    type = "command"
    argv = ["python", "{config_dir}/agents/summarize.py"]   # {config_dir}: the folder of this file
    result = "last_line"
    timeout = 60

    [agents.chat]
    type = "openai"
    model = "gpt-4o-mini"
    system = "Answer in one sentence."

    [agents.ask]
    type = "http"
    preset = "ask"                                  # HTTP.ask: body and mapping of an "ask" service
    url = "http://127.0.0.1:8080/ai/ask"
    secret_headers = { Authorization = "Bearer ${ASK_TOKEN}" }

    [agents.local]
    type = "python"
    spec = "my_project.agents:answer"

    [judge]
    type = "openai"
    model = "gpt-4o-mini"

TOML suites name these agents in a task's ``agent`` field; the command line takes ``--agent NAME``. The
agent types resolve through ``evalnb.agents._types``: ``command``, ``openai`` and ``http`` are registered by
their adapters' modules, ``python`` by ``evalnb.agents._python_spec``, and a module of yours can register
another (:func:`evalnb.agents.register_agent_type`; for the command line, install it as a plugin or name the
module in ``$EVALNB_PLUGINS``, docs/extending.md, plugins). Each type's options model is validated strictly, like the rest of the file.

Example::

    from evalnb import config
    cfg = config.load_config()           # None when no file defines agents or a judge
    agent = config.resolve_agent("chat")
    result = evalnb.run("evals/tasks.toml", cfg.agents())
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from evalnb._text import nearest
from evalnb._validation import problem
from evalnb.agents._python_spec import load_python_agent
from evalnb.agents._types import AgentType, BuildContext, agent_type, agent_type_names
from evalnb.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Config", "find_config", "load_config", "named_agent", "resolve_agent"]

CONFIG_FILE = "evalnb.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JudgeConfig(_Strict):
    """``[judge]``: ``type = "openai"`` (the options of :class:`evalnb.judges.OpenAIJudge`), ``"heuristic"``,
    or ``"python"`` with ``spec = "module:function"``."""

    type: Literal["openai", "heuristic", "python"] = "openai"
    spec: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    azure_endpoint: str | None = None
    deployment: str | None = None
    api_version: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    secret_headers: dict[str, str] = Field(default_factory=dict)
    temperature: float | None = 0.0
    max_tokens: int | None = Field(default=None, ge=1)
    timeout: float = Field(default=60.0, gt=0)
    retries: int = Field(default=4, ge=0)
    concurrency: int = Field(default=64, ge=1)
    cache: bool | str | None = None
    system: str | None = None
    # [price per 1k prompt tokens, price per 1k completion tokens]: exactly two, checked here rather than
    # failing every judged check of the run when the cost is computed.
    prices: dict[str, tuple[float, float]] | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)


def _tagged(entry: AgentType) -> type[BaseModel]:
    """The agent type's options model with its ``type`` tag, strict whatever the model's own setting."""
    namespace: dict[str, Any] = {
        "__annotations__": {"type": Literal[entry.name]},
        "__module__": entry.config.__module__,
        "model_config": ConfigDict(**{**entry.config.model_config, "extra": "forbid"}),
    }
    return type(entry.config.__name__, (entry.config,), namespace)


@functools.lru_cache(maxsize=8)
def _file_model(types: tuple[AgentType, ...]) -> type[BaseModel]:
    """The whole file's model: ``[agents.*]`` as a union of the registered agent types, tagged by ``type``."""
    tagged = tuple(_tagged(t) for t in types)
    agent = Annotated[Union[tagged], Field(discriminator="type")]  # type: ignore[valid-type]  # noqa: UP007
    return create_model(
        "_File",
        __base__=_Strict,
        agents=(dict[str, agent], Field(default_factory=dict)),
        judge=(JudgeConfig | None, None),
        # [prices.MODEL]: checked by evalnb._costs (the one reader of price tables), after this model
        prices=(dict[str, Any], Field(default_factory=dict)),
    )


def _agent_types() -> tuple[AgentType, ...]:
    return tuple(t for t in (agent_type(n) for n in agent_type_names()) if t is not None)


def _or_list(names: Iterable[str]) -> str:
    items = list(names)
    return ", ".join(items[:-1]) + f" or {items[-1]}" if len(items) > 1 else "".join(items)


# --------------------------------------------------------------------------------------------------
# Finding and reading the file
# --------------------------------------------------------------------------------------------------


def find_config(start: str | os.PathLike[str] | None = None) -> tuple[Path, str] | None:
    """The configuration file nearest to ``start`` (default: the cwd), searching upwards.

    Returns:
        ``(path, table)`` where ``table`` is ``""`` for ``evalnb.toml`` and ``"tool.evalnb"`` for a
        ``pyproject.toml``; ``None`` when no folder up to the root has one.

    Example::

        find_config()
        # (PosixPath('/home/me/project/evalnb.toml'), '')
    """
    here = Path(start) if start is not None else Path.cwd()
    here = here.resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILE
        if candidate.is_file():
            return candidate, ""
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue  # someone else's broken pyproject is not ours to report
            if isinstance(data.get("tool"), dict) and "evalnb" in data["tool"]:
                return pyproject, "tool.evalnb"
    return None


def load_config(
    path: str | os.PathLike[str] | None = None, *, start: str | os.PathLike[str] | None = None
) -> Config | None:
    """Read and validate the configuration.

    Args:
        path: a file to read (``evalnb.toml``, or a ``pyproject.toml`` whose ``[tool.evalnb]`` is read);
            ``None`` searches from ``start`` upwards.
        start: where the search begins (default: the current directory).

    Returns:
        The :class:`Config`, or ``None`` when searching found no file.

    Raises:
        ConfigError: a file that is not valid TOML, or an unknown or invalid key (named, with the file).

    Example::

        cfg = load_config("evalnb.toml")
        sorted(cfg.agent_names)
        # ['ask', 'chat', 'summarizer']
    """
    if path is not None:
        file = Path(path)
        table = "tool.evalnb" if file.name == "pyproject.toml" else ""
    else:
        found = find_config(start)
        if found is None:
            return None
        file, table = found
    try:
        data: Any = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {file}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{file}: not valid TOML: {e}") from None
    if table:
        data = (data.get("tool") or {}).get("evalnb", {})
        if not isinstance(data, dict):
            raise ConfigError(f"{file}: [tool.evalnb] must be a table")
    return Config.from_dict(data, path=file, table=table)


def _error(file: Path | None, table: str, exc: ValidationError, data: Mapping[str, Any]) -> ConfigError:
    """The first validation problem as one sentence naming the key and the file (said by
    :func:`evalnb._validation.problem`, as the suite formats say theirs)."""
    errors = exc.errors(include_url=False)
    # Same rule as the suite formats: an unknown key that is a near miss of a missing one is reported as the
    # unknown key with the suggestion, not as the missing key.
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = [str(p) for p in err["loc"]]
    # pydantic puts the discriminator value in the location ("agents", "x", "command", "argv"): drop it.
    types = agent_type_names()
    if len(loc) >= 3 and loc[0] == "agents" and loc[2] in types:
        del loc[2]
    where = ".".join(([table] if table else []) + loc)
    prefix = f"{file}: " if file is not None else ""
    kind = err["type"]
    key = loc[-1] if loc else ""
    if kind == "extra_forbidden":
        valid: set[str] = {"agents", "judge", "prices"}
        if loc[0] == "agents" and len(loc) >= 3:
            entry = agent_type(str(data.get("agents", {}).get(loc[1], {}).get("type")))
            valid = {"type", *entry.config.model_fields} if entry is not None else set()
        elif loc[0] == "judge":
            valid = set(JudgeConfig.model_fields)
        near = nearest(key, valid)
        hint = f" (did you mean {near!r}?)" if near else f" (valid keys: {', '.join(sorted(valid))})"
        if key == "api_key" and "api_key_env" in valid:
            # The key itself is accepted in Python only: a file names the variable that holds it.
            hint = ': a configuration file holds no secret; name the variable that holds the key, api_key_env = "NAME"'
        return ConfigError(f"{prefix}unknown key {where!r}{hint}", code="UNKNOWN_FIELD")
    if kind == "union_tag_not_found":
        return ConfigError(
            f"{prefix}{where}: missing key 'type' (one of: {', '.join(types)})",
            code="MISSING_FIELD",
        )
    if kind == "union_tag_invalid":
        tag = err.get("ctx", {}).get("tag")
        near = nearest(str(tag), types)
        hint = f" (did you mean {near!r}?)" if near else ""
        return ConfigError(
            f"{prefix}{where}.type: unknown agent type {tag!r}{hint}; use {_or_list(types)}",
            code="INVALID_VALUE",
        )
    if loc[:2] == ["judge", "prices"] and len(loc) >= 3:
        model = ".".join(([table] if table else []) + loc[:3])
        return ConfigError(
            f"{prefix}{model}: give two numbers, [price per 1k prompt tokens, price per 1k completion tokens]",
            code="INVALID_VALUE",
        )
    if kind == "missing":
        return ConfigError(f"{prefix}missing key {where!r}", code="MISSING_FIELD")
    return ConfigError(f"{prefix}{where}: {problem(err).sentence}", code="INVALID_VALUE")


# --------------------------------------------------------------------------------------------------
# The configuration
# --------------------------------------------------------------------------------------------------


@dataclass
class Config:
    """Validated named agents and judge, and where they came from.

    Attributes:
        path: the file read (``None`` for a dict given directly).
        agent_configs: name -> validated options (the agent type's options model, with its ``type``).
        judge_config: the ``[judge]`` table, if any.
        prices: the ``[prices.MODEL]`` tables (USD per 1M tokens, docs/costs.md), None when there are none.
    """

    path: Path | None = None
    agent_configs: dict[str, Any] = field(default_factory=dict)
    judge_config: JudgeConfig | None = None
    prices: Any = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: Path | None = None, table: str = "") -> Config:
        """Validate a parsed configuration table.

        Example::

            Config.from_dict({"agents": {"echo": {"type": "python", "spec": "m:f"}}}).agent_names
            # ['echo']
        """
        try:
            parsed: Any = _file_model(_agent_types()).model_validate(dict(data))
        except ValidationError as e:
            raise _error(path, table, e, data) from None
        from evalnb._costs import price_table

        where = f"{path}: {table + '.' if table else ''}prices" if path is not None else "prices"
        prices = price_table(parsed.prices, where=where)
        return cls(path=path, agent_configs=dict(parsed.agents), judge_config=parsed.judge, prices=prices)

    @property
    def folder(self) -> Path:
        """The folder of the file: relative paths and ``{config_dir}`` resolve against it."""
        return self.path.parent.resolve() if self.path is not None else Path.cwd()

    @property
    def agent_names(self) -> list[str]:
        return sorted(self.agent_configs)

    def __repr__(self) -> str:
        return f"Config(path={str(self.path) if self.path else None!r}, agents={self.agent_names})"

    def agent(self, name: str) -> Any:
        """Build the agent configured under ``name``.

        Raises:
            ConfigError: an unknown name (the configured ones are listed), or options the adapter rejects.

        Example::

            load_config().agent("chat")
            # OpenAIChat('gpt-4o-mini', endpoint='https://api.openai.com/v1', api_key=<set>)
        """
        cfg = self.agent_configs.get(name)
        if cfg is None:
            near = nearest(name, self.agent_configs)
            hint = f" (did you mean {near!r}?)" if near else ""
            where = f" in {self.path}" if self.path else ""
            known = ", ".join(self.agent_names) or "none"
            raise ConfigError(f"no agent named {name!r}{where}{hint}; configured agents: {known}")
        try:
            return self._build(name, cfg)
        except ConfigError as e:
            where = f"{self.path}: " if self.path else ""
            raise ConfigError(f"{where}agents.{name}: {e.message}", code=e.code) from None

    def agents(self, names: Iterable[str] | None = None) -> dict[str, Any]:
        """Build the named agents (default: all), as the mapping ``evalnb.run`` routes cases with.

        Example::

            evalnb.run("evals/tasks.toml", load_config().agents())
        """
        return {n: self.agent(n) for n in (self.agent_names if names is None else names)}

    def _build(self, name: str, cfg: Any) -> Any:
        entry = agent_type(cfg.type)
        if entry is None:  # unregistered since the file was read
            raise ConfigError(f"unknown agent type {cfg.type!r}; use {_or_list(agent_type_names())}")
        # The builder gets the type's own options model, without the tag (already validated: no re-check).
        options = entry.config.model_construct(
            _fields_set=cfg.model_fields_set - {"type"},
            **{key: getattr(cfg, key) for key in entry.config.model_fields},
        )
        return entry.build(options, BuildContext(name=name, folder=self.folder))

    def judge(self, *, cache: Any = None) -> Any:
        """Build the ``[judge]`` (``None`` when the file has none).

        Example::

            evalnb.run(suite, agent, judge=load_config().judge())
        """
        j = self.judge_config
        if j is None:
            return None
        from evalnb.judges import as_judge

        if j.type == "heuristic":
            return as_judge("heuristic")
        if j.type == "python":
            if not j.spec:
                raise ConfigError(f"{self.path}: judge: type 'python' needs spec = 'module:function'")
            from evalnb.judges._resolve import load_callable

            return as_judge(load_callable(j.spec, base=self.folder), cache=cache)
        from evalnb.judges import OpenAIJudge

        opts = j.model_dump(exclude={"type", "spec"}, exclude_none=True)
        if "prices" in opts:
            opts["prices"] = {k: tuple(v) for k, v in opts["prices"].items()}
        if cache is not None:
            opts["cache"] = cache
        where = f"{self.path}: " if self.path else ""
        try:
            return OpenAIJudge(**opts)
        except ConfigError as e:  # e.g. no model: name the file, as every other error of it does
            raise ConfigError(f"{where}judge: {e.message}", code=e.code) from None
        except Exception as e:  # the client's own configuration errors
            raise ConfigError(f"{where}judge: {e}") from None


# --------------------------------------------------------------------------------------------------
# Resolution for the command line and TOML suites
# --------------------------------------------------------------------------------------------------


def named_agent(name: str, *, start: str | os.PathLike[str] | None = None) -> Any:
    """The agent configured under ``name`` in the nearest configuration file.

    Raises:
        ConfigError: when there is no configuration file, or it has no such agent.

    Example::

        named_agent("summarizer")
        # Command(['python', '/home/me/project/agents/summarize.py'], prompt_via='stdin', result='last_line')
    """
    cfg = load_config(start=start)
    if cfg is None:
        raise ConfigError(
            f"no agent named {name!r}: no {CONFIG_FILE} (or [tool.evalnb] in pyproject.toml) found from "
            f"{Path(start) if start is not None else Path.cwd()} upwards; give module:function or "
            "path/to/file.py:function instead"
        )
    return cfg.agent(name)


def resolve_agent(name_or_spec: str, *, start: str | os.PathLike[str] | None = None) -> Any:
    """An agent from a configured name (``chat``) or a spec (``module:function``, ``file.py:function``).

    A name has no colon; a spec has one (``C:\\agents\\a.py:f`` keeps its drive).

    Raises:
        ConfigError: an unknown name, a spec that does not load, or a configuration error.

    Example::

        resolve_agent("chat")
        resolve_agent("my_project.agents:answer")
    """
    text = name_or_spec.strip()
    if ":" not in text:
        return named_agent(text, start=start)
    return load_python_agent(text)


def agents_from_specs(specs: Sequence[str] | None, *, start: str | os.PathLike[str] | None = None) -> Any:
    """The agent (or agents) a command line names, as ``evalnb.run`` takes them.

    ``--agent SPEC`` once: one agent for every case; ``--agent ID=SPEC`` (repeatable): a mapping routing cases by
    the agent they name (a bare ``SPEC`` beside them serves the cases naming none); no ``--agent``: the agents
    of ``evalnb.toml`` / ``[tool.evalnb]``, routed the same way (a single one also serves cases naming none).

    Raises:
        ConfigError: for specs that do not load, two bare specs, or no agent anywhere.

    Example::

        agents_from_specs(["agents.py:answer"])
        agents_from_specs(["planner=agents.py:plan", "writer=chat"])
    """
    if not specs:
        cfg = load_config(start=start)
        if cfg is None or not cfg.agent_names:
            raise ConfigError(
                "no agent given: use --agent NAME (from evalnb.toml), --agent module:function "
                "or --agent path/to/file.py:function"
            )
        agents = cfg.agents()
        if len(agents) == 1:
            agents.setdefault(
                "default", next(iter(agents.values()))
            )  # cases naming no agent use the only one
        return agents
    named: dict[str, Any] = {}
    bare: list[str] = []
    for spec in specs:
        m = re.match(r"^([A-Za-z0-9_.-]+)=(.+)$", spec)
        if m:
            named[m.group(1)] = resolve_agent(m.group(2), start=start)
        else:
            bare.append(spec)
    if len(bare) > 1:
        raise ConfigError("give one --agent SPEC, or name them: --agent ID=SPEC", code="BAD_AGENT_SPEC")
    if not named:
        return resolve_agent(bare[0], start=start)
    if bare:
        named.setdefault("default", resolve_agent(bare[0], start=start))
    return named


def judge_from(
    judge: str | None,
    *,
    base_url: str | None = None,
    cache: Any = None,
    start: str | os.PathLike[str] | None = None,
) -> Any:
    """The judge a command line names (``--judge``, ``--judge-base-url``, ``--no-cache``), else the ``[judge]``
    of ``evalnb.toml``, else None. A judge that cannot be built is a ConfigError (the run cannot start)."""
    if judge is not None:
        from evalnb.judges._resolve import as_judge

        return as_judge(judge, cache=cache, base_url=base_url)
    cfg = load_config(start=start)
    if cfg is not None and cfg.judge_config is not None:
        return cfg.judge(cache=cache)
    return None


def prices_from(file: str | os.PathLike[str] | None, *, start: str | os.PathLike[str] | None = None) -> Any:
    """The prices a command line uses (docs/costs.md): ``[prices.MODEL]`` of ``evalnb.toml``, with the models of
    ``--prices FILE`` on top; None when neither gives any."""
    from evalnb._costs import PriceTable, price_table

    cfg = load_config(start=start)
    table: PriceTable | None = cfg.prices if cfg is not None else None
    given = price_table(file) if file is not None else None
    if table is None:
        return given
    return table.merged(given)
