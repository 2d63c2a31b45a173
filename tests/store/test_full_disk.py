"""A store that fills up in the middle of a streamed run: the run stops with one short error saying what is
saved (exit 2 on the command line, nothing else printed), the Result of what finished stays with the error,
and the saved run resumes once there is room.

The disk fills for real: the process's file-size limit (RLIMIT_FSIZE, tests/support/disk.py) refuses the
write part-way, as a full disk or a quota does; SQLite's own size limit (``PRAGMA max_page_count``) gives its
"database or disk is full" answer, the one a full disk gives.
"""

from __future__ import annotations

import gc
import json
import random
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import StoreError
from evalnb.store import Store
from tests.support.cli import cli_env

CASES = 2_000
SUITE = {
    "schemaVersion": "1.1.0",
    "metadata": {"name": "fills"},
    "default_evaluators": {"ExactMatch": {}},
    "items": [{"prompt": f"p{i}", "expected_response": "yes"} for i in range(CASES)],
}
AGENT = (  # 3 kB a case run that compression does not shrink below 1.5 kB: the store fills quickly
    "import random\n\ndef long(prompt):\n    return 'yes ' + random.Random(prompt).randbytes(1500).hex()\n"
)
LIMIT = 2_000_000  # bytes: the schema and the suite fit, some hundreds of case runs do, 2,000 do not


def _long(prompt: str) -> str:
    return "yes " + random.Random(prompt).randbytes(1500).hex()


def _cli(folder: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "evalnb", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env(),
        preexec_fn=cap,
    )


def test_a_full_store_mid_run_is_one_line_exit_2_and_the_run_resumes(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(AGENT)
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    run = ("run", "suite.json", "--agent", "agents.py:long", "--store", "s.db", "--version", "v1")
    out = _cli(tmp_path, *run, "-c", "16", limit=LIMIT)
    assert out.returncode == 2, out.stderr[-3000:]
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr[-3000:]  # no traceback, no "Future exception was never retrieved"
    found = re.fullmatch(
        r"error: the store .*s\.db could not be used: disk I/O error; the run stopped: (\d+) of 2,000 case runs "
        r"are saved in it as run (\w+) \(interrupted\); once the store can be written, "
        r"`evalnb run --resume (\w+)` \(resume='\w+' in Python\) runs the others",
        lines[0],
    )
    assert found, lines[0]
    saved, run_id = int(found.group(1)), found.group(2)
    assert 0 < saved < CASES and found.group(3) == run_id
    assert out.stdout == ""
    runs = Store(tmp_path / "s.db").history()
    assert runs["run_id"].tolist() == [run_id] and runs.loc[0, "status"] == "interrupted"
    assert runs.loc[0, "cases"] == saved  # what the message says is what the store holds
    # once there is room: the saved run goes on from where it stopped
    again = _cli(tmp_path, "run", "--resume", run_id, "--agent", "agents.py:long", "--store", "s.db")
    assert again.returncode == 0, again.stderr
    runs = Store(tmp_path / "s.db").history()
    assert runs["run_id"].tolist() == [run_id] and runs.loc[0, "status"] == "complete"
    assert runs.loc[0, "cases"] == CASES


def test_the_python_caller_gets_a_store_error_holding_what_finished(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy import event

    from evalnb.store import _recorder

    # every batch committed at once: the store fills while the run goes on, not in the write at its end
    monkeypatch.setattr(_recorder, "LINGER", 0.0)

    store = Store(tmp_path / "s.db")

    @event.listens_for(store.engine, "connect")
    def _limit(dbapi_conn: object, _record: object) -> None:
        dbapi_conn.execute("PRAGMA max_page_count = 400")  # type: ignore[attr-defined]  # 1.6 MB at 4 kB a page

    store.engine.dispose()  # every connection from now on has the limit
    suite = evalnb.load(json.dumps(SUITE), format="dataset-json")
    with pytest.raises(StoreError) as err:
        evalnb.run(suite, _long, store=store, version="v1", progress=False)
    assert err.value.code == "STORE_FULL"
    message = err.value.message
    assert message.startswith(
        f"the store {tmp_path / 's.db'} is full: its disk (or the database's size limit) "
    )
    assert "(database or disk is full); free some space; the run stopped: " in message
    result = err.value.result
    assert isinstance(result, evalnb.Result) and result.meta["interrupted"] is True
    counts = result.counts()
    assert counts["passed"] > 0 and counts["skipped"] > 0 and sum(counts.values()) == CASES
    saved = store.history().loc[0]
    assert saved["status"] == "interrupted" and 0 < saved["cases"] <= counts["passed"]
    assert f" {saved['cases']:,} of 2,000 case runs are saved in it as run {saved['run_id']} " in message
    del err
    gc.collect()
    assert "never retrieved" not in capfd.readouterr().err
