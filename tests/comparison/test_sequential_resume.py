"""A sequential run killed mid-way and resumed decides as the uninterrupted run does: the same order, the same
looks, no case run repeated, its design read back from the store."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import evalnb
from tests.comparison.test_sequential_run import agent, suite
from tests.support.cli import cli_env

SCRIPT = textwrap.dedent(
    """
    import sys, time
    import evalnb
    from tests.comparison.test_sequential_run import agent, suite

    answer = agent(0.6, "cand")
    calls = []

    def stalling(request: evalnb.Request) -> str:
        calls.append(request.case)
        if len(calls) > 25:
            time.sleep(3600)  # stalls in its second batch, with the first one stored: killed meanwhile
        return answer(request)

    store = evalnb.Store(sys.argv[1])
    evalnb.run(suite(), stalling, runs=1, store=store, version="v2", baseline="v1", stop="decided", seed=9,
               concurrency=1, progress=False)
    """
)


def test_a_killed_sequential_run_resumes_to_the_same_decision(tmp_path: Path) -> None:
    db = tmp_path / "seq.db"
    store = evalnb.Store(db)
    base = evalnb.run(suite(), agent(0.0, "base"), runs=1, progress=False)
    store.save(base, version="v1")
    script = tmp_path / "crash.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(db)], env=cli_env())
    stored = 0
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and stored < 20:
            time.sleep(0.1)
            try:
                with sqlite3.connect(db, timeout=5) as con:
                    # the run rows committed so far (store schema 8 keeps them in segments)
                    stored = con.execute(
                        "SELECT COALESCE(SUM(s.n), 0) FROM segments s JOIN runs u ON s.run_pk = u.id "
                        "WHERE s.frame = 'runs' AND u.status = 'interrupted'"
                    ).fetchone()[0]
            except sqlite3.OperationalError:
                pass
        assert proc.poll() is None, "the run ended before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    runs = store.history()
    run_id = runs.loc[runs["status"] == "interrupted", "run_id"].iloc[0]
    kept = set(store.load(run_id).runs["case_id"])
    assert 20 <= len(kept) < 200

    called: list[str] = []
    # no baseline, stop or seed given: the stored design says how the run started
    resumed = evalnb.run(None, agent(0.6, "cand", called), store=store, resume=run_id, progress=False)
    assert not kept & set(called)  # nothing repeated
    assert resumed.stopped_early
    fresh = evalnb.run(
        suite(), agent(0.6, "cand"), runs=1, progress=False, baseline=base, stop="decided", seed=9
    )
    assert resumed.meta["sequential"]["cases_run"] == fresh.meta["sequential"]["cases_run"]
    assert resumed.calls_saved == fresh.calls_saved
    assert len(called) + len(kept) == fresh.meta["sequential"]["cases_run"]
    words = evalnb.compare(base, resumed).checks["words"].tolist()
    assert words == evalnb.compare(base, fresh).checks["words"].tolist()
    assert store.compare("v1", "v2").checks["words"].tolist() == words
