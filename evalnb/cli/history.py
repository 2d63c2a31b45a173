"""``evalnb report``, ``compare``, ``trend``, ``runs`` and ``delete``: the run store."""

from __future__ import annotations

from pathlib import Path

import typer

from evalnb.cli.app import STORE_HELP, app, exits, fail
from evalnb.cli.run import CONFIDENCE_HELP, MARGIN_HELP, MISSING_HELP

__all__ = ["compare_command", "delete_command", "report_command", "runs_command", "trend_command"]


@app.command("report")
def report_command(
    run: str = typer.Argument(..., help="A stored run id or version label."),
    fmt: str = typer.Option("text", "--format", "-f", help="text, json, html or xlsx."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File for html/xlsx (json: also stdout)."
    ),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
    suite: str | None = typer.Option(None, "--suite", help="The suite, when a version is shared by suites."),
) -> None:
    """Report a stored run: the text report, JSON, or an HTML/Excel scorecard; exit 1 if the run had failures."""
    import evalnb

    if fmt not in ("text", "json", "html", "xlsx"):
        raise fail(f"--format must be text, json, html or xlsx, not {fmt!r}")
    with exits():
        result = evalnb.Store(store_url, create=False).load(run, suite=suite)
    if fmt == "text":
        typer.echo(result.report().rstrip("\n"))
    elif fmt == "json":
        text = result.to_json(output)
        typer.echo(text)
    else:
        from evalnb import export

        target = output or Path(f"{run}.{fmt}")
        export.write(result, target)
        typer.echo(f"Wrote {target}")
    raise typer.Exit(result.exit_code)


@app.command("compare")
def compare_command(
    a: str = typer.Argument(..., help="Baseline: a stored version label or run id."),
    b: str = typer.Argument(..., help="Candidate: a stored version label or run id."),
    margin: float = typer.Option(0.0, "--margin", help=MARGIN_HELP),
    confidence: float = typer.Option(0.95, "--confidence", help=CONFIDENCE_HELP),
    fail_on_missing: bool = typer.Option(False, "--fail-on-missing", help=MISSING_HELP),
    html_out: Path | None = typer.Option(None, "--html", help="Also write the comparison plots here."),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
    suite: str | None = typer.Option(None, "--suite", help="Only this suite (default: all both share)."),
) -> None:
    """Compare two stored versions, every suite they share; exit 1 when the gate finds a check worse, else 0."""
    import evalnb

    with exits():
        verdict = evalnb.Store(store_url, create=False).compare_all(
            a, b, suite=suite, margin=margin, confidence=confidence, fail_on_missing=fail_on_missing
        )
    typer.echo(verdict.report())
    if html_out is not None:
        verdict.write_html(html_out)
        typer.echo(f"Wrote {html_out}")
    raise typer.Exit(verdict.exit_code)


@app.command("trend")
def trend_command(
    suite: str = typer.Argument(..., help="The suite name."),
    html_out: Path | None = typer.Option(None, "--html", help="Also write the trend plot to this file."),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Per version and check: mean, pass rate and interval, latency and cost, in run order."""
    import evalnb

    with exits():
        frame = evalnb.Store(store_url, create=False).trend(
            suite
        )  # an unknown suite: exit 2 naming the suites there are
    if frame.empty:
        raise fail(f"no complete stored runs of suite {suite!r}")
    cols = [
        "order",
        "version",
        "check_id",
        "n",
        "mean",
        "ci_low",
        "ci_high",
        "pass_rate",
        "latency_ms",
        "cost",
    ]
    typer.echo(frame[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if html_out is not None:
        from evalnb import plots

        plots.trend(frame, suite).write_html(html_out, include_plotlyjs=True)
        typer.echo(f"Wrote {html_out}")


@app.command("runs")
def runs_command(
    suite: str | None = typer.Option(None, "--suite", help="Only the runs of this suite."),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """List the saved runs, oldest first: run id, suite, version, status, when, cases and pass rate."""
    import evalnb

    with exits():
        store = evalnb.Store(store_url, create=False)
        frame = store.runs(suite=suite)
        if frame.empty and suite is not None:
            raise store._unknown_suite(suite)
    if frame.empty:
        typer.echo(f"No saved runs in {store.where}.")
        return
    shown = frame.assign(
        when=frame["started_at"].fillna(frame["saved_at"]).str.slice(0, 16).str.replace("T", " "),
        pass_rate=frame["pass_rate"].map(lambda v: "" if v != v else f"{v:.0%}"),
        version=frame["version"].fillna(""),
    )[["run_id", "suite", "version", "status", "when", "cases", "passed_cases", "pass_rate"]]
    typer.echo(shown.rename(columns={"passed_cases": "passed"}).to_string(index=False))
    typer.echo(f"{len(frame)} run{'s' * (len(frame) != 1)} in {store.where} (times in UTC)")


@app.command("delete")
def delete_command(
    run: str = typer.Argument(..., help="A run id, or a version label (every run of that label)."),
    suite: str | None = typer.Option(None, "--suite", help="The suite, when a version is shared by suites."),
    all_suites: bool = typer.Option(
        False, "--all-suites", help="Delete a version shared by suites from all of them."
    ),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Delete a saved run (RUN_ID) or a version (VERSION) and their rows; exit 2 when nothing matches."""
    import evalnb

    with exits():
        store = evalnb.Store(store_url, create=False)
        saved = store.runs().set_index("run_id")
        deleted = store.delete(run, suite=suite, all_suites=all_suites)
    for run_id in deleted:
        version = saved.at[run_id, "version"]
        label = f", version {version}" if isinstance(version, str) else ""
        typer.echo(f"Deleted run {run_id} (suite {saved.at[run_id, 'suite']}{label})")
    typer.echo(f"{len(deleted)} run{'s' * (len(deleted) != 1)} deleted from {store.where}")
