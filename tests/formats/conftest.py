"""Helpers shared by the format tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import evalnb

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def load_error() -> Callable[..., evalnb.SuiteError]:
    """Load text that must fail and return the SuiteError."""

    def run(text: str, fmt: str) -> evalnb.SuiteError:
        with pytest.raises(evalnb.SuiteError) as info:
            evalnb.load(text, format=fmt)
        return info.value

    return run
