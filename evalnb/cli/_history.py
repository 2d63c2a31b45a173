"""``evalnb report``, ``compare``, ``trend``, ``runs`` and ``delete``: the run store."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import typer

from evalnb.cli._app import STORE_HELP, app, exits, fail
from evalnb.cli._run import CONFIDENCE_HELP, DEGRADED_HELP, MARGIN_HELP, MISSING_HELP

__all__ = ["compare_command", "delete_command", "report_command", "runs_command", "trend_command"]


_REPORT_SUFFIXES = {
    "text": (".txt", ".md", ".log"),
    "json": (".json",),
    "html": (".html", ".htm"),
    "xlsx": (".xlsx",),
}


@app.command("report")
def report_command(
    run: str = typer.Argument(..., help="A stored run id or version label."),
    fmt: str | None = typer.Option(
        None, "--format", "-f", help="text, json, html or xlsx (default: by the --output suffix, else text)."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the report to this file (html/xlsx: default RUN.html, RUN.xlsx)."
    ),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
    suite: str | None = typer.Option(
        None, "--suite", help="Only this suite, when a version is shared by suites."
    ),
    fail_on_failures: bool = typer.Option(
        False, "--fail-on-failures", help="Exit 1 when the run has failures, also when writing a file."
    ),
) -> None:
    """Report a stored run or version (each suite it has); printed, exit 1 on failures; to a file, exit 0."""
    import evalnb

    fmt, output = _report_target(run, fmt, output)
    with exits():
        results = _stored(evalnb.Store(store_url, create=False), run, suite)
        _emit_report(results, fmt, output)
    # printed, the report is the check: exit 1 on failures; written to a file, it is an export
    failed = max(r.exit_code for r in results)
    raise typer.Exit(failed if output is None or fail_on_failures else 0)


def _report_target(run: str, fmt: str | None, output: Path | None) -> tuple[str, Path | None]:
    """The report's format (given, else by the --output suffix, else text) and the file it goes to (html and
    xlsx: RUN.html, RUN.xlsx by default; a name without a suffix gets the format's)."""
    by_suffix = {x: k for k, xs in _REPORT_SUFFIXES.items() for x in xs}
    fmt = fmt or (by_suffix.get(output.suffix.lower()) if output is not None else None) or "text"
    if fmt not in _REPORT_SUFFIXES:
        raise fail(f"--format must be text, json, html or xlsx, not {fmt!r}")
    if output is None and fmt in ("html", "xlsx"):
        output = Path(f"{run}.{fmt}")
    if output is not None and not output.suffix:
        output = output.with_suffix(_REPORT_SUFFIXES[fmt][0])
    if output is not None and output.suffix.lower() not in _REPORT_SUFFIXES[fmt]:
        raise fail(f"--output {output}: --format {fmt} writes a {' or '.join(_REPORT_SUFFIXES[fmt])} file")
    return fmt, output


def _emit_report(results: list[Any], fmt: str, output: Path | None) -> None:
    import json

    from evalnb import export

    one = results[0] if len(results) == 1 else None
    if fmt == "json":  # our versioned JSON, printed (and written too with --output)
        typer.echo(
            one.to_json(output) if one else json.dumps([r.to_dict() for r in results], indent=2, default=str)
        )
        if output is not None and one is None:
            export.write(results, output)
    elif output is None:
        typer.echo("\n\n".join(r.report().rstrip("\n") for r in results))
    else:
        export.write(one or results, output)
        typer.echo(f"Wrote {output}" + (f" ({len(results)} suites)" if one is None else ""))


def _stored(store: Any, key: str, suite: str | None) -> list[Any]:
    """The saved run a run id or version label names; for a version saved over several suites (and no
    ``--suite``), the latest run of each, in the order the suites were first saved."""
    if suite is None:
        runs = store.history()
        if not (runs["run_id"] == key).any():
            suites = list(dict.fromkeys(runs.loc[runs["version"] == key, "suite"].astype(str)))
            if len(suites) > 1:
                return [store.load(key, suite=name) for name in suites]
    return [store.load(key, suite=suite)]


@app.command("compare")
def compare_command(
    a: str = typer.Argument(..., help="Baseline: a stored version label or run id."),
    b: str = typer.Argument(..., help="Candidate: a stored version label or run id."),
    margin: list[str] = typer.Option(None, "--margin", metavar="<margin>", help=MARGIN_HELP),
    confidence: float | None = typer.Option(
        None, "--confidence", help=CONFIDENCE_HELP + " Default 0.95 (a sequential run: the one it ran with)."
    ),
    fail_on_missing: bool = typer.Option(False, "--fail-on-missing", help=MISSING_HELP),
    fail_on_degraded: bool = typer.Option(False, "--fail-on-degraded", help=DEGRADED_HELP),
    html_out: Path | None = typer.Option(
        None,
        "--html",
        "--output",
        "-o",
        help="Also write the comparison page (HTML: the gate and plots) here.",
    ),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
    suite: str | None = typer.Option(None, "--suite", help="Only this suite (default: all both share)."),
    cost_margin: str | None = typer.Option(
        None,
        "--cost-margin",
        help="Gate on cost per case rising by more than this (10%); else reported only.",
    ),
    latency_margin: str | None = typer.Option(
        None, "--latency-margin", help="Gate on latency per case rising by more than this (20%)."
    ),
) -> None:
    """Compare two stored versions, every suite they share; exit 1 when the gate finds a check worse, else 0."""
    import evalnb
    from evalnb.comparison._verdicts import check_options, parse_margins

    with exits():
        margins = parse_margins(margin)
        check_options(margins, 0.95 if confidence is None else confidence)
        verdict = evalnb.Store(store_url, create=False).compare_all(
            a,
            b,
            suite=suite,
            # not given: a run of the sequential gate is compared at the margin and confidence it ran with
            margin=margins if margin else None,
            confidence=confidence,
            fail_on_missing=fail_on_missing,
            fail_on_degraded=fail_on_degraded,
            cost_margin=cost_margin,
            latency_margin=latency_margin,
        )
    typer.echo(verdict.report())
    if html_out is not None:
        verdict.to_html(html_out)
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
    if frame.attrs.get("mean"):
        typer.echo(frame.attrs["mean"])  # what `mean` and `pass_rate` average (docs/comparison.md)
    if html_out is not None:
        from evalnb import plots

        plots.trend(frame, suite).write_html(html_out, include_plotlyjs=True)
        typer.echo(f"Wrote {html_out}")


@app.command("history")
def history_command(
    action: str | None = typer.Argument(
        None, help="Nothing: list the saved runs. 'export': write them with --mlflow and/or --parquet."
    ),
    suite: str | None = typer.Option(None, "--suite", help="Only the runs of this suite."),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
    mlflow_uri: str | None = typer.Option(
        None,
        "--mlflow",
        help="export: log each stored version as an MLflow run at this tracking URI ('default': MLflow's own).",
    ),
    experiment: str = typer.Option("evalnb", "--experiment", help="export: the MLflow experiment."),
    parquet: Path | None = typer.Option(
        None, "--parquet", help="export: write each stored version as Parquet into this folder."
    ),
) -> None:
    """List the saved runs, oldest first: run id, suite, version, status, when, cases and pass rate; or export them
    (`evalnb history export --mlflow URI --parquet DIR`)."""
    import evalnb

    if action is not None:
        if action != "export":
            raise fail(f"unknown action {action!r}; `evalnb history` lists, `evalnb history export` exports")
        return _export(suite, store_url, mlflow_uri, experiment, parquet)
    if mlflow_uri is not None or parquet is not None:
        raise fail("--mlflow and --parquet go with `evalnb history export`")
    with exits():
        store = evalnb.Store(store_url, create=False)
        frame = store.history(suite=suite)
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


# docs/results.md, One word per thing: "runs" are a case's repetitions, so the listing of saved runs is the
# store's history; the old command keeps working, hidden from --help, with a note on stderr.
@functools.wraps(history_command)  # the same arguments and options: typer reads the wrapped signature
def runs_command(*args: Any, **kwargs: Any) -> None:
    from evalnb._deprecation import message

    typer.echo(f"Note: {message('evalnb runs', 'evalnb history')}", err=True)
    history_command(*args, **kwargs)


runs_command.__doc__ = "Deprecated spelling of `evalnb history`."
app.command("runs", hidden=True)(runs_command)


def _export(
    suite: str | None, store_url: str | None, mlflow_uri: str | None, experiment: str, parquet: Path | None
) -> None:
    import evalnb

    if mlflow_uri is None and parquet is None:
        raise fail("evalnb history export needs --mlflow URI and/or --parquet DIR")
    with exits():
        store = evalnb.Store(store_url)
        if suite is not None and store.history(suite=suite).empty:
            raise store._unknown_suite(suite)
        if parquet is not None:
            written = evalnb.export.store_to_parquet(store, parquet, suite=suite)
            typer.echo(f"Wrote {len(written)} version(s) as Parquet into {parquet} (index: versions.parquet)")
        if mlflow_uri is not None:
            uri = None if mlflow_uri in ("", "default") else mlflow_uri
            for version, run_id, note in evalnb.export.store_to_mlflow(
                store, experiment=experiment, tracking_uri=uri, suite=suite
            ):
                typer.echo(f"{version}: MLflow run {run_id}" + (f" ({note})" if note else ""))
            typer.echo(f"Experiment {experiment!r} at {uri or 'the default MLflow tracking URI'}")


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
        saved = store.history().set_index("run_id")
        deleted = store.delete(run, suite=suite, all_suites=all_suites)
    for run_id in deleted:
        version = saved.at[run_id, "version"]
        label = f", version {version}" if isinstance(version, str) else ""
        typer.echo(f"Deleted run {run_id} (suite {saved.at[run_id, 'suite']}{label})")
    typer.echo(f"{len(deleted)} run{'s' * (len(deleted) != 1)} deleted from {store.where}")
