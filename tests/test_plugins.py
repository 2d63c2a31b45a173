"""Third-party plugins: an installed distribution's entry points of the group ``evalnb.plugins`` register a
format, a check and an agent type before the first lookup (docs/extending.md, plugins).

The distribution is real: a package and its ``*.dist-info`` (METADATA, entry_points.txt, RECORD) on a folder
that is put on ``sys.path``, found by ``importlib.metadata`` as pip's installs are; used through
``evalnb.load`` / ``evalnb.run`` in this process and through the command line in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb import _registry, formats
from evalnb.agents._types import agent_type, unregister_agent_type
from evalnb.checks import _registry as checks
from evalnb.config import Config
from evalnb.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
"""Shouted prompts: a `.shout` file is one prompt a line; the agent type `shout` answers in capitals and the
check `Shouted` wants capitals."""

from pydantic import BaseModel

from evalnb.agents._types import register_agent_type
from evalnb.checks import register
from evalnb.formats import Format, Sniff
from evalnb.formats import register as register_format
from evalnb.suite import Case, CustomCheck, Suite, Turn

CALLS = []


def parse(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def build(lines, path):
    cases = [
        Case(id=f"line-{i}", name=p, agent="loud", turns=[Turn(prompt=p, checks=[CustomCheck(check="Shouted")])])
        for i, p in enumerate(lines, start=1)
    ]
    return Suite(name=path.stem if path else "shouts", format="shout-lines", cases=cases)


class ShoutOptions(BaseModel):
    prefix: str = ""


def setup():
    CALLS.append("setup")
    register_format(
        Format(name="shout-lines", suffixes=(".shout",), malformed="MALFORMED_SHOUT", parse=parse, build=build,
               schema=lambda: {"title": "ShoutLines", "type": "string"}, sniff=Sniff(order=90)),
        replace=True,
    )
    register("Shouted", lambda turn, response: (response.text or "") == (response.text or "").upper())
    register_agent_type("shout", ShoutOptions, lambda options, context: lambda prompt: options.prefix + prompt.upper(),
                        replace=True)
'''

ENTRY_POINTS = "[evalnb.plugins]\nshout = evalnb_shout_plugin:setup\n"

BROKEN_ENTRY_POINTS = "[evalnb.plugins]\nwhisper = evalnb_whisper_gone\n"


def install(site: Path, dist: str, entry_points: str, *, package: str | None = None) -> None:
    """A distribution as pip leaves it in a folder: the package, and its dist-info with the entry points."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    files = [f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    if package is not None:
        (site / package).mkdir()
        (site / package / "__init__.py").write_text(PLUGIN, encoding="utf-8")
        files.append(f"{package}/__init__.py")
    (info / "RECORD").write_text(
        "".join(f"{f},,\n" for f in [*files, f"{info.name}/RECORD"]), encoding="utf-8"
    )


def _forget() -> None:
    for name in ("evalnb_shout_plugin",):
        sys.modules.pop(name, None)
    _registry._forget_plugins()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path, installed into; what the plugin registered is gone afterwards."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delenv(_registry.PLUGINS_ENV, raising=False)
    monkeypatch.delenv(_registry.NO_AUTOLOAD_ENV, raising=False)
    _forget()
    yield folder
    monkeypatch.undo()  # off sys.path before the plugins are looked for again
    formats.unregister("shout-lines")
    checks.unregister("Shouted")
    unregister_agent_type("shout")
    _forget()


SHOUTS = "hello there\nhow are you\n"


def test_an_installed_plugin_registers_a_format_a_check_and_an_agent_type(site: Path, tmp_path: Path) -> None:
    install(site, "evalnb_shout", ENTRY_POINTS, package="evalnb_shout_plugin")
    path = tmp_path / "greetings.shout"
    path.write_text(SHOUTS, encoding="utf-8")
    suite = evalnb.load(path)  # the first lookup loads the plugins
    assert (suite.format, [c.name for c in suite.cases]) == ("shout-lines", ["hello there", "how are you"])
    plugin = sys.modules["evalnb_shout_plugin"]
    assert plugin.CALLS == ["setup"]
    assert checks.user_definition("Shouted") is not None and agent_type("shout") is not None
    agent = Config.from_dict({"agents": {"loud": {"type": "shout", "prefix": "> "}}}).agent("loud")
    result = evalnb.run(suite, agent=agent)
    assert list(result.runs["response"]) == ["> HELLO THERE", "> HOW ARE YOU"]
    assert result.passed and list(result.scores["check"]) == ["Shouted", "Shouted"]
    formats.names()
    assert plugin.CALLS == ["setup"]  # loaded once


def test_a_broken_plugin_names_its_distribution(site: Path, tmp_path: Path) -> None:
    install(site, "evalnb_whisper", BROKEN_ENTRY_POINTS)
    for _ in range(2):  # not swallowed: every lookup says it again until the distribution is fixed
        with pytest.raises(ConfigError) as info:
            formats.names()
        err = info.value
        assert err.code == "PLUGIN_ERROR"
        message = str(err)
        assert "plugin 'whisper' (evalnb_whisper_gone) of the distribution 'evalnb_whisper 0.1'" in message
        assert "ModuleNotFoundError" in message and "pip uninstall evalnb_whisper" in message
        assert "EVALNB_DISABLE_PLUGIN_AUTOLOAD=1" in message


def test_autoload_can_be_switched_off(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(site, "evalnb_whisper", BROKEN_ENTRY_POINTS)
    monkeypatch.setenv(_registry.NO_AUTOLOAD_ENV, "1")
    assert "tasks-toml" in formats.names()


def _cli(*args: str, cwd: Path, site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v for k, v in os.environ.items() if k not in (_registry.PLUGINS_ENV, _registry.NO_AUTOLOAD_ENV)
    }
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(site)])
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args],
        cwd=cwd,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_the_command_line_loads_installed_plugins(tmp_path: Path) -> None:
    site, work, broken = tmp_path / "site", tmp_path / "work", tmp_path / "broken"
    for folder in (site, work, broken):
        folder.mkdir()
    install(site, "evalnb_shout", ENTRY_POINTS, package="evalnb_shout_plugin")
    (work / "greetings.shout").write_text(SHOUTS, encoding="utf-8")
    (work / "evalnb.toml").write_text('[agents.loud]\ntype = "shout"\nprefix = "> "\n', encoding="utf-8")

    listed = _cli("validate", "greetings.shout", cwd=work, site=site)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["greetings.shout: OK (shout-lines, 2 cases)"]
    run = _cli("run", "greetings.shout", "-f", "json", cwd=work, site=site)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert [r["response"] for r in data["runs"]] == ["> HELLO THERE", "> HOW ARE YOU"]
    assert [(s["check"], s["passed"]) for s in data["scores"]] == [("Shouted", True)] * 2

    off = _cli("validate", "greetings.shout", cwd=work, site=site, EVALNB_DISABLE_PLUGIN_AUTOLOAD="1")
    assert off.returncode != 0 and "shout-lines" not in off.stdout

    install(broken, "evalnb_whisper", BROKEN_ENTRY_POINTS)
    failed = _cli("validate", "greetings.shout", cwd=work, site=broken)
    assert failed.returncode == 2
    assert (
        "error: plugin 'whisper' (evalnb_whisper_gone) of the distribution 'evalnb_whisper 0.1'"
        in failed.stderr
    )
    assert "Traceback" not in failed.stderr


def declares() -> bool:
    return _registry.ENTRY_POINT_GROUP in _registry._may_declare((_registry.ENTRY_POINT_GROUP,))


def test_the_quick_search_for_plugins_sees_what_importlib_metadata_sees(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the installed folder alone on sys.path, the standard finders: no distribution declares the group yet
    import importlib.machinery

    monkeypatch.setattr(sys, "path", [str(site)])
    standard = [f for f in sys.meta_path if not hasattr(f, "find_distributions")]
    monkeypatch.setattr(sys, "meta_path", [*standard, importlib.machinery.PathFinder])
    assert not declares()
    install(site, "evalnb_other", "[console_scripts]\nother = other:main\n")
    assert not declares()
    install(site, "evalnb_spaced", "[ evalnb.plugins ]\nshout = evalnb_shout_plugin:setup\n")
    assert declares()  # a header written loosely: a yes (importlib.metadata decides)
    # an egg on sys.path keeps its metadata in EGG-INFO, as importlib.metadata reads it
    egg = tmp_path / "evalnb_egg-0.1.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: evalnb-egg\nVersion: 0.1\n")
    (egg / "EGG-INFO" / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    monkeypatch.setattr(sys, "path", [str(egg)])
    assert declares()
    # and importlib.metadata finds it there too (asked in a fresh interpreter: none of the caches and finders
    # earlier tests left in this one)
    ask = (
        "from importlib.metadata import entry_points as e; print([p.name for p in e(group='evalnb.plugins')])"
    )
    found = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(egg)!r}); {ask}"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "['shout']", found.stderr
    # what the search cannot read counts as a yes: a zip on sys.path
    zipped = tmp_path / "plugins.zip"
    zipped.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    monkeypatch.setattr(sys, "path", [str(zipped)])
    assert declares()


PYDANTIC_PLUGIN = """
SEEN = []


class Plugin:
    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):
        SEEN.append(getattr(schema_type, "__name__", str(schema_type)))
        return None, None, None


plugin = Plugin()
"""

# In a fresh interpreter: which groups importlib.metadata was asked for, and what pydantic's plugin saw, after a
# dataset's load (the load builds pydantic validators).
ASK_PYDANTIC = """
import importlib.metadata as m, json, sys
asked = []
every = m.entry_points
m.entry_points = lambda **k: (asked.append(k.get("group")), every(**k))[1]
sys.path.insert(0, sys.argv[1])
import evalnb
evalnb.load(sys.argv[2])
seen = sys.modules["pydantic_spy"].SEEN if "pydantic_spy" in sys.modules else None
print(json.dumps([asked, bool(seen)]))
"""


def test_pydantic_reads_no_metadata_for_its_plugins_when_no_distribution_declares_one(
    site: Path, tmp_path: Path
) -> None:
    """pydantic looks its plugins up (every distribution's metadata) when it builds its first validator; evalnb's
    search of the entry points files tells it when there are none, and leaves it to look when there may be."""
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"items": [{"prompt": "p", "expected_response": "p"}]}), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(_registry.NO_AUTOLOAD_ENV, None)

    def ask() -> list[Any]:
        done = subprocess.run(
            [sys.executable, "-c", ASK_PYDANTIC, str(site), str(path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout.splitlines()[-1]))

    assert "pydantic" not in ask()[0]  # no plugin of pydantic's anywhere: its lookup was not needed
    install(site, "pydantic_spy_dist", "[pydantic]\nspy = pydantic_spy:plugin\n")
    (site / "pydantic_spy.py").write_text(PYDANTIC_PLUGIN, encoding="utf-8")
    import importlib.machinery

    with pytest.MonkeyPatch.context() as mp:  # the installed folder alone, the standard finders
        mp.setattr(sys, "path", [str(site)])
        standard = [f for f in sys.meta_path if not hasattr(f, "find_distributions")]
        mp.setattr(sys, "meta_path", [*standard, importlib.machinery.PathFinder])
        assert _registry._may_declare((_registry.ENTRY_POINT_GROUP, "pydantic")) == {"pydantic"}
    asked, seen = ask()
    assert (
        "pydantic" in asked and seen
    )  # pydantic looked, found the plugin, and the load's validators used it
