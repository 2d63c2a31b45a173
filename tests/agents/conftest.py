"""Fixtures of the agent tests: the local chat-completions server and the local "ask" service."""

from tests.agents.ask_server import ask_server
from tests.support.openai_server import openai_server

__all__ = ["ask_server", "openai_server"]
