"""Fixtures of the agent tests: the local "ask" service (the chat server comes from tests/conftest.py)."""

from tests.agents.ask_server import ask_server

__all__ = ["ask_server"]
