"""The one exception tree and its codes: enumerations per area, every code raised is a member, every
exception class evalnb raises lives in ``errors.py`` and is drawn in its tree; a SuiteError prints every error.
"""

from __future__ import annotations

import ast
import json
import pickle
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb import errors
from evalnb.cli import app
from evalnb.errors import (
    AgentCode,
    AgentError,
    Code,
    ConfigCode,
    ConfigError,
    EvalnbError,
    StoreCode,
    StoreError,
    SuiteCode,
    SuiteError,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalnb"


def _classes() -> list[type[EvalnbError]]:
    found = [EvalnbError]
    i = 0
    while i < len(found):
        found += [c for c in found[i].__subclasses__() if c.__module__ == "evalnb.errors"]
        i += 1
    return found


# ------------------------------------------------------------------------------------------------------
# Codes behave as their plain strings
# ------------------------------------------------------------------------------------------------------


def test_a_code_is_its_plain_string() -> None:
    err = SuiteError("MALFORMED_YAML", "bad indentation", location="line 3, column 1")
    assert err.code == "MALFORMED_YAML" and err.code is SuiteCode.MALFORMED_YAML
    assert str(err.code) == f"{err.code}" == format(err.code) == "MALFORMED_YAML"
    assert f"{err.code:>16}" == "  MALFORMED_YAML"
    assert json.dumps({"code": err.code}) == '{"code": "MALFORMED_YAML"}'
    assert str(err) == "line 3, column 1: MALFORMED_YAML bad indentation"
    assert {err.code: 1}["MALFORMED_YAML"] == 1  # hashes as the string
    back = pickle.loads(pickle.dumps(err))
    assert back.code is SuiteCode.MALFORMED_YAML and back.errors == [back]


def test_codes_given_as_strings_become_members_and_foreign_codes_stay_strings() -> None:
    assert ConfigError("x", code="BAD_AGENT_SPEC").code is ConfigCode.BAD_AGENT_SPEC
    assert AgentError("x", code="REPLAY_MISSING").code is AgentCode.REPLAY_MISSING
    assert StoreError("x").code is StoreCode.STORE_ERROR
    custom = SuiteError("MALFORMED_INI", "a plugin format's own code")
    assert custom.code == "MALFORMED_INI" and not isinstance(custom.code, Code)
    assert AgentError("x", code="MY_AGENT_DOWN").code == "MY_AGENT_DOWN"


def test_every_class_has_its_enumeration_holding_its_default_code() -> None:
    for cls in _classes():
        assert issubclass(cls.codes, Code), cls
        if cls is SuiteError:
            continue  # its constructor takes the code first: it has no default
        assert cls.code in set(cls.codes), (cls, cls.code)
        assert isinstance(cls.code, cls.codes)


# ------------------------------------------------------------------------------------------------------
# Every code raised in the package is a member of its class's enumeration
# ------------------------------------------------------------------------------------------------------

# Helpers that build SuiteErrors from a code given as their first argument.
_SUITE_HELPERS = {"fail", "custom_error", "add", "SuiteError"}
_CODE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _raised_codes() -> list[tuple[str, str, str, int]]:
    """(class or helper, code, file, line) of every literal code in the package's source."""
    classes = {c.__name__: c for c in _classes()}
    found: list[tuple[str, str, str, int]] = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _callee(node)
            literal = next(
                (k.value for k in node.keywords if k.arg == "code" and isinstance(k.value, ast.Constant)),
                None,
            )
            if literal is not None and isinstance(literal.value, str):
                found.append((name, literal.value, rel, node.lineno))
            elif name in _SUITE_HELPERS and node.args and isinstance(node.args[0], ast.Constant):
                value = node.args[0].value
                if isinstance(value, str) and _CODE.match(value):
                    found.append(("SuiteError", value, rel, node.lineno))
    # code= given to a helper of the loader names the ConfigError it raises
    return [(("ConfigError" if n not in classes else n), c, f, line) for n, c, f, line in found]


def test_every_code_raised_in_the_package_is_a_member() -> None:
    classes = {c.__name__: c for c in _classes()}
    raised = _raised_codes()
    assert len(raised) > 50  # the scan sees the package
    wrong = [
        (file, line, cls, code)
        for cls, code, file, line in raised
        if code not in {m.value for m in classes[cls].codes}
    ]
    assert wrong == [], "codes outside their enumeration (add them to evalnb/errors.py)"


# ------------------------------------------------------------------------------------------------------
# Every exception class is in errors.py and drawn in its tree
# ------------------------------------------------------------------------------------------------------


def test_every_exception_class_of_the_package_is_in_errors_py() -> None:
    """Outside errors.py only private signals exist (a parser's, the HTTP client's), each caught in its own
    package and turned into an error of the tree there or by the package's callers."""
    outside: list[str] = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py":
            continue
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [ast.unparse(b) for b in node.bases]
            if not any(re.search(r"(Error|Exception|Timeout)$", b) for b in bases):
                continue
            # caught by its name or by its base's (a YAML parser error subclass is caught as a YAML error)
            # a private signal of a private subpackage may be caught by its sibling modules
            where = text
            if path.parent.name != "evalnb" and all(p.startswith("_") for p in [path.stem]):
                where = "\n".join(q.read_text(encoding="utf-8") for q in path.parent.glob("*.py"))
            caught = any(
                re.search(rf"except\s*\(?[^:\n]*\b{re.escape(n)}\b", where) for n in [node.name, *bases]
            )
            if not node.name.startswith("_") or not caught:
                outside.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert outside == []


def test_the_tree_in_the_docstring_draws_every_class() -> None:
    doc = errors.__doc__ or ""
    tree = doc[: doc.index("Codes are enumerations")]
    for cls in _classes():
        assert re.search(rf"\b{cls.__name__}\b", tree), cls.__name__
        assert cls.__name__ in errors.__all__
        assert cls.codes.__name__ in tree, cls
    for enum in {cls.codes for cls in _classes()}:
        assert enum.__name__ in errors.__all__


# ------------------------------------------------------------------------------------------------------
# A SuiteError prints every error of the document (evalnb.run and evalnb.load on a file with five errors)
# ------------------------------------------------------------------------------------------------------

FIVE = """name = "five"

[[tasks]]
id = "a"
prompt = "one"
runs = "three"

[[tasks]]
id = "b"
promt = "two"

[[tasks]]
id = "a"
prompt = "three"

[[tasks]]
id = "d"
prompt = ""
assertions = [{ type = "regex", on = "stdout", pattern = "(" }]
"""


@pytest.fixture
def five(tmp_path: Path) -> Path:
    path = tmp_path / "five.toml"
    path.write_text(FIVE, encoding="utf-8")
    return path


def _validate_lines(path: Path) -> list[str]:
    out = CliRunner().invoke(app, ["validate", str(path)])
    assert out.exit_code == 2
    return out.output.splitlines()


def test_load_carries_and_prints_all_five(five: Path) -> None:
    with pytest.raises(SuiteError) as info:
        evalnb.load(five)
    err = info.value
    assert len(err.errors) == 5 and err.errors[0] is err
    lines = str(err).splitlines()
    assert lines == [e.describe() for e in err.errors]  # the first first, in document order
    assert lines[0] == err.describe() == f"{five}:tasks[0].runs: {err.code} {err.message}"
    assert lines == _validate_lines(five)  # as `evalnb validate` prints them
    assert [e.location for e in err.errors] == [
        "tasks[0].runs",
        "tasks[1].promt",
        "tasks[2].id",
        "tasks[3].prompt",
        "tasks[3].assertions[0].pattern",
    ]


def test_run_raises_the_error_that_prints_all_five(five: Path) -> None:
    with pytest.raises(SuiteError) as info:
        evalnb.run(five, lambda prompt: "x", progress=False)
    shown = "".join(traceback.format_exception_only(type(info.value), info.value))
    for err in info.value.errors:
        assert err.describe() in shown
    assert shown.index(info.value.errors[0].describe()) < shown.index(info.value.errors[4].describe())


def test_an_uncaught_load_error_shows_every_error_in_the_traceback(five: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", f"import evalnb; evalnb.load({str(five)!r})"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 1
    tail = proc.stderr[proc.stderr.index("evalnb.errors.SuiteError: ") :]
    assert tail.splitlines()[1:] == _validate_lines(five)[1:]
    assert tail.splitlines()[0] == "evalnb.errors.SuiteError: " + _validate_lines(five)[0]


def test_run_and_upgrade_commands_print_every_error_once(five: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(
        app, ["run", str(five), "--agent", f"{ROOT / 'tests' / 'agents_for_cli.py'}:echo"]
    )
    assert out.exit_code == 2
    assert [line for line in out.output.splitlines() if line.startswith("error: ")] == [
        f"error: {line}" for line in _validate_lines(five)
    ]
    legacy = tmp_path / "legacy.json"
    legacy.write_text('[{"promt": "a"}, {"prompt": ""}]', encoding="utf-8")
    up = CliRunner().invoke(app, ["upgrade", str(legacy)])
    assert up.exit_code == 2
    assert up.output.splitlines() == [f"error: {line}" for line in _validate_lines(legacy)]


def test_a_mistake_repeated_in_every_item_is_shown_by_its_first_errors_and_a_count() -> None:
    import json

    import evalnb
    from evalnb.errors import SHOWN_ERRORS

    items = [{"id": f"q{i}", "prompt": "p", "expected_response": "e"} for i in range(SHOWN_ERRORS + 70)]
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(json.dumps({"schemaVersion": "1.1.0", "items": items}), format="dataset-json")
    lines = str(info.value).splitlines()
    assert len(lines) == SHOWN_ERRORS + 1 and "items[0].id" in lines[0]
    assert lines[-1] == "... and 70 more errors (UNKNOWN_FIELD x70); every one is in the error's .errors"
    assert len(info.value.errors) == SHOWN_ERRORS + 70
