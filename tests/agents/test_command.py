"""Command agent against real subprocesses: channels, exit codes, files, timeouts, floods, bad bytes."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

import evalnb
from evalnb.agents import Request, Response
from evalnb.agents._command import Command
from evalnb.errors import AgentError, ConfigError

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
PY = sys.executable
ECHO = [PY, str(SCRIPTS / "echo_agent.py")]

posix_only = pytest.mark.skipif(os.name == "nt", reason="process groups and signals are POSIX")


def req(tmp_path: Path, prompt: str = "hello world", **kw: object) -> Request:
    return Request(prompt=prompt, case="c1", run=0, workdir=tmp_path, suite="s", **kw)  # type: ignore[arg-type]


def pid_gone(pid: int) -> bool:
    """True when the pid no longer runs (absent, or a zombie nobody has reaped yet)."""
    status = Path(f"/proc/{pid}/status")
    if status.parent.exists():
        try:
            text = status.read_text()
        except OSError:
            return True
        return "State:\tZ" in text
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_stdin_prompt_stdout_result(tmp_path: Path) -> None:
    r = await Command(ECHO).respond(req(tmp_path))
    assert isinstance(r, Response)
    assert r.exit_code == 0
    assert r.stdout == "thinking...\necho: hello world\n"
    assert r.text == "thinking...\necho: hello world"
    assert r.latency_ms is not None and r.latency_ms > 0


async def test_last_line_and_arg_placeholder_without_shell(tmp_path: Path) -> None:
    prompt = 'it\'s $HOME; rm -rf / `x` "q"'
    agent = Command([*ECHO, "--arg", "{prompt}"], prompt_via="arg", result="last_line")
    r = await agent.respond(req(tmp_path, prompt))
    assert r.text == f"echo: {prompt}"  # reached the program as one verbatim argument


async def test_env_prompt(tmp_path: Path) -> None:
    agent = Command([*ECHO, "--env", "MY_PROMPT"], prompt_via="env", env_var="MY_PROMPT", result="last_line")
    r = await agent.respond(req(tmp_path, "via env"))
    assert r.text == "echo: via env"


async def test_other_placeholders_and_literal_braces(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="placeholder"):
        Command([*ECHO, "--arg", "{case}"], prompt_via="arg")
    # prompt_via="arg" needs {prompt}; the other placeholders work with any prompt_via
    agent = Command([*ECHO, "--arg", '{case}/{run}/{turn}/{suite} {workdir} {"k": 1}'], result="last_line")
    r = await agent.respond(req(tmp_path, turn=2))
    assert r.text == f'echo: c1/0/2/s {tmp_path} {{"k": 1}}'


async def test_nonzero_exit_is_not_an_error(tmp_path: Path) -> None:
    r = await Command([*ECHO, "--exit", "3", "--stderr", "oops"]).respond(req(tmp_path))
    assert r.exit_code == 3
    assert r.meta["stderr"] == "oops\n"
    assert "echo: hello world" in (r.text or "")


async def test_json_field_result(tmp_path: Path) -> None:
    r = await Command([*ECHO, "--json"], result="json:answer").respond(req(tmp_path))
    assert r.text == "echo: hello world"
    assert r.stdout is not None and r.stdout.startswith("thinking...")
    r2 = await Command([*ECHO, "--json"], result="json:meta.n").respond(req(tmp_path))
    assert r2.text == "11"
    r3 = await Command([*ECHO, "--json"], result="json:missing").respond(req(tmp_path))
    assert r3.text is None and "missing" in r3.meta["result_error"]
    r4 = await Command(ECHO, result="json:answer").respond(req(tmp_path))
    assert r4.text is None and "JSON" in r4.meta["result_error"]


async def test_file_result_written_in_workdir(tmp_path: Path) -> None:
    agent = Command([*ECHO, "--file", "out/answer.txt"], result="file:out/answer.txt")
    r = await agent.respond(req(tmp_path))
    assert r.text == "file says: hello world"
    assert (tmp_path / "out" / "answer.txt").is_file()
    missing = await Command(ECHO, result="file:nope.txt").respond(req(tmp_path))
    assert missing.text is None and "nope.txt" in missing.meta["result_error"]


async def test_minimal_environment_and_named_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "s3cr3t-value")
    monkeypatch.setenv("OTHER_VAR", "other")
    show = [*ECHO, "--show-env", "SECRET_TOKEN", "OTHER_VAR", "EXTRA", "PATH"]
    r = await Command(show).respond(req(tmp_path))
    assert "env SECRET_TOKEN=<unset>" in (r.stdout or "")
    assert "env OTHER_VAR=<unset>" in (r.stdout or "")
    assert "env PATH=<unset>" not in (r.stdout or "")
    agent = Command(show, pass_env=["SECRET_TOKEN"], env={"EXTRA": "x"})
    r = await agent.respond(req(tmp_path))
    assert "env SECRET_TOKEN=s3cr3t-value" in (r.stdout or "")
    assert "env EXTRA=x" in (r.stdout or "")
    assert "env OTHER_VAR=<unset>" in (r.stdout or "")
    assert "s3cr3t" not in repr(agent) and "SECRET_TOKEN" in repr(agent)


async def test_program_that_cannot_start(tmp_path: Path) -> None:
    with pytest.raises(AgentError) as err:
        await Command(["definitely-not-a-program-evalnb"]).respond(req(tmp_path))
    assert "could not start" in str(err.value)
    assert err.value.transient is False


@posix_only
async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    agent = Command([PY, str(SCRIPTS / "hang_with_child.py"), str(pidfile)], timeout=1.0)
    started = time.monotonic()
    with pytest.raises(AgentError, match="timed out after 1s"):
        await agent.respond(req(tmp_path))
    assert time.monotonic() - started < 5
    child = int(pidfile.read_text())
    for _ in range(50):
        if pid_gone(child):
            break
        await asyncio.sleep(0.05)
    assert pid_gone(child), "the child outlived the timeout"


@posix_only
async def test_cancellation_by_the_runner_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    agent = Command([PY, str(SCRIPTS / "hang_with_child.py"), str(pidfile)])
    task = asyncio.ensure_future(agent.respond(req(tmp_path)))
    for _ in range(100):
        if pidfile.exists() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.05)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(task, 0.2)
    child = int(pidfile.read_text())
    for _ in range(50):
        if pid_gone(child):
            break
        await asyncio.sleep(0.05)
    assert pid_gone(child)


async def test_flood_is_capped_and_noted(tmp_path: Path) -> None:
    agent = Command([PY, str(SCRIPTS / "flood.py"), str(5_000_000)], max_output=10_000, result="last_line")
    r = await agent.respond(req(tmp_path))
    assert r.exit_code == 0
    assert r.meta["stdout_truncated"] is True and r.meta["max_output"] == 10_000
    assert r.meta["stdout_bytes"] > 5_000_000
    assert r.stdout is not None and r.stdout.startswith("x" * 100)
    assert "[evalnb: stdout truncated at 10000 bytes" in r.stdout
    assert len(r.stdout) < 10_200


async def test_non_utf8_output_is_replaced(tmp_path: Path) -> None:
    r = await Command([PY, str(SCRIPTS / "nonutf8.py")]).respond(req(tmp_path))
    assert r.text == "caf\ufffd \ufffd\ufffd ok"
    assert "\ufffd" in r.meta["stderr"]


async def test_cwd_relative_to_workdir(tmp_path: Path) -> None:
    agent = Command([*ECHO, "--file", "a.txt"], cwd="sub", result="file:a.txt")
    r = await agent.respond(req(tmp_path))
    assert r.text == "file says: hello world"
    assert (tmp_path / "sub" / "a.txt").is_file()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"argv": "python x.py"}, "non-empty list"),
        ({"argv": []}, "non-empty list"),
        ({"argv": ["x"], "prompt_via": "arg"}, "placeholder"),
        ({"argv": ["x"], "result": "json:"}, "json:FIELD"),
        ({"argv": ["x"], "timeout": 0}, "above 0"),
    ],
)
def test_bad_options(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        Command(**kwargs)  # type: ignore[arg-type]


async def test_concurrent_calls(tmp_path: Path) -> None:
    agent = Command([*ECHO, "--arg", "{prompt}"], prompt_via="arg", result="last_line")
    results = await asyncio.gather(*(agent.respond(req(tmp_path, f"p{i}")) for i in range(8)))
    assert [r.text for r in results] == [f"echo: p{i}" for i in range(8)]


def test_why_a_result_is_missing_reaches_the_regex_reason(tmp_path: Path) -> None:
    import evalnb

    suite = evalnb.load(
        'name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\nruns = 1\n'
        'assertions = [{type = "regex", on = "result", pattern = "x"}]\n',
        format="tasks-toml",
    )
    result = evalnb.run(suite, Command([*ECHO, "--json"], result="json:missing"), progress=False)
    reason = result.scores.iloc[0]["reason"]
    assert reason.startswith("no result to search: the agent returned none (") and "missing" in reason


ECHO_ARG = [sys.executable, "-c", "import sys; sys.stdout.write(sys.argv[1])", "{prompt}"]


async def test_a_prompt_with_placeholder_text_reaches_the_program_verbatim(tmp_path: Path) -> None:
    agent = Command(ECHO_ARG, prompt_via="arg")
    prompt = "Fill {case} and {turn} of {suite} in {workdir}; keep {prompt} — ünïcødé ✓ 日本"
    r = await agent.respond(evalnb.Request(prompt=prompt, case="C1", suite="S", workdir=tmp_path))
    assert r.text == prompt and r.exit_code == 0


async def test_large_stdin_and_a_program_that_ignores_it(tmp_path: Path) -> None:
    count = Command([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"])
    r = await count.respond(evalnb.Request(prompt="x" * 3_000_000, workdir=tmp_path))
    assert r.text == "3000000"
    ignore = Command([sys.executable, "-c", "print('done')"])
    r = await ignore.respond(evalnb.Request(prompt="y" * 3_000_000, workdir=tmp_path))
    assert r.text == "done" and r.exit_code == 0


async def test_prompts_the_os_cannot_pass_give_a_clear_agent_error(tmp_path: Path) -> None:
    env_agent = Command([sys.executable, "-c", "print(1)"], prompt_via="env")
    with pytest.raises(AgentError, match=r"NUL character.*prompt_via=.stdin."):
        await env_agent.respond(evalnb.Request(prompt="a\x00b", workdir=tmp_path))
    with pytest.raises(AgentError, match="NUL character"):
        await Command(ECHO_ARG, prompt_via="arg").respond(evalnb.Request(prompt="a\x00b", workdir=tmp_path))
    stdin_agent = Command([sys.executable, "-c", "print(1)"])
    with pytest.raises(AgentError, match=r"cannot be written to .* as utf-8"):
        await stdin_agent.respond(evalnb.Request(prompt="a\ud800b", workdir=tmp_path))
