"""Fixtures shared by every test folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.openai_server import openai_server  # noqa: F401 - the local chat server, for every test


@pytest.fixture
def offline_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a temp folder (judge caches and stores live under the working directory) with no OpenAI
    settings inherited from the machine, so nothing can reach a real endpoint."""
    monkeypatch.chdir(tmp_path)
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "AZURE_OPENAI_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def foodmart_db() -> Path:
    """The FoodMart sample database (data/foodmart/foodmart.db), built on first use: it is not committed."""
    from evalnb.demo import foodmart_db as build

    return build()
