"""Secrets stay out of everything a run shows and saves: a judge's header values (echoed back by an error body),
a URL's query string and ``user:password@`` in an agent's or a judge's name, checked in every output a user
keeps (frames, report, CSV, Excel, HTML, JSON, the dataset document, the store file, a cassette)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import evalnb
from evalnb import export
from evalnb._secrets import Secret, redact_urls, safe_url, scrub
from evalnb.agents import HTTP, OpenAIChat, Record
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, JudgedMetricCheck, RegexCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer, Recorded, Reply

SECRETS = ("gw-token-0451", "pw-secret-77", "qs-key-9931", "env-token-2718")


def echo(status: int) -> Callable[[Recorded], Reply]:
    """A server that answers an error whose body echoes the request's headers and query (gateways do)."""

    def answer(req: Recorded) -> Reply:
        return Reply(
            status=status, body=json.dumps({"error": "denied", "headers": req.headers, "query": req.query})
        )

    return answer


def _outputs(result: evalnb.Result, folder: Path) -> str:
    """Every output a user keeps, as one text to search."""
    folder.mkdir(parents=True, exist_ok=True)
    result.to_csv(folder / "csv")
    result.to_excel(folder / "card.xlsx")
    result.to_html(folder / "card.html")
    result.to_json(folder / "result.json")
    export.to_document(result, folder / "document.json")
    store = evalnb.Store(folder / "runs.db")
    store.save(result, version="v1")
    stored = store.load("v1")
    store.engine.dispose()
    texts = [
        result.report(),
        repr(result.meta),
        result.runs.to_csv(),
        result.scores.to_csv(),
        stored.to_json(),
    ]
    for path in folder.rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("latin-1"))
    import zipfile

    with zipfile.ZipFile(folder / "card.xlsx") as z:  # the workbook's sheets are compressed
        texts += [z.read(n).decode("utf-8") for n in z.namelist()]
    return "\n".join(texts)


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


def _judged() -> Suite:
    check = JudgedMetricCheck(type="Relevance")
    return Suite(
        name="judged",
        format="dataset-json",
        cases=[Case(id="c", name="c", turns=[Turn(prompt="q", checks=[check])])],
    )


@pytest.mark.parametrize("status", [400, 503])
def test_judge_header_values_never_reach_a_reason_or_an_output(
    openai_server: OpenAIServer, tmp_path: Path, status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_TOKEN", "env-token-2718")
    openai_server.default = echo(status)
    url = openai_server.base_url.replace("http://", "http://gw-user:pw-secret-77@")
    judge = OpenAIJudge(
        "m",
        base_url=url,
        headers={"X-Gateway-Token": "gw-token-0451"},  # the docstring's gateway token: secret like an agent's
        secret_headers={"X-Env-Token": "${GATEWAY_TOKEN}"},
        cache=False,
        retries=1,
        backoff=0.01,
    )
    result = evalnb.run(_judged(), lambda prompt: "an answer", judge=judge, progress=False)
    reason = result.scores["reason"].iloc[0]
    assert result.scores["status"].iloc[0] == "degraded" and f"HTTP {status}" in reason
    assert "***" in reason and '"X-Gateway-Token": "***"' in reason  # the echo is there, its value is not
    received = openai_server.requests[0].headers
    assert received["X-Gateway-Token"] == "gw-token-0451" and received["X-Env-Token"] == "env-token-2718"
    assert received["Authorization"].startswith("Basic ")  # the URL's user:password, which the echo shows
    _assert_clean(reason)
    _assert_clean(repr(judge) + repr(judge.client))
    _assert_clean(_outputs(result, tmp_path))


def test_an_http_agent_url_with_a_key_and_a_password_is_named_without_them(tmp_path: Path) -> None:
    with OpenAIServer(default=Reply(body='{"text": "ok"}')) as service:
        url = service.url.replace("http://", "http://bob:pw-secret-77@") + "/chat/completions?key=qs-key-9931"
        agent = HTTP(url, secret_headers={})
        cassette = tmp_path / "answers.jsonl"
        suite = Suite(
            name="http",
            format="tasks-toml",
            cases=[
                Case(
                    id="c", name="c", turns=[Turn(prompt="q", checks=[RegexCheck(on="result", pattern="ok")])]
                )
            ],
        )
        result = evalnb.run(suite, Record(agent, cassette), progress=False)
        assert service.requests[0].query == {"key": "qs-key-9931"}  # the key is still sent
    assert result.passed, result.report()
    assert result.runs["agent"].iloc[0] == safe_url(url) == f"{service.url}/chat/completions"
    assert result.meta["agent"] == safe_url(url)
    _assert_clean(cassette.read_text() + repr(agent))
    _assert_clean(_outputs(result, tmp_path / "out"))


def test_an_http_agent_error_echoing_the_url_and_headers_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASK_TOKEN", "env-token-2718")
    with OpenAIServer(default=echo(400)) as service:
        url = service.url.replace("http://", "http://bob:pw-secret-77@") + "/chat/completions?key=qs-key-9931"
        agent = HTTP(url, secret_headers={"Authorization-Extra": "Bearer ${ASK_TOKEN}"})
        suite = Suite(
            name="http", format="tasks-toml", cases=[Case(id="c", name="c", turns=[Turn(prompt="q")])]
        )
        result = evalnb.run(suite, agent, progress=False, retries=0)
    error = result.runs["error"].iloc[0]
    assert "answered HTTP 400" in error and "***" in error
    _assert_clean(error)
    _assert_clean(_outputs(result, tmp_path))


def test_a_chat_agent_s_secret_headers_are_scrubbed_by_the_client(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_TOKEN", "env-token-2718")
    openai_server.default = echo(401)
    agent = OpenAIChat(
        "m", base_url=openai_server.base_url, secret_headers={"X-Token": "${GATEWAY_TOKEN}"}, retries=0
    )
    result = evalnb.run(
        Suite(name="chat", format="tasks-toml", cases=[Case(id="c", name="c", turns=[Turn(prompt="q")])]),
        agent,
        progress=False,
    )
    assert "HTTP 401" in result.runs["error"].iloc[0]
    _assert_clean(result.runs["error"].iloc[0] + repr(agent))


def test_the_rules() -> None:
    assert scrub(
        '{"a": "Bearer tok-1234", "b": "tok-1234", "c": "tok%2D1234"}', [Secret("Bearer tok-1234")]
    ) == ('{"a": "***", "b": "***", "c": "tok%2D1234"}')
    assert (
        scrub('{"k": "a\\/b\\/c-secret"}', ["a/b/c-secret"]) == '{"k": "***"}'
    )  # JSON's escaped slashes too
    assert scrub("Bearer is a word", [Secret("Bearer abcd1234")]) == "Bearer is a word"
    assert (
        redact_urls("agent at http://u:p@h:1/x?k=v, judge at https://h2/v1")
        == "agent at http://h:1/x, judge at https://h2/v1"
    )
    assert redact_urls("no url here") == "no url here"
