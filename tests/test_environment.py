"""environment.yml installs what pyproject.toml declares, so a conda user gets a working evalnb."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

# Extras a conda user of the notebooks needs besides the runtime dependencies (dev tools come through pip).
EXTRAS = ("duckdb", "excel", "notebooks", "ray")
# pip name -> the conda-forge package that provides it, where the two differ.
CONDA_NAME = {"ray": "ray-core"}
# Listed besides the requirements: the interpreter, its installer, and what the notebooks extra needs first.
BASE = {"python", "pip", "jupyterlab", "ipykernel"}


def _name(requirement: str) -> str:
    """The distribution name of a pip requirement or conda spec, normalised (PEP 503)."""
    requirement = requirement.split("::")[-1]  # a conda channel prefix: conda-forge::regex
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert m, f"no package name in {requirement!r}"
    return re.sub(r"[-_.]+", "-", m.group(1)).lower()


def _environment() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _conda_names(env: dict[str, Any]) -> set[str]:
    """The conda packages listed, by the pip name of what they provide."""
    pip_name = {conda: pip for pip, conda in CONDA_NAME.items()}
    return {pip_name.get(_name(d), _name(d)) for d in env["dependencies"] if isinstance(d, str)}


def _pip_lines(env: dict[str, Any]) -> list[str]:
    return [line for d in env["dependencies"] if isinstance(d, dict) for line in d.get("pip", [])]


def test_every_runtime_dependency_and_notebook_extra_is_listed() -> None:
    project = _pyproject()
    wanted = {_name(r) for r in project["dependencies"]}
    for extra in EXTRAS:
        # an extra may pull in another extra ("evalnb[excel]"); that one is checked on its own
        wanted |= {_name(r) for r in project["optional-dependencies"][extra] if not r.startswith("evalnb[")}
    wanted |= {"jupyterlab", "ipykernel"}
    listed = _conda_names(_environment())
    missing = sorted(wanted - listed)
    assert not missing, f"environment.yml does not list {missing}"
    # The ones the file once missed, named so a regression reads plainly.
    assert {"regex", "tomli"} <= listed


def test_nothing_is_listed_that_pyproject_does_not_declare() -> None:
    # A package dropped from pyproject (as the openai SDK left for the bench extra) leaves here too.
    project = _pyproject()
    declared = {_name(r) for r in project["dependencies"]} | BASE
    for extra in EXTRAS:
        declared |= {_name(r) for r in project["optional-dependencies"][extra] if not r.startswith("evalnb[")}
    extra_listed = sorted(_conda_names(_environment()) - declared)
    assert not extra_listed, f"environment.yml lists {extra_listed}, which no runtime or notebook extra needs"


def test_evalnb_itself_is_installed_from_the_checkout_with_the_dev_tools() -> None:
    env = _environment()
    assert env["name"] == "evalnb"
    assert "conda-forge" in env["channels"]
    assert "pip" in _conda_names(env)
    python = [d for d in env["dependencies"] if isinstance(d, str) and _name(d) == "python"]
    assert python == [f"python>={_pyproject()['requires-python'].removeprefix('>=')}"]
    assert _pip_lines(env) == ["-e .[dev]"]
    # `.[dev]` brings the dev extra, which must contain every extra listed above.
    dev = {_name(r) for r in _pyproject()["optional-dependencies"]["dev"]}
    assert "evalnb" in dev
    assert all(extra in str(_pyproject()["optional-dependencies"]["dev"]) for extra in EXTRAS)
    # wordllama is on PyPI only: the offline judge's extra reaches a conda user through `.[dev]`.
    assert "offline-judge" in str(_pyproject()["optional-dependencies"]["dev"])
    assert _name(_pyproject()["optional-dependencies"]["offline-judge"][0]) == "wordllama"


def test_names_are_normalised_without_version_specifiers() -> None:
    assert _name("PyYAML>=6") == "pyyaml"
    assert _name("pydantic>=2.5,<3") == "pydantic"
    assert _name("tomli>=2.0; python_version < '3.11'") == "tomli"
    assert _name("conda-forge::typing_extensions") == "typing-extensions"
