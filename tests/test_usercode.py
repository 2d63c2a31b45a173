"""The one loader of user code (``module:attr``, ``file.py:attr``) that agents, judges and plugins share."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalnb._usercode import import_target, load_object, split_spec
from evalnb.config import resolve_agent as load_agent
from evalnb.errors import ConfigError
from evalnb.judges._resolve import load_callable


def test_modules_and_dotted_attributes() -> None:
    assert load_object("json:dumps") is json.dumps
    assert load_object("json:JSONDecoder.decode") is json.JSONDecoder.decode
    assert load_object("os.path:join", what="judge") is __import__("os").path.join


def test_files_load_once_with_their_siblings_importable(tmp_path: Path) -> None:
    (tmp_path / "sibling_helper_mod.py").write_text("WORD = 'hello'\n", encoding="utf-8")
    (tmp_path / "agent.py").write_text(
        "import sibling_helper_mod\n\nclass Bot:\n    def answer(self, prompt):\n"
        "        return sibling_helper_mod.WORD + ' ' + prompt\n\nbot = Bot()\n",
        encoding="utf-8",
    )
    try:
        answer = load_object(f"{tmp_path / 'agent.py'}:bot.answer")
        assert answer("you") == "hello you"
        # the same file named again (as an agent or as a judge) is the same module
        assert load_object(f"{tmp_path / 'agent.py'}:Bot") is load_callable(f"{tmp_path / 'agent.py'}:Bot")
        assert load_agent(f"{tmp_path / 'agent.py'}:Bot") is load_object(f"{tmp_path / 'agent.py'}:Bot")
    finally:
        sys.modules.pop("sibling_helper_mod", None)


def test_a_relative_file_resolves_against_base_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "j.py").write_text("def judge(prompt):\n    return 'PASS'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_callable("j.py:judge", base=tmp_path / "conf")("x") == "PASS"
    with pytest.raises(ConfigError, match=r"judge file 'j\.py' does not exist"):
        load_callable("j.py:judge")  # not in the working directory


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("nocolon", r"agent spec 'nocolon' must be 'module:function' or 'path/to/file.py:function'"),
        ("json:", r"must be 'module:function'"),
        ("no_such_module_xyz:f", r"agent module 'no_such_module_xyz' not found \(looked on the import path"),
        ("json:no_such_function", r"'json' has no attribute 'no_such_function'"),
        ("missing/agent.py:f", r"agent file 'missing/agent\.py' does not exist"),
    ],
)
def test_failures_name_what_was_looked_for(spec: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as info:
        load_object(spec)
    assert info.value.code == "BAD_AGENT_SPEC"


def test_import_failures_carry_the_modules_own_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_user_mod.py").write_text("import not_installed_dependency_xyz\n", encoding="utf-8")
    (tmp_path / "raising.py").write_text("raise RuntimeError('config missing')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        ConfigError, match=r"module 'broken_user_mod' failed to import: ModuleNotFoundError: .*not_installed"
    ):
        load_object("broken_user_mod:f")
    with pytest.raises(
        ConfigError, match=r"judge file '.*raising\.py' failed to import: RuntimeError: config missing"
    ) as info:
        load_callable(f"{tmp_path / 'raising.py'}:f")
    assert info.value.code == "CONFIG_ERROR"
    with pytest.raises(ConfigError, match="is not callable"):
        load_callable("json:__name__")
    with pytest.raises(ConfigError, match="names a str, not a callable or an agent"):
        load_agent("json:__name__")


def test_split_keeps_a_windows_drive_and_plugins_import_modules_or_files(tmp_path: Path) -> None:
    assert split_spec(r"C:\agents\a.py:f") == (r"C:\agents\a.py", "f")
    (tmp_path / "plug.py").write_text("LOADED = True\n", encoding="utf-8")
    assert import_target(str(tmp_path / "plug.py"), what="plugin", code="PLUGIN_ERROR").LOADED
    assert import_target("json", what="plugin", code="PLUGIN_ERROR") is json
    with pytest.raises(ConfigError) as info:
        import_target("no_such_plugin_xyz", what="plugin", code="PLUGIN_ERROR")
    assert info.value.code == "PLUGIN_ERROR"
