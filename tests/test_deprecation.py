"""Deprecated names (docs/extending.md, Deprecations): each old name works, warns once per use with a
``FutureWarning`` naming the new name and the versions, and the new name does not warn."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb import _deprecation
from evalnb._deprecation import Renamed, message, module_getattr, removal_version
from evalnb._version import __version__

GONE = removal_version(__version__)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def once(use: Callable[[], Any], *words: str) -> tuple[Any, str]:
    """Call ``use``: exactly one FutureWarning, naming the version, the removal and ``words``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = use()
    assert [w.category for w in caught] == [FutureWarning], [str(w.message) for w in caught]
    text = str(caught[0].message)
    assert f"deprecated since evalnb {__version__} and goes away in {GONE}" in text
    for word in words:
        assert word in text
    assert caught[0].filename == __file__  # the warning points at the user's line, not at evalnb
    return value, text


def silent(use: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return use()


@pytest.fixture(scope="module")
def two() -> Iterator[tuple[Any, Any]]:
    frame = pd.DataFrame({"prompt": ["a", "b", "c"], "expected": ["x", "y", "z"]})
    suite = evalnb.from_frame(frame, name="dep")
    a = evalnb.run(suite, lambda p: {"a": "x", "b": "y", "c": "z"}[p], progress=False)
    b = evalnb.run(suite, lambda p: {"a": "x", "b": "y", "c": "no"}[p], progress=False)
    yield a, b


def test_the_schedule_and_the_wording() -> None:
    assert removal_version("0.1.0") == "0.3.0" and removal_version("1.9.2") == "1.11.0"
    with pytest.raises(ValueError, match=r"not a MAJOR\.MINOR"):
        removal_version("next")
    assert message("a.old", "a.new", since="0.4.1") == (
        "a.old is deprecated since evalnb 0.4.1 and goes away in 0.6.0: use a.new"
    )
    assert message("x", "y", since="0.1.0", removed_in="1.0.0", note="why").endswith("1.0.0: use y (why)")


def test_module_getattr_serves_old_names_and_falls_back() -> None:
    getattr_ = module_getattr("pkg", {"Old": Renamed("pkg.Old", "pkg.New", target="pathlib:Path")})
    value, _ = once(lambda: getattr_("Old"), "pkg.Old", "use pkg.New")
    assert value is Path
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'Other'"):
        getattr_("Other")
    assert module_getattr("pkg", {}, fallback=lambda name: name.upper())("x") == "X"


def test_the_heuristic_judge_s_old_name(two: tuple[Any, Any]) -> None:
    import evalnb.judges.offline

    new = silent(lambda: evalnb.judges.HeuristicJudge)
    old, _ = once(lambda: evalnb.judges.Heuristic, "evalnb.judges.Heuristic", "evalnb.judges.HeuristicJudge")
    assert old is new and isinstance(evalnb.judges.as_judge("heuristic"), old)  # the string is as it was
    assert once(lambda: evalnb.judges.offline.Heuristic, "evalnb.judges.offline.HeuristicJudge")[0] is new

    def imported() -> Any:
        from evalnb.judges import Heuristic  # type: ignore[attr-defined]

        return Heuristic

    assert once(imported)[0] is new
    assert "Heuristic" not in evalnb.judges.__all__ and "HeuristicJudge" in evalnb.judges.__all__


def test_the_store_s_listing_is_its_history(two: tuple[Any, Any], tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / "s.db")
    store.save(two[0], version="v1")
    new = silent(lambda: store.history())
    old, _ = once(lambda: store.runs(), "Store.runs", "use Store.history()")
    pd.testing.assert_frame_equal(old, new)
    assert once(lambda: store.runs(suite="dep"))[0]["version"].tolist() == ["v1"]  # arguments pass through
    assert "Deprecated" in (evalnb.Store.runs.__doc__ or "")


def test_summary_is_a_frame_and_the_text_is_headline(two: tuple[Any, Any], tmp_path: Path) -> None:
    a, b = two
    assert isinstance(silent(a.summary), pd.DataFrame)  # Result.summary() stays a frame, no warning
    cmp = evalnb.compare(a, b)
    text = silent(cmp.headline)
    assert isinstance(text, str) and text.startswith("Gate:")
    assert once(cmp.summary, "Comparison.summary", "Comparison.headline()", "is a DataFrame")[0] == text
    many = evalnb.comparison.gate([cmp])
    assert once(many.summary, "Comparisons.summary")[0] == silent(many.headline)
    pw = evalnb.pairwise(a, b, judge=lambda p, first, second: "tie")
    assert once(pw.summary, "Pairwise.summary")[0] == silent(pw.headline)
    assert silent(cmp.report).count(text) == 1  # the report opens with the same lines


def test_to_html_writes_and_write_html_is_its_old_name(two: tuple[Any, Any], tmp_path: Path) -> None:
    many = evalnb.comparison.gate([evalnb.compare(*two)])
    new = silent(lambda: many.to_html(tmp_path / "new.html"))
    old, _ = once(
        lambda: many.write_html(tmp_path / "old.html"), "Comparisons.write_html", "Comparisons.to_html()"
    )
    assert new.is_file() and old.is_file() and old.read_text()[:200] == new.read_text()[:200]


def test_the_older_aliases_use_the_helper(two: tuple[Any, Any]) -> None:
    cmp = evalnb.compare(*two)
    assert once(lambda: cmp.has_regressions, "Comparison.has_regressions", "Comparison.regressed")[0] is (
        cmp.regressed
    )
    assert once(lambda: evalnb.judges.rescore, "evalnb.judges.rescore", "evalnb.rescore")[0] is evalnb.rescore
    assert once(lambda: evalnb.judges.rescore_async)[0] is evalnb.running.rescore_async


def test_no_alias_outlives_its_removal() -> None:
    for name in (
        "evalnb.judges",
        "evalnb.judges.offline",
        "evalnb.store",
        "evalnb.comparison",
        "evalnb.preference",
    ):
        importlib.import_module(name)
    found = _deprecation.registered()
    assert {
        "evalnb.judges.Heuristic",
        "Store.runs",
        "Comparison.summary",
        "Comparisons.write_html",
        "Pairwise.summary",
    } <= set(found)
    overdue = {old: r.removal for old, r in found.items() if _version(__version__) >= _version(r.removal)}
    assert overdue == {}, f"remove these deprecated names (their removal version has come): {overdue}"
