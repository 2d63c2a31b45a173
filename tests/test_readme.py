"""The README's CLI reference is the live ``--help`` output, so it cannot drift.

Regenerate it after changing a command: ``python tests/test_readme.py`` (rewrites the section between the
``cli:begin`` and ``cli:end`` markers of README.md).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN, END = "<!-- cli:begin -->", "<!-- cli:end -->"


def _help(*args: str) -> str:
    env = dict(os.environ)
    # A fixed width and no colour: the same text on every machine.
    env.update({"TERMINAL_WIDTH": "100", "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"})
    env.pop("FORCE_COLOR", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    out = subprocess.run(
        [sys.executable, "-m", "evalnb", *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=True,
    ).stdout
    lines = [line.rstrip() for line in out.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def commands() -> list[str]:
    """The command names, in the order ``evalnb --help`` lists them."""
    import typer.main

    from evalnb.cli import app

    return list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def cli_reference() -> str:
    """The generated CLI section: ``evalnb --help`` then each command's ``--help``."""
    parts = [BEGIN, "", "```text", "$ evalnb --help", _help(), "```"]
    for name in commands():
        parts += ["", f"#### `evalnb {name}`", "", "```text", f"$ evalnb {name} --help", _help(name), "```"]
    parts += ["", END]
    return "\n".join(parts)


def _section(text: str) -> str:
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    assert m, "README.md has no CLI reference markers"
    return m.group(0)


def test_readme_cli_reference_matches_live_help() -> None:
    assert _section(README.read_text(encoding="utf-8")) == cli_reference(), (
        "README's CLI reference is out of date: run `python tests/test_readme.py`"
    )


def test_readme_lists_the_two_commands_first_and_links_the_formats() -> None:
    text = README.read_text(encoding="utf-8")
    first_code = text.index("```")
    assert "python3 dev.py demo" in text[first_code : first_code + 400]
    assert "python3 dev.py test" in text[first_code : first_code + 400]
    for doc in ("docs/tasks-toml.md", "docs/cube-yaml.md", "docs/dataset-json.md"):
        assert f"]({doc})" in text and (ROOT / doc).is_file()
    for marker in ("runner", "rows", "http", "distributed", "store"):
        assert f"<!-- bench:{marker} -->" in text
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{nb.name}" in text


def test_environment_yml_has_what_the_notebooks_need() -> None:
    env = (ROOT / "environment.yml").read_text(encoding="utf-8")
    for package in ("python>=3.10", "jupyterlab", "ipykernel", "pandas", "plotly", "pydantic", "- -e ."):
        assert package in env, f"environment.yml lacks {package}"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # run as a script from a checkout
    text = README.read_text(encoding="utf-8")
    README.write_text(text.replace(_section(text), cli_reference()), encoding="utf-8")
    print("README.md: CLI reference regenerated")


def test_the_quickstart_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's 10-line quickstart, executed from the repository root (its store redirected to tmp)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Quickstart") :]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    assert 'evalnb.Store().save(result, version="v1")' in code
    code = code.replace("evalnb.Store()", f"evalnb.Store({str(tmp_path / 'q.db')!r})")
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(code, "README quickstart", "exec"), namespace)
    result = namespace["result"]
    assert result.suite.name == "knowledge-base" and len(result.cases) == 9  # type: ignore[attr-defined]
    assert (tmp_path / "q.db").is_file()


def test_readme_installs_what_the_notebooks_use() -> None:
    # Notebook 02 exports an Excel workbook (openpyxl, the `excel` extra), which `notebooks` alone lacks.
    assert "to_excel" in (ROOT / "notebooks" / "02-compare-versions.ipynb").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = re.findall(r"pip install -e \"\.\[([^\]]+)\]\"", readme)
    assert installs and all("excel" in extras.split(",") for extras in installs if "notebooks" in extras)
