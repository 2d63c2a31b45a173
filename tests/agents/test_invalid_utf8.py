"""One byte that is not UTF-8 in an otherwise valid chat completion: the answer is kept, with U+FFFD in its
place, and the run says so (the chat client, OpenAIChat, the OpenAI judge), against the real local server."""

from __future__ import annotations

import json

import evalnb
from evalnb.agents import OpenAIChat, Request
from evalnb.chat import ChatClient
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, ExactMatchCheck, JudgedMetricCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer, Reply

NOTE = "1 invalid UTF-8 byte sequence(s) in the answer were replaced by U+FFFD"


def _body(content: str, bad: bytes = b"\xe9") -> bytes:
    """A chat completion whose content has ``@`` replaced by ``bad`` (bytes that are not UTF-8)."""
    payload = {
        "model": "m-bytes",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    head, tail = json.dumps(payload, ensure_ascii=False).split("@")
    return head.encode() + bad + tail.encode()


async def test_the_chat_client_keeps_the_answer(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(body=_body("caf@ crème")), Reply(body=_body("two @ bad", b"\xff\xfe")))
    client = ChatClient("m", base_url=openai_server.base_url, retries=0)
    reply = await client.complete("hi")
    assert reply.text == "caf\ufffd crème"  # the valid "è" is kept as it was
    assert (reply.replaced, reply.note, reply.model) == (1, NOTE, "m-bytes")
    assert reply.usage == {"prompt_tokens": 3, "completion_tokens": 2}
    again = await client.complete("hi")
    assert again.text == "two \ufffd\ufffd bad" and again.replaced == 2
    # a body that is all UTF-8 has nothing to say
    openai_server.script(Reply(body=_body("fine @ here", "\ufffd".encode())))
    plain = await client.complete("hi")
    assert (plain.replaced, plain.note) == (0, None)


async def test_openai_chat_keeps_the_answer_and_says_so(openai_server: OpenAIServer) -> None:
    openai_server.script(Reply(body=_body("Paris @")))
    agent = OpenAIChat("m", base_url=openai_server.base_url, retries=0)
    response = await agent.respond(Request(prompt="capital of France?"))
    assert response.text == "Paris \ufffd"
    assert response.meta["invalid_utf8"] == 1 and response.meta["note"] == NOTE


def test_a_run_with_openai_chat_is_not_degraded(openai_server: OpenAIServer) -> None:
    openai_server.default = Reply(body=_body("Paris@"))
    suite = Suite(
        name="bytes",
        format="dataset-json",
        cases=[
            Case(
                id="c0",
                name="c0",
                turns=[Turn(prompt="capital?", expected="Paris\ufffd", checks=[ExactMatchCheck()])],
            )
        ],
    )
    agent = OpenAIChat("m", base_url=openai_server.base_url, retries=0)
    result = evalnb.run(suite, agent, progress=False)
    assert result.runs["status"].tolist() == ["passed"], result.report()
    assert result.runs["response"].tolist() == ["Paris\ufffd"]
    assert result.response_for("c0", 0, 0).meta["note"] == NOTE


def test_the_judge_scores_and_says_so(openai_server: OpenAIServer) -> None:
    openai_server.default = Reply(body=_body('{"score": 4, "reason": "on topic, caf@"}'))
    check = JudgedMetricCheck(type="Relevance")
    suite = Suite(
        name="judged",
        format="dataset-json",
        cases=[Case(id="c0", name="c0", turns=[Turn(prompt="q", checks=[check])])],
    )
    judge = OpenAIJudge("m", base_url=openai_server.base_url, cache=False, retries=0, logprobs=False)
    result = evalnb.run(suite, lambda prompt: "an answer", judge=judge, progress=False)
    row = result.scores.iloc[0]
    assert row["status"] == "passed", row["reason"]
    assert row["value"] == 4.0
    assert row["reason"] == f"4/5 (threshold 3): on topic, caf\ufffd ({NOTE})"
