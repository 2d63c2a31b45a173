"""``evalnb run``: suites against an agent, the report, and the exit code (with ``--baseline``: the gate)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from evalnb.cli._app import STARTER_ASK, STORE_HELP, app, ask_yes, exits, fail

if TYPE_CHECKING:
    from evalnb.running import RunOptions

__all__ = ["CONFIDENCE_HELP", "DEGRADED_HELP", "MARGIN_HELP", "MISSING_HELP", "RUN_FLAGS", "run_command"]

MARGIN_HELP = (
    "How much worse a check may get before it gates: V in each check's units (0.02: 2 points of pass rate, "
    "0.02 on a 1-5 score), N% of each check's range, or CHECK=V for one check (repeatable)."
)
CONFIDENCE_HELP = "One-sided confidence of the gate, over all checks and suites compared."
MISSING_HELP = "A check, case or suite the candidate lost gates too (else it is only reported)."
DEGRADED_HELP = (
    "A degraded score of the candidate gates too (else a check that could not run, a judge outage say, "
    "is left out of the comparison and named)."
)


@app.command("run")
def run_command(
    paths: list[Path] = typer.Argument(
        None,
        help="Suite files (TOML, YAML, JSON, CSV or JSONL), or folders of them. None: dataset discovery.",
    ),
    agent: list[str] = typer.Option(
        None,
        "--agent",
        "-a",
        help="NAME from evalnb.toml, module:function or file.py:function; repeat as ID=SPEC to route.",
    ),
    runs: int | None = typer.Option(None, "--runs", help="Override every case's run count."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", help="Case runs in flight at once."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds per agent call."),
    retries: int = typer.Option(2, "--retries", help="Retries of transient agent failures and timeouts."),
    data: str | None = typer.Option(
        None, "--data", help="Data for cube referenceQuery: a SQLite or DuckDB file, or a SQLAlchemy URL."
    ),
    workdir: Path | None = typer.Option(
        None,
        "--workdir",
        help="Run every case in this directory (a suite written for a repository: its root); it must exist. "
        "Default: a fresh one per run.",
    ),
    workdir_create: bool = typer.Option(
        False, "--workdir-create", help="With --workdir: create the directory (and its parents) if missing."
    ),
    executor: str | None = typer.Option(
        None,
        "--executor",
        help="Where case runs run: local (default), ray (the cluster ray.init() finds) or ray=ADDRESS.",
    ),
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Also write the results to this file."),
    junit: Path | None = typer.Option(
        None, "--junit", help="Also write JUnit XML (a test case per suite case) for the CI's test report."
    ),
    summary: Path | None = typer.Option(
        None,
        "--summary",
        help="Also write a Markdown summary (pass counts, the gate's verdicts, failed cases), "
        "e.g. $GITHUB_STEP_SUMMARY.",
    ),
    list_passes: bool | None = typer.Option(
        None,
        "--list-passes/--no-list-passes",
        help="Give every passing case its line in the report (default: when a suite has at most 1,000 cases).",
    ),
    no_fail_on_regression: bool = typer.Option(
        False,
        "--no-fail-on-regression",
        help="Report only: exit 0 on failures (2 still means it could not start).",
    ),
    prompts: list[str] = typer.Option(None, "--prompts", help="Inline prompts: --prompts 'a' 'b'."),
    expected: list[str] = typer.Option(
        None, "--expected", help="Expected answers, paired with --prompts in order."
    ),
    interactive: bool = typer.Option(False, "--interactive", "-i", help="Prompt loop without a dataset."),
    record: Path | None = typer.Option(
        None, "--record", help="Write every answer to this JSONL cassette (for --replay)."
    ),
    replay: Path | None = typer.Option(
        None, "--replay", help="Answer from this JSONL cassette; no agent is called."
    ),
    replay_strict: bool = typer.Option(
        False, "--replay-strict", help="With --replay: an answer missing from the cassette exits 2."
    ),
    judge: str | None = typer.Option(
        None,
        "--judge",
        help="Judge for judged checks: openai:MODEL, azure:DEPLOYMENT, heuristic, embedding, module:function.",
    ),
    judge_base_url: str | None = typer.Option(
        None,
        "--judge-base-url",
        help="OpenAI-compatible endpoint of the judge, e.g. http://127.0.0.1:11434/v1.",
    ),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Do not read or write the judge cache (.evals/cache/)."
    ),
    version: str | None = typer.Option(
        None,
        "--version",
        help="Save the run in the store under this version label (each case as it finishes).",
    ),
    replace: bool = typer.Option(
        False, "--replace", help="With --version: replace the suite's run of that label (else refused)."
    ),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Compare with this stored version (or run id); exit 1 if a check got worse."
    ),
    margin: list[str] = typer.Option(None, "--margin", metavar="<margin>", help=MARGIN_HELP),
    confidence: float = typer.Option(0.95, "--confidence", help=CONFIDENCE_HELP),
    sequential: bool = typer.Option(
        False,
        "--sequential",
        help="With --baseline: run the cases in a seeded random order in batches and stop once every check is "
        "decided worse or not worse (anytime-valid); the cases not run are skipped.",
    ),
    seed: int = typer.Option(0, "--seed", help="With --sequential: seed of the order the cases run in."),
    fail_on_missing: bool = typer.Option(False, "--fail-on-missing", help=MISSING_HELP),
    fail_on_degraded: bool = typer.Option(False, "--fail-on-degraded", help=DEGRADED_HELP),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help="Prices of the models, USD per 1M tokens (a TOML/YAML file; docs/costs.md), on top of [prices] "
        "of evalnb.toml.",
    ),
    max_cost: float | None = typer.Option(
        None, "--max-cost", help="Budget in USD: no new case run starts once it could be passed (exit 1)."
    ),
    max_tokens: int | None = typer.Option(
        None, "--max-tokens", help="Budget in tokens (prompt + completion, agent and judge)."
    ),
    resume: str | None = typer.Option(
        None, "--resume", help="Continue the interrupted stored run RUN_ID; finished cases are not repeated."
    ),
    unsupported: str = typer.Option(
        "error",
        "--unsupported",
        help="error or skip: what a suite asks for that evalnb cannot run (a promptfoo javascript assert).",
    ),
) -> None:
    """Run suites against an agent; print the report; exit 0 all passed, 1 failures, 2 could not start."""
    from evalnb import config
    from evalnb.comparison._verdicts import check_options, parse_margins
    from evalnb.running import RunOptions

    _check_flags(fmt=fmt, replace=replace, version=version, sequential=sequential, baseline=baseline)
    with exits():
        # Everything that can fail at start-up is checked for every suite before the first one runs.
        margins = parse_margins(margin)
        check_options(margins, confidence)
        the_agent = _agent_from(agent, record=record, replay=replay, replay_strict=replay_strict)
        if interactive:
            from evalnb.cli._interactive import prompt_loop

            raise typer.Exit(prompt_loop(the_agent, timeout=timeout))
        suites = _suites_from(paths, prompts, expected, resume=resume, unsupported=unsupported)
        store = _store_for(store_url, version=version, baseline=baseline, resume=resume)
        saving = store is not None and (version is not None or resume is not None)
        options = RunOptions(
            runs=runs,
            concurrency=concurrency,
            timeout=timeout,
            retries=retries,
            data=data,
            workdir=workdir,
            create_workdir=workdir_create,
            executor=executor,
            judge=config.judge_from(judge, base_url=judge_base_url, cache=False if no_cache else None),
            prices=config.prices_from(prices),
            budget=_budget(max_cost, max_tokens),
            **({"store": store, "version": version, "resume": resume, "replace": replace} if saving else {}),
        )
        if resume is not None:
            suites = suites[:1] or [None]
        bases = _baselines(store, baseline, suites, margins)
        stops = (
            _sequential_rules(bases, suites, margins, confidence, seed)
            if sequential
            else [None] * len(suites)
        )
        results = [
            _run_one(s, the_agent, dataclasses.replace(options, stop=stop))
            for s, stop in zip(suites, stops, strict=True)
        ]
        if replay is not None and replay_strict and getattr(the_agent, "misses", None):
            # A cassette that does not match the suite is a setup problem, not an agent failure.
            raise fail(str(the_agent.misses[0]))
        _emit(results, fmt=fmt, output=output, passes=list_passes)
        if saving:
            for r in results:
                typer.echo(_saved_line(r, store), err=fmt == "json")
        verdict = _gate(
            bases,
            results,
            margin=margins,
            confidence=confidence,
            missing=fail_on_missing,
            degraded=fail_on_degraded,
        )
        _ci_files(results, verdict, junit=junit, summary=summary)
    if verdict is not None:
        typer.echo(verdict.report(), err=fmt == "json")
        raise typer.Exit(0 if no_fail_on_regression else verdict.exit_code)
    raise typer.Exit(0 if no_fail_on_regression else max((r.exit_code for r in results), default=0))


def _check_flags(
    *, fmt: str, replace: bool, version: str | None, sequential: bool, baseline: str | None
) -> None:
    """The flags that go together, checked before anything is loaded."""
    if fmt not in ("text", "json"):
        raise fail(f"--format must be text or json, not {fmt!r}")
    if replace and version is None:
        raise fail("--replace goes with --version LABEL (the label whose run it replaces)")
    if sequential and baseline is None:
        raise fail("--sequential goes with --baseline VERSION (the run it decides against)")


def _store_for(url: str | None, *, version: str | None, baseline: str | None, resume: str | None) -> Any:
    """The store of ``--store``, when a flag needs one. Only a run saved under a label makes a store; a
    baseline or a run to resume is read from one that must be there (a mistyped --store creates nothing)."""
    if version is None and baseline is None and resume is None:
        return None
    import evalnb

    return evalnb.Store(url, create=version is not None and resume is None)


def _budget(max_cost: float | None, max_tokens: int | None) -> Any:
    """``--max-cost`` / ``--max-tokens`` as an ``evalnb.Budget`` (``None`` without either)."""
    if max_cost is None and max_tokens is None:
        return None
    import evalnb

    return evalnb.Budget(cost=max_cost, tokens=max_tokens)


def _baselines(store: Any, baseline: str | None, suites: list[Any], margins: Any) -> list[Any]:
    """``--baseline``: each suite's own baseline run (a version label may be shared by suites), and
    ``--margin CHECK=V`` checked against their checks."""
    if store is None or baseline is None:
        return []
    bases = [store.load(baseline, suite=getattr(s, "name", None)) for s in suites]
    _known_margins(margins, suites, bases)
    return bases


RUN_FLAGS = {
    "--judge": "judge",
    "--data": "data",
    "--runs": "runs",
    "--concurrency": "concurrency",
    "--timeout": "timeout",
    "--retries": "retries",
    "--no-cache": "cache",
    "--workdir": "workdir",
    "--workdir-create": "create_workdir",
    "--store": "store",
    "--version": "version",
    "--replace": "replace",
    "--resume": "resume",
    "--executor": "executor",
    "--prices": "prices",
    "--max-cost": "budget",
    "--max-tokens": "budget",
    "--sequential": "stop",
    "--baseline": "baseline",
    "--margin": "margin",
    "--confidence": "confidence",
    "--seed": "seed",
}
"""The flags of ``evalnb run`` that set a run option, and the ``evalnb.RunOptions`` field each sets (with
``--sequential``, ``--baseline``, ``--margin``, ``--confidence`` and ``--seed`` make the stop rule)."""


def _agent_from(
    specs: list[str] | None, *, record: Path | None, replay: Path | None, replay_strict: bool
) -> Any:
    """``--agent`` (or ``--replay``'s cassette), wrapped to write ``--record``'s."""
    from evalnb import config
    from evalnb.agents import Record, Replay

    the_agent = (
        Replay(replay, strict=replay_strict) if replay is not None else config.agents_from_specs(specs)
    )
    if record is not None:
        the_agent = Record.around(the_agent, record)
    return the_agent


def _suites_from(
    paths: list[Path] | None, prompts: list[str] | None, expected: list[str] | None, *, resume: str | None,
    unsupported: str,
) -> list[Any]:  # fmt: skip
    """The suites to run: ``--prompts`` inline, then each path (a folder's suite files), else discovery."""
    import warnings

    from evalnb import formats
    from evalnb.errors import SuiteWarning
    from evalnb.formats._dataset_json import inline_suite

    if expected and not prompts:
        raise fail("--expected pairs with --prompts in order; give --prompts too")
    suites: list[Any] = [inline_suite(prompts, expected)] if prompts else []
    for path in _suite_paths(paths) or ([] if prompts or resume else [_discover_or_offer()]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SuiteWarning)  # printed as one line each, below
            suite, backup = formats.load_upgrading(path, unsupported=unsupported)
        for line in suite.warnings:
            typer.echo(f"{path}: warning: {line}", err=True)
        if backup is not None:
            typer.echo(f"Upgraded legacy dataset {path} to the versioned format (backup: {backup})", err=True)
        suites.append(suite)
    return suites


def _gate(
    bases: list[Any], results: list[Any], *, margin: Any, confidence: float, missing: bool, degraded: bool
) -> Any:
    """``--baseline``: the gate is a check worse than the baseline (all suites gated as one family), not the
    failures that were already there; ``None`` without a baseline."""
    if not bases:
        return None
    import evalnb
    from evalnb.comparison import gate

    return gate(
        [
            evalnb.compare(
                b, r, margin=margin, confidence=confidence, fail_on_missing=missing, fail_on_degraded=degraded
            )
            for b, r in zip(bases, results, strict=True)
        ]
    )


def _run_one(suite: Any, agent: Any, options: RunOptions) -> Any:
    """One suite's run; the models it could not price and a budget that stopped it, said once on stderr."""
    import warnings

    import evalnb
    from evalnb.errors import CostWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CostWarning)  # said below, as one line
        result = evalnb.run(suite, agent, options=options)
    if result.meta.unpriced:
        models = ", ".join(result.meta.unpriced)
        typer.echo(
            f"warning: no price for {models}: the cost of their calls is NA (add them to --prices)", err=True
        )
    if result.budget_exhausted:
        reason = (result.meta.budget or {}).get("reason") or "the budget is spent"
        typer.echo(
            f"budget exhausted: {reason}; the case runs not started are skipped"
            + (f" (continue with --resume {result.meta.run_id})" if result.meta.run_id else ""),
            err=True,
        )
    return result


def _sequential_rules(bases: list, suites: list, margins: Any, confidence: float, seed: int) -> list:
    """``--sequential``: each suite's sequential gate, spending its share of the error rate (its checks of all
    the gating checks: docs/comparison.md, deciding with fewer cases)."""
    from evalnb.comparison import Sequential

    counts = []
    for base, s in zip(bases, suites, strict=True):
        ids = {cid for c in s.cases for t in c.turns for cid in t.check_ids()} if s is not None else set()
        counts.append(max(1, len(ids & set(base.scores["check_id"].astype(str)))))
    total = sum(counts)
    return [
        Sequential(base, margin=margins, confidence=confidence, seed=seed, share=n / total)
        for base, n in zip(bases, counts, strict=True)
    ]


def _known_margins(margins: Any, suites: list, bases: list) -> None:
    """``--margin CHECK=V`` names a check of the suites or their baselines: a typo stops the run before it
    starts, not after every agent call."""
    from evalnb.comparison._verdicts import unknown_margins
    from evalnb.errors import ConfigError

    names = {
        str(spec.name) for s in suites if s is not None for c in s.cases for t in c.turns for spec in t.checks
    }
    for base in bases:
        names |= set(base.scores["check_id"].astype(str)) | set(base.scores["check"].astype(str))
    unknown = unknown_margins(margins, names)
    if unknown:
        raise ConfigError(
            f"--margin names no check of the suites: {', '.join(map(repr, unknown))}; the checks are "
            f"{', '.join(sorted(names))}",
            code="INVALID_VALUE",
        )


def _emit(results: list, *, fmt: str, output: Path | None, passes: bool | None = None) -> None:
    """Print the text report or JSON of every suite; ``--output`` also writes them, by its extension."""
    import json

    if fmt == "json":
        data = results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results]
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        typer.echo("\n".join(r.report(passes=passes) for r in results).rstrip("\n"))
    if output is not None:
        from evalnb import export

        export.write(results, output)


def _ci_files(results: list, verdict: object, *, junit: Path | None, summary: Path | None) -> None:
    """``--junit`` and ``--summary``: the files a CI system reads (the test report, the job summary page)."""
    if junit is None and summary is None:
        return
    from evalnb import export

    if junit is not None:
        export.to_junit(results, junit)
    if summary is not None:
        export.to_summary(results, summary, gate=verdict)  # type: ignore[arg-type]


def _suite_paths(paths: list[Path] | None) -> list[Path]:
    """The suite files given: a folder stands for its suite files (as `evalnb validate` reads it)."""
    from evalnb import formats

    out: list[Path] = []
    for path in paths or []:
        found = formats.suffix_files(path)
        if not found:
            raise fail(f"{path}: no suite files ({', '.join(formats.suffixes())}) in this folder")
        out += found
    return out


def _saved_line(result: Any, store: Any) -> str:
    """Where a run was saved: ``Saved run 3f2a9c1b7d4e of suite kb as version v1 in .evals/evalnb.db``."""
    version = result.meta.version
    label = f" as version {version}" if version is not None else ""
    return f"Saved run {result.meta.run_id} of suite {result.suite.name}{label} in {store.where}"


def _discover_or_offer() -> Path:
    """Dataset discovery; on a terminal, offer the starter file (docs/dataset-json.md, without a file), else exit 2
    saying where."""
    import sys

    import evalnb
    from evalnb.formats import DISCOVERY_DIRS, DISCOVERY_NAMES, write_starter

    found = evalnb.discover(".")
    if found is not None:
        return Path(found)
    if not sys.stdin.isatty():
        folders = " and in ".join("the current directory" if d == "." else f"./{d}/" for d in DISCOVERY_DIRS)
        raise fail(f"no suite given and none found: looked for {', '.join(DISCOVERY_NAMES)} in {folders}")
    if not ask_yes(STARTER_ASK):
        # Declining (or Ctrl-D) leaves nothing to run: the run could not start (exit 2), and says why.
        raise fail("no suite to run; no starter file created (give a suite path, or run `evalnb init`)")
    # Discovery found nothing, so the file does not exist; write_starter never overwrites one anyway.
    path = write_starter(Path("evals") / "evals.json")
    typer.echo(f"Created {path}", err=True)
    return path
