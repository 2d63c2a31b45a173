"""Built-in check modules are imported plainly: a missing one is an error, never a silently unknown check."""

from __future__ import annotations

import sys

import pytest

from evalnb.checks import registry


def test_every_builtin_spec_type_is_registered() -> None:
    for spec_type in ("regex", "ExactMatch", "PartialMatch", "Citations", "rows", "Similarity"):
        assert callable(registry.get(spec_type))


def test_a_builtin_module_that_cannot_be_imported_is_a_loud_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_loaded", False)
    # A None entry in sys.modules makes the import fail with ModuleNotFoundError, as a missing file would.
    monkeypatch.setitem(sys.modules, "evalnb.checks.cube", None)
    with pytest.raises(ModuleNotFoundError, match=r"evalnb\.checks\.cube"):
        registry.get("regex")
    # Still not marked loaded: asking again raises again instead of a KeyError for a missing check.
    assert registry._loaded is False
    with pytest.raises(ModuleNotFoundError):
        registry.get("rows")
