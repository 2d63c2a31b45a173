"""End to end: the tasks spec's example suite against a command agent; secrets searched for in every output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import evalnb
from evalnb.agents import HTTP, Command, OpenAIChat, Record, Replay
from tests.agents.ask_server import AskServer
from tests.support.openai_server import OpenAIServer, Reply

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

# The complete example of the tasks spec, verbatim.
SPEC_EXAMPLE = r"""
name = "my-validation-suite"

[[tasks]]
id        = "summarize-text"
prompt    = "Summarize this text in three sentences: [...]"
runs      = 3

  [[tasks.assertions]]
  type = "exit_code"
  equals = 0

  [[tasks.assertions]]
  type = "file_exists"
  path = "output/summary.txt"

  [[tasks.assertions]]
  type = "regex"
  pattern = "\\b(summary|synthesis)\\b"
  on = "stdout"

  [[tasks.assertions]]
  type = "llm_judge"
  rubric = "The answer must be a coherent three-sentence summary of the source text."
"""

NO_JUDGE = "llm judge not evaluated: this runner has no judge router"


def summarizer() -> Command:
    return Command([sys.executable, str(SCRIPTS / "summarize_agent.py")], result="file:output/summary.txt")


def test_spec_example_against_a_command_agent(tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(SPEC_EXAMPLE, encoding="utf-8")
    suite = evalnb.load(suite_file)
    result = evalnb.run(suite, summarizer(), progress=False)
    scores = result.scores
    assert len(result.runs) == 3 and len(scores) == 12  # runs default... here 3; every assertion on every run
    by = scores.groupby("check_id")
    assert by["passed"].all().to_dict() == {
        "exit_code": True,
        "file_exists": True,
        "regex": True,
        "llm_judge": False,
    }
    judge_rows = scores[scores["check"] == "llm_judge"]
    assert (judge_rows["reason"] == NO_JUDGE).all() and (judge_rows["status"] == "failed").all()
    assert result.exit_code == 1  # tasks spec rule 3: any failing assertion on any run
    runs = result.runs
    assert runs["exit_code"].tolist() == [0, 0, 0]
    assert runs["stdout"].str.contains("summary: This is a summary").all()
    assert runs["response"].str.startswith("This is a summary of a text of").all()


def test_spec_example_with_a_judge_passes(tmp_path: Path, openai_server: OpenAIServer) -> None:
    openai_server.default = '{"verdict": "pass", "reason": "three coherent sentences"}'
    suite = evalnb.load(SPEC_EXAMPLE, format="tasks-toml")
    judge = evalnb.judges.OpenAIJudge("judge-m", base_url=openai_server.base_url, cache=False)
    result = evalnb.run(suite, summarizer(), judge=judge, progress=False)
    assert result.scores["passed"].all(), result.scores[["check_id", "reason"]]
    assert result.exit_code == 0
    # the judge saw what the agent produced
    assert any("This is a summary" in json.dumps(r.json) for r in openai_server.requests)


def _stored_bytes(result: evalnb.Result, path: Path) -> str:
    store = evalnb.Store(path)
    store.save(result, version="leak-check")
    assert len(store.history()) == 1
    # the database and any journal or WAL file beside it
    return "".join(p.read_bytes().decode("latin-1") for p in path.parent.glob(path.name + "*"))


def test_secrets_never_leak(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, openai_server: OpenAIServer
) -> None:
    key = "sk-LEAKCHECK-0f9e8d7c6b5a"
    token = "ask-LEAKCHECK-1a2b3c4d"
    child = "child-LEAKCHECK-9z8y7x"
    monkeypatch.setenv("EVALNB_LEAK_KEY", key)
    monkeypatch.setenv("EVALNB_LEAK_TOKEN", token)
    monkeypatch.setenv("EVALNB_LEAK_CHILD", child)
    # The chat server echoes the Authorization header into answers and errors: the worst case for a leak.
    openai_server.script(
        "fine answer",
        Reply(status=401, body=json.dumps({"error": f"invalid key Bearer {key}"})),
    )
    suite = evalnb.load(
        'name = "leaks"\n'
        '[[tasks]]\nid = "a"\nprompt = "hello"\nruns = 2\nagent = "chat"\n'
        '  [[tasks.assertions]]\n  type = "regex"\n  on = "result"\n  pattern = "answer"\n'
        '[[tasks]]\nid = "b"\nprompt = "bad"\nruns = 1\nagent = "ask"\n'
        '  [[tasks.assertions]]\n  type = "regex"\n  on = "result"\n  pattern = "x"\n'
        '[[tasks]]\nid = "c"\nprompt = "sales by country"\nruns = 1\nagent = "ask"\n'
        '  [[tasks.assertions]]\n  type = "regex"\n  on = "result"\n  pattern = "Two"\n'
        '[[tasks]]\nid = "d"\nprompt = "p"\nruns = 1\nagent = "cmd"\n'
        '  [[tasks.assertions]]\n  type = "exit_code"\n  equals = 0\n',
        format="tasks-toml",
    )
    cassette = tmp_path / "leaks.jsonl"
    with AskServer() as ask:
        agents = {
            "chat": OpenAIChat("m", base_url=openai_server.base_url, api_key_env="EVALNB_LEAK_KEY"),
            "ask": HTTP.ask(
                f"{ask.url}/ai/ask", secret_headers={"Authorization": "Bearer ${EVALNB_LEAK_TOKEN}"}
            ),
            "cmd": Command(
                [sys.executable, "-c", "import os; assert os.environ['EVALNB_LEAK_CHILD']; print('ok')"],
                pass_env=["EVALNB_LEAK_CHILD"],
            ),
        }
        recorded = {name: Record(agent, cassette) for name, agent in agents.items()}
        result = evalnb.run(suite, recorded, retries=0, progress=False)
        assert ask.headers[-1]["Authorization"] == f"Bearer {token}"  # the secret did reach the service
    runs = result.runs.set_index(["case_id", "run"])
    assert runs.loc[("a", 0), "status"] == "passed"
    assert runs.loc[("a", 1), "status"] == "degraded" and "HTTP 401" in runs.loc[("a", 1), "error"]
    assert runs.loc[("b", 0), "status"] == "degraded" and "HTTP 400" in runs.loc[("b", 0), "error"]
    assert runs.loc[("d", 0), "status"] == "passed"

    outputs = {
        "runs": result.runs.to_csv(),
        "scores": result.scores.to_csv(),
        "cases": result.cases.to_csv(),
        "to_json": result.to_json(),
        "report": result.report(),
        "html": result._repr_html_(),
        "store": _stored_bytes(result, tmp_path / "runs.db"),
        "meta": repr(result.meta),
        "cassette": cassette.read_text(encoding="utf-8"),
        "reprs": " ".join(repr(a) for a in (*agents.values(), *recorded.values())),
        "replay": repr(Replay(cassette)),
    }
    for name, text in outputs.items():
        for secret in (key, token, child):
            assert secret not in text, f"{secret} leaked into {name}"
    assert "***" in outputs["runs"]  # the echoed key was scrubbed, not dropped silently
