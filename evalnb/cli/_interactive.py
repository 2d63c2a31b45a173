"""``evalnb run --interactive``: a prompt loop without a dataset; what was tried can be saved as one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from evalnb.typing import AgentLike

__all__ = ["prompt_loop"]


def prompt_loop(agent: AgentLike, *, timeout: float) -> int:
    """Send what the user types, show the answer and the scores given without a judge; save on request."""
    import evalnb
    from evalnb.formats._dataset_json import inline_suite, save_items

    tried: list[dict[str, str]] = []
    typer.echo("Interactive mode: type a prompt (empty line or Ctrl-D to finish).")
    while True:
        prompt = _ask("prompt> ")
        if not prompt:
            break
        expected = _ask("expected (optional)> ")
        suite = inline_suite([prompt], [expected] if expected else None, judged=False)
        result = evalnb.run(suite, agent, runs=1, timeout=timeout, progress=False, retries=0)
        row = result.runs.iloc[0]
        typer.echo(f"error: {row['error']}" if row["status"] == "degraded" else f"answer: {row['response']}")
        for s in result.scores.itertuples():
            typer.echo(f"  {s.check_id}: {'PASS' if s.passed else 'FAIL'} ({s.reason})")
        tried.append({"prompt": prompt, **({"expected_response": expected} if expected else {})})
    if not tried or _ask(f"Save these {len(tried)} prompt(s) as a dataset? (y/N): ").lower() not in (
        "y",
        "yes",
    ):
        return 0
    default = Path("evals") / f"interactive-{time.strftime('%Y%m%d-%H%M%S')}.json"
    while True:
        try:
            where = input(f"File [{default}]: ").strip()
        except EOFError:
            typer.echo("\nnothing saved")
            return 0
        path = Path(where) if where else default
        try:
            # Never overwrites: the name typed may be an existing dataset. Ask again rather than lose the session.
            saved = save_items(tried, path, description="Saved from evalnb run --interactive")
        except FileExistsError:
            typer.echo(f"{path} already exists; give another name (Ctrl-D: do not save)")
            continue
        except OSError as exc:
            typer.echo(f"cannot write {path}: {exc.strerror or exc}; give another name (Ctrl-D: do not save)")
            continue
        typer.echo(f"Saved {saved}")
        return 0


def _ask(question: str) -> str:
    try:
        return input(question).strip()
    except EOFError:
        return ""
