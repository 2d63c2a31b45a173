"""A table of cases -> Suite: which columns mean what, the checks, one case per row (docs/tables.md).

The table is plain data (what ``_parse`` reads from a file, or what ``from_frame`` takes from a DataFrame):
``{"columns": [...], "rows": [{column: text or None}], "lines": [...] or "labels": [...]}``. Every problem is
recorded with its location (``rows[3].prompt``, ``columns.prompt``, ``checks.PartialMatch.threshold``) and the
first is raised with all of them in ``.errors``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from evalnb.checks import _registry as registry
from evalnb.formats._common import EXPECTED_CHECKS, Loc, Problems, from_validation_errors, nearest, shown
from evalnb.formats._dataset_json.evaluators import BUILTIN_EVALUATORS, evaluator_spec
from evalnb.formats._dataset_json.models import OPTIONS
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

__all__ = ["ALIASES", "Checks", "build", "resolve_checks"]

ALIASES: dict[str, tuple[str, ...]] = {
    "prompt": ("prompt",),
    "expected": ("expected", "expected_response"),
    "id": ("id", "testId"),
    "category": ("category",),
}
"""The column names each role is read from when the caller names no other (docs/tables.md, columns)."""

# Besides the dataset evaluators (ExactMatch, Similarity, ...) and registered checks, a table may name the
# checks of the TOML tasks whose options do not depend on the row.
_SPECS: dict[str, type[Any]] = {
    "regex": RegexCheck,
    "llm_judge": LLMJudgeCheck,
    "exit_code": ExitCodeCheck,
    "file_exists": FileExistsCheck,
    "semantic_similarity": SemanticSimilarityCheck,
}

Checks = str | Mapping[str, Any] | Iterable[Any]
"""What ``checks=`` takes: a name, names (or check specs), or a mapping name -> options."""

SHOWN_ROWS = 5
"""How many rows a warning names before it counts the rest."""


def build(
    data: Mapping[str, Any],
    *,
    name: str,
    format: str,
    prompt: str = "prompt",
    expected: str | None = "expected",
    id: str | None = None,
    category: str | None = None,
    checks: Checks = EXPECTED_CHECKS,
) -> Suite:
    """The suite of a table: one case (one turn, one run) per row.

    Raises:
        SuiteError: every problem of the table, the first in table order (see the module docstring).
    """
    problems = Problems(data)
    columns = list(data.get("columns", []))
    rows: list[Mapping[str, Any]] = list(data.get("rows", []))
    roles = {
        "prompt": _column("prompt", prompt, columns, problems, required=True),
        "expected": _column("expected", expected, columns, problems) if expected is not None else None,
        "id": _column("id", id, columns, problems),
        "category": _column("category", category, columns, problems),
    }
    specs = resolve_checks(checks, problems)
    if not rows:
        problems.add("INVALID_VALUE", "the table has no rows: give one row per case", ("rows",))
    where = _Where(data)
    cases: list[Case] = []
    unchecked: list[int] = []
    seen: dict[str, int] = {}
    generated: dict[str, int] = {}
    texts: dict[str, str] = {}  # a category repeated by many rows is one string
    for i, row in enumerate(rows):
        case = _row_case(row, i, roles, specs, where, problems, seen, generated, texts)
        if case is not None:
            cases.append(case)
            if len(case.turns[0].checks) < len(specs):
                unchecked.append(i)
    problems.raise_if_any()
    suite = Suite(
        name=name,
        format=format,
        cases=cases,
        meta={"columns": {role: col for role, col in roles.items() if col is not None}},
    )
    if unchecked:
        suite.warnings.append(_unchecked(unchecked, len(rows), specs, roles["expected"], where))
    return suite


def _shared_text(value: str, texts: dict[str, str] | None) -> str:
    return value if texts is None else texts.setdefault(value, value)


def _row_case(
    row: Mapping[str, Any],
    i: int,
    roles: dict[str, str | None],
    specs: list[CheckSpec],
    where: _Where,
    problems: Problems,
    seen: dict[str, int],
    generated: dict[str, int],
    texts: dict[str, str] | None = None,
) -> Case | None:
    """The case of row ``i``, or None after recording why it has none (an empty prompt, a bad id)."""
    text = {role: _text(row, col, i, where, problems) for role, col in roles.items() if col is not None}
    the_prompt = text.get("prompt")
    blank = the_prompt is None or not the_prompt.strip()
    if roles["prompt"] is not None and blank:
        problems.add(
            "BLANK_FIELD",
            f"the prompt of {where(i)} is empty; every row needs one",
            ("rows", i, roles["prompt"]),
        )
    case_id = text.get("id")
    if roles["id"] is not None and not _own_id(case_id, i, roles["id"], where, problems, seen):
        return None
    if the_prompt is None or blank:
        return None  # recorded above (or, with no prompt column, once for the table)
    if case_id is None:
        case_id = _generated_id(the_prompt, generated)
    answer = text.get("expected")
    if answer is not None and not answer.strip():
        answer = None  # an answer of blanks compares with nothing (docs/tables.md)
    mine = specs if answer is not None else [s for s in specs if not s.needs_expected]
    category_value = text.get("category")
    return Case(
        id=case_id,
        name=case_id if roles["id"] is not None else _short(the_prompt),
        category=_shared_text(category_value, texts) if category_value and category_value.strip() else None,
        turns=[Turn(prompt=the_prompt, expected=answer, checks=list(mine))],
    )


def _own_id(
    case_id: str | None, i: int, column: str, where: _Where, problems: Problems, seen: dict[str, int]
) -> bool:
    """Whether row ``i``'s id is given and not used by an earlier row; records the problem if not."""
    if case_id is None or not case_id.strip():
        problems.add("BLANK_FIELD", f"the id of {where(i)} is empty", ("rows", i, column))
        return False
    if case_id in seen:
        problems.add(
            "INVALID_VALUE",
            f"duplicate id {shown(case_id)} in {where(i)} (first used by {where(seen[case_id])}); "
            "give each row its own",
            ("rows", i, column),
        )
        return False
    seen[case_id] = i
    return True


class _Where:
    """How a message names a row: its file line, its DataFrame index label, or its position."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.lines: Sequence[int] | None = data.get("lines")
        self.labels: Sequence[Any] | None = data.get("labels")

    def __call__(self, i: int) -> str:
        if self.lines is not None:
            return f"line {self.lines[i]}"
        if self.labels is not None:
            return f"the row at index {shown(self.labels[i])}"
        return f"row {i}"


def _column(
    role: str, given: str | None, columns: list[str], problems: Problems, *, required: bool = False
) -> str | None:
    """The column of ``role``: the one named, else the first of its usual names present (else None)."""
    aliases = ALIASES[role]
    if given is not None and given not in aliases:
        if given in columns:
            return given
        problems.add(
            "MISSING_FIELD",
            f"no column {shown(given)} ({role}={given!r}); the table's columns: {_listing(columns)}",
            ("columns", given),
        )
        return None
    present = [a for a in aliases if a in columns]
    if len(present) > 1:
        problems.add(
            "INVALID_VALUE",
            f"both {' and '.join(map(repr, present))} are columns; keep one, or say which with {role}=",
            ("columns", present[1]),
        )
        return None
    if present:
        return present[0]
    # docs/tables.md, errors: a near miss of a column the table lacks ("promt", "Expected") is UNKNOWN_FIELD naming
    # it.
    if role in ("prompt", "expected"):
        for col in columns:
            hint = nearest(col, aliases)
            if hint is not None:
                problems.add(
                    "UNKNOWN_FIELD",
                    f"column {shown(col)} is not one evalnb reads; did you mean {hint!r}? "
                    f"(or name it with {role}={col!r})",
                    ("columns", col),
                    suggestion=hint,
                )
                return None
    if required:
        problems.add(
            "MISSING_FIELD",
            f"no {shown(aliases[0])} column; the table's columns: {_listing(columns)} "
            f"(name the {role} column with {role}=)",
            ("columns", aliases[0]),
        )
    return None


def _listing(columns: list[str]) -> str:
    return ", ".join(shown(c) for c in columns[:20]) + (" ..." if len(columns) > 20 else "") or "none"


def _text(row: Mapping[str, Any], col: str, i: int, where: _Where, problems: Problems) -> str | None:
    value = row.get(col)
    if value is None or isinstance(value, str):
        return value
    problems.add(
        "TYPE_MISMATCH",
        f"column {shown(col)} of {where(i)} must be text, got {type(value).__name__}",
        ("rows", i, col),
    )
    return None


def _generated_id(prompt: str, generated: dict[str, int]) -> str:
    # docs/tables.md: with no id column a case is named by its prompt (a row moved or inserted keeps its id, so
    # two versions of a table still compare case by case); a prompt asked again gets -2, -3 in table order.
    base = "row-" + hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    n = generated.get(base, 0) + 1
    generated[base] = n
    return base if n == 1 else f"{base}-{n}"


def _short(prompt: str, limit: int = 60) -> str:
    line = prompt.strip().splitlines()[0] if prompt.strip() else prompt
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _unchecked(rows: list[int], total: int, specs: list[CheckSpec], column: str | None, where: _Where) -> str:
    names = ", ".join(dict.fromkeys(s.name for s in specs if s.needs_expected))
    if column is None:
        return (
            f"the table has no expected column ({' or '.join(map(repr, ALIASES['expected']))}): {names} "
            f"compare with an expected answer, so no row is checked by them"
        )
    named = ", ".join(where(i) for i in rows[:SHOWN_ROWS])
    more = f" and {len(rows) - SHOWN_ROWS:,} more" if len(rows) > SHOWN_ROWS else ""
    return (
        f"{len(rows):,} of {total:,} rows have no expected answer in column {column!r} ({named}{more}): {names} "
        f"compare with one, so those rows are not checked by them"
    )


def resolve_checks(checks: Checks, problems: Problems) -> list[CheckSpec]:
    """The check specs ``checks=`` names, with their options' final values.

    Names are the dataset evaluators (``ExactMatch``, ``PartialMatch``, ``Similarity``, ``Citations`` ...),
    the TOML task checks (``regex``, ``llm_judge``, ...), or checks registered with ``evalnb.checks.register``;
    a check spec object is taken as it is.
    """
    if isinstance(checks, str):
        entries: list[tuple[Any, Any]] = [(checks, {})]
    elif isinstance(checks, Mapping):
        entries = list(checks.items())
    else:
        try:
            entries = [(c, {}) for c in checks]
        except TypeError:
            problems.add(
                "TYPE_MISMATCH",
                f"checks must be a name, names or a mapping name -> options, got {type(checks).__name__}",
                ("checks",),
            )
            return []
    specs: list[CheckSpec] = []
    for key, options in entries:
        spec = _spec(key, {} if options is None else options, problems)
        if spec is not None:
            specs.append(spec)
    return specs


def _spec(key: Any, options: Any, problems: Problems) -> CheckSpec | None:
    if hasattr(key, "needs_expected") and hasattr(key, "options"):
        return key  # a check spec object (evalnb.suite.RegexCheck(...))
    loc: Loc = ("checks", str(key))
    if not isinstance(key, str):
        problems.add("TYPE_MISMATCH", f"a check is named by a string, got {type(key).__name__}", loc)
        return None
    model = _SPECS.get(key)
    if model is not None and key not in OPTIONS:
        if not isinstance(options, Mapping):
            problems.add("TYPE_MISMATCH", f"options of {shown(key)} must be a mapping", loc)
            return None
        try:
            return model.model_validate({**options, "type": key})
        except ValidationError as exc:
            problems.extend(from_validation_errors(exc, root=model, data=dict(options), prefix=loc))
            return None
    if key not in OPTIONS and registry.user_definition(key) is None:
        known = [*BUILTIN_EVALUATORS, *_SPECS, *registry.known()]
        hint = nearest(key, known)
        problems.add(
            "UNKNOWN_FIELD",
            f"unknown check {shown(key)}"
            + (f"; did you mean {hint!r}?" if hint else "")
            + f" (known: {', '.join(dict.fromkeys(known))}; register your own with evalnb.checks.register)",
            loc,
            suggestion=hint,
        )
        return None
    return evaluator_spec(key, options, loc, problems)
