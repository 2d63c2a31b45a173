"""Loading and the CLI around it, used the way a demanding user would: the docs' examples, texts with a
byte-order mark, YAML keys that are not strings, ambiguous expected rows, the starter prompt answered with
Ctrl-D, the interactive loop saving over a file, and the run command's error output."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import evalnb

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ROOT / "tests" / "agents_for_cli.py"
CUBE_HEAD = "name: s\ncube: {connectionName: a, catalog: b, schema: c, cubeName: d}\n"


def evalnb_cli(*args: str, cwd: Path, stdin: str | int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    kw: dict[str, object] = {"stdin": subprocess.DEVNULL}
    if isinstance(stdin, str):
        kw = {"input": stdin}
    elif isinstance(stdin, int):
        kw = {"stdin": stdin}
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        **kw,  # type: ignore[arg-type]
    )


def on_a_terminal(*args: str, cwd: Path, typed: bytes) -> subprocess.CompletedProcess[str]:
    """Run the CLI with a pseudo-terminal as stdin, the keys ``typed`` already waiting in it."""
    import pty

    master, slave = pty.openpty()
    try:
        os.write(master, typed)
        return evalnb_cli(*args, cwd=cwd, stdin=slave)
    finally:
        os.close(slave)
        os.close(master)


# ------------------------------------------------------------------------------------------------------
# Loading
# ------------------------------------------------------------------------------------------------------

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


@pytest.mark.parametrize(
    ("row", "key"),
    [("{1997: 565238.13}", "1997"), ("{on: 5}", "True"), ("{~: 5}", "None")],
)
def test_a_yaml_key_that_is_not_a_string_is_reported_at_its_row(row: str, key: str) -> None:
    text = CUBE_HEAD + f"cases:\n  - name: x\n    question: q\n    expectedRows: [{row}]\n"
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format="cube-yaml")
    err = info.value
    assert err.code == "TYPE_MISMATCH"
    assert err.location == "cases[0].expectedRows[0]"
    assert "[key]" not in err.message
    assert f"key {key} in cases[0].expectedRows[0] must be a string" in err.message
    assert "quote it" in err.message


def test_a_non_string_key_in_a_free_form_mapping_names_the_mapping() -> None:
    text = CUBE_HEAD + (
        "cases:\n  - name: x\n    question: q\n"
        "    referenceQuery: {measures: [{name: m}], filters: [{1: 2}]}\n"
    )
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format="cube-yaml")
    assert info.value.location == "cases[0].referenceQuery.filters[0]"
    assert info.value.code == "TYPE_MISMATCH"


@pytest.mark.parametrize(
    ("row", "first", "second"),
    [
        ("{Store Sales: 1, store_sales: 2}", "Store Sales", "store_sales"),
        ("{country: USA, Country: USA}", "country", "Country"),
        ("{storeSales: 1, STORE-SALES: 1}", "storeSales", "STORE-SALES"),
    ],
)
def test_two_expected_keys_naming_one_column_are_rejected(row: str, first: str, second: str) -> None:
    # cube spec: keys compare case-insensitively without spaces, '_' and '-'; both would be compared with
    # the same actual column, so a row giving them different values could never pass.
    text = (
        CUBE_HEAD
        + f"cases:\n  - name: x\n    question: q\n    expectedRows:\n      - {{a: 1}}\n      - {row}\n"
    )
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format="cube-yaml")
    err = info.value
    assert (err.code, err.location) == ("INVALID_VALUE", "cases[0].expectedRows[1]")
    assert f"{first!r} and {second!r} name the same column" in err.message


def test_distinct_expected_keys_still_load() -> None:
    text = CUBE_HEAD + "cases:\n  - name: x\n    question: q\n    expectedRows: [{store: A, storeSales: 1}]\n"
    check = evalnb.load(text, format="cube-yaml").cases[0].turns[0].checks[0]
    assert check.expected == [{"store": "A", "storeSales": 1}]  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["suite.toml", "suite.yaml"])
def test_upgrading_a_toml_or_yaml_suite_says_so_and_writes_nothing(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    source = {
        "suite.toml": ROOT / "data/suites/tasks.toml",
        "suite.yaml": ROOT / "data/suites/foodmart-sales.eval.yaml",
    }
    path.write_bytes(source[name].read_bytes())
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.upgrade(path)
    assert info.value.code != "MALFORMED_JSON"
    assert "only JSON datasets" in info.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


# ------------------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------------------


def test_ctrl_d_at_the_starter_question_is_a_no_with_exit_2(tmp_path: Path) -> None:
    out = on_a_terminal("run", "--agent", f"{AGENTS}:oracle", cwd=tmp_path, typed=b"\x04")
    assert out.returncode == 2, out.stdout + out.stderr  # could not start; never click's "Aborted." (exit 1)
    assert "Aborted" not in out.stderr
    assert "no starter file created" in out.stderr
    assert not (tmp_path / "evals").exists()


def test_declining_the_starter_file_says_why_the_run_stops(tmp_path: Path) -> None:
    out = on_a_terminal("run", "--agent", f"{AGENTS}:oracle", cwd=tmp_path, typed=b"n\n")
    assert out.returncode == 2
    assert "error: no suite to run; no starter file created" in out.stderr
    assert not (tmp_path / "evals").exists()


def test_init_ctrl_d_writes_nothing_like_no(tmp_path: Path) -> None:
    out = on_a_terminal("init", cwd=tmp_path, typed=b"\x04")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "nothing written" in out.stdout and "Aborted" not in out.stderr
    assert not (tmp_path / "evals").exists()


def test_validate_an_empty_folder_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = evalnb_cli("validate", "empty", cwd=tmp_path)
    assert out.returncode == 2
    assert "empty: no suite files" in out.stdout


def test_validate_an_empty_folder_beside_a_valid_file_still_fails(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = evalnb_cli("validate", str(ROOT / "data" / "suites" / "tasks.toml"), "empty", cwd=tmp_path)
    assert out.returncode == 2
    assert "tasks.toml: OK" in out.stdout and "empty: no suite files" in out.stdout


def test_expected_without_prompts_is_an_error_not_ignored(tmp_path: Path) -> None:
    (tmp_path / "evals.json").write_text(
        json.dumps({"schemaVersion": "1.7.0", "items": [{"prompt": "What is 2 + 2?"}]})
    )
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--expected", "4", cwd=tmp_path)
    assert out.returncode == 2
    assert "--expected pairs with --prompts" in out.stderr
    assert "Suite:" not in out.stdout  # nothing ran


def test_a_blank_inline_prompt_is_refused(tmp_path: Path) -> None:
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--prompts", "What is 2 + 2?", "  ", cwd=tmp_path)
    assert out.returncode == 2
    assert "error: prompts[1]: BLANK_FIELD 'prompt' must not be empty or only whitespace" in out.stderr


def test_interactive_save_never_overwrites_a_file(tmp_path: Path) -> None:
    precious = tmp_path / "evals.json"
    precious.write_text('{"keep": "me"}\n')
    session = "What is 2 + 2?\n4\n\ny\nevals.json\ntried.json\n"
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--interactive", cwd=tmp_path, stdin=session)
    assert out.returncode == 0, out.stderr
    assert precious.read_text() == '{"keep": "me"}\n'
    assert "evals.json already exists" in out.stdout
    saved = json.loads((tmp_path / "tried.json").read_text())
    assert saved["items"] == [{"prompt": "What is 2 + 2?", "expected_response": "4"}]
    assert evalnb.load(tmp_path / "tried.json").cases[0].turns[0].expected == "4"


def test_interactive_save_cancelled_with_ctrl_d_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken.json").write_text("{}\n")
    session = "What is 2 + 2?\n\n\ny\ntaken.json\n"  # then end of input
    out = evalnb_cli("run", "--agent", f"{AGENTS}:oracle", "--interactive", cwd=tmp_path, stdin=session)
    assert out.returncode == 0, out.stderr
    assert "nothing saved" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.json"]


def test_run_prints_every_error_of_an_invalid_suite(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text(
        'name = "s"\n[[tasks]]\nid = "a"\nprompt = ""\nrun = 3\n[[tasks]]\nid = "a"\nprompt = "p"\n'
    )
    out = evalnb_cli("run", "bad.toml", "--agent", f"{AGENTS}:oracle", cwd=tmp_path)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines == [
        "error: bad.toml:tasks[0].prompt: BLANK_FIELD 'prompt' must not be empty or only whitespace",
        "error: bad.toml:tasks[0].run: UNKNOWN_FIELD unknown key 'run' in tasks[0]; did you mean 'runs'?",
        "error: bad.toml:tasks[1].id: INVALID_VALUE duplicate task id 'a' (first used by tasks[0])",
    ]
