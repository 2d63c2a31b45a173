"""``evalnb validate``, ``init``, ``upgrade`` and ``schema``: suite files without running them."""

from __future__ import annotations

from pathlib import Path

import typer

from evalnb.cli._app import STARTER_ASK, app, ask_yes, exits, fail

__all__ = ["init_command", "schema_command", "upgrade_command", "validate_command"]


@app.command("validate")
def validate_command(
    paths: list[Path] = typer.Argument(
        ..., help="Suite files, or folders of them (TOML, YAML, JSON, CSV, JSONL, promptfoo configs)."
    ),
    unsupported: str = typer.Option(
        "error",
        "--unsupported",
        help="error or skip: what a suite asks for that evalnb cannot run (a promptfoo javascript assert).",
    ),
) -> None:
    """Check suites without running them: `path:location: CODE message` per error; exit 0 valid, 2 not."""
    import warnings

    import evalnb
    from evalnb import formats
    from evalnb.errors import SuiteWarning

    files: list[Path] = []
    bad = 0
    for path in paths:
        if path.is_dir():
            found = formats.suffix_files(path)
            if not found:
                # An empty folder is not a valid suite: say so rather than exit 2 with no output.
                bad += 1
                typer.echo(f"{path}: no suite files ({', '.join(formats.suffixes())}) in this folder")
            files += found
        else:
            files.append(path)
    for path in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SuiteWarning)  # printed below, on the suite's line
                suite = evalnb.load(path, unsupported=unsupported)
        except evalnb.SuiteError as exc:
            bad += 1
            for err in exc.errors:  # every error of the file, in document order
                where = f"{path}:{err.location}" if err.location else str(path)
                typer.echo(f"{where}: {err.code} {err.message}")
            continue
        typer.echo(f"{path}: OK ({suite.format}, {len(suite.cases)} cases)")
        for line in suite.warnings:
            typer.echo(f"{path}: warning: {line}")
    raise typer.Exit(2 if bad or not files else 0)


@app.command("init")
def init_command(
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask; create the starter file."),
    path: Path = typer.Option(Path("evals") / "evals.json", "--path", help="Where to write the starter."),
) -> None:
    """Write a starter dataset (./evals/evals.json) with sample prompts."""
    import sys

    from evalnb.formats import write_starter

    if path.exists():
        typer.echo(f"{path} already exists; left unchanged")
        raise typer.Exit(0)
    if not yes and sys.stdin.isatty() and not ask_yes(STARTER_ASK):  # dataset spec: ask first on a terminal
        typer.echo("nothing written")
        raise typer.Exit(0)
    try:
        typer.echo(f"Created {write_starter(path)}")
    except ValueError as exc:  # a --path whose format has no starter document
        raise fail(str(exc)) from exc


@app.command("upgrade")
def upgrade_command(path: Path = typer.Argument(..., help="A legacy JSON dataset.")) -> None:
    """Rewrite a legacy JSON dataset in the versioned form, after a byte-identical backup."""
    import evalnb

    with exits():
        backup = evalnb.upgrade(path)
    if backup is None:
        typer.echo(f"{path} is already versioned; nothing changed")
    else:
        typer.echo(f"Upgraded {path}; backup: {backup}")


@app.command("schema")
def schema_command(
    format: str = typer.Argument(..., help="tasks-toml, cube-yaml, dataset-json, table-csv or table-jsonl."),
) -> None:
    """Print a JSON Schema of a suite format, for editors."""
    import json

    from evalnb import formats

    if formats.get(format) is None:
        raise fail(f"unknown format {format!r}; expected one of {', '.join(formats.names())}")
    typer.echo(json.dumps(formats.json_schema(format), indent=2))
