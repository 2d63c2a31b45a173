"""Scale benchmark: 10k, 100k and 1M cases in one process, for three suite shapes, with and without a store.

Each shape and size runs in a fresh process (peak RSS is per process) under a 6 GB address-space limit
(``RLIMIT_AS``): a JSON dataset file of N items (one run each), an instant async agent, concurrency 64. Shapes:

* ``default``: the two deterministic evaluators ExactMatch and PartialMatch as ``default_evaluators``;
* ``per-item``: the same two given by every item (``"evaluators": {...}, "evaluators_mode": "replace"``), as
  suites converted from other tools or written by hand give them;
* ``mixed``: ``default_evaluators``, five categories and tags, and 10% of the items two-turn conversations.

Prints per shape and size: load time and its peak RSS, run time and case runs per second, the peak RSS of the
whole process (load included); then, for the ``default`` shape, with ``store=`` (a SQLite file, written as the
run goes): the run with its streamed save, ``Store.load`` of the run and ``Store.trend``. At the end, the rows
of the README's scale table.

Baseline, measured in the same run: the bare loop of the work without evalnb (the agent awaited once per turn,
both checks' comparisons done by hand) gives the ratio evalnb's per-case-run cost stands at.

    python benchmarks/scale.py                                  # 10k, 100k, 1M; every shape
    python benchmarks/scale.py --sizes 10000 --shapes per-item  # one size, one shape
    python benchmarks/scale.py --no-store                       # the run alone

Aims (1M, each shape): load <= 15 s and <= 1 GB, >= 20,000 case runs/s, peak RSS <= 2 GB, within
RLIMIT_AS 6 GB; the store's streamed save of 1M case runs under a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _fresh as fresh  # benchmarks/_fresh.py: this script's folder is on the path

ROOT = Path(__file__).resolve().parents[1]
LIMIT_AS = 6 * 1024**3
SHAPES = ("default", "per-item", "mixed")
EVALUATORS = {"ExactMatch": {}, "PartialMatch": {}}
CATEGORIES = ("billing", "search", "accounts", "shipping", "returns")


def _item(i: int, shape: str) -> dict[str, Any]:
    if shape == "mixed" and i % 10 == 9:  # 10% two-turn conversations
        turns = [{"prompt": f"What is item {i}.{t}?", "expected_response": f"answer {i}.{t}"} for t in (1, 2)]
        item: dict[str, Any] = {"testId": f"q{i}", "turns": turns}
    else:
        item = {"testId": f"q{i}", "prompt": f"What is item {i}?", "expected_response": f"answer {i}"}
    if shape == "per-item":
        item["evaluators"] = {name: {} for name in EVALUATORS}  # a dict of its own per item, as parsed
        item["evaluators_mode"] = "replace"
    if shape == "mixed":
        item["category"] = CATEGORIES[i % len(CATEGORIES)]
        item["tags"] = ["smoke" if i % 2 else "regression", f"batch-{i % 7}"]
    return item


def write_dataset(path: Path, n: int, shape: str = "default") -> int:
    """The dataset file of ``n`` items of ``shape``; returns how many turns its cases hold."""
    doc: dict[str, Any] = {"schemaVersion": "1.2.0", "items": [_item(i, shape) for i in range(n)]}
    if shape != "per-item":
        doc["default_evaluators"] = EVALUATORS
    path.write_text(json.dumps(doc))
    return sum(len(item.get("turns", [0])) for item in doc["items"])


def peak_mb() -> float:
    return fresh.peak_mb()  # VmHWM: ru_maxrss would carry the parent's peak of writing the dataset


async def agent(prompt: str) -> str:
    return "answer " + prompt[13:-1]  # "What is item 7?" -> "answer 7": both checks pass


def child(path: str, store: str | None, limit: bool) -> None:
    """One measurement in this process; prints one JSON line."""
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
    sys.path.insert(0, str(ROOT))
    import evalnb

    out: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    suite = evalnb.load(path)
    out["load_s"] = time.perf_counter() - t0
    out["load_cpu_s"] = time.process_time() - c0
    out["load_peak_mb"] = peak_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    result = evalnb.run(
        suite, agent, concurrency=64, progress=False, store=store, version="v1" if store else None
    )
    out["run_s"] = time.perf_counter() - t0
    out["run_cpu_s"] = time.process_time() - c0  # what a shared machine's other work does not inflate
    n = len(suite.cases)  # one run each; `runs` has a row per turn
    turns = sum(len(case.turns) for case in suite.cases)
    assert len(result.runs) == turns and result.passed, result.counts()
    out["rate"] = n / out["run_s"]
    out["pass_rate"] = float(result.scores["passed"].mean())
    if store:
        out.update(store_figures(store, suite.name, turns, len(result.scores)))
    out["peak_mb"] = peak_mb()
    print(json.dumps(out))


def store_figures(store: str, suite_name: str, runs: int, scores: int) -> dict[str, float]:
    """The store's figures after a run saved with ``store=``: ``Store.load`` of it and ``Store.trend``."""
    from evalnb.store import Store

    out: dict[str, float] = {}
    db = Store(store)
    t0 = time.perf_counter()
    again = db.load("v1")
    out["store_load_s"] = time.perf_counter() - t0
    assert len(again.runs) == runs and len(again.scores) == scores
    del again
    t0 = time.perf_counter()
    db.trend(suite_name)
    out["trend_s"] = time.perf_counter() - t0
    return out


def bare(n: int, shape: str) -> tuple[float, float]:
    """The same work without evalnb: the agent awaited once per turn (64 cases at a time), both checks by hand;
    case runs per second of wall time and of CPU time."""
    import asyncio

    async def go() -> None:
        todo = iter(range(n))

        async def worker() -> None:
            for i in todo:
                turns = [f"{i}.1", f"{i}.2"] if shape == "mixed" and i % 10 == 9 else [str(i)]
                for label in turns:
                    answer = await agent(f"What is item {label}?")
                    expected = f"answer {label}"
                    _ = expected.casefold() in answer.casefold()
                    got, want = answer.lower().split(), expected.lower().split()
                    _ = len(set(got) & set(want)) / max(len(got), 1)

        await asyncio.gather(*(worker() for _ in range(64)))

    t0, c0 = time.perf_counter(), time.process_time()
    asyncio.run(go())
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def measure(path: Path, store: str | None, limit: bool = True) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", str(path)]
    if store:
        cmd += ["--store", store]
    if limit:
        cmd.append("--limit")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    out: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def run_row(shape: str, n: int, r: dict[str, float], base: tuple[float, float]) -> str:
    cpu_rate = n / r["run_cpu_s"]
    return (
        f"{shape:<9}{n:>10,}  load {r['load_s']:5.1f} s (CPU {r['load_cpu_s']:5.1f} s) {r['load_peak_mb']:6,.0f} MB  "
        f"run {r['run_s']:6.1f} s "
        f"{r['rate']:8,.0f} case runs/s (bare loop {base[0]:9,.0f}/s, evalnb {base[0] / r['rate']:4.1f}x its cost; "
        f"by CPU time {cpu_rate:8,.0f}/s, {base[1] / cpu_rate:4.1f}x)  peak RSS {r['peak_mb']:6,.0f} MB"
    )


def store_row(s: dict[str, float]) -> str:
    return (
        f"{'':>19}with store=: run + streamed save {s['run_s']:6.1f} s ({s['rate']:8,.0f}/s)  "
        f"Store.load {s['store_load_s']:5.1f} s  trend {s['trend_s']:5.2f} s  peak RSS {s['peak_mb']:6,.0f} MB"
    )


def readme_rows(rows: list[tuple[str, int, dict[str, float], dict[str, float] | None]]) -> list[str]:
    """The README's scale table: per shape and size, load, run, case runs/s and peak RSS; the store's columns
    where the store was measured (``-`` elsewhere)."""
    out = [
        "| shape | cases | load | run | case runs/s | peak RSS | with `store=` (SQLite): run + streamed save "
        "| `Store.load` | `trend` |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for shape, n, r, s in rows:
        stored = (
            f"{s['run_s']:.1f} s | {s['store_load_s']:.1f} s | {s['trend_s']:.2f} s" if s else "- | - | -"
        )
        out.append(
            f"| {shape} | {n:,} | {r['load_s']:.1f} s | {r['run_s']:.1f} s | {r['rate']:,.0f} "
            f"| {r['peak_mb']:,.0f} MB | {stored} |"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--shapes", nargs="*", choices=SHAPES, default=list(SHAPES))
    ap.add_argument("--no-store", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--limit", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.store, args.limit)
        return
    load = os.getloadavg()[0]
    print(
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the start; each shape and size in a fresh process "
        "under RLIMIT_AS 6 GB; async agent, ExactMatch + PartialMatch"
    )
    rows: list[tuple[str, int, dict[str, float], dict[str, float] | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            for shape in args.shapes:
                path = Path(tmp) / f"dataset-{shape}-{n}.json"
                write_dataset(path, n, shape)
                base = bare(n, shape)
                r = measure(path, None)
                print(run_row(shape, n, r, base), flush=True)
                s = None
                if not args.no_store and shape == "default":
                    s = measure(path, f"sqlite:///{Path(tmp) / f'store-{n}.db'}", limit=False)
                    print(store_row(s), flush=True)
                rows.append((shape, n, r, s))
                path.unlink()
    print(f"\nREADME rows (load average {os.getloadavg()[0]:.1f} at the end):")
    print("\n".join(readme_rows(rows)))


if __name__ == "__main__":
    main()
