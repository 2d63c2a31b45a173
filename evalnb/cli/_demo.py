"""``evalnb demo``: the three example suites against offline demo agents, two versions, compared."""

from __future__ import annotations

from pathlib import Path

import typer

from evalnb.cli._app import app, exits

__all__ = ["demo_command"]


@app.command("demo")
def demo_command(
    out: Path = typer.Option(Path(".evals"), "--out", help="Folder for the scorecard and working files."),
    store: str = typer.Option(
        None, "--store", help="Store path or SQLAlchemy URL (default: OUT/evalnb.db, i.e. .evals/evalnb.db)."
    ),
    plotlyjs: str = typer.Option(
        "inline",
        "--plotlyjs",
        help="The scorecard's plotly.js: inline (once, works offline), file (beside it), cdn, or a URL.",
    ),
) -> None:
    """Run the three example suites against offline demo agents, two versions, and compare them.

    No API key, server or network. Exits 0 when the demo ran (the previous version's failures are expected).
    """
    from evalnb.demo._main import run_demo

    with exits():
        run_demo(out=out, store=store, plotlyjs=plotlyjs)
