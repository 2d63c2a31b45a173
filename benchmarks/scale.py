"""Scale benchmark: 10k, 100k and 1M single-turn cases in one process, with and without a store.

Each size runs in a fresh process (peak RSS is per process): a JSON dataset file of N items (one run each, the
two deterministic evaluators ExactMatch and PartialMatch as defaults), an instant async agent, concurrency 64.
Prints per size: load time, run time and case runs per second, peak RSS; then with ``store=`` (a SQLite file,
written as the run goes): the run with its streamed save, ``Store.load`` of the run and ``Store.trend``.
The same run under a 6 GB address-space limit (``RLIMIT_AS``) shows that it fits.

Baseline, measured in the same run: the bare loop of the work without evalnb (the agent awaited N times, both
checks' comparisons done by hand) gives the ratio evalnb's per-case-run cost stands at.

    python benchmarks/scale.py                    # 10k, 100k, 1M
    python benchmarks/scale.py --sizes 10000      # one size
    python benchmarks/scale.py --no-store         # the run alone

Aims (1M): load <= 20 s, >= 20,000 case runs/s, peak RSS <= 2 GB, fits in RLIMIT_AS 6 GB; the store's streamed
save of 1M case runs under a minute.
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

ROOT = Path(__file__).resolve().parents[1]
LIMIT_AS = 6 * 1024**3


def write_dataset(path: Path, n: int) -> None:
    items = [
        {"testId": f"q{i}", "prompt": f"What is item {i}?", "expected_response": f"answer {i}"}
        for i in range(n)
    ]
    doc = {
        "schemaVersion": "1.1.0",
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
        "items": items,
    }
    path.write_text(json.dumps(doc))


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(path: str, store: str | None, limit: bool) -> None:
    """One measurement in this process; prints one JSON line."""
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
    sys.path.insert(0, str(ROOT))
    import evalnb

    async def agent(prompt: str) -> str:
        return "answer " + prompt[13:-1]  # "What is item 7?" -> "answer 7": both checks pass

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    suite = evalnb.load(path)
    out["load_s"] = time.perf_counter() - t0
    out["load_peak_mb"] = peak_mb()
    t0 = time.perf_counter()
    result = evalnb.run(
        suite, agent, concurrency=64, progress=False, store=store, version="v1" if store else None
    )
    out["run_s"] = time.perf_counter() - t0
    n = len(result.runs)
    assert n == len(suite.cases) and result.passed, result.counts()
    out["rate"] = n / out["run_s"]
    out["pass_rate"] = float(result.scores["passed"].mean())
    if store:
        from evalnb.store import Store

        db = Store(store)
        t0 = time.perf_counter()
        again = db.load("v1")
        out["store_load_s"] = time.perf_counter() - t0
        assert len(again.runs) == n and len(again.scores) == len(result.scores)
        del again
        t0 = time.perf_counter()
        db.trend(suite.name)
        out["trend_s"] = time.perf_counter() - t0
    out["peak_mb"] = peak_mb()
    print(json.dumps(out))


def bare(n: int) -> float:
    """The same work without evalnb: N awaited agent calls (64 at a time) and both checks by hand."""
    import asyncio

    async def agent(prompt: str) -> str:
        return "answer " + prompt[13:-1]

    async def go() -> None:
        todo = iter(range(n))

        async def worker() -> None:
            for i in todo:
                answer = await agent(f"What is item {i}?")
                expected = f"answer {i}"
                _ = expected.casefold() in answer.casefold()
                got, want = answer.lower().split(), expected.lower().split()
                _ = len(set(got) & set(want)) / max(len(got), 1)

        await asyncio.gather(*(worker() for _ in range(64)))

    t0 = time.perf_counter()
    asyncio.run(go())
    return n / (time.perf_counter() - t0)


def measure(path: Path, store: str | None, limit: bool) -> dict[str, float]:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--no-store", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--store", help=argparse.SUPPRESS)
    ap.add_argument("--limit", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.store, args.limit)
        return
    print(f"{os.cpu_count()} CPUs; each size in a fresh process; async agent, ExactMatch + PartialMatch")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"dataset-{n}.json"
            write_dataset(path, n)
            base = bare(n)
            r = measure(path, None, limit=n >= 1_000_000)
            limited = " (under RLIMIT_AS 6 GB)" if n >= 1_000_000 else ""
            print(
                f"{n:>9,} cases: load {r['load_s']:5.1f} s  run {r['run_s']:6.1f} s  {r['rate']:8,.0f} case runs/s "
                f"(bare loop {base:9,.0f}/s, evalnb {base / r['rate']:4.1f}x its cost)  "
                f"peak RSS {r['peak_mb']:6,.0f} MB{limited}"
            )
            if not args.no_store:
                db = f"sqlite:///{Path(tmp) / f'store-{n}.db'}"
                s = measure(path, db, limit=False)
                print(
                    f"{'':>9}  with store=: run + streamed save {s['run_s']:6.1f} s ({s['rate']:8,.0f}/s)  "
                    f"Store.load {s['store_load_s']:5.1f} s  trend {s['trend_s']:5.2f} s  "
                    f"peak RSS {s['peak_mb']:6,.0f} MB"
                )
            path.unlink()


if __name__ == "__main__":
    main()
