"""The import graph of the evalnb package, read from the source (imports inside functions included, imports under
``if TYPE_CHECKING:`` left out), for the rules "no import cycle" and "no module over 700 lines".
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["PACKAGE", "cycles", "import_graph", "module_files", "package_graph", "top_level"]

PACKAGE = Path(__file__).resolve().parents[2] / "evalnb"


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package (a package is its ``__init__``)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def import_graph(files: Mapping[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from a import b`` counts as ``a.b`` when that is a module,
    else as ``a``)."""
    files = module_files() if files is None else files
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_only(tree)
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                module = ".".join([*base, node.module] if node.module else base)
                targets = [
                    f"{module}.{a.name}" if f"{module}.{a.name}" in files else module for a in node.names
                ]
            graph[name] |= {t for t in targets if t in files and t != name}
    return graph


def top_level(module: str) -> str:
    """The top-level package or module of evalnb that ``module`` belongs to (``evalnb.store._codec`` ->
    ``evalnb.store``; ``evalnb`` itself stays ``evalnb``)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """The module graph folded to evalnb's top-level packages and modules (an import inside a package is no
    edge): what the layers of docs/architecture.md order."""
    folded: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = folded.setdefault(top_level(module), set())
        edges |= {top_level(t) for t in targets} - {top_level(module)}
    return folded


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (each one an import cycle), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)
