"""The ``evalnb`` command line: one typer command per verb, each a thin layer over the public API.

``app`` (:mod:`~evalnb.cli.app`) and its commands by area: :mod:`~evalnb.cli.run` (``run``),
:mod:`~evalnb.cli.suites` (``validate``, ``init``, ``upgrade``, ``schema``), :mod:`~evalnb.cli.history`
(``report``, ``compare``, ``trend``), :mod:`~evalnb.cli.pairwise` (``pairwise``), :mod:`~evalnb.cli.demo`
(``demo``). A command parses its options, calls the
public API, prints, and sets the exit code; no logic lives only here.

Exit codes (api contract): 0 all passed, 1 a check failed or a case was degraded, 2 the run could not start.
"""

from __future__ import annotations

# Each module registers its commands on the app; the order here is the order of `evalnb --help`.
# isort: off
from evalnb.cli import run, suites, history, pairwise, demo

# isort: on
from evalnb.cli.app import app, expand_greedy

__all__ = ["app", "expand_greedy", "main"]

_COMMANDS = (run, suites, history, pairwise, demo)


def main() -> None:
    """Entry point of the ``evalnb`` script and of ``python -m evalnb``."""
    import sys

    app(args=expand_greedy(sys.argv[1:]), prog_name="evalnb")
