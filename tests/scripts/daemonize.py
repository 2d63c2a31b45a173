"""A program that leaves a daemon behind: a double fork with ``setsid``, so the daemon is in another session and
process group than the program, and its parent is gone. The daemon writes its pid to the file given as the
first argument, ignores SIGTERM (so that only SIGKILL ends it) and sleeps; the program waits for the pid file,
prints an answer and exits 0.

Used to check that a Command's call ends what the program started even when it left the process group.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path


def main() -> None:
    pidfile = Path(sys.argv[1])
    if os.fork() == 0:
        os.setsid()  # a new session: out of the program's process group
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            pidfile.write_text(f"{os.getpid()}\n", encoding="utf-8")
            os.close(1)  # does not hold the program's stdout open (a daemon's manners)
            time.sleep(600)
        os._exit(0)
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    print("summary: done", flush=True)


if __name__ == "__main__":
    main()
