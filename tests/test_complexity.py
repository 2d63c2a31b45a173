"""Functions you can read: no function or method in evalnb/ above cyclomatic complexity 25, as radon counts it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from radon.complexity import cc_visit

from tests.support.imports import PACKAGE

MAX_COMPLEXITY = 25

#: Functions allowed above the limit, by "module path:qualified name": none. Never add; split by what a
#: function does instead.
ALLOWED: set[str] = set()


def _blocks(items: list[Any], prefix: str = "") -> Iterator[tuple[str, int]]:
    # cc_visit lists every function and method once at the top (a method by its class: ``fullname``), beside the
    # classes that hold them again; the closures are inside their function.
    for item in items:
        if hasattr(item, "methods"):
            continue
        name = f"{prefix}{item.fullname}"
        yield name, item.complexity
        yield from _blocks(list(item.closures), f"{name}.")


def _complex() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE.parent).as_posix()
        for name, complexity in _blocks(cc_visit(path.read_text(encoding="utf-8"))):
            if complexity > MAX_COMPLEXITY:
                found[f"{where}:{name}"] = complexity
    return found


def test_no_function_above_the_complexity_limit() -> None:
    over = {name: c for name, c in _complex().items() if name not in ALLOWED}
    assert not over, "split these by what they do (radon cc):\n" + "\n".join(
        f"{name}: {c}" for name, c in sorted(over.items(), key=lambda kv: -kv[1])
    )


def test_the_allowlist_holds_only_what_is_still_over() -> None:
    # an entry whose function was split (or renamed) is taken off, so the list only ever shrinks
    stale = ALLOWED - set(_complex())
    assert not stale, f"no longer above {MAX_COMPLEXITY}, take them off ALLOWED: {sorted(stale)}"


def test_radon_counts_what_the_limit_means() -> None:
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(30))
    (fn,) = cc_visit(f"def f(x):\n{branches}\n    return -1\n")
    assert fn.complexity == 31
    ((name, complexity),) = list(
        _blocks(cc_visit(f"class C:\n  def m(self, x):\n  {branches.replace(chr(10), chr(10) + '  ')}\n"))
    )
    assert name == "C.m" and complexity == 31
