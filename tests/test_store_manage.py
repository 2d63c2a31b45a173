"""Managing a store: a version label names one run of a suite (refused twice unless replaced), listing runs
with their cases and pass rates, deleting by run id or version, and the commands `evalnb history` (and its deprecated spelling `evalnb runs`), `evalnb delete`,
`run --version/--replace` and `trend` for an unknown suite, with their exit codes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalnb
from evalnb._deprecation import removal_version
from evalnb._version import __version__
from evalnb.cli import app
from evalnb.errors import StoreError
from evalnb.store import Store
from evalnb.suite import Case, ExactMatchCheck, Suite, Turn


def suite(name: str = "manage", n: int = 4) -> Suite:
    cases = [
        Case(
            id=f"c{i}",
            name=f"case {i}",
            runs=2,
            turns=[Turn(prompt=f"q{i}", expected="yes", checks=[ExactMatchCheck()])],
        )
        for i in range(n)
    ]
    return Suite(name=name, format="dataset-json", cases=cases)


def answers(*wrong: str) -> Any:
    calls: list[str] = []

    def agent(prompt: str) -> str:
        calls.append(prompt)
        return "no" if prompt in wrong else "yes"

    agent.calls = calls  # type: ignore[attr-defined]
    return agent


def test_save_refuses_a_label_the_suite_has_unless_replaced(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    first = store.save(evalnb.run(suite(), answers(), progress=False), version="v1")
    again = evalnb.run(suite(), answers("q1"), progress=False)
    with pytest.raises(StoreError) as err:
        store.save(again, version="v1")
    assert err.value.code == "VERSION_EXISTS"
    message = str(err.value)
    assert f"suite 'manage' already has version 'v1' (run {first}, saved " in message
    assert "replace=True (--replace on the command line)" in message and "s.db" in message
    assert store.history()["run_id"].tolist() == [first]  # nothing was written
    # another suite may use the same label; a run without a label never conflicts
    store.save(evalnb.run(suite("other"), answers(), progress=False), version="v1")
    store.save(evalnb.run(suite(), answers(), progress=False))
    store.save(evalnb.run(suite(), answers(), progress=False))
    # replace=True: the label now names the new run, the old one and its rows are gone
    second = store.save(again, version="v1", replace=True)
    runs = store.history(suite="manage")
    assert first not in set(runs["run_id"]) and (runs["version"] == "v1").sum() == 1
    assert store.load("v1", suite="manage").meta["run_id"] == second
    assert store.trend("manage")["run_id"].tolist().count(second) == 1
    with store.engine.connect() as conn:
        left = conn.exec_driver_sql("SELECT COUNT(*) FROM run_rows WHERE run_pk NOT IN (SELECT id FROM runs)")
        assert left.scalar_one() == 0


def test_run_with_a_taken_version_stops_before_calling_the_agent(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    evalnb.run(suite(), answers(), store=store, version="v1", progress=False)
    agent = answers("q0")
    with pytest.raises(StoreError) as err:
        evalnb.run(suite(), agent, store=store, version="v1", progress=False)
    assert err.value.code == "VERSION_EXISTS" and agent.calls == []  # type: ignore[attr-defined]
    assert len(store.history()) == 1
    # replace=True: decided when the new run completes; then the label names it alone
    result = evalnb.run(suite(), agent, store=store, version="v1", replace=True, progress=False)
    runs = store.history()
    assert runs["run_id"].tolist() == [result.meta["run_id"]]
    assert runs.loc[0, "passed_cases"] == 3 and runs.loc[0, "pass_rate"] == 0.75


async def test_an_interrupted_replacing_run_keeps_the_old_one_until_it_is_resumed(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    old = (await evalnb.run_async(suite(), answers(), store=store, version="v1", progress=False)).meta[
        "run_id"
    ]
    started = asyncio.Event()

    async def slow(prompt: str) -> str:
        if prompt == "q3":
            started.set()
            await asyncio.sleep(30)
        return "yes"

    job = asyncio.ensure_future(
        evalnb.run_async(
            suite(), slow, store=store, version="v1", replace=True, concurrency=1, progress=False
        )
    )
    await asyncio.wait_for(started.wait(), 30)
    job.cancel()
    partial = await job
    assert partial.meta["interrupted"] is True
    # the old run is still what the label loads; the new one waits, interrupted
    assert store.load("v1", suite="manage").meta["run_id"] == old
    assert set(store.history()["status"]) == {"complete", "interrupted"}
    # resuming remembers replace=True: once complete, it replaces the old run
    done = await evalnb.run_async(None, answers(), store=store, resume=partial.meta["run_id"], progress=False)
    assert store.history()["run_id"].tolist() == [done.meta["run_id"]] == [partial.meta["run_id"]]


def test_runs_lists_cases_and_pass_rates_as_the_results_count_them(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    for version, wrong in (("v1", ()), ("v2", ("q0", "q2")), ("v3", ("q0", "q1", "q2", "q3"))):
        store.save(evalnb.run(suite(), answers(*wrong), progress=False), version=version)
    runs = store.history()
    assert list(runs.columns[-5:]) == ["checks", "saved_at", "cases", "passed_cases", "pass_rate"]
    for row in runs.itertuples():
        cases = store.load(row.run_id).cases
        assert row.cases == len(cases) and row.passed_cases == (cases["status"] == "passed").sum()
    assert runs["pass_rate"].tolist() == [1.0, 0.5, 0.0]
    assert str(runs["cases"].dtype) == "Int64" and str(runs["pass_rate"].dtype) == "float64"
    assert store.suites() == ["manage"]
    with pytest.raises(StoreError) as err:
        store.trend("nope")
    assert err.value.code == "UNKNOWN_SUITE" and "its suites: manage" in str(err.value)


def test_delete_by_run_id_or_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    ids = {
        name: store.save(evalnb.run(suite(name), answers(), progress=False), version="v1")
        for name in ("a", "b")
    }
    keep = store.save(evalnb.run(suite("a"), answers(), progress=False), version="v2")
    with pytest.raises(StoreError) as err:
        store.delete("v1")
    assert err.value.code == "AMBIGUOUS_VERSION" and "several suites: a, b" in str(err.value)
    assert store.delete("v1", suite="a") == [ids["a"]]
    assert store.delete(keep) == [keep]
    with pytest.raises(StoreError) as err:
        store.delete("v1", suite="a")
    assert err.value.code == "RUN_NOT_FOUND" and "it names runs of b" in str(err.value)
    store.save(evalnb.run(suite("a"), answers(), progress=False), version="v1")
    assert len(store.delete("v1", all_suites=True)) == 2
    assert store.history().empty
    with pytest.raises(StoreError, match="no saved run with run id or version 'zzz'"):
        store.delete("zzz")


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


def test_the_store_commands_and_their_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text("def good(prompt):\n    return 'yes'\n\ndef half(prompt):\n"
                                       "    return 'yes' if prompt in ('p0', 'p1') else 'no'\n")  # fmt: skip
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "cli-suite"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "yes", "testId": f"T-{i}"} for i in range(4)],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    run = ("run", "suite.json", "--store", "h.db")
    code, out = invoke(*run, "--agent", "agent.py:good", "--version", "v1")
    assert code == 0, out
    first = Store("h.db").history()["run_id"].iloc[0]
    assert f"Saved run {first} of suite cli-suite as version v1 in h.db" in out
    # the same label again: refused before the agent runs (exit 2), nothing saved
    code, out = invoke(*run, "--agent", "agent.py:half", "--version", "v1")
    assert code == 2 and "error: suite 'cli-suite' already has version 'v1'" in out and "--replace" in out
    assert len(Store("h.db").history()) == 1
    code, out = invoke(*run, "--agent", "agent.py:half", "--version", "v1", "--replace")
    assert code == 1 and "Saved run " in out  # the run had failures: exit 1, and it replaced v1
    code, out = invoke(*run, "--agent", "agent.py:good", "--replace")
    assert code == 2 and "--replace goes with --version" in out
    code, out = invoke(*run, "--agent", "agent.py:good", "--version", "v2", "--format", "json")
    assert code == 0 and json.loads(out.split("\nSaved run ")[0])["counts"]["passed"] == 4

    code, out = invoke("history", "--store", "h.db")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].split() == [
        "run_id",
        "suite",
        "version",
        "status",
        "when",
        "cases",
        "passed",
        "pass_rate",
    ]
    assert lines[1].split()[1:4] == ["cli-suite", "v1", "complete"] and lines[1].split()[-3:] == [
        "4",
        "2",
        "50%",
    ]
    assert lines[2].split()[2] == "v2" and lines[2].split()[-3:] == ["4", "4", "100%"]
    assert lines[-1] == "2 runs in h.db (times in UTC)" and first not in out
    # the old spelling lists the same, with a note on stderr naming the new one and the versions
    res = CliRunner().invoke(app, ["runs", "--store", "h.db"])
    assert res.exit_code == 0 and res.stdout == out.replace(res.stderr, "")
    assert res.stderr.startswith("Note: evalnb runs is deprecated since evalnb ")
    assert f"goes away in {removal_version(__version__)}: use evalnb history" in res.stderr
    code, out = invoke("history", "--store", "h.db", "--suite", "nope")
    assert code == 2 and "no saved run of suite 'nope' in h.db; its suites: cli-suite" in out
    code, out = invoke("trend", "nope", "--store", "h.db")
    assert code == 2 and "its suites: cli-suite" in out
    code, out = invoke("trend", "cli-suite", "--store", "h.db")
    assert code == 0 and "ExactMatch" in out

    code, out = invoke("delete", "v2", "--store", "h.db")
    assert code == 0 and "(suite cli-suite, version v2)" in out and "1 run deleted from h.db" in out
    code, out = invoke("delete", "v2", "--store", "h.db")
    assert code == 2 and "no saved run with run id or version 'v2'" in out
    only = Store("h.db").history()["run_id"].iloc[0]
    code, out = invoke("delete", only, "--store", "h.db")
    assert code == 0 and f"Deleted run {only}" in out
    code, out = invoke("history", "--store", "h.db")
    assert code == 0 and out.strip() == "No saved runs in h.db."
