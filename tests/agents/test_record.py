"""Record and replay: cassettes from real runs, identical scores on replay, misses, strict mode, concurrency."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
from evalnb.agents import Request, Response
from evalnb.agents._command import Command
from evalnb.agents._record import Record, Replay, key_hash, request_key, response_to_json
from evalnb.errors import AgentError, ConfigError
from evalnb.suite import Case, ExitCodeCheck, FileExistsCheck, Message, RegexCheck, Suite, Turn

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def tasks_suite(runs: int = 2) -> Suite:
    checks = [
        ExitCodeCheck(equals=0),
        FileExistsCheck(path="output/summary.txt"),
        RegexCheck(on="stdout", pattern=r"\b(summary|synthesis)\b"),
        RegexCheck(on="result", pattern="three"),
    ]
    return Suite(
        name="rec-suite",
        format="tasks-toml",
        cases=[
            Case(
                id=f"t{i}",
                name=f"t{i}",
                runs=runs,
                turns=[Turn(prompt=f"Summarize text number {i}", checks=checks)],
            )
            for i in range(3)
        ],
    )


def chat_suite() -> Suite:
    return Suite(
        name="chat-suite",
        format="dataset-json",
        cases=[
            Case(
                id="conv",
                name="conv",
                turns=[
                    Turn(
                        prompt="first question",
                        history=[Message(role="system", content="be nice")],
                        checks=[RegexCheck(on="result", pattern="answer 1")],
                    ),
                    Turn(prompt="second question", checks=[RegexCheck(on="result", pattern="answer 2")]),
                ],
            ),
            Case(
                id="single",
                name="single",
                turns=[Turn(prompt="alone", checks=[RegexCheck(on="result", pattern="x")])],
            ),
        ],
    )


calls: list[str] = []


def chat_agent(request: Request) -> Response:
    calls.append(request.prompt)
    n = sum(1 for m in request.history if m["role"] == "assistant") + 1
    return Response(
        text=f"answer {n}: saw {len(request.history) + 1} messages",
        model="fake-1",
        usage={"prompt_tokens": 7, "completion_tokens": 3},
        rows=pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}),
        meta={"k": [1, 2]},
    )


def first_answer(entries: list[dict[str, Any]]) -> str:
    return next(
        e["response"]["text"] for e in entries if e["key"]["turn"] == 0 and e["key"]["case"] == "conv"
    )


def comparable(scores: pd.DataFrame) -> pd.DataFrame:
    cols = [c for c in scores.columns if "latency" not in c]
    return scores[cols].reset_index(drop=True)


def test_record_then_replay_gives_identical_scores(tmp_path: Path) -> None:
    cassette = tmp_path / "cassettes" / "tasks.jsonl"
    agent = Command([sys.executable, str(SCRIPTS / "summarize_agent.py")], result="last_line")
    recorded = evalnb.run(tasks_suite(), Record(agent, cassette), progress=False)
    by_check = recorded.scores.groupby("check_id")["passed"].all()
    # three checks pass; the last one fails on purpose, so that replay must reproduce a failure too
    assert by_check.to_dict() == {"exit_code": True, "file_exists": True, "regex": True, "regex#2": False}
    lines = cassette.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6  # one line per call: 3 cases x 2 runs
    first = json.loads(lines[0])
    assert list(first) == sorted(first)  # stable key order
    assert set(first["key"]) == {"suite", "case", "turn", "run", "prompt", "history"}
    assert first["hash"] == key_hash(first["key"])
    assert first["response"]["exit_code"] == 0 and "output/summary.txt" in first["files"]

    replay = Replay(cassette)
    replayed = evalnb.run(tasks_suite(), replay, progress=False)
    assert replay.hits == 6 and not replay.misses
    pd.testing.assert_frame_equal(comparable(recorded.scores), comparable(replayed.scores))
    pd.testing.assert_frame_equal(
        recorded.runs[["case_id", "run", "response", "stdout", "exit_code", "status"]],
        replayed.runs[["case_id", "run", "response", "stdout", "exit_code", "status"]],
    )


def test_multi_turn_history_round_trip(tmp_path: Path) -> None:
    cassette = tmp_path / "chat.jsonl"
    calls.clear()
    recorded = evalnb.run(chat_suite(), Record(chat_agent, cassette), progress=False)
    assert len(calls) == 3
    entries = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines()]
    second = next(e for e in entries if e["key"]["turn"] == 1)
    # the earlier prompt and the agent's actual answer travel in the key
    assert second["key"]["history"][-2:] == [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": first_answer(entries)},
    ]
    assert second["response"]["rows"] == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    calls.clear()
    replayed = evalnb.run(chat_suite(), Replay(cassette), progress=False)
    assert calls == []  # nothing called
    pd.testing.assert_frame_equal(comparable(recorded.scores), comparable(replayed.scores))
    assert replayed.runs["model"].tolist() == ["fake-1"] * 3
    assert replayed.runs["prompt_tokens"].tolist() == [7, 7, 7]


def test_replay_with_a_missing_entry_is_degraded_naming_the_key(tmp_path: Path) -> None:
    cassette = tmp_path / "chat.jsonl"
    evalnb.run(chat_suite(), Record(chat_agent, cassette), progress=False)
    lines = cassette.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if json.loads(line)["key"]["case"] != "single"]
    cassette.write_text("\n".join(kept) + "\n", encoding="utf-8")
    result = evalnb.run(chat_suite(), Replay(cassette), progress=False)
    row = result.runs.set_index("case_id").loc["single"]
    assert row["status"] == "degraded"
    assert "no recorded answer in chat.jsonl" in row["error"]
    assert (
        "case='single'" in row["error"]
        and "turn=0 run=0" in row["error"]
        and "prompt='alone'" in row["error"]
    )
    assert result.runs.set_index("case_id").loc["conv", "status"].tolist() == ["passed", "passed"]
    assert result.cases.set_index("case_id").loc["single", "status"] == "degraded"


def test_strict_replay_miss_stops_the_run(tmp_path: Path) -> None:
    cassette = tmp_path / "chat.jsonl"
    evalnb.run(chat_suite(), Record(lambda p: f"echo {p}", cassette), progress=False)
    lines = cassette.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if json.loads(line)["key"]["case"] != "single"]
    cassette.write_text("\n".join(kept) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no recorded answer"):
        evalnb.run(chat_suite(), Replay(cassette, strict=True), progress=False)


async def test_changed_prompt_is_a_miss_with_a_hint(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    rec = Record(lambda p: "hi", cassette)
    await rec.respond(Request(prompt="old prompt", case="c", suite="s"))
    replay = Replay(cassette)
    assert (await replay.respond(Request(prompt="old prompt", case="c", suite="s"))).text == "hi"
    with pytest.raises(AgentError, match="different prompt") as err:
        await replay.respond(Request(prompt="new prompt", case="c", suite="s"))
    assert err.value.code == "REPLAY_MISSING"
    strict = Replay(cassette, strict=True)
    with pytest.raises(ConfigError, match="no recorded answer") as cerr:
        await strict.respond(Request(prompt="new prompt", case="c", suite="s"))
    assert cerr.value.code == "REPLAY_MISSING"


async def test_errors_are_not_recorded(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"

    def broken(prompt: str) -> str:
        raise AgentError("backend down")

    with pytest.raises(AgentError):
        await Record(broken, cassette).respond(Request(prompt="x"))
    assert not cassette.exists() or cassette.read_text() == ""


async def test_torn_last_line_keeps_finished_answers(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    rec = Record(lambda p: f"a-{p}", cassette)
    for i in range(3):
        await rec.respond(Request(prompt=str(i), case="c", run=i))
    with cassette.open("a", encoding="utf-8") as f:
        f.write('{"key": {"case": "c", "prompt": "3"')  # killed mid-write
    replay = Replay(cassette)
    assert len(replay) == 3 and replay.skipped_lines == 1
    assert (await replay.respond(Request(prompt="2", case="c", run=2))).text == "a-2"


async def test_a_torn_tail_is_cut_before_the_next_answer(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    rec = Record(lambda p: f"a-{p}", cassette)
    for i in range(2):
        await rec.respond(Request(prompt=str(i), case="c", run=i))
    whole = cassette.read_bytes()
    with cassette.open("a", encoding="utf-8") as f:
        f.write('{"key": {"case": "c", "prompt": "2"')  # the recording was killed mid-write
    # resumed later: the torn line must not swallow the next answer (glued onto it, both would be lost)
    await Record(lambda p: f"b-{p}", cassette).respond(Request(prompt="3", case="c", run=3))
    assert cassette.read_bytes().startswith(whole)
    replay = Replay(cassette)
    assert len(replay) == 3 and replay.skipped_lines == 0
    assert (await replay.respond(Request(prompt="3", case="c", run=3))).text == "b-3"


async def test_a_whole_last_entry_without_its_newline_is_kept(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    await Record(lambda p: f"a-{p}", cassette).respond(Request(prompt="0", case="c"))
    cassette.write_bytes(cassette.read_bytes().rstrip(b"\n"))  # saved by an editor that drops it
    await Record(lambda p: f"a-{p}", cassette).respond(Request(prompt="1", case="c"))
    replay = Replay(cassette)
    assert len(replay) == 2 and replay.skipped_lines == 0


async def test_an_append_failing_midway_leaves_the_cassette_as_it_was(tmp_path: Path) -> None:
    from tests.support.disk import assert_write_fails

    cassette = tmp_path / "c.jsonl"
    rec = Record(lambda p: "x" * 5_000 if p == "big" else f"a-{p}", cassette)
    await rec.respond(Request(prompt="small", case="c"))
    before = cassette.read_bytes()
    assert len(before) < 3_000
    with assert_write_fails(3_000):  # the line starts to go out, then the disk is "full"
        await rec.respond(Request(prompt="big", case="c"))
    assert cassette.read_bytes() == before
    await rec.respond(Request(prompt="after", case="c"))  # and recording goes on, whole lines only
    replay = Replay(cassette)
    assert len(replay) == 2 and replay.skipped_lines == 0


async def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    big = "y" * 20_000  # larger than a pipe buffer / page: interleaving would show

    async def slowish(request: Request) -> str:
        await asyncio.sleep(0)
        return big + request.prompt

    rec = Record(slowish, cassette)
    await asyncio.gather(*(rec.respond(Request(prompt=str(i), case="c", run=i)) for i in range(40)))
    lines = cassette.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 40
    assert sorted(json.loads(line)["response"]["text"][-2:].lstrip("y") for line in lines) == sorted(
        str(i) for i in range(40)
    )


def test_concurrent_processes_never_interleave(tmp_path: Path) -> None:
    cassette = tmp_path / "p.jsonl"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    writer = str(SCRIPTS / "cassette_writer.py")
    procs = [
        subprocess.Popen([sys.executable, writer, str(cassette), str(w), "25"], env=env) for w in range(3)
    ]
    assert [p.wait(60) for p in procs] == [0, 0, 0]
    replay = Replay(cassette)
    assert len(replay) == 75 and replay.skipped_lines == 0


def test_response_round_trip() -> None:
    import datetime
    import decimal

    import numpy as np

    r = Response(
        text="t",
        stdout="s",
        exit_code=1,
        intent="QUERY",
        rows=[{"n": np.int64(3), "d": decimal.Decimal("1.5"), "when": datetime.date(2024, 1, 2)}],
        insight="i",
        refusal=None,
        citations=["[1]"],
        context="c",
        model="m",
        usage={"prompt_tokens": 1},
        latency_ms=2.5,
        meta={"stderr": "e"},
    )
    data = response_to_json(r)
    assert data["rows"] == [{"n": 3, "d": 1.5, "when": "2024-01-02"}]
    back = Response.from_dict(json.loads(json.dumps(data)))
    assert (
        back.rows == data["rows"]
        and back.text == "t"
        and back.meta == {"stderr": "e"}
        and back.refusal is None
    )


def test_missing_cassette_and_reprs(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        Replay(tmp_path / "nope.jsonl")
    rec = Record(Command(["python", "x.py"]), tmp_path / "r.jsonl")
    assert repr(rec).startswith("Record(Command(") and "r.jsonl" in repr(rec)
    key: dict[str, Any] = request_key(Request(prompt="p"))
    assert list(key) == ["suite", "case", "turn", "run", "prompt", "history"]
