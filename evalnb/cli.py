"""The ``evalnb`` command line: one typer command per verb, each a thin layer over the public API.

Exit codes (api contract): 0 all passed, 1 a check failed or a case was degraded, 2 the run could not start.
"""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(
    name="evalnb",
    help="Evaluate LLM agents: load TOML, YAML and JSON suites, run them, compare versions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Evaluate LLM agents: load TOML, YAML and JSON suites, run them, compare versions."""
    # A callback keeps `evalnb run ...` a subcommand even while `run` is the only command registered. It
    # imports the plugins of $EVALNB_PLUGINS (formats, agent types, judge strings) before any command.
    from evalnb._registry import load_plugins
    from evalnb.errors import ConfigError

    try:
        load_plugins()
    except ConfigError as exc:
        raise _fail(str(exc)) from exc


# --------------------------------------------------------------------------------------------------
# evalnb run
# --------------------------------------------------------------------------------------------------

# Options taking several values after one flag (`--prompts "a" "b" --expected "x" "y"`, dataset spec);
# click options take one value each, so main() rewrites them into repeated flags before parsing.
GREEDY_OPTIONS = {"run": ("--prompts", "--expected")}

STARTER_ASK = "No prompts file found in current directory or ./evals/\nCreate a starter evals file with sample prompts? (Y/n): "


def expand_greedy(argv: list[str]) -> list[str]:
    """``run --prompts a b --expected x y`` -> ``run --prompts a --prompts b --expected x --expected y``."""
    if not argv or argv[0] not in GREEDY_OPTIONS:
        return argv
    greedy = GREEDY_OPTIONS[argv[0]]
    out: list[str] = [argv[0]]
    current: str | None = None
    for arg in argv[1:]:
        if arg in greedy:
            current = arg
            continue
        if arg.startswith("--") or (arg.startswith("-") and len(arg) == 2 and arg[1].isalpha()):
            current = None
            out.append(arg)
        elif current is not None:
            out += [current, arg]
        else:
            out.append(arg)
    return out


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _agents_from(specs: list[str]) -> object:
    """``--agent SPEC`` once: one agent for every case; ``--agent ID=SPEC`` (repeatable): a mapping."""
    import re

    from evalnb.agents.spec import load_agent

    named: dict[str, object] = {}
    bare: list[str] = []
    for spec in specs:
        m = re.match(r"^([A-Za-z0-9_.-]+)=(.+)$", spec)
        if m:
            named[m.group(1)] = load_agent(m.group(2))
        else:
            bare.append(spec)
    if len(bare) > 1:
        raise typer.BadParameter("give one --agent SPEC, or name them: --agent ID=SPEC", param_hint="--agent")
    if not named:
        return load_agent(bare[0])
    if bare:
        named.setdefault("default", load_agent(bare[0]))
    return named


def _configured_agents() -> object:
    """No --agent: the agents of evalnb.toml / [tool.evalnb], routed by the suite's agent ids."""
    from evalnb.config import load_config

    cfg = load_config()
    if cfg is None or not cfg.agent_names:
        raise _fail(
            "no agent given: use --agent NAME (from evalnb.toml), --agent module:function "
            "or --agent path/to/file.py:function"
        )
    agents = cfg.agents()
    if len(agents) == 1:
        agents.setdefault("default", next(iter(agents.values())))  # cases naming no agent use the only one
    return agents


def _recording(agent: object, path: Path) -> object:
    """Wrap the agent (or each agent of a mapping) so every answer is written to the cassette."""
    from evalnb.agents import Record

    if isinstance(agent, dict):
        return {k: Record(v, path) for k, v in agent.items()}
    return Record(agent, path)


def _is_legacy_json(path: Path) -> bool:
    """Whether ``path`` is a legacy JSON dataset, by the dataset loader's own test."""
    from evalnb.errors import SuiteError
    from evalnb.formats import dataset_json

    if path.suffix.lower() != ".json":
        return False
    try:
        data = dataset_json.parse(path.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError, SuiteError):
        return False  # the loader reports an unreadable or malformed file with its own code
    return dataset_json.is_legacy(data)


def _inline_suite(prompts: list[str], expected: list[str]) -> object:
    from evalnb.suite import (
        Case,
        CheckSpec,
        ExactMatchCheck,
        JudgedMetricCheck,
        PartialMatchCheck,
        Suite,
        Turn,
    )

    if expected and len(expected) != len(prompts):
        raise _fail(
            f"--prompts and --expected pair in order: got {len(prompts)} prompts and {len(expected)} answers"
        )
    cases = []
    for i, prompt in enumerate(prompts):
        if not prompt.strip():
            # dataset spec: a prompt is required and not blank, inline as in a file (BLANK_FIELD there).
            raise _fail(f"--prompts: prompt {i + 1} is empty")
        want = expected[i] if expected else None
        # With an expected answer the deterministic matchers score it; without one, the dataset defaults
        # (Relevance and Coherence, judged) apply, as for a dataset item with no evaluators.
        checks: list[CheckSpec] = (
            [ExactMatchCheck(), PartialMatchCheck()]
            if want is not None
            else [JudgedMetricCheck(type="Relevance"), JudgedMetricCheck(type="Coherence")]
        )
        cases.append(
            Case(
                id=f"inline-{i + 1}",
                name=prompt[:60],
                turns=[Turn(prompt=prompt, expected=want, checks=checks)],
            )
        )
    return Suite(name="inline", format="dataset-json", cases=cases)


def _ask_yes(question: str) -> bool:
    """A (Y/n) question on the terminal; Ctrl-D (end of input) is a no, never a traceback or click's abort."""
    try:
        answer = input(question).strip().lower()
    except EOFError:
        typer.echo("")
        return False
    return answer in ("", "y", "yes")


def _discover_or_offer() -> Path:
    """Dataset discovery; on a terminal, offer the starter file (dataset spec), else exit 2 saying where."""
    import sys

    import evalnb

    found = evalnb.discover(".")
    if found is not None:
        return Path(found)
    if not sys.stdin.isatty():
        raise _fail(
            "no suite given and none found: looked for prompts.json, evals.json, tests.json "
            "in the current directory and in ./evals/"
        )
    if not _ask_yes(STARTER_ASK):
        # Declining (or Ctrl-D) leaves nothing to run: the run could not start (exit 2), and says why.
        raise _fail("no suite to run; no starter file created (give a suite path, or run `evalnb init`)")
    from evalnb.formats import write_starter

    # Discovery found nothing, so the file does not exist; write_starter never overwrites one anyway.
    path = write_starter(Path("evals") / "evals.json")
    typer.echo(f"Created {path}", err=True)
    return path


def _interactive(agent: object, *, timeout: float) -> int:
    """A prompt loop: send what the user types, show the answer and deterministic scores; save on request."""
    import json
    import time

    import evalnb
    from evalnb.suite import Case, ExactMatchCheck, PartialMatchCheck, Suite, Turn

    tried: list[dict[str, str]] = []
    typer.echo("Interactive mode: type a prompt (empty line or Ctrl-D to finish).")
    while True:
        try:
            prompt = input("prompt> ").strip()
        except EOFError:
            break
        if not prompt:
            break
        try:
            expected = input("expected (optional)> ").strip()
        except EOFError:
            expected = ""
        checks: list = [ExactMatchCheck(), PartialMatchCheck()] if expected else []
        suite = Suite(
            name="interactive",
            format="dataset-json",
            cases=[
                Case(
                    id="interactive",
                    name=prompt[:60],
                    turns=[Turn(prompt=prompt, expected=expected or None, checks=checks)],
                )
            ],
        )
        result = evalnb.run(suite, agent, runs=1, timeout=timeout, progress=False, retries=0)
        row = result.runs.iloc[0]
        if row["status"] == "degraded":
            typer.echo(f"error: {row['error']}")
        else:
            typer.echo(f"answer: {row['response']}")
        for s in result.scores.itertuples():
            typer.echo(f"  {s.check_id}: {'PASS' if s.passed else 'FAIL'} ({s.reason})")
        item = {"prompt": prompt}
        if expected:
            item["expected_response"] = expected
        tried.append(item)
    if not tried:
        return 0
    try:
        save = input(f"Save these {len(tried)} prompt(s) as a dataset? (y/N): ").strip().lower()
    except EOFError:
        save = ""
    if save not in ("y", "yes"):
        return 0
    doc: dict[str, object] = {
        "schemaVersion": "1.6.0",
        "description": "Saved from evalnb run --interactive",
        "items": tried,
    }
    if any("expected_response" in i for i in tried):
        doc["default_evaluators"] = {"ExactMatch": {}, "PartialMatch": {}}
    body = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    default = Path("evals") / f"interactive-{time.strftime('%Y%m%d-%H%M%S')}.json"
    while True:
        try:
            where = input(f"File [{default}]: ").strip()
        except EOFError:
            typer.echo("\nnothing saved")
            return 0
        path = Path(where) if where else default
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Never overwrite: the name typed may be an existing dataset. Ask again rather than lose the session.
            with open(path, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(body)
        except FileExistsError:
            typer.echo(f"{path} already exists; give another name (Ctrl-D: do not save)")
            continue
        except OSError as exc:
            typer.echo(f"cannot write {path}: {exc.strerror or exc}; give another name (Ctrl-D: do not save)")
            continue
        typer.echo(f"Saved {path}")
        return 0


def _emit(results: list, *, fmt: str, output: Path | None) -> None:
    """Print the text report or JSON of every suite; ``--output`` also writes JSON (.json) or the report."""
    import json

    if fmt == "json":
        data = results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results]
        text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    else:
        text = "\n".join(r.report() for r in results).rstrip("\n")
    typer.echo(text)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        suffix = output.suffix.lower()
        if len(results) == 1 and (
            suffix in (".html", ".htm", ".xlsx", ".csv")
            or (suffix == ".json" and results[0].suite.format == "dataset-json")
        ):
            # --output by extension; a JSON dataset gets the published schema's output document
            from evalnb import export

            export.write(results[0], output)
        elif output.suffix.lower() == ".json":
            data = results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results]
            output.write_text(
                json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
            )
        else:
            output.write_text("\n".join(r.report() for r in results), encoding="utf-8")


_STORE_HELP = "Run store: a SQLite path or SQLAlchemy URL (default .evals/evalnb.db)."
_MARGIN_HELP = "How much worse a check may get before it gates, in its units (0.02: 2 points)."
_CONFIDENCE_HELP = "One-sided confidence of the gate, over all checks and suites compared."
_MISSING_HELP = "A check, case or suite the candidate lost gates too (else it is only reported)."


@app.command("run")
def run_command(
    paths: list[Path] = typer.Argument(
        None, help="Suite files (TOML, YAML or JSON). None: dataset discovery."
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
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Also write the results to this file."),
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
    store_url: str | None = typer.Option(
        None, "--store", help="Run store: a SQLite path or SQLAlchemy URL (default .evals/evalnb.db)."
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Compare with this stored version (or run id); exit 1 if a check got worse."
    ),
    margin: float = typer.Option(0.0, "--margin", help=_MARGIN_HELP),
    confidence: float = typer.Option(0.95, "--confidence", help=_CONFIDENCE_HELP),
    fail_on_missing: bool = typer.Option(False, "--fail-on-missing", help=_MISSING_HELP),
    resume: str | None = typer.Option(
        None, "--resume", help="Continue the interrupted stored run RUN_ID; finished cases are not repeated."
    ),
) -> None:
    """Run suites against an agent; print the report; exit 0 all passed, 1 failures, 2 could not start."""
    import evalnb
    from evalnb.comparison.verdicts import check_options
    from evalnb.errors import EvalnbError, SuiteError

    if fmt not in ("text", "json"):
        raise _fail(f"--format must be text or json, not {fmt!r}")
    try:
        check_options(margin, confidence)  # bad gate options: exit 2 before anything runs
        if replay is not None:
            from evalnb.agents import Replay

            the_agent: object = Replay(replay, strict=replay_strict)
        elif not agent:
            the_agent = _configured_agents()
        else:
            the_agent = _agents_from(agent)
        if record is not None:
            the_agent = _recording(the_agent, record)
        if interactive:
            raise typer.Exit(_interactive(the_agent, timeout=timeout))
        suites: list = []
        if expected and not prompts:
            raise _fail("--expected pairs with --prompts in order; give --prompts too")
        if prompts:
            suites.append(_inline_suite(list(prompts), list(expected or [])))
        for path in paths or ([] if prompts or resume else [_discover_or_offer()]):
            if _is_legacy_json(path):
                backup = evalnb.upgrade(path)
                typer.echo(
                    f"Upgraded legacy dataset {path} to the versioned format (backup: {backup})", err=True
                )
            suites.append(evalnb.load(path))
        # Everything that can fail at start-up is checked for every suite before the first one runs.
        kwargs: dict = {"runs": runs, "concurrency": concurrency, "timeout": timeout}
        if judge is not None:
            from evalnb.judges import as_judge

            # Built once for every suite; a judge that cannot be built is a start-up failure (exit 2).
            kwargs["judge"] = as_judge(judge, cache=False if no_cache else None, base_url=judge_base_url)
        else:
            from evalnb.config import load_config

            cfg = load_config()  # the [judge] of evalnb.toml, when --judge is not given
            if cfg is not None and cfg.judge_config is not None:
                kwargs["judge"] = cfg.judge(cache=False if no_cache else None)
        store = None
        if version is not None or baseline is not None or resume is not None or store_url is not None:
            store = evalnb.Store(store_url)
        if store is not None and (version is not None or resume is not None):
            kwargs.update(store=store, version=version)
        if resume is not None:
            kwargs["resume"] = resume
            suites = suites[:1] or [None]
        # --baseline: each suite against its own baseline run (a version label may be shared by suites).
        bases = (
            [store.load(baseline, suite=s.name if s is not None else None) for s in suites]
            if store is not None and baseline is not None
            else []
        )
        results = [evalnb.run(s, the_agent, **kwargs) for s in suites]
        if replay is not None and replay_strict and getattr(the_agent, "misses", None):
            # A cassette that does not match the suite is a setup problem, not an agent failure.
            raise _fail(str(the_agent.misses[0]))  # type: ignore[attr-defined]
    except typer.Exit:
        raise
    except typer.BadParameter:
        raise
    except SuiteError as exc:
        # Every error of the file, as `evalnb validate` prints them, so one fix-and-rerun round is enough.
        for err in exc.errors:  # this error first, then the rest in document order
            typer.echo(f"error: {err.describe()}", err=True)
        raise typer.Exit(2) from exc
    except (EvalnbError, OSError) as exc:
        raise _fail(str(exc)) from exc
    _emit(results, fmt=fmt, output=output)
    if bases:
        # --baseline: the gate is a check worse than the baseline (all suites gated as one family), not the
        # failures that were already there
        from functools import partial

        from evalnb.comparison import gate

        against = partial(
            evalnb.compare, margin=margin, confidence=confidence, fail_on_missing=fail_on_missing
        )
        verdict = gate([against(base, result) for base, result in zip(bases, results, strict=True)])
        typer.echo(verdict.report(), err=fmt == "json")
        raise typer.Exit(0 if no_fail_on_regression else verdict.exit_code)
    if no_fail_on_regression:
        raise typer.Exit(0)
    raise typer.Exit(max((r.exit_code for r in results), default=0))


# --------------------------------------------------------------------------------------------------
# evalnb validate / init / upgrade / schema
# --------------------------------------------------------------------------------------------------


@app.command("validate")
def validate_command(
    paths: list[Path] = typer.Argument(..., help="Suite files, or folders of them (TOML, YAML, JSON)."),
) -> None:
    """Check suites without running them: `path:location: CODE message` per error; exit 0 valid, 2 not."""
    import evalnb
    from evalnb import formats

    files: list[Path] = []
    bad = 0
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if formats.for_path(p) is not None and p.is_file())
            if not found:
                # An empty folder is not a valid suite: say so rather than exit 2 with no output.
                bad += 1
                typer.echo(f"{path}: no suite files ({', '.join(formats.suffixes())}) in this folder")
            files += found
        else:
            files.append(path)
    for path in files:
        try:
            suite = evalnb.load(path)
        except evalnb.SuiteError as exc:
            bad += 1
            for err in exc.errors:  # every error of the file, in document order
                where = f"{path}:{err.location}" if err.location else str(path)
                typer.echo(f"{where}: {err.code} {err.message}")
            continue
        typer.echo(f"{path}: OK ({suite.format}, {len(suite.cases)} cases)")
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
    if not yes and sys.stdin.isatty() and not _ask_yes(STARTER_ASK):  # dataset spec: ask first on a terminal
        typer.echo("nothing written")
        raise typer.Exit(0)
    try:
        typer.echo(f"Created {write_starter(path)}")
    except ValueError as exc:  # a --path whose format has no starter document
        raise _fail(str(exc)) from exc


@app.command("upgrade")
def upgrade_command(path: Path = typer.Argument(..., help="A legacy JSON dataset.")) -> None:
    """Rewrite a legacy JSON dataset in the versioned form, after a byte-identical backup."""
    import evalnb

    try:
        backup = evalnb.upgrade(path)
    except evalnb.SuiteError as exc:
        for err in exc.errors:  # every error of the file, as `validate` prints them
            typer.echo(f"error: {err.describe()}", err=True)
        raise typer.Exit(2) from exc
    if backup is None:
        typer.echo(f"{path} is already versioned; nothing changed")
    else:
        typer.echo(f"Upgraded {path}; backup: {backup}")


@app.command("schema")
def schema_command(
    format: str = typer.Argument(..., help="tasks-toml, cube-yaml or dataset-json."),
) -> None:
    """Print a JSON Schema of a suite format, for editors."""
    import json

    from evalnb import formats

    if formats.get(format) is None:
        raise _fail(f"unknown format {format!r}; expected one of {', '.join(formats.names())}")
    typer.echo(json.dumps(formats.json_schema(format), indent=2))


# --------------------------------------------------------------------------------------------------
# evalnb report / compare / trend (the run store)
# --------------------------------------------------------------------------------------------------


@app.command("report")
def report_command(
    run: str = typer.Argument(..., help="A stored run id or version label."),
    fmt: str = typer.Option("text", "--format", "-f", help="text, json, html or xlsx."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File for html/xlsx (json: also stdout)."
    ),
    store_url: str | None = typer.Option(None, "--store", help=_STORE_HELP),
    suite: str | None = typer.Option(None, "--suite", help="The suite, when a version is shared by suites."),
) -> None:
    """Report a stored run: the text report, JSON, or an HTML/Excel scorecard; exit 1 if the run had failures."""
    import evalnb
    from evalnb.errors import EvalnbError

    if fmt not in ("text", "json", "html", "xlsx"):
        raise _fail(f"--format must be text, json, html or xlsx, not {fmt!r}")
    try:
        result = evalnb.Store(store_url).load(run, suite=suite)
    except EvalnbError as exc:
        raise _fail(str(exc)) from exc
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
    margin: float = typer.Option(0.0, "--margin", help=_MARGIN_HELP),
    confidence: float = typer.Option(0.95, "--confidence", help=_CONFIDENCE_HELP),
    fail_on_missing: bool = typer.Option(False, "--fail-on-missing", help=_MISSING_HELP),
    html_out: Path | None = typer.Option(None, "--html", help="Also write the comparison plots here."),
    store_url: str | None = typer.Option(None, "--store", help=_STORE_HELP),
    suite: str | None = typer.Option(None, "--suite", help="Only this suite (default: all both share)."),
) -> None:
    """Compare two stored versions, every suite they share; exit 1 when the gate finds a check worse, else 0."""
    import evalnb
    from evalnb.errors import EvalnbError

    try:
        verdict = evalnb.Store(store_url).compare_all(
            a, b, suite=suite, margin=margin, confidence=confidence, fail_on_missing=fail_on_missing
        )
    except EvalnbError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(verdict.report())
    if html_out is not None:
        verdict.write_html(html_out)
        typer.echo(f"Wrote {html_out}")
    raise typer.Exit(verdict.exit_code)


@app.command("trend")
def trend_command(
    suite: str = typer.Argument(..., help="The suite name."),
    html_out: Path | None = typer.Option(None, "--html", help="Also write the trend plot to this file."),
    store_url: str | None = typer.Option(None, "--store", help=_STORE_HELP),
) -> None:
    """Per version and check: mean, pass rate and interval, latency and cost, in run order."""
    import evalnb
    from evalnb.errors import EvalnbError

    try:
        frame = evalnb.Store(store_url).trend(suite)
    except EvalnbError as exc:
        raise _fail(str(exc)) from exc
    if frame.empty:
        raise _fail(f"no complete stored runs of suite {suite!r}")
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


@app.command("demo")
def demo_command(
    out: Path = typer.Option(Path(".evals"), "--out", help="Folder for the scorecard and working files."),
    store: str = typer.Option(
        None, "--store", help="Store path or SQLAlchemy URL (default: OUT/evalnb.db, i.e. .evals/evalnb.db)."
    ),
) -> None:
    """Run the three example suites against offline demo agents, two versions, and compare them.

    No API key, server or network. Exits 0 when the demo ran (the previous version's failures are expected).
    """
    from evalnb.demo.main import run_demo
    from evalnb.errors import EvalnbError

    try:
        run_demo(out=out, store=store)
    except EvalnbError as exc:
        raise _fail(str(exc)) from exc


def main() -> None:
    """Entry point of the ``evalnb`` script and of ``python -m evalnb``."""
    import sys

    app(args=expand_greedy(sys.argv[1:]), prog_name="evalnb")


if __name__ == "__main__":
    main()
