"""Writes bytes that are not valid UTF-8 to stdout and stderr."""

from __future__ import annotations

import sys

sys.stdout.buffer.write(b"caf\xe9 \xff\xfe ok\n")
sys.stderr.buffer.write(b"warn \xc3\x28\n")
sys.stdout.buffer.flush()
