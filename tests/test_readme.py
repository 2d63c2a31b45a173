"""The README works as written: every Python block runs, in order, in one fresh process (the Judges block
against a local OpenAI-compatible server); every shell block runs line by line in a project folder (the
``evalnb.toml`` it shows written there), except the lines that need a remote service; and the CLI reference
is the live ``--help`` output, so it cannot drift.

Regenerate the CLI reference after changing a command: ``python tests/test_readme.py`` (rewrites the section
between the ``cli:begin`` and ``cli:end`` markers of README.md).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import evalnb

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN, END = "<!-- cli:begin -->", "<!-- cli:end -->"


def _help(*args: str) -> str:
    env = dict(os.environ)
    # A fixed width and no colour: the same text on every machine.
    env.update({"TERMINAL_WIDTH": "100", "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"})
    env.pop("FORCE_COLOR", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    out = subprocess.run(
        [sys.executable, "-m", "evalnb", *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=True,
    ).stdout
    lines = [line.rstrip() for line in out.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def commands() -> list[str]:
    """The command names, in the order ``evalnb --help`` lists them (a hidden, deprecated spelling left out)."""
    import typer.main

    from evalnb.cli import app

    listed = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    return [name for name, command in listed.items() if not command.hidden]


def cli_reference() -> str:
    """The generated CLI section: ``evalnb --help`` then each command's ``--help``."""
    parts = [BEGIN, "", "```text", "$ evalnb --help", _help(), "```"]
    for name in commands():
        parts += ["", f"#### `evalnb {name}`", "", "```text", f"$ evalnb {name} --help", _help(name), "```"]
    parts += ["", END]
    return "\n".join(parts)


def _section(text: str) -> str:
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    assert m, "README.md has no CLI reference markers"
    return m.group(0)


def test_readme_cli_reference_matches_live_help() -> None:
    assert _section(README.read_text(encoding="utf-8")) == cli_reference(), (
        "README's CLI reference is out of date: run `python tests/test_readme.py`"
    )


def test_readme_lists_the_two_commands_first_and_links_the_formats() -> None:
    text = README.read_text(encoding="utf-8")
    first_code = text.index("```")
    assert "python3 dev.py demo" in text[first_code : first_code + 400]
    assert "python3 dev.py test" in text[first_code : first_code + 400]
    for doc in ("docs/tasks-toml.md", "docs/cube-yaml.md", "docs/dataset-json.md"):
        assert f"]({doc})" in text and (ROOT / doc).is_file()
    for marker in ("runner", "rows", "http", "distributed", "store", "scale"):
        assert f"<!-- bench:{marker} -->" in text
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{nb.name}" in text


def test_environment_yml_has_what_the_notebooks_need() -> None:
    env = (ROOT / "environment.yml").read_text(encoding="utf-8")
    for package in ("python>=3.10", "jupyterlab", "ipykernel", "pandas", "plotly", "pydantic", "- -e ."):
        assert package in env, f"environment.yml lacks {package}"


# -- the README's code blocks, run as written ----------------------------------------------------------


@dataclass
class Block:
    """A fenced block of README.md: its language, first line number (1-based), section heading and code."""

    lang: str
    line: int
    section: str
    code: str


def blocks(text: str | None = None) -> list[Block]:
    """Every fenced block of the README, in order (language as the fence names it, lower-cased)."""
    text = README.read_text(encoding="utf-8") if text is None else text
    out = []
    for m in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, re.S | re.M):
        before = text[: m.start()]
        headings = re.findall(r"^#+ (.+)$", before, re.M)
        out.append(
            Block(m.group(1).lower(), before.count("\n") + 2, headings[-1] if headings else "", m.group(2))
        )
    return out


SHELL = ("bash", "sh", "shell", "console")

# Shell lines that need a remote service or never return; matched on the command's first words. Every other
# line of a shell block runs, so a block someone adds is tested unless it is one of these.
NOT_RUN = {
    ("python3", "dev.py"): "sets up .venv with pip from a package registry (the tests run inside that .venv)",
    ("pip", "install"): "installs from a package registry",
    ("python", "-m", "pip", "install"): "installs from a package registry",
    ("conda",): "creates an environment from conda-forge",
    ("jupyter", "lab"): "starts a server that runs until stopped (tests/test_browser_lab.py starts one)",
}

# The README's local model judge (Ollama's address) is answered by the test server here.
OLLAMA = re.compile(r"http://(?:127\.0\.0\.1|localhost):11434/v1")


def project(tmp_path: Path) -> Path:
    """The folder the README's commands run in: an empty one (the examples they use ship in the package)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def env_for(folder: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("EVALNB_JUDGE_BASE_URL", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    # the commands as a user with evalnb installed types them: the interpreter's scripts come first on PATH
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HOME"] = str(folder.parent / "home")
    env.setdefault("RAY_raylet_start_wait_time_s", "180")  # the Ray block's local cluster on a loaded machine
    env.update(extra)
    return env


RUNNER = """
import json, sys, traceback
blocks = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
for b in blocks:
    # line numbers in a traceback are the README's own
    code = compile("\\n" * (b["line"] - 1) + b["code"], "README.md", "exec")
    try:
        exec(code, namespace)
    except BaseException:
        traceback.print_exc()
        sys.exit(f"README.md: the Python block at line {b['line']} ({b['section']}) failed as written")
    print(f"ran the block at line {b['line']} ({b['section']})", flush=True)
"""


def test_the_python_blocks_run_in_order_in_a_fresh_process(tmp_path: Path) -> None:
    from tests.support.openai_server import OpenAIServer

    python = [b for b in blocks() if b.lang in ("python", "py")]
    assert len(python) >= 5 and any("OpenAIJudge" in b.code for b in python)
    folder = project(tmp_path)
    # one answer any judge prompt reads: a 1-5 score and a PASS/FAIL verdict
    reply = '{"score": 4, "verdict": "PASS", "reason": "the README test server"}'
    with OpenAIServer(default=reply) as server:
        code = [
            {"line": b.line, "section": b.section, "code": OLLAMA.sub(server.base_url, b.code)}
            for b in python
        ]
        (tmp_path / "blocks.json").write_text(json.dumps(code), encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-c", RUNNER, str(tmp_path / "blocks.json")],
            cwd=folder,
            env=env_for(folder, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-readme-test"),
            capture_output=True,
            text=True,
            timeout=600,
        )
        judged = len(server.requests)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    assert proc.stdout.count("ran the block at line") == len(python)
    assert judged > 0  # the Judges block asked the local server, as it would ask Ollama
    assert (folder / ".evals" / "evalnb.db").is_file() and (folder / "scorecard.html").is_file()


def _not_run(line: str) -> str | None:
    words = shlex.split(line, comments=True)
    for prefix, why in NOT_RUN.items():
        if tuple(words[: len(prefix)]) == prefix:
            return why
    return None


def _lines(block: Block) -> list[str]:
    """A shell block's commands: comment-only lines dropped, ``\\`` continuations joined, ``$ `` prompts cut."""
    out: list[str] = []
    pending = ""
    for raw in block.code.splitlines():
        line = raw.strip()
        if line.startswith("$ "):
            line = line[2:]
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    return out


def test_the_shell_blocks_run_as_written(tmp_path: Path) -> None:
    folder = project(tmp_path)
    ran, skipped = [], []
    for block in blocks():
        if block.lang == "toml" and block.code.lstrip().startswith("# evalnb.toml"):
            (folder / "evalnb.toml").write_text(block.code, encoding="utf-8")  # the file the block shows
            continue
        if block.lang not in SHELL:
            continue
        for line in _lines(block):
            why = _not_run(line)
            if why is not None:
                skipped.append((line, why))
                continue
            proc = subprocess.run(
                ["bash", "-c", line],
                cwd=folder,
                env=env_for(folder, GIT_SHA="0123abc"),
                capture_output=True,
                text=True,
                timeout=300,
            )
            where = f"README.md line {block.line} ({block.section}): `{line}`"
            out = proc.stdout[-2000:] + proc.stderr[-3000:]
            # evalnb's exit codes: 0 passed, 1 failures or a worse gate (what CI acts on); 2 could not start
            allowed = (0, 1) if line.startswith("evalnb ") else (0,)
            assert proc.returncode in allowed, f"{where} exited {proc.returncode}:\n{out}"
            assert "Traceback" not in proc.stderr, f"{where}:\n{out}"
            ran.append(line)
    assert len(ran) >= 8, ran  # the CI block, at least
    assert {why for _line, why in skipped} <= set(NOT_RUN.values())
    runs = evalnb.Store(folder / ".evals" / "evalnb.db").history()
    assert "main" in set(runs["version"])  # the baseline the CI block saves (its candidate it deletes again)


def test_readme_installs_what_the_notebooks_use() -> None:
    # Notebook 02 exports an Excel workbook (openpyxl, the `excel` extra), which `notebooks` alone lacks.
    assert "to_excel" in (ROOT / "notebooks" / "02-compare-versions.ipynb").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = re.findall(r"pip install -e \"\.\[([^\]]+)\]\"", readme)
    assert installs and all("excel" in extras.split(",") for extras in installs if "notebooks" in extras)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # run as a script from a checkout
    text = README.read_text(encoding="utf-8")
    README.write_text(text.replace(_section(text), cli_reference()), encoding="utf-8")
    print("README.md: CLI reference regenerated")
