"""The shape of the package: no import cycles among evalnb's modules, no module too long to read in one
sitting. Imports inside functions count (only ``if TYPE_CHECKING:`` imports are left out): a cycle hidden in a
function is still two modules that cannot be understood one without the other."""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import cycles, import_graph, module_files

MAX_LINES = 700


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles among evalnb modules:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_module_over_700_lines() -> None:
    long = {
        m: n
        for m, p in module_files().items()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_cycle_finder_sees_imports_inside_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "evalnb"
    (pkg / "demo").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    # the shape the demo package had: the package imports a module lazily, the module imports the package
    (pkg / "demo" / "__init__.py").write_text(
        "def __getattr__(name):\n    from evalnb.demo.analytics import A\n"
    )
    (pkg / "demo" / "analytics.py").write_text(
        "class A:\n    def __init__(self):\n        from evalnb.demo import db\n"
    )
    (pkg / "demo" / "typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from evalnb.demo.analytics import A\n"
    )
    (pkg / "demo" / "fine.py").write_text("from . import typed\n")
    graph = import_graph(module_files(pkg))
    assert graph["evalnb.demo.typed"] == set()  # TYPE_CHECKING imports are not imports
    assert graph["evalnb.demo.fine"] == {"evalnb.demo.typed"}  # a submodule named from its package
    assert cycles(graph) == [["evalnb.demo", "evalnb.demo.analytics"]]


def test_docstring_examples_are_code_blocks_not_doctests_that_never_run() -> None:
    # An example written as a doctest (`>>> `) promises output that no test checks; evalnb's examples are
    # plain code blocks (`Example::`), with the output they give as comments.
    prompts = {
        f"{m}:{n}"
        for m, p in module_files().items()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith(">>> ")
    }
    assert not prompts, f"doctest prompts in docstrings: {sorted(prompts)}"
