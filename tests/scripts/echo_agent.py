"""A tiny command-line agent for the tests: echoes its prompt and behaves as its options say.

    python echo_agent.py [--arg PROMPT] [--env NAME] [--exit N] [--json] [--file PATH] [--show-env NAME ...]

The prompt is read from ``--arg``, else from the variable named by ``--env``, else from stdin.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arg")
    parser.add_argument("--env")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--file")
    parser.add_argument("--show-env", nargs="*", default=[])
    parser.add_argument("--stderr", default="")
    args = parser.parse_args()

    if args.arg is not None:
        prompt = args.arg
    elif args.env:
        prompt = os.environ.get(args.env, "<unset>")
    else:
        prompt = sys.stdin.read()

    print("thinking...")
    for name in args.show_env:
        print(f"env {name}={os.environ.get(name, '<unset>')}")
    if args.stderr:
        print(args.stderr, file=sys.stderr)
    if args.file:
        path = Path(args.file)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file says: {prompt}", encoding="utf-8")
    if args.json:
        print(json.dumps({"answer": f"echo: {prompt}", "meta": {"n": len(prompt)}}))
    else:
        print(f"echo: {prompt}")
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
