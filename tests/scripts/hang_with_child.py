"""A program that starts a child and then hangs; both pids are written to the file given as argument.

Used to check that a timeout kills the whole process group, children included. SIGTERM is ignored by the
parent so that the SIGKILL escalation is exercised too.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    Path(sys.argv[1]).write_text(f"{child.pid}\n", encoding="utf-8")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("started", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
