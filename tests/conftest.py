"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
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


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """evalnb's cache folder (the FoodMart sample database) for this test session, subprocesses included: the
    tests never write into the cache of the machine's user."""
    from evalnb.examples import CACHE_ENV

    folder = tmp_path_factory.mktemp("evalnb-cache")
    old = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(folder)
    yield folder
    if old is None:
        os.environ.pop(CACHE_ENV, None)
    else:
        os.environ[CACHE_ENV] = old


@pytest.fixture(scope="session")
def foodmart_db() -> Path:
    """The FoodMart sample database, built on first use into the cache folder (it is not shipped)."""
    from evalnb.examples import foodmart_db as build

    return build()
