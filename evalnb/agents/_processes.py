"""Ending everything a command started: its process group, and the processes that left it.

A program run by :class:`~evalnb.agents.Command` starts in a process group of its own, and ending the group ends
its children. A child that calls ``setsid`` (a daemon, ``setsid sleep 600 &``, a double fork) leaves the group
and would outlive the run. So every call marks the processes it starts: the program gets an environment
variable holding a token of that call (:data:`MARK`), which every process it starts inherits. When the call
ends, the processes carrying the token are found through ``/proc`` and ended with the group (the idea of
Jenkins' process tree killer). A process that clears its environment on purpose escapes this; so does one on a
system without ``/proc`` (there only the group is ended).

Example::

    tree = Tree.start()                   # before the program starts: its token and the clock
    env[MARK] = tree.token
    ...
    tree.strays()                         # the marked processes still alive, whatever group they are in
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["MARK", "Tree", "signal_all"]

MARK = "EVALNB_CALL_TOKEN"
"""The environment variable that marks the processes one Command call started."""

_PROC = "/proc"


def _start_time(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (``/proc/PID/stat`` field 22), or None when it is gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
    rest = stat[stat.rfind(b")") + 2 :].split()
    try:
        if rest[0] == b"Z":  # a zombie has ended; it only waits to be reaped
            return None
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def _now_ticks() -> int:
    """The clock of ``/proc/PID/stat`` start times now (clock ticks since boot), a tick early; 0 without it."""
    try:
        with open(f"{_PROC}/uptime", "rb") as fh:
            uptime = float(fh.read().split()[0])
        return max(0, int(uptime * os.sysconf("SC_CLK_TCK")) - 1)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


@dataclass
class Tree:
    """The processes of one call: found by the token in their environment (see the module docstring).

    Attributes:
        token: the value of :data:`MARK` the program is given.
        since: the clock (in ticks since boot) before the program started: older processes are never its own.
        seen: ``pid -> start time`` of every marked process found so far (a pid reused later is not ours).
    """

    token: str
    since: int
    seen: dict[int, int] = field(default_factory=dict)

    @classmethod
    def start(cls) -> Tree:
        return cls(token=secrets.token_hex(16), since=_now_ticks())

    @property
    def supported(self) -> bool:
        return os.path.isdir(_PROC) and os.name == "posix"

    def strays(self) -> dict[int, int]:
        """The marked processes alive now, ``pid -> start time`` (empty without ``/proc``)."""
        if not self.supported:
            return {}
        want = f"{MARK}={self.token}".encode()
        me = os.getpid()
        found: dict[int, int] = {}
        try:
            names = os.listdir(_PROC)
        except OSError:
            return {}
        for name in names:
            if not name.isdigit() or int(name) == me:
                continue
            pid = int(name)
            started = _start_time(pid)
            if started is None or started < self.since:
                continue  # gone, a zombie, or older than the call
            try:
                with open(f"{_PROC}/{pid}/environ", "rb") as fh:
                    env = fh.read()
            except OSError:
                continue  # another user's process, or gone meanwhile
            if want in env.split(b"\0"):
                found[pid] = started
        self.seen.update(found)
        return found

    def alive(self) -> dict[int, int]:
        """The processes found so far (and any new marked ones) that still run as themselves."""
        alive = {pid: t for pid, t in self.seen.items() if _start_time(pid) == t}
        alive.update(self.strays())
        return alive


def signal_all(pids: Iterable[int], sig: signal.Signals, tree: Tree) -> None:
    """Send ``sig`` to each pid that is still the process ``tree`` found (not a later process given its pid)."""
    for pid in pids:
        if _start_time(pid) == tree.seen.get(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
