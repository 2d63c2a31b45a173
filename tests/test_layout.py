"""The package's shape: modules under 700 lines, and no import cycle (imports inside functions count)."""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import cycles, import_graph, module_files

# The packages of the input/output edge: exports, data sources, the chat client, agents, the demo, the shared
# file and retry helpers. Their imports of the rest of evalnb go one way (export builds on results).
EDGE = ("evalnb.export", "evalnb.data", "evalnb.chat", "evalnb.agents", "evalnb.demo", "evalnb.judges.agreement",
        "evalnb.judges.base", "evalnb.judges.openai", "evalnb._files", "evalnb._retry")  # fmt: skip


def _in_edge(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in EDGE)


def test_edge_modules_are_under_700_lines() -> None:
    sizes = {
        m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in module_files().items() if _in_edge(m)
    }
    assert {m for m in sizes if m.startswith("evalnb.export.")} >= {
        "evalnb.export.html",
        "evalnb.export.reading",
    }
    assert {m: n for m, n in sizes.items() if n > 700} == {}


def test_no_import_cycle_among_the_edge_modules() -> None:
    graph = import_graph()
    edge = {m: {t for t in targets if _in_edge(t)} for m, targets in graph.items() if _in_edge(m)}
    assert cycles(edge) == []


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
    assert graph["evalnb.demo.fine"] == {"evalnb.demo", "evalnb.demo.typed"}
    assert cycles(graph) == [["evalnb.demo", "evalnb.demo.analytics"]]
