"""Agent types: what ``type = "..."`` of an ``[agents.NAME]`` table in ``evalnb.toml`` builds.

An agent type is a name, a pydantic model of the table's other keys (strict: an unknown key is an error that
names the nearest valid one) and a builder that turns validated options into an agent. The built-in types
are ``command``, ``openai``, ``http`` (each registered by its adapter's module) and ``python``
(``evalnb.agents._python_spec``); a new type is one module that calls :func:`register_agent_type`.

Example::

    class EchoOptions(pydantic.BaseModel):
        prefix: str = ""

    register_agent_type("echo", EchoOptions, lambda opts, ctx: (lambda prompt: opts.prefix + prompt))

and in ``evalnb.toml``:

.. code-block:: toml

    [agents.parrot]
    type = "echo"
    prefix = "you said: "
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalnb._lazy import homes
from evalnb._registry import Registry

__all__ = [
    "AgentType",
    "BuildContext",
    "agent_type",
    "agent_type_names",
    "register_agent_type",
    "unregister_agent_type",
]


@dataclass(frozen=True)
class BuildContext:
    """Where a configured agent is built.

    Attributes:
        name: the agent's name (the ``NAME`` of ``[agents.NAME]``).
        folder: the configuration file's folder: relative paths and ``{config_dir}`` resolve against it.
    """

    name: str
    folder: Path


@dataclass(frozen=True)
class AgentType:
    """One agent type of ``evalnb.toml``.

    Attributes:
        name: the ``type`` value.
        config: the pydantic model of the table's keys other than ``type`` (validated with unknown keys
            forbidden, whatever the model's own setting).
        build: ``(validated options, BuildContext) -> agent`` (anything ``evalnb.run`` accepts as an agent);
            raise :class:`~evalnb.errors.ConfigError` for options that cannot make an agent.
    """

    name: str
    config: type[BaseModel]
    build: Callable[[Any, BuildContext], Any]


_TYPES: Registry[AgentType] = Registry(
    "agent type",
    builtins={
        "command": "evalnb.agents._command",
        "openai": "evalnb.agents._openai_chat",
        "http": "evalnb.agents._http",
        "python": "evalnb.agents._python_spec",
    },
)


def register_agent_type(
    name: str, config: type[BaseModel], build: Callable[[Any, BuildContext], Any], *, replace: bool = False
) -> AgentType:
    """Register an agent type; its module calls this when imported.

    Raises:
        ValueError: when the name is taken (``replace=True`` replaces it).
    """
    return _TYPES.register(name, AgentType(name=name, config=config, build=build), replace=replace)


def unregister_agent_type(name: str) -> AgentType | None:
    """Remove an agent type (a test's toy type); the type, or None."""
    return _TYPES.unregister(name)


def agent_type(name: str) -> AgentType | None:
    """The agent type registered under ``name``, or None."""
    return _TYPES.get(name)


def agent_type_names() -> tuple[str, ...]:
    """Every registered agent type: the built-ins first (``command``, ``openai``, ``http``, ``python``)."""
    return _TYPES.names()


# exported lazily by evalnb.agents: its public home from the start, whoever imports this module first
homes("evalnb.agents", globals(), ["BuildContext", "register_agent_type"])
