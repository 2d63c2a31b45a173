"""What travels to cluster workers: the job round-trips, your checks travel with it, and what cannot travel is
named with where it sits."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest

from evalnb.checks import _registry as registry
from evalnb.errors import ConfigError
from evalnb.running._case_run import RunJob
from evalnb.running._setup import route
from evalnb.running._shipping import culprit, pack, unpack
from evalnb.suite import CustomCheck, Suite
from tests.support.suites import suite_of, task


def _job(suite: Suite, agent: Any, judge: Any = None) -> RunJob:
    routes, names = route(suite, agent)
    return RunJob(suite, routes, names, judge, None, 5.0, 0, None, 2)


def test_a_job_with_a_closure_and_a_check_of_yours_round_trips() -> None:
    secret = {"answer": "ok 42"}  # a closure: travels by value
    registry.register("Travels", lambda turn, response, at_least=1: len(response.text or "") >= at_least)
    try:
        suite = suite_of(task("a", checks=[CustomCheck(check="Travels", settings={"at_least": 2})]))
        packed = pack(_job(suite, lambda prompt: secret["answer"]))
        assert packed.checks == ["Travels"] and not packed.endpoints
    finally:
        registry.unregister("Travels")
    job = unpack(packed.payload)  # as on a worker: its registry learns the check from the job
    assert registry.user_definition("Travels") is not None
    assert job.routes["default"].fn("q") == "ok 42"  # type: ignore[attr-defined]
    assert job.suite.cases[0].id == "a"
    registry.unregister("Travels")


def test_an_openai_agent_is_noted_as_an_endpoint(openai_server: Any) -> None:
    from evalnb.agents import OpenAIChat

    packed = pack(_job(suite_of(task("a")), OpenAIChat("m", base_url=openai_server.base_url)))
    assert packed.endpoints


def test_what_cannot_travel_is_named_with_its_path() -> None:
    sock = socket.socket()
    try:
        found = culprit({"pool": [1, {"conn": sock}]})
        assert found is not None
        path, leaf, why = found
        assert path == ["['pool']", "[1]", "['conn']"] and leaf is sock and "socket" in why
        assert culprit({"fine": [1, 2]}) is None

        class Agent:
            def __init__(self) -> None:
                self.lock = threading.Lock()

            async def respond(self, request: Any) -> Any: ...

        with pytest.raises(
            ConfigError, match=r"agent 'default': \.lock is a _thread\.lock that cannot be sent"
        ):
            pack(_job(suite_of(task("a")), Agent()))
    finally:
        sock.close()
