"""Agents: the protocol, Request/Response, and adapters.

Adapters beyond plain callables (``Command``, ``OpenAIChat``, ``HTTP``, ``Record``, ``Replay``) are imported
on first use. The agent types of ``evalnb.toml`` (``type = "command"``, ...) resolve through
``evalnb.agents.types``; :func:`register_agent_type` adds one.
"""

from __future__ import annotations

import importlib
from typing import Any

from evalnb.agents.base import Agent, CallableAgent, Request, Response, ToolCall, as_agent, to_response

__all__ = [
    "HTTP",
    "Agent",
    "BuildContext",
    "CallableAgent",
    "Command",
    "OpenAIChat",
    "Record",
    "Replay",
    "Request",
    "Response",
    "ToolCall",
    "as_agent",
    "register_agent_type",
    "to_response",
]

_LAZY = {
    "Command": "evalnb.agents.command",
    "OpenAIChat": "evalnb.agents.openai_chat",
    "HTTP": "evalnb.agents.http",
    "Record": "evalnb.agents.record",
    "Replay": "evalnb.agents.record",
    "BuildContext": "evalnb.agents.types",
    "register_agent_type": "evalnb.agents.types",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalnb.agents' has no attribute {name!r}")
