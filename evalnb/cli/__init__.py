"""The ``evalnb`` command line: one typer command per verb, each a thin layer over the public API.

``app`` (:mod:`~evalnb.cli._app`) and its commands by area: :mod:`~evalnb.cli._run` (``run``),
:mod:`~evalnb.cli._suites` (``validate``, ``init``, ``upgrade``, ``schema``), :mod:`~evalnb.cli._history`
(``report``, ``compare``, ``trend``), :mod:`~evalnb.cli._pairwise` (``pairwise``), :mod:`~evalnb.cli._demo`
(``demo``). A command parses its options, calls the
public API, prints, and sets the exit code; no logic lives only here.

Exit codes (api contract): 0 all passed, 1 a check failed or a case was degraded, 2 the run could not start.
"""

from __future__ import annotations

# Each module registers its commands on the app; the order here is the order of `evalnb --help`.
# isort: off
from evalnb._lazy import homes
from evalnb.cli import _run, _suites, _history, _pairwise, _demo

# isort: on
from evalnb.cli._app import app, expand_greedy

__all__ = ["app", "main"]

_COMMANDS = (_run, _suites, _history, _pairwise, _demo)


def main() -> None:
    """Entry point of the ``evalnb`` script and of ``python -m evalnb``."""
    import sys

    app(args=expand_greedy(sys.argv[1:]), prog_name="evalnb")


homes(__name__, globals(), __all__)  # reprs and docs name the public path
