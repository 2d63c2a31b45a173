"""Tool calls end to end: a 1.11 dataset with allowlists and tool-call evaluators, run against the real local chat
server answering with ``tool_calls``, then the frames, the output document (validated against the published
schema), reading it back, and the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import evalnb
import evalnb.export
from evalnb.agents import OpenAIChat, Record, Replay, ToolCall
from evalnb.results._frames import TOOL_CALLS_COLUMNS
from tests.support.documents import assert_valid
from tests.support.openai_server import OpenAIServer, Recorded, Reply

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "tests" / "fixtures" / "dataset-1.11-tools.json"
# What the model asks for, per prompt: first the tool calls, then (with their results) the answer.
CALLS = {
    "What is the status of claim C-100?": (
        [("claims_get-claim", {"claim": "C-100"})],
        "Claim C-100 is approved.",
    ),
    "Pay out claim C-200.": (
        [("claims_get-claim", {"claim": "C-200"}), ("claims_pay-claim", {"claim": "C-200"})],
        "Claim C-200 is paid.",
    ),
    "Delete claim C-300.": ([("claims_delete-claim", {"claim": "C-300"})], "Claim C-300 is deleted."),
    "Look up claim C-400.": ([("claims_get-claim", {"claim": "C-400"})], "Claim C-400 is pending."),
    "Now pay it.": ([("claims_pay-claim", {"claim": "C-400"})], "It is paid."),
}


def model(req: Recorded) -> Reply:
    calls, answer = CALLS[req.last_user]
    return Reply(content=answer) if req.tool_results else Reply(tool_calls=calls)


def get_claim(claim: str) -> dict[str, str]:
    """Look a claim up."""
    return {"claim": claim, "status": "approved"}


async def pay_claim(claim: str) -> str:
    """Pay a claim out."""
    return f"{claim} paid"


def test_the_dataset_is_a_valid_document_of_the_published_schema() -> None:
    assert_valid(json.loads(DATASET.read_text(encoding="utf-8")))


def test_allowlists_resolve_like_evaluators() -> None:
    suite = evalnb.load(DATASET)
    tools = {c.id: [t.allowed_tools for t in c.turns] for c in suite.cases}
    assert tools == {
        "item-001": [["claims_get-claim"]],  # the defaults
        "item-002": [["claims_get-claim", "claims_pay-claim"]],  # extend: the union
        "item-003": [[]],  # replace with none: nothing is allowed (fail closed)
        "Claim follow-up": [["claims_get-claim"], ["claims_pay-claim"]],  # per turn
    }
    assert suite.cases[0].meta["tags"] == ["lookup"] and suite.cases[3].turns[0].meta["tags"] == ["first"]
    assert [s.name for s in suite.cases[0].turns[0].checks] == [
        "ExactMatch",
        "ToolCallSelection",
        "ToolCallExecution",
    ]


def test_a_document_without_allowlists_checks_no_tool_call() -> None:
    data = json.loads(DATASET.read_text(encoding="utf-8"))
    data.pop("default_allowed_tools")
    for item in data["items"]:
        for scope in [item, *item.get("turns", [])]:
            scope.pop("allowed_tools", None)
            scope.pop("allowed_tools_mode", None)
    suite = evalnb.formats._dataset_json.load_data(data)
    assert {t.allowed_tools for c in suite.cases for t in c.turns} == {None}
    result = evalnb.run(
        suite, lambda p: {"text": "x", "tool_calls": [{"tool": "anything_at-all"}]}, progress=False
    )
    assert not result.runs["error"].notna().any()
    assert result.tool_calls["allowed"].isna().all() and len(result.tool_calls) == 5


def test_requested_calls_from_the_chat_api(openai_server: OpenAIServer) -> None:
    # Without tool functions the agent runs nothing: the chat API's calls are `requested`, so selection passes
    # and execution (successful executions) fails, saying why.
    openai_server.default = lambda req: Reply(tool_calls=CALLS[req.last_user][0])
    agent = OpenAIChat("m", base_url=openai_server.base_url, api_key_env="NO_KEY")
    result = evalnb.run(evalnb.load(DATASET), agent, progress=False)
    sc = result.scores.set_index(["case_id", "turn", "check_id"])
    assert sc.loc[("item-001", 0, "ToolCallSelection"), "passed"]
    execution = sc.loc[("item-001", 0, "ToolCallExecution")]
    assert not execution["passed"]
    assert execution["reason"] == "claims_get-claim: 0 successful execution(s) of 1 expected, requested 1"
    assert set(result.tool_calls["status"]) == {"requested"}
    assert "tools" not in openai_server.requests[0].json  # none declared


def test_tool_calls_run_against_a_local_chat_server(openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.default = model
    agent = OpenAIChat(
        "m",
        base_url=openai_server.base_url,
        api_key_env="NO_KEY",
        tool_functions={"claims_get-claim": get_claim, "claims_pay-claim": pay_claim},
    )
    result = evalnb.run(evalnb.load(DATASET), agent, progress=False)

    # the tool_calls frame: its documented columns and dtypes, one row per call in call order
    tc = result.tool_calls
    assert list(tc.columns) == list(TOOL_CALLS_COLUMNS)
    assert {c: str(d) for c, d in tc.dtypes.items()} == TOOL_CALLS_COLUMNS
    rows = tc[["case_id", "turn", "order", "tool", "plugin", "function", "status", "allowed"]]
    assert rows.astype(object).where(rows.notna(), None).values.tolist() == [
        ["item-001", 0, 0, "claims_get-claim", "claims", "get-claim", "succeeded", True],
        ["item-002", 0, 0, "claims_get-claim", "claims", "get-claim", "succeeded", True],
        ["item-002", 0, 1, "claims_pay-claim", "claims", "pay-claim", "succeeded", True],
        ["item-003", 0, 0, "claims_delete-claim", "claims", "delete-claim", "refused", False],
        ["Claim follow-up", 0, 0, "claims_get-claim", "claims", "get-claim", "succeeded", True],
        ["Claim follow-up", 1, 0, "claims_pay-claim", "claims", "pay-claim", "succeeded", True],
    ]
    assert json.loads(tc["arguments"].iloc[0]) == {"claim": "C-100"}
    assert json.loads(tc["output"].iloc[0]) == {"claim": "C-100", "status": "approved"}

    # what the server saw: the declared tools, then the results sent back as `role: tool` messages
    asked = [r for r in openai_server.requests if r.last_user == "What is the status of claim C-100?"]
    assert len(asked) == 2  # the calls, then the answer with their results
    assert [t["function"]["name"] for t in asked[0].tools] == ["claims_get-claim", "claims_pay-claim"]
    assert asked[0].tools[0]["function"]["description"] == "Look a claim up."
    back = asked[1].tool_results
    assert back == [
        {"role": "tool", "tool_call_id": "call_1", "content": '{"claim": "C-100", "status": "approved"}'}
    ]

    # the run: the call outside the allowlist is an error of its turn, not a failed check
    runs = result.runs.set_index(["case_id", "turn"])
    assert runs.loc[("item-003", 0), "status"] == "degraded"
    assert runs.loc[("item-003", 0), "error"] == (
        "tool call not allowed: the agent asked to call 'claims_delete-claim', which allowed_tools does not permit "
        "(allowed: none (the suite declares an allowlist that permits no tool))"
    )
    bad = result.scores[result.scores["case_id"] == "item-003"]
    assert (
        set(bad["status"]) == {"degraded"}
        and bad["reason"].str.startswith("not checked: tool call not allowed").all()
    )
    assert result.cases.set_index("case_id")["status"].to_dict() == {
        "item-001": "passed",
        "item-002": "passed",
        "item-003": "degraded",
        "Claim follow-up": "passed",
    }
    assert "error: tool call not allowed" in result.report()

    # the output document, valid against the published schema
    doc = evalnb.export.to_document(result, tmp_path / "out.json")
    assert_valid(doc)
    one, two, three, thread = doc["items"]
    assert one["status"] == "pass" and "error" not in one and one["tags"] == ["lookup"]
    assert one["scores"]["toolCallSelection"] == {
        "score": 1.0,
        "result": "pass",
        "threshold": 1.0,
        "reason": "selected claims_get-claim, and nothing else (selected: claims_get-claim)",
    }
    assert one["diagnostics"] == {
        "tool_calls": {
            "selected_functions": [{"plugin_name": "claims", "function_name": "get-claim"}],
            "executions": [{"plugin_name": "claims", "function_name": "get-claim", "response_status": None}],
        }
    }
    assert one["allowed_tools"] == ["claims_get-claim"] and one["allowed_tools_mode"] == "replace"
    assert two["scores"]["toolCallExecution"]["result"] == "pass"
    assert three["status"] == "error" and three["error"]["code"] == "toolCallNotAllowed"
    assert "scores" not in three  # no evaluator ran
    assert three["diagnostics"]["tool_calls"]["executions"] == []  # refused: nothing was executed
    assert thread["summary"]["overall_status"] == "pass" and thread["turns"][0]["tags"] == ["first"]

    # read back and written again: the same statuses, thresholds and tool calls, still valid
    again = evalnb.read_results(tmp_path / "out.json")
    assert again.cases["status"].tolist() == result.cases["status"].tolist()
    pd.testing.assert_frame_equal(
        again.tool_calls.drop(columns=["suite"]), result.tool_calls.drop(columns=["suite"]), check_dtype=True
    )
    assert again.response_for("item-001", 0, 0).tool_calls == [
        ToolCall(
            "claims_get-claim",
            {"claim": "C-100"},
            status="succeeded",
            plugin="claims",
            function="get-claim",
            id="call_1",
            output={"claim": "C-100", "status": "approved"},
        )
    ]
    rewritten = evalnb.export.to_document(again)
    assert_valid(rewritten)
    assert [i.get("scores") for i in rewritten["items"]] == [i.get("scores") for i in doc["items"]]

    # the store keeps them
    store = evalnb.Store(tmp_path / "runs.db")
    store.save(result, version="v1")
    loaded = store.load("v1")
    pd.testing.assert_frame_equal(loaded.tool_calls, result.tool_calls)


def test_a_call_the_agent_refuses_is_not_run(openai_server: OpenAIServer) -> None:
    ran: list[str] = []

    def delete_claim(claim: str) -> str:
        ran.append(claim)
        return "deleted"

    openai_server.default = model
    agent = OpenAIChat(
        "m",
        base_url=openai_server.base_url,
        api_key_env="NO_KEY",
        tool_functions={"claims_delete-claim": delete_claim},
    )
    suite = evalnb.load(DATASET)
    evalnb.run(suite, agent, progress=False)
    assert ran == []  # the allowlist permits nothing for that item: the function never ran
    assert (
        len([r for r in openai_server.requests if r.last_user == "Delete claim C-300."]) == 1
    )  # not asked again


def test_callables_and_http_services_report_tool_calls(ask_server_url: str) -> None:
    from evalnb.agents import HTTP

    def agent(request: evalnb.Request) -> evalnb.Response:
        assert request.allowed_tools is not None
        return evalnb.Response(
            text="approved", tool_calls=[ToolCall("claims_get-claim", {"claim": "C-100"}, status="succeeded")]
        )

    suite = evalnb.load(DATASET)
    one = evalnb.run(suite, agent, progress=False)
    assert one.scores.set_index(["case_id", "check_id"]).loc[("item-001", "ToolCallExecution"), "passed"]

    # the HTTP agent maps a list of calls (here as the published schema's diagnostics write them)
    http = HTTP(
        f"{ask_server_url}/echo",
        body={
            "q": "{prompt}",
            "allowed": "{allowed_tools}",
            "calls": [{"plugin_name": "claims", "function_name": "get-claim", "response_status": 200}],
        },
        response_map={"text": "answer", "tool_calls": "received.calls", "context": "received.allowed"},
    )
    two = evalnb.run(suite, http, progress=False)
    assert two.runs.set_index("case_id").loc["item-001", "context"] == '["claims_get-claim"]'
    calls = two.tool_calls[two.tool_calls["case_id"] == "item-001"]
    assert calls[["tool", "status", "http_status"]].values.tolist() == [
        ["claims_get-claim", "succeeded", 200]
    ]


def test_tool_calls_survive_a_cassette(tmp_path: Path) -> None:
    suite = evalnb.load(DATASET)
    calls = [
        {"name": "claims_get-claim", "arguments": '{"claim": "C-100"}', "status": "succeeded", "id": "c1"}
    ]
    cassette = tmp_path / "answers.jsonl"
    first = evalnb.run(
        suite, Record(lambda p: {"text": "approved", "tool_calls": calls}, cassette), progress=False
    )
    replayed = evalnb.run(suite, Replay(cassette), progress=False)
    pd.testing.assert_frame_equal(first.tool_calls, replayed.tool_calls)
    assert replayed.tool_calls["arguments"].iloc[0] == '{"claim": "C-100"}'


def test_tool_call_evaluators_without_evidence_are_degraded() -> None:
    suite = evalnb.load(DATASET)
    result = evalnb.run(suite, lambda p: "approved", progress=False)  # a plain answer reports no tool calls
    row = result.scores.set_index(["case_id", "check_id"]).loc[("item-001", "ToolCallSelection")]
    assert row["status"] == "degraded" and "tool-call evidence indeterminate" in row["reason"]
    doc = evalnb.export.to_document(result)
    assert_valid(doc)
    assert doc["items"][0]["scores"]["toolCallSelection"]["code"] == "toolCallEvidenceIndeterminate"
    assert doc["items"][0]["status"] == "partial" and doc["items"][0]["error"]["code"] == "evaluatorsFailed"


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"tool": ""}, "needs its tool's name"),
        ({"tool": "a_b", "status": "done"}, "status 'done' is not one of"),
        ({"tool": "a_b", "colour": 1}, "unknown key(s) ['colour']"),
        ("a_b", "must be an evalnb.ToolCall or a dict"),
    ],
)
def test_a_tool_call_evalnb_cannot_read_degrades_the_run(raw: Any, message: str) -> None:
    suite = evalnb.load(DATASET)
    result = evalnb.run(suite, lambda p: {"text": "x", "tool_calls": [raw]}, progress=False)
    assert set(result.runs["status"]) == {"degraded", "skipped"}
    assert result.runs["error"].dropna().str.contains(message, regex=False).all()


@pytest.fixture
def ask_server_url() -> Any:
    from tests.agents.ask_server import AskServer

    with AskServer() as server:
        yield server.url
