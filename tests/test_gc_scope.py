"""evalnb tunes the cyclic garbage collector only while it loads or runs, and gives the user's process back as
it found it on every way out: a normal end, an exception, Ctrl-C (evalnb/_gc.py says why it tunes it)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.errors import SuiteError

ROOT = Path(__file__).resolve().parents[1]


def _state() -> tuple[Any, ...]:
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


@pytest.fixture
def own_thresholds() -> Iterator[tuple[int, int, int]]:
    """A user's own collector settings (a notebook that tuned them), put back after the test."""
    was = gc.get_threshold()
    mine = (1234, 7, 9)
    gc.set_threshold(*mine)
    try:
        yield mine
    finally:
        gc.set_threshold(*was)


def _suite() -> evalnb.Suite:
    import pandas as pd

    return evalnb.from_frame(pd.DataFrame({"prompt": ["a", "b", "c"], "expected": ["a", "b", "x"]}))


def test_a_run_leaves_the_collector_as_it_found_it(own_thresholds: tuple[int, int, int]) -> None:
    before = _state()
    seen: list[tuple[Any, ...]] = []

    def agent(prompt: str) -> str:
        seen.append(_state())
        return prompt

    result = evalnb.run(_suite(), agent, progress=False)
    assert len(result.cases) == 3
    assert seen and seen[0] != before  # tuned while the run lasts (evalnb/_gc.py: frozen)
    assert _state() == before == (True, own_thresholds, 0)


class _Failing:
    """An executor that fails mid-run: the error reaches the caller."""

    name = "failing"

    async def execute(self, job: Any, todo: Iterator[Any], sink: Any) -> None:
        next(todo)
        raise RuntimeError("the executor lost its workers")


def test_an_exception_out_of_a_run_restores_the_collector(own_thresholds: tuple[int, int, int]) -> None:
    before = _state()
    with pytest.raises(RuntimeError, match="lost its workers"):
        evalnb.run(_suite(), lambda p: p, executor=_Failing(), progress=False)
    assert _state() == before


def test_a_load_that_fails_restores_the_collector(
    tmp_path: Path, own_thresholds: tuple[int, int, int]
) -> None:
    before = _state()
    bad = tmp_path / "bad.json"
    bad.write_text('{"schemaVersion": "1.6.0", "items": [{"prompt": ""}]}', encoding="utf-8")
    with pytest.raises(SuiteError):
        evalnb.load(bad)
    assert _state() == before


def test_a_process_that_froze_objects_itself_keeps_its_freeze() -> None:
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        evalnb.run(_suite(), lambda p: p, progress=False)
        # not unfrozen (that would empty it); frozen objects the run let go of may leave it a little smaller
        assert count * 0.99 <= gc.get_freeze_count() <= count
    finally:
        gc.unfreeze()


def test_a_freeze_inside_a_freeze_leaves_it_to_the_outer_one(
    own_thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalnb import _gc

    asked: list[int] = []
    count = gc.get_freeze_count

    def counted() -> int:
        asked.append(1)
        return count()

    monkeypatch.setattr(gc, "get_freeze_count", counted)
    with _gc.frozen():
        assert gc.get_threshold()[0] == _gc.YOUNG and count() > 0
        with _gc.frozen():  # a run's executor inside the run
            pass
        assert gc.get_threshold()[0] == _gc.YOUNG and count() > 0  # still frozen, still tuned
    assert (gc.get_threshold(), count()) == (own_thresholds, 0)
    # the inner one did not walk the frozen objects to learn that they were frozen
    assert len(asked) == 1


def test_an_import_beside_a_run_is_not_collected_and_joins_the_run_s_freeze(
    own_thresholds: tuple[int, int, int],
) -> None:
    from evalnb import _gc

    with _gc.frozen():
        before = gc.get_freeze_count()
        with _gc.imported():
            assert not gc.isenabled()
            made = [[i] for i in range(1000)]  # what an import makes, alive after it
        assert gc.isenabled() and gc.get_freeze_count() >= before + len(made)
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == (True, own_thresholds, 0)
    # without a run's freeze in force (the run ended first), nothing is frozen
    with _gc.imported():
        assert not gc.isenabled()
    assert (gc.isenabled(), gc.get_freeze_count()) == (True, 0)
    gc.disable()  # a caller's own choice is kept
    try:
        with _gc.imported():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_importing_evalnb_leaves_the_collector_as_it_found_it() -> None:
    # Its imports run with the collector paused: a fresh process, enabled before and disabled before.
    code = "import gc, sys; sys.argv[1] == 'off' and gc.disable(); import evalnb; print(gc.isenabled())"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for before, after in (("on", "True"), ("off", "False")):
        proc = subprocess.run(
            [sys.executable, "-c", code, before], capture_output=True, text=True, env=env, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == after


def test_ctrl_c_during_a_run_restores_the_collector(tmp_path: Path) -> None:
    # A real SIGINT to a real process, as Ctrl-C in a terminal or "interrupt the kernel" in Jupyter sends.
    script = textwrap.dedent(
        """
        import gc, os, signal, threading, time
        import pandas as pd
        import evalnb

        gc.set_threshold(1234, 7, 9)
        before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
        started = threading.Event()

        def agent(prompt):
            started.set()
            time.sleep(0.2)
            return prompt

        def interrupt():
            started.wait(30)
            time.sleep(0.3)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        suite = evalnb.from_frame(pd.DataFrame({"prompt": [f"q{i}" for i in range(200)], "expected": "x"}))
        try:
            result = evalnb.run(suite, agent, concurrency=2, progress=False)
            outcome = "returned " + str(int((result.runs["status"] == "skipped").sum())) + " skipped"
        except KeyboardInterrupt:
            outcome = "KeyboardInterrupt"
        after = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
        print(outcome)
        print("same" if after == before else f"changed: {before} -> {after}")
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-1] == "same", out.stdout
    assert lines[0] == "KeyboardInterrupt" or lines[0].startswith("returned "), out.stdout


def test_the_exit_of_a_process_that_ran_skips_collecting_what_is_alive(tmp_path: Path) -> None:
    # evalnb/_gc.py, no_collection_at_exit: the interpreter's teardown collections of a run's Result, pandas and
    # pyarrow took 0.3-0.4 s; everything still alive at exit is frozen instead. Until exit, nothing changes.
    script = textwrap.dedent(
        """
        import atexit, gc, evalnb
        atexit.register(lambda: print("at exit", gc.get_freeze_count() > 0, flush=True))  # runs after evalnb's
        result = evalnb.run(evalnb.load('name = "s"\\n[[tasks]]\\nid = "t"\\nprompt = "hi"', format="tasks-toml"),
                            lambda p: p, progress=False)
        print("after the run", gc.get_freeze_count(), flush=True)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["after the run 0", "at exit True"]


def test_a_stored_run_makes_no_full_collection_of_the_suite(tmp_path: Path) -> None:
    # evalnb/_gc.py: the store's imports at set-up made full collections over the suite (3 s at a million
    # cases), and its begin and finish ran outside the freeze. In a fresh process (the store's modules not
    # imported yet), a run with store= makes no full collection from its start to its end.
    script = textwrap.dedent(
        """
        import gc, json, sys, evalnb
        items = [{"testId": f"q{i}", "prompt": f"p{i}", "expected_response": f"p{i}"} for i in range(5000)]
        suite = evalnb.load(json.dumps({"schemaVersion": "1.1.0", "items": items}), format="dataset-json")
        assert "sqlalchemy" not in sys.modules
        full = []
        gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2 and full.append(1))
        seen = []

        class Watch:
            def begin(self, info):
                seen.append(("begin", gc.get_freeze_count() > 0))

            def completed(self):
                return None

            def record(self, record):
                pass

            def finish(self, result):
                seen.append(("finish", gc.get_freeze_count() > 0))

        result = evalnb.run(suite, lambda p: p, store="runs.db", version="v1", recorders=[Watch()], progress=False)
        print(len(result.cases), len(full), seen)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "5000 0 [('begin', True), ('finish', True)]"
