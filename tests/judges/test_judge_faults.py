"""Judge faults found by trying to break evalnb, each reproduced against the real local chat server."""

from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import evalnb
from evalnb.cli import app
from evalnb.errors import ConfigError
from evalnb.judges import OpenAIJudge
from evalnb.suite import Case, JudgedMetricCheck, Suite, Turn
from tests.support.openai_server import OpenAIServer, Recorded, Reply


def judged_suite(n: int = 1) -> Suite:
    check = JudgedMetricCheck(type="Relevance")
    cases = [Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"q{i}", checks=[check])]) for i in range(n)]
    return Suite(name="judged", format="dataset-json", cases=cases)


def with_credentials(url: str) -> str:
    return url.replace("http://", "http://gateway-user:gateway-pass@")


# -- user:password@ in the judge URL and an API key -------------------------------------------------


def test_url_credentials_and_an_api_key_stop_at_start_up(openai_server: OpenAIServer) -> None:
    # Before, every call failed with aiohttp's "Cannot combine AUTHORIZATION header with AUTH argument".
    url = with_credentials(openai_server.base_url)
    with pytest.raises(ConfigError) as err:
        OpenAIJudge("m", base_url=url, api_key="sk-test-key", cache=False)
    message = str(err.value)
    assert "has a user name and password in its URL and an API key is set (given as api_key)" in message
    assert "gateway-pass" not in message and "sk-test-key" not in message
    with pytest.raises(ConfigError, match="Authorization header is given"):
        OpenAIJudge("m", base_url=url, headers={"Authorization": "Bearer x"}, cache=False)
    assert openai_server.requests == []


def test_url_credentials_alone_are_sent_as_basic_auth(openai_server: OpenAIServer) -> None:
    openai_server.default = '{"score": 5, "reason": "fine"}'
    judge = OpenAIJudge("m", base_url=with_credentials(openai_server.base_url), cache=False)
    result = evalnb.run(judged_suite(), lambda prompt: "an answer", judge=judge, progress=False)
    assert result.passed, result.report()
    token = base64.b64encode(b"gateway-user:gateway-pass").decode()
    assert openai_server.requests[0].headers["Authorization"] == f"Basic {token}"


def test_the_cli_exits_2_for_url_credentials_and_a_key(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "suite.json").write_text('[{"prompt": "q"}]')  # judged by the defaults
    (tmp_path / "agent.py").write_text("def agent(prompt):\n    return 'a'\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    args = [
        "run",
        str(tmp_path / "suite.json"),
        "--agent",
        f"{tmp_path / 'agent.py'}:agent",
        "--judge",
        "openai:m",
    ]
    out = CliRunner().invoke(app, [*args, "--judge-base-url", with_credentials(openai_server.base_url)])
    assert out.exit_code == 2, out.output
    assert "an API key is set (from $OPENAI_API_KEY)" in out.output
    assert "sk-from-env" not in out.output and "gateway-pass" not in out.output
    assert openai_server.requests == []


# -- rescore with an unreachable judge; agreement says what it could not compare ---------------------


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: connections are refused


def _judged_result(openai_server: OpenAIServer, n: int = 4) -> evalnb.Result:
    openai_server.default = '{"score": 4, "reason": "fine"}'
    suite = judged_suite(n)
    suite.cases[0].turns[0].checks.append(JudgedMetricCheck(type="Coherence"))
    for case in suite.cases[1:]:
        case.turns[0].checks.append(JudgedMetricCheck(type="Coherence"))
    judge = OpenAIJudge("m", base_url=openai_server.base_url, cache=False)
    return evalnb.run(suite, lambda prompt: f"answer to {prompt}", judge=judge, progress=False)


@pytest.mark.parametrize("as_string", [False, True])
def test_rescore_with_an_unreachable_judge_stops_at_once(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, as_string: bool
) -> None:
    import time

    result = _judged_result(openai_server)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    judge = "openai:m" if as_string else OpenAIJudge("m", base_url=url, cache=False)
    started = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        evalnb.rescore(result, judge=judge, cache=False)
    assert time.perf_counter() - started < 5  # before: 10 s of retries, then every judged score degraded
    assert err.value.code == "UNREACHABLE"
    assert f"judge endpoint {url} is not reachable: connection refused" in str(err.value)


def test_agreement_names_the_checks_it_could_not_compare(openai_server: OpenAIServer) -> None:
    result = _judged_result(openai_server)

    def flaky(req: Recorded) -> str | Reply:
        # Coherence is never answered; Relevance only fails for the first case.
        if "## Rubric: Coherence" in req.last_user or "q0" in req.last_user:
            return Reply(status=400)
        return '{"score": 4, "reason": "fine"}'

    openai_server.default = flaky
    again = evalnb.rescore(result, judge=OpenAIJudge("m", base_url=openai_server.base_url, cache=False))
    out = evalnb.judges.agreement(result.scores, again.scores).set_index("check")
    assert list(out.index) == ["Coherence", "Relevance"]  # the check that could not be compared is listed
    coherence, relevance = out.loc["Coherence"], out.loc["Relevance"]
    assert coherence["n"] == 0 and coherence["left_out"] == 4 and pd.isna(coherence["exact"])
    assert coherence["note"] == (
        "not compared: none of its 4 rows has a value in both frames (4 without a value in b: degraded or not "
        "evaluated)"
    )
    assert relevance["n"] == 3 and relevance["exact"] == 1.0 and relevance["left_out"] == 1
    assert relevance["note"] == "1 of 4 rows left out (1 without a value in b: degraded or not evaluated)"


def test_agreement_with_every_judged_score_degraded_is_no_perfect_agreement(
    openai_server: OpenAIServer,
) -> None:
    result = _judged_result(openai_server)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    dead = OpenAIJudge("m", base_url=url, cache=False, retries=0)
    again = evalnb.rescore(
        result, judge=dead, preflight=False
    )  # the failing judge's case: every judged score degraded
    assert set(again.scores["status"]) == {"degraded"}
    out = evalnb.judges.agreement(result.scores, again.scores)
    assert out["n"].tolist() == [0, 0] and out["exact"].isna().all()
    assert out["note"].str.startswith("not compared").all()
