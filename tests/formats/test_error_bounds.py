"""Error messages stay readable and say where: a huge value or key is cut with an ellipsis (in the message and
the location), and a JSON duplicate key names its line and column as YAML and TOML do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import MAX_LOCATION, MAX_MESSAGE, SuiteError

ROOT = Path(__file__).resolve().parents[2]
LONG_KEY = "k" * 100_000
CUBE_HEAD = "name: s\ncube: {connectionName: c, catalog: c, schema: s, cubeName: x}\ncases:\n  - name: a\n    question: q\n"


def _errors(text: str, fmt: str) -> list[SuiteError]:
    with pytest.raises(SuiteError) as err:
        evalnb.load(text, format=fmt)
    return err.value.errors


def _short_enough(errors: list[SuiteError]) -> None:
    for e in errors:
        assert len(e.message) < 400 and len(e.location) < 100, (len(e.message), len(e.location))


def test_a_4mb_schema_version_is_cut_in_the_message(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"schemaVersion": "9" * 4_000_000, "items": [{"prompt": "p"}]}))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "evalnb", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 2
    assert len(out.stdout) < 400, len(out.stdout)
    assert f"{path}:schemaVersion: UNSUPPORTED_VERSION schemaVersion '999" in out.stdout
    assert "... is not a semantic version (MAJOR.MINOR.PATCH)" in out.stdout


@pytest.mark.parametrize(
    ("text", "fmt", "code", "where"),
    [
        (
            json.dumps({"schemaVersion": "1.6.0", "items": [{"prompt": "p", LONG_KEY: 1}]}),
            "dataset-json",
            "UNKNOWN_FIELD",
            "items[0]['kkkk",
        ),
        (
            json.dumps({"schemaVersion": "1.6.0", "items": [{"prompt": "p", "evaluators": {LONG_KEY: {}}}]}),
            "dataset-json",
            "UNKNOWN_FIELD",
            "items[0].evaluators['kkkk",
        ),
        (
            f'name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\n{LONG_KEY} = 1\n',
            "tasks-toml",
            "UNKNOWN_FIELD",
            "tasks[0]['kkkk",
        ),
        (
            f'name = "s"\n[[tasks]]\nid = "{LONG_KEY}"\nprompt = "p"\n[[tasks]]\nid = "{LONG_KEY}"\nprompt = "p"\n',
            "tasks-toml",
            "INVALID_VALUE",
            "tasks[1].id",
        ),
        (CUBE_HEAD + f"    ? {LONG_KEY}\n    : 1\n", "cube-yaml", "UNKNOWN_FIELD", "cases[0]['kkkk"),
        (
            CUBE_HEAD + f"    expectedIntent: {'Q' * 100_000}\n",
            "cube-yaml",
            "INVALID_VALUE",
            "cases[0].expectedIntent",
        ),
    ],
)
def test_a_100000_character_key_or_value_is_cut(text: str, fmt: str, code: str, where: str) -> None:
    errors = _errors(text, fmt)
    assert errors[0].code == code and errors[0].location.startswith(where)
    assert "..." in errors[0].message
    _short_enough(errors)


def test_any_suite_error_is_bounded() -> None:
    err = SuiteError("INVALID_VALUE", "x" * 10**6, location="y" * 10**6)
    assert len(err.message) == MAX_MESSAGE and err.message.endswith("...")
    assert len(err.location) == MAX_LOCATION


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": 1, "a": 2}', "line 1, column 10"),
        (
            '{"schemaVersion": "1.6.0",\n "items": [\n  {"prompt": "p",\n   "prompt": "q"}]}',
            "line 4, column 4",
        ),
        (
            '[{"prompt": "p", "x": {"k": "v"}, "tags": ["a", "a"]},\n {"prompt": "q",\n  "prompt": "r"}]',
            "line 3, column 3",
        ),  # equal values and keys in other objects are no duplicates
        ('{"items": [{"prompt": "a \\" b", "prompt": 1}]}', "line 1, column 33"),
    ],
)
def test_a_json_duplicate_key_names_its_line_and_column(text: str, where: str) -> None:
    (err,) = _errors(text, "dataset-json")
    assert err.code == "MALFORMED_JSON" and err.location == where
    assert err.message.startswith("duplicate key")


def test_the_duplicate_key_location_reaches_validate(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('{"schemaVersion": "1.6.0",\n "items": [\n  {"prompt": "p",\n   "prompt": "q"}]}')
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "evalnb", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert (
        out.stdout.strip() == f"{path}:line 4, column 4: MALFORMED_JSON duplicate key 'prompt' in an object"
    )
