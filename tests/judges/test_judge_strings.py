"""Judge strings (``judge=`` and ``--judge``) resolve through a registry; a new one is one module."""

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

from evalnb.errors import ConfigError
from evalnb.judges import CallableJudge, HeuristicJudge, OpenAIJudge, as_judge
from evalnb.judges._resolve import judge_strings, register_judge_string, unregister_judge_string

ROOT = Path(__file__).resolve().parents[2]

TOY_JUDGE = '''
"""`always:pass` / `always:fail`: a judge that gives the same verdict to everything (for smoke tests)."""

import json

from evalnb.errors import ConfigError
from evalnb.judges import CallableJudge
from evalnb.judges._resolve import register_judge_string


def build(verdict, options):
    if verdict.lower() not in ("pass", "fail"):
        raise ConfigError(f"always: needs pass or fail, got {verdict!r}")

    def always(prompt):
        return json.dumps({"verdict": verdict.upper(), "reason": "always " + verdict.lower()})

    cache = options.cache if options.cache is not None else False
    return CallableJudge(always, name=f"always:{verdict.lower()}", cache=cache)


register_judge_string("always", build, usage="always:pass|fail")
'''

SUITE = """
name = "judged"

[[tasks]]
id = "cat"
prompt = "Where did the cat sit?"
runs = 1
assertions = [{ type = "llm_judge", rubric = "The answer says where the cat sat." }]
"""


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    (tmp_path / "toy_always_judge.py").write_text(TOY_JUDGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_always_judge")
    yield module
    unregister_judge_string("always")
    sys.modules.pop("toy_always_judge", None)


def test_the_builtin_strings() -> None:
    assert judge_strings()[:4] == ("openai", "azure", "heuristic", "offline")
    assert isinstance(as_judge("heuristic"), HeuristicJudge) and isinstance(
        as_judge("Offline"), HeuristicJudge
    )
    assert isinstance(as_judge("heuristic:"), HeuristicJudge)
    assert isinstance(as_judge("OpenAI:m", base_url="http://127.0.0.1:9/v1", cache=False), OpenAIJudge)
    with pytest.raises(ConfigError, match="takes nothing after 'heuristic:'"):
        as_judge("heuristic:strict")
    with pytest.raises(
        ConfigError,
        match=r"unknown judge 'nonsense': use openai:MODEL, azure:DEPLOYMENT, heuristic, embedding, or module:function$",
    ):
        as_judge("nonsense")


def test_a_registered_string(toy: ModuleType) -> None:
    judge = as_judge("always:pass")
    assert isinstance(judge, CallableJudge) and judge.label == "callable:always:pass"
    with pytest.raises(ConfigError, match="always: needs pass or fail, got 'maybe'"):
        as_judge("always:maybe")
    with pytest.raises(
        ConfigError, match=r"use openai:MODEL, azure:DEPLOYMENT, heuristic, embedding, always:pass\|fail, or"
    ):
        as_judge("nonsense")
    with pytest.raises(ValueError, match="already registered"):  # taken by another module
        register_judge_string("always", lambda argument, options: None)
    importlib.reload(toy)  # its own module may register it again (a notebook reloading it)
    assert as_judge("always:fail").label == "callable:always:fail"
    assert "always" in judge_strings()


def test_module_and_file_functions_still_load(tmp_path: Path) -> None:
    (tmp_path / "my_judge.py").write_text("def judge(prompt):\n    return 'PASS'\n", encoding="utf-8")
    assert as_judge(f"{tmp_path / 'my_judge.py'}:judge").label == "callable:judge"
    assert as_judge("json:dumps").label == "callable:dumps"
    with pytest.raises(ConfigError, match=r"'json' has no attribute 'nope'"):
        as_judge("json:nope")
    with pytest.raises(ConfigError, match=r"judge file '.*missing\.py' does not exist"):
        as_judge(f"{tmp_path / 'missing.py'}:judge")


def _evalnb(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    env["EVALNB_PLUGINS"] = "toy_always_judge.py"
    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_judge_option_of_evalnb_run(tmp_path: Path) -> None:
    (tmp_path / "toy_always_judge.py").write_text(TOY_JUDGE, encoding="utf-8")
    (tmp_path / "suite.toml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "agent.py").write_text("def agent(prompt):\n    return 'On the mat.'\n", encoding="utf-8")
    passed = _evalnb(
        "run", "suite.toml", "--agent", "agent.py:agent", "--judge", "always:pass", "-f", "json", cwd=tmp_path
    )
    assert passed.returncode == 0, passed.stderr
    scores = json.loads(passed.stdout)["scores"]
    assert [(s["judge"], s["passed"], s["reason"]) for s in scores] == [
        ("callable:always:pass", True, "PASS: always pass")
    ]
    failed = _evalnb("run", "suite.toml", "--agent", "agent.py:agent", "--judge", "always:fail", cwd=tmp_path)
    assert failed.returncode == 1
    bad = _evalnb("run", "suite.toml", "--agent", "agent.py:agent", "--judge", "always:maybe", cwd=tmp_path)
    assert bad.returncode == 2 and "always: needs pass or fail" in bad.stderr
