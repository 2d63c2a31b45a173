"""The format registry: a new format is one module that registers itself, and every place picks it up.

The toy format here (CSV prompts in `.pcsv` files, beside the built-in CSV tables) is written as a user would write it, in one file; nothing else changes.
``evalnb.load`` (by extension and by content), ``Suite.format``, the JSON Schema, ``evalnb validate`` and
``evalnb schema`` (in process, and in a real subprocess through ``$EVALNB_PLUGINS``) all know it then.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb import formats
from evalnb.cli import app
from evalnb.suite import Suite

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

TOY_FORMAT = '''
"""Prompts in CSV: a header line `prompt,expected`, then one case per row, scored by ExactMatch."""

import csv
import io

from evalnb.errors import SuiteError
from evalnb.formats import Format, Sniff, register
from evalnb.suite import Case, ExactMatchCheck, Suite, Turn

HEADER = ["prompt", "expected"]
PARSED = []  # every text parsed, so a test can count the parses


def parse(text):
    PARSED.append(text)
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [c.strip() for c in rows[0]] != HEADER:
        raise SuiteError("MALFORMED_CSV", "the first line must be the header prompt,expected", location="line 1")
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != 2:
            raise SuiteError("MALFORMED_CSV", f"a row has two fields, this one {len(row)}", location=f"line {n}")
    return rows[1:]


def build(rows, path):
    cases = [
        Case(id=f"row-{i}", name=p, turns=[Turn(prompt=p, expected=e, checks=[ExactMatchCheck()])])
        for i, (p, e) in enumerate(rows, start=1)
    ]
    return Suite(name=path.stem if path else "prompts", format="prompts-csv", cases=cases)


SCHEMA = {
    "title": "PromptsCsv",
    "type": "array",
    "items": {"type": "object", "properties": {"prompt": {"type": "string"}, "expected": {"type": "string"}}},
}

register(
    Format(
        name="prompts-csv",
        suffixes=(".pcsv",),
        malformed="MALFORMED_CSV",
        parse=parse,
        build=build,
        schema=lambda: SCHEMA,
        sniff=Sniff(order=5, tries=lambda t: t.first_line.replace(" ", "") == "prompt,expected"),
        what="CSV prompt lists",
    )
)
'''

CSV = "prompt,expected\nWhat is 2+2?,4\nCapital of France?,Paris\n"


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The toy format's module, imported as a user imports their own module; unregistered afterwards."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_csv_format.py").write_text(TOY_FORMAT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    module = importlib.import_module("toy_csv_format")
    yield module
    formats.unregister("prompts-csv")
    sys.modules.pop("toy_csv_format", None)


def test_load_by_extension_and_by_content(toy: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "arith.pcsv"
    path.write_text(CSV, encoding="utf-8")
    suite = evalnb.load(path)
    assert (suite.format, suite.name, suite.path) == ("prompts-csv", "arith", str(path))
    assert [c.turns[0].expected for c in suite.cases] == ["4", "Paris"]
    assert evalnb.load(str(path)).format == "prompts-csv"
    by_text = evalnb.load(CSV)  # no extension: recognised by content, before JSON, TOML and YAML
    assert by_text.format == "prompts-csv" and len(by_text.cases) == 2
    assert evalnb.load(CSV, format="prompts-csv").name == "prompts"
    # the built-in formats are still recognised by content
    assert evalnb.load((FIXTURES / "spec-cube.yaml").read_text(encoding="utf-8")).format == "cube-yaml"


def test_guessing_parses_the_document_once(toy: ModuleType) -> None:
    toy.PARSED.clear()
    evalnb.load(CSV)
    assert toy.PARSED == [CSV]


@pytest.mark.parametrize(
    ("fixture", "fmt"),
    [
        ("spec-tasks.toml", "tasks-toml"),
        ("spec-cube.yaml", "cube-yaml"),
        ("spec-dataset.json", "dataset-json"),
    ],
)
def test_guessing_a_builtin_format_parses_it_once(fixture: str, fmt: str) -> None:
    original = formats.get(fmt)
    assert original is not None
    calls: list[str] = []

    def counting(text: str) -> Any:
        calls.append(text)
        return original.parse(text)

    formats.register(dataclasses.replace(original, parse=counting), replace=True)
    try:
        text = (FIXTURES / fixture).read_text(encoding="utf-8")
        assert evalnb.load(text).format == fmt
        assert len(calls) == 1  # the parse that recognised it is the parse that loaded it
    finally:
        formats.register(original, replace=True)


def test_malformed_and_undecodable_files_get_the_formats_code(toy: ModuleType, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pcsv"
    bad.write_text("prompt,expected\nonly one field\n", encoding="utf-8")
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(bad)
    assert (info.value.code, info.value.location, info.value.path) == ("MALFORMED_CSV", "line 2", str(bad))
    latin = tmp_path / "latin.pcsv"
    latin.write_bytes("prompt,expected\ncafé,x\n".encode("latin-1"))
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(latin)
    assert info.value.code == "MALFORMED_CSV" and "UTF-8" in info.value.message


def test_registered_names_schema_and_suite_model(toy: ModuleType) -> None:
    assert "prompts-csv" in formats.names() and formats.names()[:3] == (
        "tasks-toml",
        "cube-yaml",
        "dataset-json",
    )
    with pytest.warns(
        FutureWarning, match=r"evalnb.formats.FORMATS is deprecated .* use evalnb.formats.names\(\)"
    ):
        assert "prompts-csv" in formats.FORMATS  # the old constant lists what is registered now
    assert ".pcsv" in formats.suffixes()
    assert formats.for_path("x/Arith.PCSV") is formats.get("prompts-csv")
    schema = formats.json_schema("prompts-csv")
    assert schema["$schema"].startswith("https://json-schema.org/") and schema["title"] == "PromptsCsv"
    assert Suite(name="s", format="prompts-csv").format == "prompts-csv"
    with pytest.raises(
        evalnb.SuiteError,
        match="expected one of tasks-toml, cube-yaml, dataset-json, table-csv, table-jsonl, table-frame, promptfoo, "
        "inspect-log, prompts-csv",
    ):
        evalnb.load("x", format="csv")


def test_the_runner_runs_it(toy: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "arith.pcsv"
    path.write_text(CSV, encoding="utf-8")
    answers = {"What is 2+2?": "4", "Capital of France?": "Paris"}
    result = evalnb.run(path, lambda prompt: answers[prompt], progress=False)
    assert result.passed and result.scores["check"].tolist() == ["ExactMatch", "ExactMatch"]


def test_unregistered_it_is_gone(toy: ModuleType, tmp_path: Path) -> None:
    formats.unregister("prompts-csv")
    assert "prompts-csv" not in formats.names() and formats.for_path("a.pcsv") is None
    with pytest.raises(Exception, match="unknown format 'prompts-csv'"):
        Suite(name="s", format="prompts-csv")


def test_builtin_format_names_stay_validated() -> None:
    for name in ("tasks-toml", "cube-yaml", "dataset-json"):
        assert Suite(name="s", format=name).format == name
    with pytest.raises(Exception, match="unknown format 'toml'; registered formats: tasks-toml, cube-yaml"):
        Suite(name="s", format="toml")
    with pytest.raises(ValueError, match="already registered"):
        formats.register(dataclasses.replace(formats.get("tasks-toml"), parse=lambda t: {}))  # type: ignore[arg-type]


def test_validate_and_schema_commands_in_process(toy: ModuleType, tmp_path: Path) -> None:
    folder = tmp_path / "suites"
    folder.mkdir()
    (folder / "good.pcsv").write_text(CSV, encoding="utf-8")
    (folder / "bad.pcsv").write_text("question,answer\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not a suite", encoding="utf-8")
    runner = CliRunner()
    out = runner.invoke(app, ["validate", str(folder)])
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"{folder / 'bad.pcsv'}:line 1: MALFORMED_CSV the first line must be the header prompt,expected",
        f"{folder / 'good.pcsv'}: OK (prompts-csv, 2 cases)",
    ]
    schema = runner.invoke(app, ["schema", "prompts-csv"])
    assert schema.exit_code == 0 and json.loads(schema.output)["title"] == "PromptsCsv"
    unknown = runner.invoke(app, ["schema", "csv"])
    assert unknown.exit_code == 2 and "prompts-csv" in unknown.output
    empty = tmp_path / "empty"
    empty.mkdir()
    listing = runner.invoke(app, ["validate", str(empty)])
    assert (
        "no suite files (.toml, .yaml, .yml, .json, .csv, .tsv, .jsonl, .pcsv) in this folder"
        in listing.output
    )


def _cli(*args: str, cwd: Path, plugins: str | None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.pop("EVALNB_PLUGINS", None)
    if plugins is not None:
        env["EVALNB_PLUGINS"] = plugins
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_command_line_loads_it_as_a_plugin(tmp_path: Path) -> None:
    (tmp_path / "toy_csv_format.py").write_text(TOY_FORMAT, encoding="utf-8")
    (tmp_path / "arith.pcsv").write_text(CSV, encoding="utf-8")
    (tmp_path / "tasks.toml").write_text(
        (FIXTURES / "tasks-valid.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    proc = _cli("validate", ".", cwd=tmp_path, plugins="toy_csv_format.py")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "arith.pcsv: OK (prompts-csv, 2 cases)",
        "tasks.toml: OK (tasks-toml, 2 cases)",
    ]
    schema = _cli("schema", "prompts-csv", cwd=tmp_path, plugins="toy_csv_format.py")
    assert schema.returncode == 0 and json.loads(schema.stdout)["title"] == "PromptsCsv"
    # without the plugin, the file is not a suite
    plain = _cli("validate", ".", cwd=tmp_path, plugins=None)
    assert plain.stdout.splitlines() == ["tasks.toml: OK (tasks-toml, 2 cases)"]
    # a plugin that does not import stops every command with a clear error (exit 2)
    broken = _cli("validate", ".", cwd=tmp_path, plugins="no_such_plugin")
    assert broken.returncode == 2
    assert "error: $EVALNB_PLUGINS plugin module 'no_such_plugin' not found" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_starter_and_upgrade_follow_the_formats_that_have_them(tmp_path: Path) -> None:
    assert evalnb.load(formats.write_starter(tmp_path / "starter")).format == "dataset-json"
    with pytest.raises(ValueError, match=r"no starter document for x\.toml; starters are written as \.json"):
        formats.write_starter(tmp_path / "x.toml")
    out = CliRunner().invoke(app, ["init", "--yes", "--path", str(tmp_path / "y.yaml")])
    assert out.exit_code == 2 and "no starter document for y.yaml" in out.output
    assert not (tmp_path / "y.yaml").exists()
    suite = tmp_path / "s.yaml"
    suite.write_text((FIXTURES / "cube-valid.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(
        evalnb.SuiteError, match=r"only JSON datasets have a legacy form to upgrade; s\.yaml is a cube-yaml"
    ):
        evalnb.upgrade(suite)


def test_the_builtin_endings_table_is_what_each_format_declares() -> None:
    # formats/_registry.py names each built-in's file endings so that a file's format is found without
    # importing every format; the table and the modules must not drift apart.
    from evalnb.formats import _registry as registry

    for name, builtin in registry._BUILTINS.items():
        fmt = formats.get(name)
        assert fmt is not None and fmt.build.__module__.startswith(builtin.module), name
        declared = (fmt.suffixes, fmt.file_names, fmt.sniff.takes_from)
        assert declared == (builtin.suffixes, builtin.file_names, builtin.takes_from), name
        # the test asked before the module is imported is the format's own, not a second statement of it
        assert builtin.accepts is None or builtin.accepts is fmt.sniff.accepts, name
    assert formats.suffixes() == (".toml", ".yaml", ".yml", ".json", ".csv", ".tsv", ".jsonl")


@pytest.mark.parametrize(
    ("suite_file", "fmt", "modules"),
    [
        ("tasks-valid.toml", "tasks-toml", ("evalnb.formats._tasks_toml",)),
        # a JSON document may be a promptfoo config (Sniff.takes_from), but promptfoo's declared test says this
        # one is not: its module (and the YAML parser it imports) stays out, as do the tables and inspect logs
        ("dataset-valid.json", "dataset-json", ("evalnb.formats._dataset_json",)),
        # a cube suite is YAML that is no promptfoo config either
        ("cube-valid.yaml", "cube-yaml", ("evalnb.formats._cube_yaml",)),
    ],
)
def test_a_file_imports_only_its_own_format(suite_file: str, fmt: str, modules: tuple[str, ...]) -> None:
    # A fresh process: this one imported every format long ago.
    code = (
        "import json, sys, evalnb; "
        f"suite = evalnb.load({str(FIXTURES / suite_file)!r}); "
        "print(json.dumps([suite.format, sorted(m for m in sys.modules if m.startswith(('evalnb.formats.', 'yaml')))]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EVALNB_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("EVALNB_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded_format, loaded = json.loads(proc.stdout)
    assert loaded_format == fmt
    others = [b.module for b in formats._registry._BUILTINS.values() if b.module not in modules]
    assert [m for m in loaded if any(m == o or m.startswith(o + ".") for o in others)] == []
    if fmt != "cube-yaml":
        assert "yaml" not in loaded  # the YAML parser is the YAML formats' alone
