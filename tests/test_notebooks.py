"""The tutorial notebooks: committed without outputs, in sync with notebooks/build.py, and executed top to
bottom on a real Jupyter kernel (offline) with their key outputs and plotly figures checked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
PLOTLY = "application/vnd.plotly.v1+json"

# notebook -> (the folder it runs from, texts its outputs must contain, number of plotly figures)
EXPECT: dict[str, tuple[Path, list[str], int]] = {
    "01-quickstart.ipynb": (
        ROOT,
        [
            "Result(suite='knowledge-base', cases=9, passed=8",
            "heuristic (not an LLM)",
            "12/12 passed",
            "my-validation-suite",
            "opens offline in any browser",
        ],
        2,
    ),
    "02-compare-versions.ipynb": (
        NOTEBOOKS,
        [
            "Comparison v2 -> v3",
            "gate exit code: 0",
            "too few cases to tell (only 1 of the 8 paired cases changed",
            "sales-by-family-in-ca [rows]: 1.000 -> 0.500 (regressed; untested)",
            "better by 0.31 (95% one-sided bound 0.12)",
            "Power plan",
            "current against previous: current wins 100.0% of 9 cases",
            "of 10 pairs (case x turn x run), 10 won by current",
            "v3.xlsx",
            "rose beyond the margin +10%",  # the cost gate, small model -> large model
            "v2-large",
        ],
        3,  # compare, trend, and the trade-off with its Pareto front
    ),
    "03-analytics-agent.ipynb": (
        ROOT,
        ["263793.22", "referenceQuery", "Unit Sales", "relative: 0.001", "105658.6"],
        1,
    ),
    "04-llm-judges.ipynb": (
        NOTEBOOKS,
        [
            "heuristic (not an LLM)",
            "kappa",
            "callable:concise_judge",
            "EVALNB_JUDGE_BASE_URL is not set",
            "| Relevance | embedding | 61 |",  # the held-out agreement table
            "| Similarity | embedding | 57 | 0.37 [0.25, 0.49] | 0.41 [0.21, 0.58]",  # cuts from STS train
            "Spearman with people, 1-5 levels: 0.76",  # the STS Benchmark test split
            "weighted 2.55",  # a probability-weighted score
            "<IPython.core.display.Image object>",  # the variance-reduction figure (a PNG)
        ],
        5,
    ),
}


def _load(path: Path) -> Any:
    import nbformat

    return nbformat.read(path, as_version=4)


def test_every_notebook_is_listed() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == sorted(EXPECT)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_committed_without_outputs(name: str) -> None:
    # The rule: notebooks are committed without outputs; the tests regenerate them by executing.
    nb = _load(NOTEBOOKS / name)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{name}: a cell has outputs; run `python notebooks/build.py`"
            assert cell.execution_count is None
    assert nb.cells[0].cell_type == "markdown"  # each opens with its story


def test_notebooks_match_their_generator(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_evalnb_notebooks_build", NOTEBOOKS / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    for path in build.build(tmp_path):
        assert path.read_text(encoding="utf-8") == (NOTEBOOKS / path.name).read_text(encoding="utf-8"), (
            f"{path.name} differs from notebooks/build.py: run `python notebooks/build.py`"
        )


def _texts(nb: Any) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                parts.append(out.text)
            elif out.output_type in ("execute_result", "display_data"):
                parts.append(str(out.data.get("text/plain", "")))
                parts.append(str(out.data.get("text/html", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_notebook_executes(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbclient import NotebookClient

    cwd, expected, figures = EXPECT[name]
    # The kernel inherits this environment: this checkout's evalnb, temporary files under tmp_path, and no
    # judge endpoint (the notebook's model-judge cell must skip itself offline).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("EVALNB_JUDGE_BASE_URL", raising=False)
    nb = _load(NOTEBOOKS / name)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", allow_errors=False, resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    text = _texts(nb)
    for needle in expected:
        assert needle in text, f"{name}: {needle!r} not in the outputs"
    plotly = [
        out.data[PLOTLY]
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.output_type in ("execute_result", "display_data") and PLOTLY in out.data
    ]
    assert len(plotly) == figures, f"{name}: {len(plotly)} plotly figures, expected {figures}"
    for fig in plotly:
        data = fig if isinstance(fig, dict) else json.loads(fig)
        assert data["data"], "a figure without traces"
    # What the notebook wrote went to its temporary folder (under tmp_path here), not into the project.
    assert list(tmp_path.glob("evalnb-notebook-*")), "the notebook did not write under the temp folder"
    # Exported to HTML, the notebook draws its figures offline: plotly.js is in it, not fetched from a CDN.
    from nbconvert import HTMLExporter

    from tests.support.browser import chromium_page

    page_path = tmp_path / name.replace(".ipynb", ".html")
    page_path.write_text(HTMLExporter().from_notebook_node(nb)[0], encoding="utf-8")
    with chromium_page(offline=True) as page:
        page.goto(page_path.as_uri())
        drawn = "document.querySelectorAll('.js-plotly-plot .main-svg:first-child').length"
        page.wait_for_function(f"{drawn} >= {figures}", timeout=30000)
        assert page.evaluate(drawn) == figures and not page.errors, page.errors
