"""Build an agent from a text spec, as the command line gives it: a configured NAME, ``module:function`` or
``file.py:function``.

Example::

    from evalnb.agents.spec import load_agent
    agent = load_agent("summarizer")                   # [agents.summarizer] of evalnb.toml
    agent = load_agent("my_project.agents:answer")     # a module on the import path (or the cwd)
    agent = load_agent("agents/echo.py:echo")          # a file, loaded by path
"""

from __future__ import annotations

from typing import Any

from evalnb._usercode import split_spec
from evalnb.agents._python_spec import load_python_agent
from evalnb.config import resolve_agent

__all__ = ["load_agent", "load_python_agent", "split_spec"]


def load_agent(spec: str) -> Any:
    """Resolve a configured agent name, ``module:function`` or ``path/to/file.py:function``.

    A spec without a colon is the name of an agent configured in ``evalnb.toml`` (``evalnb.config``). The
    attribute may be dotted (``module:Class.method``). The returned object is whatever the module defines
    (a callable or an agent object); the runner adapts it with ``evalnb.agents.as_agent``.

    Raises:
        ConfigError: when the spec is malformed, the module or file cannot be imported, or the name is missing.

    Example::

        load_agent("tests/agents_for_cli.py:echo")("hi")
        # 'hi'
    """
    return resolve_agent(spec)
