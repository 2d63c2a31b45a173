"""Every documented dotted name resolves after ``import evalnb`` alone, and ``import evalnb`` stays light.

The names are collected from the README and docs/ (code blocks and inline code) when the test runs, and
:data:`PUBLIC` lists the public names the package promises beyond them. Each is resolved
attribute by attribute in a fresh interpreter that has done nothing but ``import evalnb``: in this process,
earlier tests have imported the submodules already, which would hide a missing lazy attribute.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The public dotted names the package promises (kept for users, notebooks and outside test suites).
PUBLIC = [
    "evalnb.EvalnbError",
    "evalnb.Request",
    "evalnb.Response",
    "evalnb.Store",
    "evalnb.SuiteError",
    "evalnb.TransientError",
    "evalnb.agents",
    "evalnb.agents.Command",
    "evalnb.agents.HTTP",
    "evalnb.agents.OpenAIChat",
    "evalnb.checks.citation_count",
    "evalnb.checks.compare_rows",
    "evalnb.checks.exact_match",
    "evalnb.checks.partial_match_f1",
    "evalnb.compare",
    "evalnb.discover",
    "evalnb.executors.Local",
    "evalnb.executors.Ray",
    "evalnb.export.to_document",
    "evalnb.judges",
    "evalnb.judges.OpenAIJudge",
    "evalnb.judges.embedding.cosines",
    "evalnb.judges.labels.compare_judges",
    "evalnb.load",
    "evalnb.pairwise",
    "evalnb.plots.compare",
    "evalnb.plots.scorecard",
    "evalnb.plots.trend",
    "evalnb.rank",
    "evalnb.read_results",
    "evalnb.run",
    "evalnb.run_async",
    "evalnb.upgrade",
]

#: Public names whose features are not built in this tree yet: each is expected NOT to resolve (a strict
#: xfail), so the day one is built the test says to strike it from this list.
PENDING = {}

# `evalnb.toml`, `reports/evalnb.xml`, `.evals/evalnb.db` are files, not names.
_FILES = {
    "toml",
    "db",
    "xml",
    "json",
    "jsonl",
    "yaml",
    "yml",
    "csv",
    "html",
    "md",
    "py",
    "xlsx",
    "txt",
    "png",
}
# The tags an MLflow run carries (docs/results.md, MLflow): names in MLflow, not in Python.
_TAGS = {"evalnb.run_id", "evalnb.plugins"}  # a tag, and the entry-point group of docs/extending.md
_NAME = re.compile(r"(?<![\w/.\-])evalnb(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
HEAVY = ("plotly", "openai", "sqlalchemy", "duckdb", "jupyter", "aiohttp", "IPython", "ray", "pandas")


def documented_names() -> list[str]:
    """The ``evalnb.x.y`` names the README and docs/ write, without file names and private modules."""
    found: set[str] = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in _NAME.findall(page.read_text(encoding="utf-8")):
            parts = name.split(".")
            if parts[-1] in _FILES or any(p.startswith("_") for p in parts) or name in _TAGS:
                continue
            found.add(name)
    return sorted(found)


def _resolve_fresh(names: list[str]) -> dict[str, object]:
    """In a new interpreter: the heavy modules ``import evalnb`` loaded, and each name's failure (or None)."""
    code = """
import functools, json, sys
import evalnb
heavy = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
hasattr(evalnb, "toml"), dir(evalnb)  # a failed lookup and a listing load nothing either
heavy_after = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
failures = {}
for name in NAMES:
    try:
        functools.reduce(getattr, name.split(".")[1:], evalnb)
        failures[name] = None
    except Exception as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"heavy": heavy, "heavy_after": heavy_after, "failures": failures}))
""".replace("HEAVY", repr(HEAVY)).replace("NAMES", repr(names))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


@pytest.fixture(scope="module")
def resolved() -> dict[str, object]:
    return _resolve_fresh(sorted(set(documented_names()) | set(PUBLIC)))


def test_the_docs_name_what_the_test_walks() -> None:
    names = documented_names()
    # two names of the README and docs that were an AttributeError after `import evalnb`
    assert "evalnb.judges.labels.compare_judges" in names
    assert "evalnb.export.to_document" in names
    assert "evalnb.toml" not in names and not any(".evals" in n for n in names)
    assert len(names) > 40


def test_import_evalnb_alone_loads_nothing_heavy(resolved: dict[str, object]) -> None:
    assert resolved["heavy"] == [] and resolved["heavy_after"] == []


def test_every_name_of_the_readme_and_docs_resolves(resolved: dict[str, object]) -> None:
    failures = resolved["failures"]
    assert isinstance(failures, dict)
    broken = {n: failures[n] for n in documented_names() if failures[n] is not None}
    assert broken == {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="not built yet")) if n in PENDING else n
        for n in PUBLIC
    ],
)
def test_every_public_name_resolves(resolved: dict[str, object], name: str) -> None:
    failures = resolved["failures"]
    assert isinstance(failures, dict)
    assert failures[name] is None, failures[name]


def test_unknown_and_private_names_are_attribute_errors() -> None:
    import evalnb
    import evalnb.judges

    for owner, name in [
        (evalnb, "no_such_thing"),
        (evalnb, "_private_nothing"),
        (evalnb.judges, "nothing_here"),
    ]:
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(owner, name)
    assert not hasattr(evalnb, "toml")
