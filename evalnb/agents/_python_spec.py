"""The agent named by Python code: ``module:function`` or ``path/to/file.py:function`` (``type = "python"``).

Example::

    agent = load_python_agent("my_project.agents:answer")     # a module on the import path (or the cwd)
    agent = load_python_agent("agents/echo.py:echo")           # a file, loaded by path
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evalnb._usercode import load_object
from evalnb.agents._types import BuildContext, register_agent_type
from evalnb.errors import ConfigError

__all__ = ["PythonAgentConfig", "load_python_agent"]


def load_python_agent(spec: str, *, base: Path | None = None) -> Any:
    """The callable or agent object ``module:attr`` / ``path/to/file.py:attr`` names (``attr`` may be dotted).

    The returned object is whatever the module defines; the runner adapts it with ``evalnb.agents._base.as_agent``.

    Args:
        spec: the spec.
        base: the folder a relative file path is looked up in first (the configuration file's folder).

    Raises:
        ConfigError: ``BAD_AGENT_SPEC`` when the spec is malformed, does not import, or names something that
            is neither a callable nor an agent.
    """
    obj = load_object(spec, what="agent", code="BAD_AGENT_SPEC", base=base)
    if not callable(obj) and not hasattr(obj, "respond"):
        raise ConfigError(
            f"{spec!r} names a {type(obj).__name__}, not a callable or an agent", code="BAD_AGENT_SPEC"
        )
    return obj


class PythonAgentConfig(BaseModel):
    """``type = "python"``: ``spec = "module:function"`` or ``"path/to/file.py:function"`` (relative to the file)."""

    model_config = ConfigDict(extra="forbid")

    spec: str


def _from_config(cfg: PythonAgentConfig, ctx: BuildContext) -> Any:
    return load_python_agent(cfg.spec, base=ctx.folder)


register_agent_type("python", PythonAgentConfig, _from_config)
