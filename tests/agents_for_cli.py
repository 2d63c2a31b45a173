"""Small agents the command-line tests load with ``--agent tests/agents_for_cli.py:NAME``."""

from __future__ import annotations

from typing import Any

# Answers keyed by prompt, for the inline and fixture suites of the CLI tests.
ANSWERS = {
    "What is the capital of France?": "Paris",
    "What is 2 + 2?": "4",
}


def oracle(request: Any) -> dict[str, Any]:
    """Answers every known prompt correctly, as a process that succeeded and wrote what tasks ask for."""
    answer = ANSWERS.get(request.prompt, "summary: done")
    if request.workdir is not None:
        out = request.workdir / "output"
        out.mkdir(exist_ok=True)
        (out / "summary.txt").write_text(answer)
    return {"text": answer, "stdout": f"summary: {answer}", "exit_code": 0}


def wrong(prompt: str) -> str:
    """Always wrong."""
    return "I do not know."


def boom(prompt: str) -> str:
    """Always raises."""
    raise RuntimeError("agent exploded")


echo = str
