"""Named agents and the judge from evalnb.toml / [tool.evalnb]: discovery, strictness, building, resolution."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from evalnb._costs import Price
from evalnb.agents import HTTP, Command, OpenAIChat, Record, Request
from evalnb.config import (
    Config,
    agents_from_specs,
    find_config,
    judge_from,
    load_config,
    named_agent,
    resolve_agent,
)
from evalnb.errors import ConfigError

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

CONFIG = f"""
[agents.summarizer]
type = "command"
argv = [{str(sys.executable)!r}, "{{config_dir}}/agent.py"]
result = "last_line"
timeout = 30
pass_env = ["MY_TOKEN"]

[agents.chat]
type = "openai"
model = "gpt-test"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "EVALNB_CFG_KEY"
system = "Be brief."

[agents.ask]
type = "http"
preset = "ask"
url = "http://127.0.0.1:9/ai/ask"
secret_headers = {{ Authorization = "Bearer ${{EVALNB_CFG_TOKEN}}" }}

[agents.local]
type = "python"
spec = "helpers.py:shout"

[judge]
type = "heuristic"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "evalnb.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "agent.py").write_text((SCRIPTS / "summarize_agent.py").read_text(), encoding="utf-8")
    (tmp_path / "helpers.py").write_text("def shout(prompt):\n    return prompt.upper()\n", encoding="utf-8")
    sub = tmp_path / "deep" / "er"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    monkeypatch.setenv("EVALNB_CFG_TOKEN", "cfg-SECRET-123")
    return tmp_path


def test_found_from_a_subfolder_and_built(project: Path) -> None:
    found = find_config()
    assert found == ((project / "evalnb.toml").resolve(), "")
    cfg = load_config()
    assert cfg is not None and cfg.agent_names == ["ask", "chat", "local", "summarizer"]
    agents = cfg.agents()
    cmd = agents["summarizer"]
    assert isinstance(cmd, Command)
    assert (
        cmd.argv[1] == f"{project.resolve()}/agent.py" and cmd.timeout == 30 and cmd.pass_env == ("MY_TOKEN",)
    )
    assert isinstance(agents["chat"], OpenAIChat) and agents["chat"].system == "Be brief."
    assert isinstance(agents["ask"], HTTP) and agents["ask"].response_map is not None
    assert "cfg-SECRET" not in repr(agents["ask"])
    assert agents["local"]("hi") == "HI"
    assert cfg.judge().label.startswith("heuristic")


async def test_command_from_config_runs(project: Path, tmp_path: Path) -> None:
    agent = named_agent("summarizer")
    work = tmp_path / "w"
    work.mkdir()
    r = await agent.respond(Request(prompt="one two three", workdir=work))
    assert r.exit_code == 0 and (r.text or "").startswith("summary:")
    assert (work / "output" / "summary.txt").is_file()


def test_resolution_by_name_and_spec(project: Path) -> None:
    assert isinstance(resolve_agent("chat"), OpenAIChat)
    assert isinstance(resolve_agent("summarizer"), Command)  # the CLI's --agent NAME
    assert resolve_agent(f"{project / 'helpers.py'}:shout")("x") == "X"
    with pytest.raises(
        ConfigError, match=r"no agent named 'chta'.*did you mean 'chat'.*configured agents: ask, chat"
    ):
        resolve_agent("chta")


def test_agents_and_judge_as_a_command_line_names_them(project: Path) -> None:
    assert isinstance(agents_from_specs(["chat"]), OpenAIChat)  # one --agent: every case
    routed = agents_from_specs(["w=chat", "local", "s=summarizer"])  # ID=SPEC: a mapping; bare: the default
    assert isinstance(routed["w"], OpenAIChat) and isinstance(routed["s"], Command)
    assert routed["default"]("x") == "X"
    assert sorted(agents_from_specs(None)) == ["ask", "chat", "local", "summarizer"]  # none: evalnb.toml
    with pytest.raises(ConfigError, match="give one --agent SPEC, or name them"):
        agents_from_specs(["chat", "local"])
    assert judge_from(None).label.startswith("heuristic")  # the [judge] of evalnb.toml
    assert judge_from("heuristic").label.startswith("heuristic")
    recorded = Record.around(routed, project / "c.jsonl")
    assert set(recorded) == {"w", "s", "default"} and all(isinstance(r, Record) for r in recorded.values())


def test_pyproject_tool_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.evalnb.agents.echo]\ntype = "python"\nspec = "m:f"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    cfg = load_config()
    assert (
        cfg is not None
        and cfg.agent_names == ["echo"]
        and cfg.path == (tmp_path / "pyproject.toml").resolve()
    )
    # an evalnb.toml in the same folder wins
    (tmp_path / "evalnb.toml").write_text('[agents.other]\ntype = "python"\nspec = "m:g"\n', encoding="utf-8")
    assert load_config().agent_names == ["other"]  # type: ignore[union-attr]


def test_no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if find_config() is not None:  # pragma: no cover - a config above the temp folder
        pytest.skip("a configuration file exists above the temporary folder")
    assert load_config() is None
    with pytest.raises(ConfigError, match=r"no evalnb\.toml"):
        named_agent("chat")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            '[agents.a]\ntype = "command"\nargvv = ["x"]\n',
            r"unknown key 'agents\.a\.argvv' \(did you mean 'argv'\?\)",
        ),
        (
            '[agents.a]\ntype = "comand"\nargv = ["x"]\n',
            r"unknown agent type 'comand' \(did you mean 'command'\?\)",
        ),
        ('[agents.a]\nargv = ["x"]\n', r"agents\.a: missing key 'type'"),
        ('[agents.a]\ntype = "http"\n', r"missing key 'agents\.a\.url'"),
        ('[agents.a]\ntype = "command"\nargv = ["x"]\ntimeout = "soon"\n', r"agents\.a\.timeout"),
        ("[agent.a]\n", r"unknown key 'agent' \(did you mean 'agents'\?\)"),
        ('[judge]\nmodle = "x"\n', r"unknown key 'judge\.modle' \(did you mean 'model'\?\)"),
        ("[agents.a\n", "not valid TOML"),
    ],
)
def test_strict_errors_name_key_and_file(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "evalnb.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=match) as err:
        load_config(path)
    assert str(path) in str(err.value)


def test_pyproject_errors_name_the_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.evalnb.agents.a]\ntype = "python"\nspek = "m:f"\n', encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"unknown key 'tool\.evalnb\.agents\.a\.spek' \(did you mean 'spec'\?\)"
    ):
        load_config(path)


def test_missing_secret_variable_fails_when_built(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALNB_CFG_TOKEN")
    cfg = load_config()
    assert cfg is not None
    with pytest.raises(ConfigError, match=r"agents\.ask: .*EVALNB_CFG_TOKEN"):
        cfg.agent("ask")
    assert set(cfg.agents(["chat", "summarizer"])) == {"chat", "summarizer"}


def test_from_dict_and_openai_judge() -> None:
    cfg = Config.from_dict({"judge": {"model": "j", "base_url": "http://127.0.0.1:9/v1", "cache": False}})
    judge = cfg.judge()
    assert judge.label == "openai:j"
    assert Config.from_dict({}).judge() is None
    assert asyncio.iscoroutinefunction(judge.complete)


def test_judge_prices_need_two_numbers(tmp_path: Path) -> None:
    cfg = tmp_path / "evalnb.toml"
    cfg.write_text('[judge]\nmodel = "m"\nprices = { m = [0.5] }\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"judge\.prices\.m: give two numbers") as err:
        load_config(cfg)
    assert err.value.code == "INVALID_VALUE" and "evalnb.toml" in str(err.value)
    cfg.write_text('[judge]\nmodel = "m"\nprices = { m = [0.5, 1.5] }\n', encoding="utf-8")
    loaded = load_config(cfg)
    assert loaded is not None and loaded.judge(cache=False).prices.find("m") == Price(500.0, 1500.0)


def test_a_judge_without_a_model_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "evalnb.toml"
    cfg.write_text('[judge]\ntype = "openai"\n', encoding="utf-8")
    loaded = load_config(cfg)
    assert loaded is not None
    with pytest.raises(ConfigError, match=r"evalnb\.toml: judge: no model given"):
        loaded.judge()
    with pytest.raises(ConfigError, match=r"^judge: no model given"):
        Config.from_dict({"judge": {"type": "openai"}}).judge()
