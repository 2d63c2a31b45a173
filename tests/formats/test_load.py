"""load (format detection, paths and texts), discover (the dataset spec's order) and upgrade."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

import evalnb
from evalnb.formats import json_schema, write_starter


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("spec-tasks.toml", "tasks-toml"),
        ("spec-cube.yaml", "cube-yaml"),
        ("spec-dataset.json", "dataset-json"),
    ],
)
def test_format_from_extension_and_from_content(fixtures, name, fmt):
    path = fixtures / name
    by_path = evalnb.load(path)
    assert by_path.format == fmt
    assert by_path.path == str(path)
    by_str_path = evalnb.load(str(path))
    assert by_str_path.format == fmt
    text = path.read_text(encoding="utf-8")
    by_text = evalnb.load(text)
    assert by_text.format == fmt
    assert by_text.path is None
    assert evalnb.load(text.encode("utf-8")).format == fmt
    # the loaded model does not depend on how it was given (a JSON dataset's name falls back to the stem)
    if fmt != "dataset-json":
        assert by_text.content_hash() == by_path.content_hash()
    assert [c.id for c in by_text.cases] == [c.id for c in by_path.cases]


def test_content_detection_for_unknown_extension(tmp_path, fixtures):
    for name, fmt in [
        ("spec-tasks.toml", "tasks-toml"),
        ("spec-cube.yaml", "cube-yaml"),
        ("dataset-legacy.json", "dataset-json"),
    ]:
        target = tmp_path / (name + ".txt")
        shutil.copy(fixtures / name, target)
        assert evalnb.load(target).format == fmt


def test_yml_extension_and_explicit_format(tmp_path, fixtures):
    target = tmp_path / "suite.yml"
    shutil.copy(fixtures / "cube-valid.yaml", target)
    assert evalnb.load(target).format == "cube-yaml"
    # an explicit format wins over the extension
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(target, format="tasks-toml")
    assert info.value.code == "MALFORMED_TOML"


def test_format_errors_are_suite_errors(tmp_path):
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load("name = 'x'", format="toml")
    assert info.value.code == "INVALID_VALUE"
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(tmp_path / "missing.toml")
    assert info.value.code == "FILE_NOT_FOUND"
    assert info.value.path == str(tmp_path / "missing.toml")
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(str(tmp_path / "missing.yaml"))
    assert info.value.code == "FILE_NOT_FOUND"
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(tmp_path)  # a folder
    assert info.value.code == "FILE_UNREADABLE"
    bad = tmp_path / "latin1.json"
    bad.write_bytes('[{"prompt": "café"}]'.encode("latin-1"))
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(bad)
    assert info.value.code == "MALFORMED_JSON"
    assert "UTF-8" in info.value.message


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + b'[{"prompt": "hi"}]')
    assert evalnb.load(path).cases[0].turns[0].prompt == "hi"


def test_to_frame_one_row_per_case(fixtures):
    frame = evalnb.load(fixtures / "spec-dataset.json").to_frame()
    assert frame["case_id"].tolist() == ["item-001", "Expense policy flow"]
    assert frame["turns"].tolist() == [1, 2]
    assert str(frame["case_id"].dtype) == "string"


# ------------------------------------------------------------------------------------------------------
# discover
# ------------------------------------------------------------------------------------------------------


def test_discover_order(tmp_path):
    assert evalnb.discover(tmp_path) is None
    (tmp_path / "evals").mkdir()
    for name in ("tests.json", "evals.json", "prompts.json"):
        (tmp_path / "evals" / name).write_text("[]")
    assert evalnb.discover(tmp_path) == tmp_path / "evals" / "prompts.json"
    (tmp_path / "tests.json").write_text("[]")
    assert evalnb.discover(tmp_path) == tmp_path / "tests.json"  # the current directory comes first
    (tmp_path / "evals.json").write_text("[]")
    assert evalnb.discover(tmp_path) == tmp_path / "evals.json"
    (tmp_path / "prompts.json").mkdir()  # a folder of that name is not a dataset
    assert evalnb.discover(tmp_path) == tmp_path / "evals.json"


def test_discover_defaults_to_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "evals.json").write_text("[]")
    assert evalnb.discover() == Path("evals") / "evals.json"


def test_write_starter_is_a_loadable_dataset_and_never_overwrites(tmp_path):
    path = write_starter(tmp_path / "evals" / "evals.json")
    suite = evalnb.load(path)
    assert suite.format == "dataset-json" and len(suite.cases) >= 3
    assert any(len(c.turns) > 1 for c in suite.cases)  # shows a conversation too
    # `evalnb run` scores the starter at once: only deterministic checks, so no judge is needed
    assert {spec.type for c in suite.cases for t in c.turns for spec in t.checks} <= {
        "ExactMatch",
        "PartialMatch",
    }
    with pytest.raises(FileExistsError):
        write_starter(path)


def test_a_suite_prints_as_its_short_repr(fixtures):
    suite = evalnb.load(fixtures / "tasks-valid.toml")
    assert str(suite) == repr(suite) == f"Suite(name={suite.name!r}, format='tasks-toml', cases=2)"


# ------------------------------------------------------------------------------------------------------
# upgrade
# ------------------------------------------------------------------------------------------------------


def _items(suite: evalnb.Suite) -> list[tuple[str, list[tuple[str, str | None, list[str]]]]]:
    return [
        (c.id, [(t.prompt, t.expected, [k.name for k in t.checks]) for t in c.turns]) for c in suite.cases
    ]


@pytest.mark.parametrize("name", ["dataset-legacy.json", "dataset-legacy-pairs.json"])
def test_upgrade_backs_up_then_rewrites(tmp_path, fixtures, name):
    path = tmp_path / "evals.json"
    shutil.copy(fixtures / name, path)
    original = path.read_bytes()
    before = evalnb.load(path)
    backup = evalnb.upgrade(path)
    assert backup is not None
    assert re.fullmatch(r"evals\.json\.bak\.\d{14}", backup.name)
    assert backup.parent == tmp_path
    assert backup.read_bytes() == original  # byte-identical
    upgraded = json.loads(path.read_text(encoding="utf-8"))
    assert upgraded["schemaVersion"] == "1.7.0"
    after = evalnb.load(path)
    assert _items(after) == _items(before)  # the upgraded file loads to the same items
    assert after.meta["legacy"] is False
    # no temporary file is left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, backup.name])


def test_upgrade_of_a_versioned_file_changes_nothing(tmp_path, fixtures):
    path = tmp_path / "v.json"
    shutil.copy(fixtures / "dataset-valid.json", path)
    data, stat = path.read_bytes(), path.stat()
    assert evalnb.upgrade(path) is None
    assert path.read_bytes() == data
    assert path.stat().st_mtime_ns == stat.st_mtime_ns
    assert list(tmp_path.iterdir()) == [path]


def test_upgrade_keeps_every_key_and_the_file_mode(tmp_path):
    path = tmp_path / "legacy.json"
    path.write_text(json.dumps([{"prompt": "é", "expected_response": "x", "testId": "T-1", "category": "c"}]))
    os.chmod(path, 0o640)
    evalnb.upgrade(path)
    assert json.loads(path.read_text(encoding="utf-8"))["items"] == [
        {"prompt": "é", "expected_response": "x", "testId": "T-1", "category": "c"}
    ]
    assert path.stat().st_mode & 0o777 == 0o640


def test_upgrade_refuses_an_invalid_file_and_writes_nothing(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"promt": "x"}]')
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.upgrade(path)
    assert info.value.code == "UNKNOWN_FIELD"
    assert info.value.path == str(path)
    assert list(tmp_path.iterdir()) == [path]


def test_upgrade_never_overwrites_an_earlier_backup(tmp_path, fixtures):
    path = tmp_path / "evals.json"
    shutil.copy(fixtures / "dataset-legacy.json", path)
    first = evalnb.upgrade(path)
    assert first is not None
    shutil.copy(fixtures / "dataset-legacy-pairs.json", path)
    second = evalnb.upgrade(path)
    assert second is not None and second != first
    assert first.read_bytes() == (fixtures / "dataset-legacy.json").read_bytes()
    assert second.read_bytes() == (fixtures / "dataset-legacy-pairs.json").read_bytes()


# ------------------------------------------------------------------------------------------------------
# JSON Schema for editors
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["tasks-toml", "cube-yaml", "dataset-json"])
def test_json_schema(fmt):
    schema = json_schema(fmt)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["type"] == "object"
    text = json.dumps(schema)
    # every $ref points at a definition that exists
    for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', text):
        assert ref in schema["$defs"]
    assert schema["additionalProperties"] is False


def test_dataset_schema_names_the_evaluators():
    schema = json_schema("dataset-json")
    emap = schema["$defs"]["EvaluatorMap"]
    assert {"Relevance", "Citations", "ExactMatch", "PartialMatch", "RetrievalQuery"} <= set(
        emap["properties"]
    )
    assert "schemaVersion" in schema["required"] and "items" in schema["required"]


ROOT = Path(__file__).resolve().parents[2]


CUBE_HEAD = "name: s\ncube: {connectionName: a, catalog: b, schema: c, cubeName: d}\n"


_FENCE = re.compile(r"```(toml|yaml|json)\n(.*?)```", re.S)


_FORMAT = {"toml": "tasks-toml", "yaml": "cube-yaml", "json": "dataset-json"}


@pytest.mark.parametrize("doc", ["tasks-toml.md", "cube-yaml.md", "dataset-json.md"])
def test_every_example_in_the_format_docs_loads(doc: str) -> None:
    blocks = _FENCE.findall((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    assert blocks
    for lang, text in blocks:
        suite = evalnb.load(text, format=_FORMAT[lang])
        assert suite.cases


def test_the_tasks_doc_example_shows_both_assertion_forms() -> None:
    text = _FENCE.findall((ROOT / "docs" / "tasks-toml.md").read_text(encoding="utf-8"))[0][1]
    suite = evalnb.load(text, format="tasks-toml")
    inline = suite.case("write-file").turns[0].checks
    assert [c.name for c in inline] == ["exit_code", "file_exists"]


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ('[{"prompt": "What is 2 + 2?", "expected_response": "4"}]', "dataset-json"),
        ('name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\n', "tasks-toml"),
        (CUBE_HEAD + "cases:\n  - {name: x, question: q}\n", "cube-yaml"),
    ],
)
def test_a_text_with_a_byte_order_mark_loads_like_the_file(tmp_path: Path, text: str, fmt: str) -> None:
    # Windows editors write a BOM; `open(path).read()` keeps it while loading by path drops it.
    suffix = {"dataset-json": ".json", "tasks-toml": ".toml", "cube-yaml": ".yaml"}[fmt]
    path = tmp_path / f"bom{suffix}"
    path.write_text("\ufeff" + text, encoding="utf-8")
    from_path = evalnb.load(path)
    read = path.read_text(encoding="utf-8")
    assert read.startswith("\ufeff")
    for loaded in (evalnb.load(read), evalnb.load(read, format=fmt)):
        assert loaded.format == fmt
        assert [c.id for c in loaded.cases] == [c.id for c in from_path.cases]
