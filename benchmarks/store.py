"""Store benchmark: save many versions of a large result, then time trend() and load().

    python benchmarks/store.py                 # 100 versions of 2,000 cases x 3 runs x 5 checks
    python benchmarks/store.py --versions 10 --cases 200   # a quick run
    python benchmarks/store.py --db postgresql+psycopg://user@host/db   # an empty PostgreSQL database
    python benchmarks/store.py --sizes 10000 100000 1000000   # one run of N cases: save, load, summary

Aim: trend() over all versions under 0.5 s.

``--sizes``: per size, N dataset items each with its own evaluators (ExactMatch and PartialMatch; a quarter of
the answers fail), an instant async agent, concurrency 64, each step in a fresh process (peak RSS is per
process): the run without a store and with ``store=`` (SQLite; the difference is what the streamed save adds;
the CPU time of the whole process beside it, what a shared machine does not blur),
then ``Store.load`` of the run, ``store.load(v, where={"passed": False})`` (the failures alone) and
``store.summary(v)``, each with its peak RSS; then a second version is saved and ``store.compare`` of the two
and ``store.trend`` are timed. Aims at 1M: the save adds <= 15 s, load <= 10 s and <= 2 GB, summary < 1 s,
compare and trend in seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import _fresh as fresh  # benchmarks/_fresh.py: this script's folder is on the path
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalnb.results import Result
from evalnb.results._frames import MISMATCH_COLUMNS, RUNS_COLUMNS, SCORES_COLUMNS, make_frame
from evalnb.store import Store
from evalnb.suite import Case, ExactMatchCheck, PartialMatchCheck, RegexCheck, Suite, Turn

CHECKS = [
    RegexCheck(on="result", pattern="a"),
    RegexCheck(on="result", pattern="b"),
    ExactMatchCheck(),
    PartialMatchCheck(),
    RegexCheck(on="stdout", pattern="c"),
]


def build(cases: int, runs: int, seed: int) -> Result:
    """A synthetic result with the documented frame shapes (no agent calls: this measures the store)."""
    rng = np.random.default_rng(seed)
    suite = Suite(
        name="bench-suite",
        format="tasks-toml",
        cases=[
            Case(
                id=f"case-{i:05d}",
                name=f"case {i}",
                category=f"cat{i % 7}",
                runs=runs,
                turns=[Turn(prompt=f"prompt {i}", expected="a b", checks=list(CHECKS))],
            )
            for i in range(cases)
        ],
    )
    ids = Turn(prompt="x", checks=list(CHECKS)).check_ids()
    run_rows, score_rows = [], []
    p = rng.uniform(0.5, 1.0, cases)
    for c in range(cases):
        for r in range(runs):
            base = {
                "suite": suite.name,
                "case_id": f"case-{c:05d}",
                "case_name": f"case {c}",
                "category": f"cat{c % 7}",
                "run": r,
                "turn": 0,
            }
            run_rows.append(
                {
                    **base,
                    "prompt": f"prompt {c}",
                    "expected": "a b",
                    "response": "a b c",
                    "status": "passed",
                    "latency_ms": float(rng.gamma(2.0, 200.0)),
                    "model": "m",
                    "agent": "bench",
                    "prompt_tokens": 20,
                    "completion_tokens": 40,
                }
            )
            for spec, cid in zip(CHECKS, ids, strict=False):
                ok = bool(rng.random() < p[c])
                score_rows.append(
                    {
                        **base,
                        "check": spec.name,
                        "check_id": cid,
                        "value": float(ok),
                        "passed": ok,
                        "status": "passed" if ok else "failed",
                        "reason": "ok" if ok else "no match",
                        "options": "{}",
                    }
                )
    return Result(
        suite=suite,
        runs=make_frame(run_rows, RUNS_COLUMNS),
        scores=make_frame(score_rows, SCORES_COLUMNS),
        mismatches=make_frame([], MISMATCH_COLUMNS),
        meta={"agent": "bench", "model": "m", "started_at": "2026-01-01T00:00:00+00:00"},
    )


def write_dataset(path: Path, n: int) -> None:
    """N items, each with its own evaluators (as suites converted from other tools write them)."""
    items = [
        {
            "testId": f"q{i}",
            "prompt": f"What is item {i}?",
            "expected_response": f"answer {i}",
            "evaluators": {"ExactMatch": {}, "PartialMatch": {}},
            "evaluators_mode": "replace",
        }
        for i in range(n)
    ]
    path.write_text(json.dumps({"schemaVersion": "1.1.0", "items": items}))


def scale_child(step: str, dataset: str, db: str) -> None:
    """One step of ``--sizes`` in this process; prints one JSON line."""
    import evalnb

    out: dict[str, float] = {}
    if step in ("run", "run-store", "run-store-v2"):

        async def agent(prompt: str) -> str:
            i = int(prompt[13:-1])
            return f"answer {i}" if i % 4 else "something else"  # a quarter fail

        suite = evalnb.load(dataset)
        t0, c0 = time.perf_counter(), time.process_time()
        store = db if step.startswith("run-store") else None
        version = ("v2" if step.endswith("v2") else "v1") if store else None
        evalnb.run(suite, agent, concurrency=64, progress=False, store=store, version=version)
        out["s"], out["cpu"] = time.perf_counter() - t0, time.process_time() - c0
    else:
        import pandas  # noqa: F401 (imported as a notebook has it: the step times the store alone)

        store = Store(db, create=False)
        t0, c0 = time.perf_counter(), time.process_time()
        if step == "load":
            out["rows"] = len(store.load("v1").scores)
        elif step == "failures":
            out["rows"] = len(store.load("v1", where={"passed": False}).scores)
        elif step == "compare":
            out["rows"] = len(store.compare("v1", "v2").checks)
        elif step == "trend":
            out["rows"] = len(store.trend(store.suites()[0]))
        else:
            out["rows"] = len(store.summary("v1").checks)
        out["s"], out["cpu"] = time.perf_counter() - t0, time.process_time() - c0
    out["peak_mb"] = fresh.peak_mb()
    print(json.dumps(out))


def _step(step: str, dataset: Path, db: Path) -> dict[str, float]:
    return fresh.step(__file__, step, dataset, db)


def scale(sizes: list[int]) -> None:
    """``--sizes``: the store at one run of N cases (see the module docstring)."""
    print("each step in a fresh process; N items with their own evaluators, a quarter failing, SQLite")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            dataset, db = Path(tmp) / f"dataset-{n}.json", Path(tmp) / f"store-{n}.db"
            write_dataset(dataset, n)
            bare, streamed = _step("run", dataset, db), _step("run-store", dataset, db)
            load = _step("load", dataset, db)
            try:
                failures, summary = _step("failures", dataset, db), _step("summary", dataset, db)
            except SystemExit:  # an evalnb without lazy loads and summary rows, measured for comparison
                failures = summary = dict.fromkeys(("s", "cpu", "rows", "peak_mb"), float("nan"))
            _step("run-store-v2", dataset, db)
            cmp, trend = _step("compare", dataset, db), _step("trend", dataset, db)
            print(
                f"{n:>9,} cases: run {bare['s']:6.1f} s, with store= {streamed['s']:6.1f} s "
                f"(the save adds {streamed['s'] - bare['s']:5.1f} s; CPU {bare['cpu']:.1f} -> {streamed['cpu']:.1f} s)  "
                f"Store.load {load['s']:6.1f} s (CPU {load['cpu']:.1f} s, peak {load['peak_mb']:6,.0f} MB)  "
                f"failures {failures['s']:6.1f} s ({failures['rows']:,.0f} rows, peak {failures['peak_mb']:6,.0f} MB)  "
                f"summary {summary['s']:6.3f} s  database {db.stat().st_size / 1e6:,.0f} MB  "
                f"a second version saved: store.compare {cmp['s']:6.1f} s (peak {cmp['peak_mb']:6,.0f} MB)  "
                f"store.trend {trend['s']:6.3f} s",
                flush=True,
            )
            dataset.unlink()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", type=int, default=100)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--db", default=None, help="SQLite file or SQLAlchemy URL (default: a temporary SQLite file)"
    )
    ap.add_argument("--sizes", type=int, nargs="*", help="one run of N cases per size (see above)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        scale_child(*args.child)
        return
    if args.sizes:
        scale(args.sizes)
        return

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "bench.db")
        store = Store(db)
        t0 = time.perf_counter()
        results = [build(args.cases, args.runs, seed) for seed in range(3)]
        print(f"built 3 results of {len(results[0].scores):,} scores in {time.perf_counter() - t0:.2f} s")
        saves = []
        for v in range(args.versions):
            t = time.perf_counter()
            store.save(results[v % 3], version=f"v{v:03d}")
            saves.append(time.perf_counter() - t)
        print(
            f"save: {args.versions} versions, mean {np.mean(saves):.3f} s, median {np.median(saves):.3f} s, "
            f"max {max(saves):.3f} s per version"
        )
        timings = []
        for _ in range(3):
            t = time.perf_counter()
            trend = store.trend("bench-suite")
            timings.append(time.perf_counter() - t)
        print(f"trend: {len(trend)} rows over {args.versions} versions in {min(timings):.3f} s (best of 3)")
        t = time.perf_counter()
        loaded = store.load(f"v{args.versions - 1:03d}")
        print(
            f"load: {len(loaded.scores):,} scores + {len(loaded.runs):,} runs in {time.perf_counter() - t:.3f} s"
        )
        t = time.perf_counter()
        store.compare("v000", "v001")
        print(
            f"store.compare (the two runs' stored sums, then the comparison): {time.perf_counter() - t:.3f} s"
        )
        if store.is_sqlite:
            print(f"database size: {Path(str(store.url.database)).stat().st_size / 1e6:.0f} MB")
        store.engine.dispose()


if __name__ == "__main__":
    main()
