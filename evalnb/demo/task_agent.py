"""A small command-line task agent for the TOML example suite (``evalnb.examples.path("tasks")``); offline.

Run it as ``python -m evalnb.demo.task_agent`` with the task on standard input (or as arguments). It knows
three kinds of task, the ones the example suite asks for:

* ``Summarize this text in three sentences: TEXT``: an extractive summary (the three sentences whose words
  are most frequent in the text, in their original order), written to ``output/summary.txt`` in the working
  directory and printed under a ``Summary`` heading. A placeholder text (``[...]``) gets an honest answer
  that there is nothing to summarise;
* ``How many words are in the sentence '...'``: the number, alone on the line;
* ``List the capitals of A, B and C, one per line``: the capitals from a built-in table.

It exits 0 when it did the task and 1 when it does not know the task. ``--flaw`` gives the "previous
version" with three realistic bugs: the summary is written to ``summary.txt`` instead of
``output/summary.txt``, the word count comes in a sentence ("There are 4 words."), and the capitals come
alphabetically on one line.

Through evalnb it is an ``evalnb.agents.Command``::

    from evalnb.demo.task_agent import command
    result = evalnb.run(evalnb.examples.path("tasks"), command(), judge="heuristic")
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb._text import FUNCTION_WORDS, PLAIN_WORD, content_words, sentences
from evalnb.errors import AgentError

if TYPE_CHECKING:
    from evalnb.agents._command import Command

__all__ = ["CAPITALS", "command", "main", "solve"]

CAPITALS = {
    "austria": "Vienna",
    "belgium": "Brussels",
    "canada": "Ottawa",
    "denmark": "Copenhagen",
    "finland": "Helsinki",
    "france": "Paris",
    "germany": "Berlin",
    "greece": "Athens",
    "ireland": "Dublin",
    "italy": "Rome",
    "japan": "Tokyo",
    "netherlands": "Amsterdam",
    "norway": "Oslo",
    "poland": "Warsaw",
    "portugal": "Lisbon",
    "spain": "Madrid",
    "sweden": "Stockholm",
    "switzerland": "Bern",
    "united kingdom": "London",
    "united states": "Washington, D.C.",
}
_PLACEHOLDER = re.compile(r"^\W*(\.\.\.|…)?\W*$")


def _terms(text: str) -> list[str]:
    # Every word but the commonest function words counts, one-letter ones too: a sentence's weight is the
    # mean frequency of what it talks about.
    return content_words(text.lower(), stop=FUNCTION_WORDS, pattern=PLAIN_WORD, min_length=1)


def _unknown_task(message: str) -> AgentError:
    # The agent does not know how to do what it was asked: an agent failure like any other.
    return AgentError(message, code="UNKNOWN_TASK")


def summarize(text: str, *, n: int = 3) -> str:
    """An extractive summary: the ``n`` sentences with the most frequent content words, in text order.

    Example::

        summarize("Cats sleep. Cats eat fish. Dogs bark. Cats purr.", n=2)
        # 'Cats eat fish. Cats sleep.'
    """
    found = sentences(text)
    if len(found) <= n:
        return " ".join(found)
    freq = Counter(_terms(text))

    def weight(sentence: str) -> float:
        tokens = _terms(sentence)
        return sum(freq[w] for w in tokens) / (len(tokens) or 1)

    best = sorted(range(len(found)), key=lambda i: (-weight(found[i]), i))[:n]
    return " ".join(found[i] for i in sorted(best))


def solve(prompt: str, *, workdir: Path, flaw: bool = False) -> str:
    """Do one task and return what to print; may write ``output/summary.txt`` under ``workdir``.

    Raises:
        AgentError: ``UNKNOWN_TASK`` for a prompt that is none of the three tasks.

    Example::

        solve("How many words are in the sentence 'the quick brown fox'?", workdir=Path("."))
        # '4'
    """
    text = prompt.strip()
    m = re.match(r"(?is)^\s*summari[sz]e\b[^:]*:\s*(.*)$", text)
    if m:
        source = m.group(1).strip()
        if _PLACEHOLDER.match(source.strip("[]")):
            summary = (
                f"The source text was not included (only the placeholder {source!r}), so there is "
                "nothing to summarise. A three-sentence summary needs the full text after the colon."
            )
        else:
            summary = summarize(source)
        target = workdir / ("summary.txt" if flaw else Path("output") / "summary.txt")
        atomic_write(target, summary + "\n")
        return f"Summary (written to {target.relative_to(workdir).as_posix()}):\n{summary}"

    m = re.search(r"(?is)how many words .*?['\"‘“](.+?)['\"’”]", text)
    if m:
        count = len(m.group(1).split())
        return f"There are {count} words." if flaw else str(count)

    m = re.search(r"(?is)capitals? of (.+?)(?:,\s*one per line|\.|$)", text)
    if m:
        names = [n.strip().lower() for n in re.split(r",|\band\b", m.group(1)) if n.strip()]
        unknown = [n for n in names if n not in CAPITALS]
        if unknown:
            raise _unknown_task(f"no capital known for {', '.join(unknown)}")
        capitals = [CAPITALS[n] for n in names]
        return ", ".join(sorted(capitals)) if flaw else "\n".join(capitals)

    raise _unknown_task("I can summarise a text, count the words of a quoted sentence, or list capitals")


def main(argv: list[str] | None = None) -> int:
    """The command line: the task from the arguments, or from standard input when there are none."""
    parser = argparse.ArgumentParser(
        prog="python -m evalnb.demo.task_agent", description=__doc__.split("\n")[0]
    )
    parser.add_argument("task", nargs="*", help="the task (default: read from standard input)")
    parser.add_argument("--flaw", action="store_true", help="behave like the flawed previous version")
    args = parser.parse_args(argv)
    prompt = " ".join(args.task) if args.task else sys.stdin.read()
    try:
        out = solve(prompt, workdir=Path.cwd(), flaw=args.flaw)
    except AgentError as exc:
        print(f"task agent: {exc}", file=sys.stderr)
        return 1
    print(out)
    return 0


def command(*, flaw: bool = False, **options: Any) -> Command:
    """This agent as an :class:`evalnb.agents.Command` running ``python -m evalnb.demo.task_agent``.

    The child gets ``PYTHONPATH`` pointing at the folder this evalnb was imported from (a checkout, or
    site-packages), so it runs the same evalnb even when the package is not installed.

    Example::

        result = evalnb.run(evalnb.examples.path("tasks"), command(), judge="heuristic", runs=1)
    """
    from evalnb.agents._command import Command

    root = Path(__file__).resolve().parents[2]  # the import root holding evalnb/ (code, not data)
    argv = [sys.executable, "-m", "evalnb.demo.task_agent", *(["--flaw"] if flaw else [])]
    options.setdefault("name", "task-agent" + ("-flawed" if flaw else ""))
    options.setdefault("timeout", 60)
    env = {"PYTHONPATH": str(root), **dict(options.pop("env", None) or {})}
    return Command(argv, env=env, **options)


if __name__ == "__main__":
    sys.exit(main())
