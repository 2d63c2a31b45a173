"""Comparison benchmark: ``store.compare`` of two stored versions of N cases, against the whole-load path.

    python benchmarks/compare.py                         # 10,000 and 100,000 cases
    python benchmarks/compare.py --sizes 1000000         # 1M cases (minutes to build and save, GBs)
    python benchmarks/compare.py --sizes 10000 --baseline-src /path/to/older/evalnb   # an older evalnb too

Per size: two synthetic results of N cases x 2 runs x 4 checks (a regex, ExactMatch, PartialMatch and a judged
1-5 Relevance with probability-weighted scores; answers, prompts and outputs in every run row; prices and
latencies) are saved in a temporary SQLite store as ``v1`` and ``v2``. Then, each in a fresh process (peak
RSS is per process):

* ``whole``: the path ``store.compare`` had, ``evalnb.compare(store.load("v1"), store.load("v2"))``: both runs
  read whole (every frame and column), then compared;
* ``store``: ``store.compare("v1", "v2")``: only the columns the comparison reads;
* with ``--baseline-src``: ``store.compare`` of the evalnb found in that folder (an older checkout).

Each prints wall time, CPU time and peak RSS, and whether the two comparisons' frames are equal. The machine
the figures come from is said beside them: a shared one blurs wall times (CPU time less so).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _fresh as fresh  # benchmarks/_fresh.py: this script's folder is on the path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 2


def build(cases: int, seed: int) -> Any:
    """A synthetic Result of ``cases`` cases x ``RUNS`` runs x 4 checks, built column-wise (no agent calls)."""
    import numpy as np
    import pandas as pd

    from evalnb.results import Result
    from evalnb.suite import Case, Suite, Turn

    rng = np.random.default_rng(seed)
    ids = np.array([f"case-{i:07d}" for i in range(cases)], dtype=object)
    suite = Suite(
        name="compare-bench",
        format="tasks-toml",
        cases=[
            Case(id=c, name=c, category=f"cat{i % 7}", runs=RUNS, turns=[Turn(prompt=c)])
            for i, c in enumerate(ids)
        ],
    )
    n = cases * RUNS
    case = np.repeat(np.arange(cases), RUNS)
    run = np.tile(np.arange(RUNS), cases)
    common = {
        "suite": "compare-bench",
        "case_id": ids[case],
        "case_name": ids[case],
        "category": np.array([f"cat{i % 7}" for i in range(7)], dtype=object)[case % 7],
        "run": run,
        "turn": np.zeros(n, dtype=np.int64),
    }
    runs = pd.DataFrame(
        {
            **common,
            "prompt": ids[case],
            "expected": "the expected answer of this case, a sentence or two long",
            "response": [f"an answer of some length, as agents give them: {x:.6f}" for x in rng.random(n)],
            "stdout": "",
            "status": "passed",
            "latency_ms": rng.gamma(2.0, 200.0 + 10 * seed, n),
            "model": "m",
            "agent": "bench",
            "prompt_tokens": 120,
            "completion_tokens": 40,
            "cost": 0.0004 + 0.00001 * seed,
        }
    )
    p = rng.uniform(0.5, 1.0, cases)[case] - 0.02 * seed
    level = np.clip(np.round(rng.normal(3.5 - 0.1 * seed, 1.0, n)), 1, 5)
    checks = {
        "regex": (rng.random(n) < p).astype(float),
        "ExactMatch": (rng.random(n) < p).astype(float),
        "PartialMatch": np.clip(p + rng.normal(0, 0.1, n), 0, 1),
        "Relevance": level,
    }
    parts = []
    for name, value in checks.items():
        judged = name == "Relevance"
        passed = value >= (3 if judged else 0.5)
        parts.append(
            pd.DataFrame(
                {
                    **common,
                    "check": name,
                    "check_id": name,
                    "value": value,
                    "passed": passed,
                    "status": np.where(passed, "passed", "failed"),
                    "reason": np.where(passed, "ok", "did not match the expected answer"),
                    "judge": "judge-model" if judged else None,
                    "options": "{}",
                    "prompt_tokens": 300 if judged else None,
                    "completion_tokens": 5 if judged else None,
                    "cost": 0.0001 if judged else None,
                    "weighted": np.clip(value + rng.normal(0, 0.3, n), 1, 5) if judged else np.nan,
                    "spread": rng.uniform(0.1, 0.8, n) if judged else np.nan,
                    "judge_model": "judge-model" if judged else None,
                }
            )
        )
    scores = pd.concat(parts, ignore_index=True)
    # a Result's rows are in case, run, turn order: each case run's checks together
    order = np.lexsort((np.repeat(np.arange(len(checks)), n), scores["run"], np.tile(case, len(checks))))
    scores = scores.iloc[order].reset_index(drop=True)
    meta = {"agent": "bench", "model": "m", "started_at": "2026-01-01T00:00:00+00:00"}
    return Result.from_frames(suite=suite, runs=runs, scores=scores, meta=meta)


def child(step: str, db: str, src: str) -> None:
    """One step in this process; prints one JSON line (and writes the comparison's frames for the check)."""
    sys.path.insert(0, src)
    import pandas  # noqa: F401 (imported as a notebook has it: the step times the comparison alone)

    import evalnb

    store = evalnb.Store(db, create=False)
    t0, c0 = time.perf_counter(), time.process_time()
    if step == "whole":
        cmp = evalnb.compare(store.load("v1"), store.load("v2"), labels=("v1", "v2"))
    else:
        cmp = store.compare("v1", "v2")
    out = {"s": time.perf_counter() - t0, "cpu": time.process_time() - c0, "peak_mb": fresh.peak_mb()}
    cmp.checks.to_pickle(f"{db}.{step}.checks.pkl")
    cmp.cases.to_pickle(f"{db}.{step}.cases.pkl")
    print(json.dumps(out))


def _step(step: str, db: Path, src: Path) -> dict[str, float]:
    return fresh.step(__file__, step, db, src)


def _equal(db: Path, x: str, y: str) -> bool:
    import pandas as pd

    try:
        for part in ("checks", "cases"):
            pd.testing.assert_frame_equal(
                pd.read_pickle(f"{db}.{x}.{part}.pkl"),
                pd.read_pickle(f"{db}.{y}.{part}.pkl"),
                check_exact=True,
            )
    except AssertionError:
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--baseline-src", type=Path, help="also time store.compare of the evalnb in this folder")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    sys.path.insert(0, str(ROOT))
    from evalnb.store import Store

    print(f"N cases x {RUNS} runs x 4 checks, SQLite; each step in a fresh process")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            db = Path(tmp) / f"compare-{n}.db"
            t0 = time.perf_counter()
            store = Store(db)
            for seed, version in enumerate(("v1", "v2")):
                store.save(build(n, seed), version=version)
            store.engine.dispose()
            made = time.perf_counter() - t0
            whole, lean = _step("whole", db, ROOT), _step("store", db, ROOT)
            line = (
                f"{n:>9,} cases (built and saved in {made:.0f} s): "
                f"whole loads + compare {whole['s']:6.1f} s (CPU {whole['cpu']:.1f} s, peak {whole['peak_mb']:6,.0f} MB)  "
                f"store.compare {lean['s']:6.1f} s (CPU {lean['cpu']:.1f} s, peak {lean['peak_mb']:6,.0f} MB)  "
                f"same frames: {_equal(db, 'whole', 'store')}"
            )
            if args.baseline_src:
                old = _step("old", db, args.baseline_src.resolve())
                line += (
                    f"  baseline store.compare {old['s']:6.1f} s (CPU {old['cpu']:.1f} s, peak {old['peak_mb']:6,.0f} MB, "
                    f"same frames: {_equal(db, 'old', 'store')})"
                )
            print(line, flush=True)
            db.unlink()


if __name__ == "__main__":
    main()
