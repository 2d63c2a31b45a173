"""The frames' imports started while a run waits on its agents (evalnb/results/_warm.py), in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import asyncio, json, sys, threading
from evalnb.results._warm import warm_frames

def warming():
    return [t for t in threading.enumerate() if t.name == "evalnb-warm"]

async def main():
    warm_frames()
    warm_frames()  # once per process
    at_once = len(warming())
    await asyncio.sleep(0)  # the loop's next turn
    await asyncio.sleep(0)
    later = warming()
    for t in later:
        t.join(60)
    return [at_once, len(later), "pandas" in sys.modules]

if sys.argv[1] == "loop":
    print(json.dumps(asyncio.run(main())))
else:
    warm_frames()
    threads = warming()
    for t in threads:
        t.join(60)
    print(json.dumps([len(threads), "pandas" in sys.modules]))
"""


def _run(where: str) -> list[object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", CODE, where], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out: list[object] = json.loads(proc.stdout)
    return out


def test_in_a_running_loop_the_import_starts_on_the_loop_s_next_turn() -> None:
    # Not beside the case runs' first steps, which the run starts right after its recorders begin.
    assert _run("loop") == [0, 1, True]


def test_without_a_loop_the_import_starts_at_once() -> None:
    assert _run("thread") == [1, True]


GIVE_WAY = """
import json, sys, threading, time, types
from evalnb.results import _warm

slept = []
_warm.time = types.SimpleNamespace(sleep=lambda s: (slept.append(threading.current_thread().name), time.sleep(s)))
fresh = [m for m in ("wave", "colorsys", "netrc") if m not in sys.modules]
_warm.warm_frames()
threads = [t for t in threading.enumerate() if t.name == "evalnb-warm"]
import wave, colorsys, netrc  # the main thread's own imports while pandas' goes on: it does not give way
for t in threads:
    t.join(60)
left = [f.thread for f in sys.meta_path if type(f).__name__ == "_GiveWay"]
print(json.dumps([sorted(set(slept)), len(slept), "pandas" in sys.modules, left, fresh]))
"""


def test_the_import_gives_way_in_its_own_thread_before_each_module_and_its_finder_goes_idle() -> None:
    # A thread waiting for the interpreter lock (the event loop, woken by answers) gets it between modules.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", GIVE_WAY], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    names, times, imported, left, fresh = json.loads(proc.stdout)
    assert fresh == ["wave", "colorsys", "netrc"]  # the main thread's imports went through the finder
    assert names == ["evalnb-warm"] and imported and left == [None]  # idle once the import is done
    assert times > 100  # pandas and pyarrow load hundreds of modules
