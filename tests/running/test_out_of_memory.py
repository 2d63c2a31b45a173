"""A run that runs out of memory could not complete: the command line says so in one line and exits 2 (not 1,
which CI reads as "checks failed"), and what the store had saved is kept, interrupted, to be resumed.

The memory runs out for real: the process's address space is limited (RLIMIT_AS) to what it has mapped once
evalnb and its libraries are imported plus a budget, so the test does not depend on the size of the machine's
libraries; an agent answering 50 kB of its own per call fills the budget within a few thousand case runs.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

from evalnb.store import Store
from tests.support.cli import cli_env

WRAPPER = textwrap.dedent(
    """
    import resource, sys
    import pandas, sqlalchemy  # what every run imports, mapped before the limit
    import evalnb.cli, evalnb.store

    with open("/proc/self/status") as status:
        mapped = int(next(line for line in status if line.startswith("VmSize")).split()[1]) * 1024
    limit = mapped + int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.argv = ["evalnb", *sys.argv[2:]]
    evalnb.cli.main()
    """
)
AGENT = textwrap.dedent(
    """
    import itertools
    _n = itertools.count()

    def agent(prompt):
        return f"ok {next(_n)} " + "x" * 50_000   # an answer of its own each call: nothing shared between rows
    """
)
BUDGET = 350 * 2**20  # bytes above what the imports mapped: thread stacks and a few thousand answers
CASES, RUNS = 50, 400


def test_out_of_memory_is_one_line_exit_2_and_the_store_keeps_what_it_saved(tmp_path: Path) -> None:
    (tmp_path / "wrap.py").write_text(WRAPPER)
    (tmp_path / "agents.py").write_text(AGENT)
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "long-answers"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "ok"} for i in range(CASES)],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    # glibc's per-thread arenas and OpenBLAS's buffers reserve address space by the core count: kept small, so
    # the budget means the same on every machine
    env = cli_env(MALLOC_ARENA_MAX="2", OPENBLAS_NUM_THREADS="1")
    args = ["suite.json", "--agent", "agents.py:agent", "--runs", str(RUNS), "-c", "8"]
    out = subprocess.run(
        [sys.executable, "wrap.py", str(BUDGET), "run", *args, "--store", "s.db", "--version", "v1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 2, out.stderr[-3000:]
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr and "MemoryError" not in out.stderr, out.stderr[
        -3000:
    ]
    found = re.fullmatch(
        r"error: the run ran out of memory after ([\d,]+) of its 20,000 case runs; the store keeps ([\d,]+) of "
        r"them as run (\w+) \(interrupted\): `evalnb run --resume \3` \(resume='\3' in Python\) runs the others\. "
        r"Run fewer at once \(a lower --concurrency, concurrency= in Python\) or fewer per process \(split the "
        r"suite, fewer --runs\)",
        lines[0],
    )
    assert found, lines[0]
    finished, saved, run_id = (
        int(found.group(1).replace(",", "")),
        int(found.group(2).replace(",", "")),
        found.group(3),
    )
    assert 0 < saved <= finished < CASES * RUNS
    store = Store(tmp_path / "s.db")
    runs = store.history()
    assert runs["run_id"].tolist() == [run_id] and runs.loc[0, "status"] == "interrupted"
    stored = store.load(run_id)  # every case run the message counts is in the store, whole
    pairs = stored.runs[["case_id", "run"]].drop_duplicates()
    assert (len(stored.runs), len(pairs), len(stored.scores)) == (saved, saved, saved)


def test_threads_that_cannot_start_narrow_the_run_instead_of_failing_its_cases(tmp_path: Path) -> None:
    # 64 sync agent calls at once need 64 threads; with 64 MB stacks (RLIMIT_STACK sets a thread's) the budget
    # holds a few of them and still leaves room for the run's rows: the calls share the threads there are (as
    # at a lower concurrency), and every case run passes.
    (tmp_path / "wrap.py").write_text(WRAPPER)
    (tmp_path / "agents.py").write_text(
        "import time\n\ndef agent(prompt):\n    time.sleep(0.002)\n    return 'ok'\n"
    )
    doc = {
        "schemaVersion": "1.1.0",
        "metadata": {"name": "threads"},
        "default_evaluators": {"ExactMatch": {}},
        "items": [{"prompt": f"p{i}", "expected_response": "ok"} for i in range(CASES)],
    }
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    env = cli_env(MALLOC_ARENA_MAX="2", OPENBLAS_NUM_THREADS="1")
    budget = 320 * 2**20  # four 64 MB stacks and the rows of 2,000 case runs; not 64 stacks

    def big_stacks() -> None:
        resource.setrlimit(resource.RLIMIT_STACK, (64 * 2**20, resource.getrlimit(resource.RLIMIT_STACK)[1]))

    out = subprocess.run(
        [sys.executable, "wrap.py", str(budget), "run", "suite.json", "--agent", "agents.py:agent", "--runs", "40",
         "-c", "64", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        preexec_fn=big_stacks,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:] + out.stdout[-3000:]
    counts = json.loads(out.stdout)["counts"]
    assert counts == {"passed": CASES, "failed": 0, "degraded": 0, "skipped": 0}, counts
    assert "can't start new thread" not in out.stdout
