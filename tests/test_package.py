"""The package's shape: a light import and an exact public API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pydantic
import pytest

import evalnb

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("plotly", "openai", "sqlalchemy", "duckdb", "jupyter", "jupyter_client", "aiohttp", "IPython", "ray")


def _printed(code: str) -> Any:
    """What ``code`` prints last, as JSON, run in a fresh interpreter of this checkout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_import_evalnb_stays_light():
    code = (
        "import json, sys, evalnb, evalnb.executors; "
        "suite = evalnb.load('name = \"s\"', format='tasks-toml'); "
        "evalnb.executors.Ray(address='127.0.0.1:6379'); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    modules = set(_printed(code))
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert loaded == [], f"import evalnb (and load) pulled in {loaded}"


def test_a_loaded_dataset_runs_without_building_the_suite_validator(tmp_path):
    """A suite model's validator holds every check type's; a dataset loaded and run builds only the checks it
    uses. The suite is the one validation would give."""
    doc = {
        "schemaVersion": "1.1.0",
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"testId": f"c{i}", "prompt": f"p{i}", "expected_response": f"p{i}"} for i in range(3)],
    }
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code = (
        "import json, sys, evalnb, evalnb.suite as S; "
        f"suite = evalnb.load({str(path)!r}); "
        "result = evalnb.run(suite, lambda p: p, progress=False); "
        "built = sorted(n for n, c in vars(S).items() if getattr(c, '__pydantic_complete__', False)); "
        "same = S.Suite.model_validate(suite.model_dump()) == suite; "
        "print(json.dumps([built, result.passed, same]))"
    )
    assert _printed(code) == [["ExactMatchCheck"], True, True]


def test_a_suite_assembled_outside_a_load_is_validated():
    from evalnb.formats._dataset_json.plain import makers

    new_suite = makers()[2]  # outside a load's cleaned text: the model's own validation
    with pytest.raises(pydantic.ValidationError):
        new_suite(name="s", format="dataset-json", cases=[1])
    suite = new_suite(name="s\ud800", format="dataset-json")
    assert suite.name == "s\ufffd"  # text every file can take, as a suite built in Python gets


def test_public_api_is_pinned():
    assert evalnb.__all__ == [
        "Budget",
        "Case",
        "ConfigError",
        "EvalnbError",
        "Request",
        "Response",
        "Result",
        "RunOptions",
        "Store",
        "Suite",
        "SuiteError",
        "ToolCall",
        "TransientError",
        "Turn",
        "__version__",
        "agents",
        "checks",
        "compare",
        "discover",
        "errors",
        "examples",
        "executors",
        "from_frame",
        "judges",
        "load",
        "pairwise",
        "plots",
        "power",
        "rank",
        "read_inspect_log",
        "read_results",
        "rescore",
        "run",
        "run_async",
        "upgrade",
    ]


def test_suite_functions_are_the_formats_ones():
    from evalnb import formats

    assert evalnb.load is formats.load
    assert evalnb.discover is formats.discover
    assert evalnb.upgrade is formats.upgrade
    assert issubclass(evalnb.SuiteError, evalnb.EvalnbError)


def test_the_version_is_written_once() -> None:
    import importlib.metadata
    import re
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "evalnb._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", evalnb.__version__)
    # the installed (editable) distribution reports the version the code defines
    assert importlib.metadata.version("evalnb") == evalnb.__version__


def test_compare_and_power_are_plain_functions_of_the_comparison_package():
    import importlib.util
    import types

    from evalnb import comparison

    assert evalnb.compare is comparison.compare and isinstance(evalnb.compare, types.FunctionType)
    assert evalnb.power is comparison.power and isinstance(evalnb.power, types.FunctionType)
    assert comparison.__all__ == [
        "Comparison",
        "Comparisons",
        "PowerPlan",
        "Sequential",
        "compare",
        "gate",
        "power",
    ]
    # the old module is gone: `from evalnb.compare import power` became `evalnb.power`
    assert importlib.util.find_spec("evalnb.compare") is None
