"""The typer app of the ``evalnb`` command line, and what its commands share: failing with exit 2, printing a
suite's errors, help texts, and the rewriting of options that take several values.

Exit codes (README.md, Use it in CI): 0 all passed, 1 a check failed or a case was degraded, 2 the run could not
start.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import typer

__all__ = ["STORE_HELP", "app", "exits", "expand_greedy", "fail"]

app = typer.Typer(
    name="evalnb",
    help="Evaluate LLM agents: load TOML, YAML and JSON suites, run them, compare versions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

STORE_HELP = "Run store: a SQLite path or SQLAlchemy URL (default .evals/evalnb.db)."


@app.callback()
def _root() -> None:
    """Evaluate LLM agents: load TOML, YAML and JSON suites, run them, compare versions."""
    # A callback keeps `evalnb run ...` a subcommand even while `run` is the only command registered. It
    # loads the plugins (installed packages' evalnb.plugins entry points, then $EVALNB_PLUGINS) before any
    # command, so a broken one is one clear error whatever the command.
    from evalnb._registry import load_plugins
    from evalnb.errors import ConfigError

    try:
        load_plugins()
    except ConfigError as exc:
        raise fail(str(exc)) from exc


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr; the Exit to raise (2: the run could not start)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextlib.contextmanager
def exits() -> Iterator[None]:
    """Turn what the API raises into the command line's answer: a suite's errors one per line (as ``evalnb
    validate`` prints them, so one fix-and-rerun round is enough), any other evalnb or OS error, or running out
    of memory, on one line; exit 2 either way."""
    from evalnb.errors import EvalnbError, SuiteError

    try:
        yield
    except (typer.Exit, typer.BadParameter):
        raise
    except SuiteError as exc:
        for err in exc.errors:  # this error first, then the rest in document order
            typer.echo(f"error: {err.describe()}", err=True)
        raise typer.Exit(2) from exc
    except (EvalnbError, OSError) as exc:
        raise fail(str(exc)) from exc
    except MemoryError as exc:
        # A run's own out-of-memory is a RunError saying what was saved; this is running out elsewhere
        # (loading a suite, writing a report): a command that could not complete, not a failed check.
        detail = f" ({exc})" if str(exc) else ""
        raise fail(f"out of memory{detail}: the command could not complete") from None


# Options taking several values after one flag (`--prompts "a" "b" --expected "x" "y"`: docs/dataset-json.md, without
# a file); click options take one value each, so main() rewrites them into repeated flags before parsing.
GREEDY_OPTIONS = {"run": ("--prompts", "--expected")}


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


def ask_yes(question: str) -> bool:
    """A (Y/n) question on the terminal; Ctrl-D (end of input) is a no, never a traceback or click's abort."""
    try:
        answer = input(question).strip().lower()
    except EOFError:
        typer.echo("")
        return False
    return answer in ("", "y", "yes")


STARTER_ASK = "No prompts file found in current directory or ./evals/\nCreate a starter evals file with sample prompts? (Y/n): "
