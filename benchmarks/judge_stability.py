"""How steady a model judge's score is from run to run: the plain score against the probability-weighted one.

The local OpenAI-compatible test server plays an unsteady judge (tests/support/judge_stability.py): for each
case it has a score distribution, perturbs it a little on every call, writes a score sampled from it and
returns the distribution as the answer's logprobs. Each case is judged 20 times through ``OpenAIJudge``.

    python benchmarks/judge_stability.py [--runs 20] [--seed 17] [--png docs/images/judge-stability.png]

Prints, per case, the run-to-run SD of the plain and of the weighted score and their ratio, and writes the
figure the README shows (PNG through kaleido and the system Chromium).
"""

from __future__ import annotations

import argparse
import os
import sys

# Run as a script, this folder comes first on sys.path, and its http.py would shadow the standard library's
# http package for aiohttp: drop the folder, put the repository root there instead.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
sys.path.insert(0, os.path.dirname(_HERE))

from tests.support.judge_stability import install, simulate, stability, stability_figure  # noqa: E402
from tests.support.openai_server import OpenAIServer  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--jitter", type=float, default=0.3, help="SD of the noise on the judge's logits")
    parser.add_argument("--png", default=None, help="write the figure here")
    args = parser.parse_args()
    with OpenAIServer() as server:
        install(server, seed=args.seed, jitter=args.jitter)
        result = simulate(server.base_url, runs=args.runs)
    table = stability(result)
    print(table.round(3).to_string(index=False))
    plain, weighted = table["sd_plain"].mean(), table["sd_weighted"].mean()
    print(f"mean SD over runs: plain {plain:.3f}, weighted {weighted:.3f}, ratio {weighted / plain:.3f}")
    if args.png:
        stability_figure(result).write_image(args.png, scale=1)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
