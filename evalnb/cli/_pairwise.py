"""``evalnb pairwise V1 V2 --judge SPEC``: a judge compares two stored versions' answers side by side."""

from __future__ import annotations

import json
import math

import typer

from evalnb.cli._app import STORE_HELP, app, exits, fail

__all__ = ["pairwise_command"]


def _number(v: float) -> float | None:
    return None if v != v or math.isinf(v) else v


@app.command("pairwise")
def pairwise_command(
    a: str = typer.Argument(..., help="Baseline: a stored version label or run id."),
    b: str = typer.Argument(..., help="Candidate: a stored version label or run id."),
    judge: str | None = typer.Option(
        None,
        "--judge",
        help="openai:MODEL, azure:DEPLOYMENT, module:function (f(prompt, first, second) -> first|second|tie), "
        "or heuristic / embedding when every case has an expected answer (default: [judge] of evalnb.toml).",
    ),
    judge_base_url: str | None = typer.Option(
        None,
        "--judge-base-url",
        help="OpenAI-compatible endpoint of the judge, e.g. http://127.0.0.1:11434/v1.",
    ),
    rubric: str | None = typer.Option(None, "--rubric", help="The criterion a model judge compares by."),
    orderings: int = typer.Option(
        2,
        "--orderings",
        help="2: judge each pair in both orders (a flip is a tie); 1: once, in a seeded order.",
    ),
    confidence: float = typer.Option(
        0.95, "--confidence", help="Confidence of the test (one-sided) and interval."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the random orders and of the test."),
    concurrency: int = typer.Option(8, "-c", "--concurrency", help="Judge calls at a time."),
    no_cache: bool = typer.Option(
        False, "--no-cache", help="Do not read or write the judge cache (.evals/cache/)."
    ),
    suite: str | None = typer.Option(None, "--suite", help="The suite, when a version is shared by suites."),
    fmt: str = typer.Option("text", "--format", "-f", help="text (the report) or json (figures and pairs)."),
    store_url: str | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """A judge compares two stored versions' answers, case by case; exit 1 when b is worse at the confidence."""
    import evalnb
    from evalnb import config

    if fmt not in ("text", "json"):
        raise fail(f"--format must be text or json, not {fmt!r}")
    with exits():
        chosen = judge if judge is not None else config.judge_from(None, cache=False if no_cache else None)
        if chosen is None:
            raise fail("give --judge SPEC (openai:MODEL, module:function, ...) or a [judge] in evalnb.toml")
        pw = evalnb.Store(store_url, create=False).pairwise(
            a,
            b,
            suite=suite,
            judge=chosen,
            rubric=rubric,
            orderings=orderings,
            confidence=confidence,
            seed=seed,
            concurrency=concurrency,
            cache=False if no_cache else None,
            base_url=judge_base_url,
        )
    if fmt == "json":
        cases = json.loads(pw.cases.drop(columns=["prompt", "a", "b"]).to_json(orient="records"))
        doc = {
            "a": pw.a_label,
            "b": pw.b_label,
            "judge": pw.judge,
            "win_rate": _number(pw.win_rate),
            "ci_low": _number(pw.ci_low),
            "ci_high": _number(pw.ci_high),
            "p_value": _number(pw.p_value),
            "position_bias": _number(pw.position_bias),
            "confidence": pw.confidence,
            "verdict": pw.verdict,
            "exit_code": pw.exit_code,
            "counts": pw.counts,
            "cases": cases,
        }
        typer.echo(json.dumps(doc, indent=2, default=str))
    else:
        typer.echo(pw.report())
    raise typer.Exit(pw.exit_code)
