"""The sequential gate beside the fixed one, by seeded simulation: false alarms, power and the cases each runs.

Per-case pass probabilities from a U-shaped Beta(0.5, 0.5), 400 cases, one run per case, a look after every
batch of 20 cases (5% of the suite); the scenarios and the gates are those of
``tests/comparison/test_sequential_simulation.py`` (the test runs fewer trials).

    python benchmarks/sequential.py [--trials 10000] [--fixed-trials 2000] [--seed 2029]

Prints the table docs/comparison.md shows (Markdown).
"""

from __future__ import annotations

import argparse
import os
import sys

# Run as a script, this folder comes first on sys.path, and its http.py would shadow the standard library's
# http package: drop the folder, put the repository root there instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

from tests.comparison.test_sequential_simulation import table  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--trials", type=int, default=10_000, help="trials of the sequential gate per scenario"
    )
    parser.add_argument(
        "--fixed-trials", type=int, default=2_000, help="trials of the fixed gate per scenario"
    )
    parser.add_argument("--seed", type=int, default=2029)
    args = parser.parse_args()
    rows = table(args.trials, args.fixed_trials, args.seed)
    print("| 400 cases x 1 run, U-shaped pass probabilities | sequential gate | cases run (mean) | fixed gate "
          "| cases run |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['scenario']} | {r['sequential']:.1%} | {r['sequential_cases']:.0%} | {r['fixed']:.1%} "
            f"| {r['fixed_cases']:.0%} |"
        )
    print(
        f"\n{args.trials:,} trials of the sequential gate, {args.fixed_trials:,} of the fixed gate, seed {args.seed}"
    )


if __name__ == "__main__":
    main()
