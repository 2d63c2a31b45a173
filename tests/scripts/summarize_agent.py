"""A command-line agent for the TOML example suite: writes ``output/summary.txt`` and prints a summary.

The prompt arrives on stdin. The summary is three sentences so that a judge can call it coherent.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> int:
    prompt = sys.stdin.read().strip()
    words = len(prompt.split())
    summary = (
        f"This is a summary of a text of {words} words. It keeps the main point of the source. It ends here."
    )
    out = Path("output")
    out.mkdir(exist_ok=True)
    (out / "summary.txt").write_text(summary + "\n", encoding="utf-8")
    print("reading the text")
    print(f"summary: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
