"""A seeded command-line agent for the cluster tests and benchmarks: the same answer for the same case and run.

    python seeded_agent.py CASE RUN [--burn MS] [--sleep S] [--log FILE]

It answers the JSON line ``{"answer": ..., "node": ...}``: the answer is the case's expected digit for about 70%
of (case, run) pairs and a wrong one otherwise (seeded by case and run, so every executor sees the same
answers); ``node`` is the Ray raylet of the worker that started it (``RAY_RAYLET_PID``, passed on with
``pass_env``), null outside a cluster. ``--burn`` spends that many milliseconds of CPU, ``--sleep`` waits,
``--log`` appends ``CASE RUN NODE`` to a file (one line per call, even for calls whose answer is lost).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("case")
    parser.add_argument("run", type=int)
    parser.add_argument("--burn", type=float, default=0.0)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--log")
    args = parser.parse_args()
    node = os.environ.get("RAY_RAYLET_PID")
    if args.log:
        with open(args.log, "a", encoding="utf-8") as fh:
            fh.write(f"{args.case} {args.run} {node}\n")
    if args.burn:
        end = time.process_time() + args.burn / 1000.0
        x = 0
        while time.process_time() < end:
            x += 1
    if args.sleep:
        time.sleep(args.sleep)
    rng = random.Random(f"{args.case}:{args.run}")
    digit = int(args.case.rsplit("-", 1)[-1]) % 10
    answer = str(digit) if rng.random() < 0.7 else str((digit + 1 + rng.randrange(9)) % 10)
    print(json.dumps({"answer": answer, "node": node}))


if __name__ == "__main__":
    main()
