"""The shape of the package: the layers of docs/architecture.md, kept by import-linter and by a graph of our own;
no import cycles among evalnb's modules nor among its top-level packages; no module too long to read in one
sitting. Imports inside functions count (only ``if TYPE_CHECKING:`` imports are left out): a cycle hidden in a
function is still two packages that cannot be understood one without the other."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.imports import PACKAGE, cycles, import_graph, module_files, package_graph, top_level

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = PACKAGE.parent


def _layers() -> list[tuple[list[str], bool]]:
    """The layers contract of pyproject.toml, top first: each layer's modules, and whether they may import each
    other (``a : b``; ``a | b`` are independent)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return [([m.strip() for m in re.split(r"[|:]", layer)], ":" in layer) for layer in contract["layers"]]


MAX_LINES = 700


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles among evalnb modules:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_import_cycles_between_top_level_packages() -> None:
    # folded to evalnb.X, imports inside functions counted: the cycle through fourteen packages that a
    # module-level check let stand
    found = cycles(package_graph(import_graph()))
    assert not found, "import cycles among evalnb's packages:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_every_import_points_down_the_layers_of_pyproject() -> None:
    layers = _layers()
    rank = {m: i for i, (layer, _) in enumerate(layers) for m in layer}  # 0 is the top
    tops = {top_level(m) for m in module_files()} - {"evalnb"}
    assert tops - set(rank) == set(), "top-level modules in no layer of [tool.importlinter] (pyproject.toml)"
    assert set(rank) - tops == set(), "layers naming modules that do not exist"
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in package_graph(import_graph()).items()
        for b in targets
        if a in rank and b in rank and (rank[b] < rank[a] or (rank[b] == rank[a] and not layers[rank[a]][1]))
    )
    assert not upward, "imports of a layer above (or an independent sibling):\n" + "\n".join(upward)


def test_lint_imports_keeps_the_layers_contract() -> None:
    # the same rule as dev.py's test command runs it: import-linter (grimp) counts imports inside functions
    tool = Path(sys.executable).with_name("lint-imports")
    assert tool.exists(), "import-linter is missing: pip install -e '.[dev]'"
    done = subprocess.run(
        [str(tool), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


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


def test_the_package_graph_sees_a_cycle_through_functions_in_other_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "evalnb"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    # no module cycle (high._a -> low._b -> high._c), yet the packages low and high need each other
    (pkg / "high" / "_a.py").write_text("from evalnb.low import _b\n")
    (pkg / "low" / "_b.py").write_text("def f():\n    from evalnb.high import _c\n")
    (pkg / "high" / "_c.py").write_text("X = 1\n")
    graph = import_graph(module_files(pkg))
    assert cycles(graph) == []
    assert cycles(package_graph(graph)) == [["evalnb.high", "evalnb.low"]]


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
