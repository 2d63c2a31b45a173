"""The ``evalnb`` command line: one typer command per verb, each a thin layer over the public API.

Exit codes (api contract): 0 all passed, 1 a check failed or a case was degraded, 2 the run could not start.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="evalnb",
    help="Evaluate LLM agents: load TOML, YAML and JSON suites, run them, compare versions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def main() -> None:
    """Entry point of the ``evalnb`` script and of ``python -m evalnb``."""
    app()


if __name__ == "__main__":
    main()
