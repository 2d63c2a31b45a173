"""A version label names exactly one run of a suite whatever the timing: two processes that claim it at once
(an executor start-up between the check and the first write, as Ray's is) get one run, not two; two runs that
replace it leave one, not zero. On a SQLite file and on a real PostgreSQL server."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.store import Store
from tests.store.test_store import _env

RUNNER = textwrap.dedent(
    """
    import json, sys, time
    import evalnb
    from evalnb.errors import StoreError
    from evalnb.executors import Local
    from evalnb.suite import Case, ExactMatchCheck, Suite, Turn

    class SlowStart(Local):
        # an executor whose start-up takes a while (a Ray cluster starting), between the label's check and
        # the run's first write
        name = "slow-start"

        def __init__(self, seconds):
            self.seconds = seconds

        def prepare(self, job):
            time.sleep(self.seconds)

    url, start, prepare, delay, replace, tag = sys.argv[1:7]
    cases = [Case(id=f"c{i}", name=f"c{i}", turns=[Turn(prompt=f"q{i}", expected="yes", checks=[ExactMatchCheck()])])
             for i in range(20)]
    suite = Suite(name="labelled", format="dataset-json", cases=cases)

    def agent(prompt):
        time.sleep(float(delay))
        return "yes"

    store = evalnb.Store(url)
    while time.time() < float(start):
        time.sleep(0.002)
    try:
        result = evalnb.run(suite, agent, store=store, version="v1", replace=replace == "1", concurrency=2,
                            executor=SlowStart(float(prepare)), progress=False)
        out = {"tag": tag, "ok": result.meta["run_id"]}
    except StoreError as exc:
        out = {"tag": tag, "code": str(exc.code), "message": exc.message}
    print(json.dumps(out))
    """
)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new store on each backend."""
    if request.param == "sqlite":
        yield str(tmp_path / "labels.db")
    else:
        yield request.getfixturevalue("pg_url")


def race(tmp_path: Path, url: str, *runs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Start one process per run at the same moment; each claims version v1 of the same suite."""
    script = tmp_path / "claim.py"
    script.write_text(RUNNER)
    start = time.time() + 4.0  # every process has imported evalnb and opened the store by then
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(script),
                url,
                str(start),
                str(run.get("prepare", 1.0)),
                str(run.get("delay", 0.0)),
                "1" if run.get("replace") else "0",
                run["tag"],
            ],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run in runs
    ]
    outcomes = {}
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert err == "", err  # no traceback, no "Future exception was never retrieved"
        line = json.loads(out.strip().splitlines()[-1])
        outcomes[line["tag"]] = line
    return outcomes


def labelled(url: str) -> Any:
    store = Store(url)
    try:
        runs = store.history(suite="labelled")
        return runs[runs["version"] == "v1"].reset_index(drop=True)
    finally:
        store.engine.dispose()


def test_two_runs_claiming_a_label_at_once_give_one_run(tmp_path: Path, store_url: str) -> None:
    outcomes = race(tmp_path, store_url, {"tag": "a"}, {"tag": "b"})
    won = [o for o in outcomes.values() if "ok" in o]
    lost = [o for o in outcomes.values() if "ok" not in o]
    assert len(won) == 1 and len(lost) == 1, outcomes
    assert lost[0]["code"] == "VERSION_EXISTS" and "already has version 'v1'" in lost[0]["message"]
    runs = labelled(store_url)
    assert runs["run_id"].tolist() == [won[0]["ok"]]
    assert runs.loc[0, "status"] == "complete" and runs.loc[0, "cases"] == 20


def _old_run(url: str) -> str:
    suite = evalnb.load(
        json.dumps(
            {
                "schemaVersion": "1.1.0",
                "metadata": {"name": "labelled"},
                "items": [{"prompt": "old", "expected_response": "yes"}],
            }
        ),
        format="dataset-json",
    )
    store = Store(url)
    try:
        return store.save(evalnb.run(suite, lambda p: "yes", progress=False), version="v1")
    finally:
        store.engine.dispose()


def test_two_runs_replacing_a_label_at_once_leave_one(tmp_path: Path, store_url: str) -> None:
    old = _old_run(store_url)
    outcomes = race(tmp_path, store_url, {"tag": "a", "replace": True}, {"tag": "b", "replace": True})
    runs = labelled(store_url)
    assert len(runs) == 1, (outcomes, runs)
    assert runs.loc[0, "status"] == "complete" and runs.loc[0, "cases"] == 20 and runs.loc[0, "run_id"] != old
    winners = {o["ok"] for o in outcomes.values() if "ok" in o}
    assert runs.loc[0, "run_id"] in winners
    for (
        o
    ) in outcomes.values():  # the other one completed first and was replaced, or was replaced while it ran
        assert "ok" in o or o["code"] == "RUN_REPLACED", outcomes


@pytest.mark.parametrize("first_to_finish", ["the earlier claim", "the later claim"])
def test_the_last_claim_wins_whichever_finishes_first(
    tmp_path: Path, store_url: str, first_to_finish: str
) -> None:
    old = _old_run(store_url)
    # a claims the label first (its start-up is shorter); the delays decide which run completes first
    early_done = first_to_finish == "the earlier claim"
    outcomes = race(
        tmp_path,
        store_url,
        {"tag": "a", "replace": True, "prepare": 0.2, "delay": 0.0 if early_done else 0.3},
        {"tag": "b", "replace": True, "prepare": 1.5, "delay": 0.0},
    )
    runs = labelled(store_url)
    assert "ok" in outcomes["b"], outcomes
    assert runs["run_id"].tolist() == [outcomes["b"]["ok"]], (outcomes, runs)
    assert runs.loc[0, "status"] == "complete" and runs.loc[0, "cases"] == 20
    store = Store(store_url)
    try:
        assert old not in set(store.history()["run_id"])
        assert len(store.load("v1", suite="labelled").runs) == 20
        with store.engine.connect() as conn:  # nothing of a replaced run is left behind
            for table in ("segments", "run_rows"):
                orphans = conn.exec_driver_sql(
                    f"SELECT COUNT(*) FROM {table} WHERE run_pk NOT IN (SELECT id FROM runs)"
                )
                assert orphans.scalar_one() == 0
            assert conn.exec_driver_sql("SELECT COUNT(*) FROM segments").scalar_one() > 0
    finally:
        store.engine.dispose()
    if early_done:
        assert "ok" in outcomes["a"]  # it completed, then b replaced it
    else:
        a = outcomes["a"]
        assert a.get("code") == "RUN_REPLACED", outcomes
        assert f"run {outcomes['b']['ok']}, which claimed the label after it, replaced it" in a["message"]
