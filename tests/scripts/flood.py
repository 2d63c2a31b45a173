"""Writes a given number of bytes to stdout (a flood), then a last line, then exits 0."""

from __future__ import annotations

import sys


def main() -> None:
    total = int(sys.argv[1])
    line = b"x" * 1023 + b"\n"
    out = sys.stdout.buffer
    written = 0
    while written < total:
        out.write(line)
        written += len(line)
    out.write(b"done\n")
    out.flush()


if __name__ == "__main__":
    main()
