"""Agents: the protocol, Request/Response, and adapters.

Adapters beyond plain callables (``Command``, ``OpenAIChat``, ``HTTP``, ``Record``, ``Replay``) are imported
on first use. The agent types of ``evalnb.toml`` (``type = "command"``, ...) resolve through
``evalnb.agents._types``; :func:`register_agent_type` adds one.
"""

from __future__ import annotations

import importlib
from typing import Any

from evalnb._lazy import homes
from evalnb.agents._base import Agent, Request, Response, ToolCall, to_response

__all__ = [
    "HTTP",
    "Agent",
    "BuildContext",
    "Command",
    "OpenAIChat",
    "Record",
    "Replay",
    "Request",
    "Response",
    "ToolCall",
    "register_agent_type",
    "to_response",
]

_LAZY = {
    "Command": "evalnb.agents._command",
    "OpenAIChat": "evalnb.agents._openai_chat",
    "HTTP": "evalnb.agents._http",
    "Record": "evalnb.agents._record",
    "Replay": "evalnb.agents._record",
    "BuildContext": "evalnb.agents._types",
    "register_agent_type": "evalnb.agents._types",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalnb.agents' has no attribute {name!r}")


homes(__name__, globals(), __all__)  # reprs and docs name the public path
