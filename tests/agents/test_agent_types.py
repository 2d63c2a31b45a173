"""Agent types of evalnb.toml resolve through a registry: a new type is one module that registers itself.

The toy type (``shout``) is one file, written as a user would; ``evalnb.config`` builds it, its options are as
strict as a built-in type's, and ``evalnb run`` uses it from an evalnb.toml (in a real subprocess, with the
module named in ``$EVALNB_PLUGINS``).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from evalnb.agents import HTTP, Command, OpenAIChat
from evalnb.agents._types import agent_type, agent_type_names, unregister_agent_type
from evalnb.config import Config, load_config
from evalnb.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

TOY_TYPE = '''
"""type = "shout": answers with the prompt in capitals, after a prefix, repeated."""

from pydantic import BaseModel, Field

from evalnb.agents._types import register_agent_type


class ShoutOptions(BaseModel):
    prefix: str = ""
    times: int = Field(default=1, ge=1)


def build(options, context):
    def shout(prompt: str) -> str:
        return options.prefix + " ".join([prompt.upper()] * options.times)

    shout.__name__ = context.name
    return shout


register_agent_type("shout", ShoutOptions, build)
'''

CONFIG = """
[agents.loud]
type = "shout"
prefix = "> "

[agents.echo]
type = "python"
spec = "helpers.py:echo"
"""

SUITE = """
name = "shouting"

[[tasks]]
id = "loud"
prompt = "hello"
runs = 2
agent = "loud"
assertions = [{ type = "regex", on = "result", pattern = "^> HELLO$" }]

[[tasks]]
id = "echo"
prompt = "quiet"
runs = 1
agent = "echo"
assertions = [{ type = "regex", on = "result", pattern = "^quiet$" }]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toy_shout_type.py").write_text(TOY_TYPE, encoding="utf-8")
    (tmp_path / "helpers.py").write_text("def echo(prompt):\n    return prompt\n", encoding="utf-8")
    (tmp_path / "evalnb.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "suite.toml").write_text(SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def toy(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(project))
    module = importlib.import_module("toy_shout_type")
    yield module
    unregister_agent_type("shout")
    sys.modules.pop("toy_shout_type", None)


def test_the_builtin_types_are_registered_in_order() -> None:
    assert agent_type_names()[:4] == ("command", "openai", "http", "python")
    built = Config.from_dict(
        {
            "agents": {
                "c": {"type": "command", "argv": ["{config_dir}/x"]},
                "o": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
                "h": {"type": "http", "url": "http://127.0.0.1:9/ask", "preset": "ask"},
            }
        }
    ).agents()
    assert isinstance(built["c"], Command) and built["c"].argv[0].endswith("/x") and built["c"].name == "c"
    assert isinstance(built["o"], OpenAIChat) and isinstance(built["h"], HTTP)


def test_the_toy_type_builds_from_evalnb_toml(toy: ModuleType, project: Path) -> None:
    entry = agent_type("shout")
    assert entry is not None and entry.config is toy.ShoutOptions
    cfg = load_config()
    assert cfg is not None and cfg.agent_names == ["echo", "loud"]
    loud = cfg.agent("loud")
    assert loud("hi") == "> HI" and loud.__name__ == "loud"
    assert Config.from_dict({"agents": {"x": {"type": "shout", "times": 2}}}).agent("x")("a") == "A A"


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ('type = "shout"\nprefx = "> "', r"unknown key 'agents\.loud\.prefx' \(did you mean 'prefix'\?\)"),
        ('type = "shout"\ntimes = 0', r"agents\.loud\.times: must be greater than or equal to 1, got 0"),
        (
            'type = "shuot"',
            r"unknown agent type 'shuot' \(did you mean 'shout'\?\); use command, .*, python or shout",
        ),
        (
            'prefix = "> "',
            r"agents\.loud: missing key 'type' \(one of: command, openai, http, python, shout\)",
        ),
    ],
)
def test_its_options_are_strict(toy: ModuleType, project: Path, table: str, match: str) -> None:
    path = project / "evalnb.toml"
    path.write_text(f"[agents.loud]\n{table}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=match) as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_an_unknown_type_names_the_registered_ones(project: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown agent type 'shout'; use command, openai, http or python"):
        load_config()


def _evalnb(*args: str, cwd: Path, plugins: str | None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env.pop("EVALNB_PLUGINS", None)
    if plugins is not None:
        env["EVALNB_PLUGINS"] = plugins
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_evalnb_run_uses_it_from_evalnb_toml(project: Path) -> None:
    proc = _evalnb("run", "suite.toml", "-f", "json", cwd=project, plugins="toy_shout_type")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {(r["case_id"], r["response"]) for r in data["runs"]} == {("loud", "> HELLO"), ("echo", "quiet")}
    assert all(s["passed"] for s in data["scores"]) and len(data["scores"]) == 3
    # without the plugin the file names a type nobody registered: the run cannot start
    plain = _evalnb("run", "suite.toml", cwd=project, plugins=None)
    assert plain.returncode == 2
    assert "unknown agent type 'shout'" in plain.stderr and "Traceback" not in plain.stderr
