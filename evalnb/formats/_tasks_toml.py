"""The TOML task suite (docs/tasks-toml.md): ``name`` and ``[[tasks]]`` with typed ``[[tasks.assertions]]``.

Strict by design (docs/tasks-toml.md, where evalnb is stricter than "a TOML file"): a misspelt or unknown key anywhere
fails the load and names the key and where it is; a check is never skipped silently.

Example::

    suite = load_text('name = "s"\\n[[tasks]]\\nid = "t"\\nprompt = "hi"\\n')
    suite.cases[0].runs
    # 3
"""

from __future__ import annotations

import re
import sys
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from evalnb.formats._common import Edge, NonBlank, Problems, custom_error, fail, shown
from evalnb.formats._registry import Format, Sniff, register
from evalnb.suite import (
    Case,
    CheckSpec,
    ExitCodeCheck,
    FileExistsCheck,
    LLMJudgeCheck,
    RegexCheck,
    SemanticSimilarityCheck,
    Suite,
    Turn,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["TasksDoc", "load_data", "load_text", "parse"]

MAX_RUNS = 2**32 - 1  # docs/tasks-toml.md, keys and assertions: `runs` is 0..2**32-1


def _compiles(pattern: str) -> str:
    # docs/tasks-toml.md, where evalnb is stricter than "a TOML file": a pattern that is not a valid regular
    # expression fails the load. It is compiled
    # by the engine the run searches with, so load and run agree on what a valid pattern is.
    from evalnb.checks._text import compile_pattern

    try:
        compile_pattern(pattern)
    except ValueError as exc:
        raise custom_error("INVALID_VALUE", f"is not a valid regular expression: {exc}") from None
    return pattern


class ExitCodeAssertion(Edge):
    """Passes when the run's exit code equals ``equals``."""

    type: Literal["exit_code"]
    equals: int


class FileExistsAssertion(Edge):
    """Passes when a file exists at ``path`` after the run (relative to the run's working directory)."""

    type: Literal["file_exists"]
    path: NonBlank


class RegexAssertion(Edge):
    """Passes when ``pattern`` is found (search, not full match) in ``stdout`` or the final ``result``."""

    type: Literal["regex"]
    on: Literal["stdout", "result"]
    pattern: Annotated[NonBlank, AfterValidator(_compiles)]


class LLMJudgeAssertion(Edge):
    """An LLM judge rates the output against ``rubric``; the rubric is the whole criterion."""

    type: Literal["llm_judge"]
    rubric: NonBlank


class SemanticSimilarityAssertion(Edge):
    """Passes when the cosine of offline sentence embeddings of the result and ``value`` is ``>= threshold``
    (an evalnb assertion; wordllama, ``pip install "evalnb[offline-judge]"``)."""

    type: Literal["semantic_similarity"]
    value: NonBlank
    threshold: float = Field(default=0.5, ge=-1, le=1)


Assertion = Annotated[
    ExitCodeAssertion
    | FileExistsAssertion
    | RegexAssertion
    | LLMJudgeAssertion
    | SemanticSimilarityAssertion,
    Field(discriminator="type"),
]


class TaskDoc(Edge):
    """One ``[[tasks]]`` table."""

    id: NonBlank
    prompt: NonBlank
    runs: int = Field(default=3, ge=0, le=MAX_RUNS)
    agent: NonBlank | None = None
    assertions: list[Assertion] = Field(default_factory=list)


class TasksDoc(Edge):
    """A TOML task suite: a name and its tasks."""

    name: NonBlank
    tasks: list[TaskDoc] = Field(default_factory=list)


_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


def parse(text: str) -> dict[str, Any]:
    """Parse TOML text; a parser failure is ``MALFORMED_TOML`` with the line and column when known."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = _AT.search(msg)
        where = f"line {m.group(1)}, column {m.group(2)}" if m else ""
        fail("MALFORMED_TOML", _AT.sub("", msg).strip() or "invalid TOML", where)
    except RecursionError:
        fail("MALFORMED_TOML", "the document is nested too deeply")
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. an integer with too many digits
        fail("MALFORMED_TOML", f"invalid TOML: {exc}")


def _check(a: Any) -> CheckSpec:
    if isinstance(a, ExitCodeAssertion):
        return ExitCodeCheck(equals=a.equals)
    if isinstance(a, FileExistsAssertion):
        return FileExistsCheck(path=a.path)
    if isinstance(a, RegexAssertion):
        return RegexCheck(on=a.on, pattern=a.pattern)
    if isinstance(a, SemanticSimilarityAssertion):
        return SemanticSimilarityCheck(type="semantic_similarity", value=a.value, threshold=a.threshold)
    return LLMJudgeCheck(rubric=a.rubric)


def _duplicate_ids(data: Any, problems: Problems) -> None:
    # Ids are the row key in reports: two tasks with one id would merge their results. Checked on the
    # parsed document so a duplicate is reported alongside the other errors of the file.
    tasks = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(tasks, list):
        return
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        task_id = task.get("id") if isinstance(task, dict) else None
        if not isinstance(task_id, str) or not task_id.strip():
            continue  # a missing or blank id is reported by validation
        if task_id in seen:
            problems.add(
                "INVALID_VALUE",
                f"duplicate task id {shown(task_id)} (first used by tasks[{seen[task_id]}])",
                ("tasks", i, "id"),
            )
        else:
            seen[task_id] = i


def build(doc: TasksDoc) -> Suite:
    """Translate a validated document (ids already checked unique) into the one model."""
    cases: list[Case] = []
    # Equal assertions of different tasks are one check object (specs are not changed after the load), and a
    # repeated agent id one string.
    specs: dict[str, CheckSpec] = {}
    texts: dict[str, str] = {}
    for task in doc.tasks:
        checks = []
        for a in task.assertions:
            key = repr(a)  # the assertion model's type and every field
            if key not in specs:
                specs[key] = _check(a)
            checks.append(specs[key])
        turn = Turn(prompt=task.prompt, checks=checks)
        agent = None if task.agent is None else texts.setdefault(task.agent, task.agent)
        cases.append(Case(id=task.id, name=task.id, runs=task.runs, agent=agent, turns=[turn]))
    return Suite(name=doc.name, format="tasks-toml", cases=cases)


def load_text(text: str) -> Suite:
    """Load a TOML task suite from its text.

    Raises:
        SuiteError: ``MALFORMED_TOML``, ``UNKNOWN_FIELD``, ``MISSING_FIELD``, ``TYPE_MISMATCH``,
            ``INVALID_VALUE`` or ``BLANK_FIELD`` with the location of the offending key; the first error in
            document order, with every error of the file in ``.errors``.
    """
    return load_data(parse(text))


def load_data(data: dict[str, Any]) -> Suite:
    """Load a TOML task suite from its parsed document (see :func:`load_text`)."""
    problems = Problems(data)
    doc: TasksDoc | None = problems.validate(TasksDoc, data)
    _duplicate_ids(data, problems)
    problems.raise_if_any()
    assert doc is not None  # no problems means validation succeeded
    return build(doc)


register(
    Format(
        name="tasks-toml",
        suffixes=(".toml",),
        malformed="MALFORMED_TOML",
        parse=parse,
        build=lambda data, path: load_data(data),
        schema=lambda: TasksDoc.model_json_schema(by_alias=True),
        sniff=Sniff(
            order=20,
            accepts=bool,  # every text without `=` or a table parses as an empty TOML document
            # Nothing took the text: a `key = value` first line or a `[table]` header is broken TOML.
            fallback=lambda t: "=" in t.first_line or t.bracket_header,
        ),
        what="TOML task suites",
    )
)
