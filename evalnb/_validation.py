"""pydantic validation errors as what a person reads: a location and a sentence.

The one translator of a ``pydantic.ValidationError``: the suite formats (``evalnb/formats/_common.py``, which
adds suggestions and document order), ``evalnb.toml`` (``evalnb/config.py``), a saved result, a stored run's
suite and an Inspect log all say a problem the same way: ``items[0].runs must be an integer, got string``.
:func:`problems` turns each of pydantic's errors into a :class:`Problem`; :func:`describe` joins the first few
into one line for a message that names one file.

The kinds of problem follow docs/extending.md, error codes: ``TYPE_MISMATCH`` (a value of the wrong type),
``INVALID_VALUE`` (the type is right, the value is not allowed), ``MISSING_FIELD``, ``UNKNOWN_FIELD``, and the
code a model's own validator raised (``BLANK_FIELD``, through ``PydanticCustomError("blank_field", ...)``).
pydantic is not imported here: the errors are read as the plain dicts ``exc.errors()`` gives.

Example::

    from pydantic import BaseModel, ValidationError
    from evalnb._validation import describe

    class Item(BaseModel):
        runs: int

    try:
        Item.model_validate({"runs": "x"})
    except ValidationError as exc:
        describe(exc)
    # "runs: must be an integer, got string"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalnb.errors import SuiteCode

__all__ = ["SHOWN", "Loc", "Problem", "describe", "format_loc", "problem", "problems", "shown", "type_name"]

Loc = tuple[str | int, ...]

SHOWN = 60
"""The most characters of a value or key an error message (or location) shows (:func:`shown`)."""

_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")

# Codes a model's own validator may raise by name (PydanticCustomError("invalid_value", ...)); INTERNAL_ERROR
# marks a failure of evalnb, not of the input.
_OWN_CODES = frozenset(c.value for c in SuiteCode if c is not SuiteCode.INTERNAL_ERROR)

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean (true or false)",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "null",
}
_INVALID = {
    "greater_than",
    "greater_than_equal",
    "less_than",
    "less_than_equal",
    "literal_error",
    "enum",
    "finite_number",
    "too_short",
    "too_long",
    "string_too_short",
    "string_too_long",
    "string_pattern_mismatch",
    "multiple_of",
    "value_error",
    "assertion_error",
}


def format_loc(loc: Iterable[str | int]) -> str:
    """``("tasks", 0, "assertions", 1, "equals")`` -> ``"tasks[0].assertions[1].equals"``.

    Keys that are not plain names are quoted (``evaluators["my key"]``) so the location stays unambiguous.
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part) and len(part) <= SHOWN:
            out += f".{part}" if out else part
        else:
            out += f"[{shown(part)}]"
    return out


def type_name(value: object) -> str:
    """A reader's name for a parsed value's type: ``string``, ``integer``, ``list``, ``mapping`` ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def shown(value: object, limit: int = SHOWN) -> str:
    """A value or key as an error message shows it: its ``repr``, cut to ``limit`` characters with ``...``.

    A 4 MB ``schemaVersion`` or a 100,000-character key must not become a 4 MB message (or location).

    Example::

        shown("x" * 1000)
        # "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx..."
    """
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class Problem:
    """One of pydantic's errors, as evalnb says it.

    Attributes:
        loc: where, as pydantic gave it (keys and list indexes; union tags included).
        kind: pydantic's error type (``int_type``, ``missing``, ``extra_forbidden`` ...).
        code: the code of docs/extending.md, error codes (``TYPE_MISMATCH``, ``INVALID_VALUE``, ``MISSING_FIELD``,
            ``UNKNOWN_FIELD``, or the validator's own code such as ``BLANK_FIELD``).
        sentence: what is wrong, said after the value's name (``must be an integer, got string``).
        joiner: what goes between the name and the sentence: ``" "``, or ``": "`` before a message of
            pydantic's own that does not read on from a name.
        input: the offending value (None when pydantic gave none).
        ctx: pydantic's context (the expected tags of a union ...).
    """

    loc: Loc
    kind: str
    code: str
    sentence: str
    joiner: str = " "
    input: Any = None
    ctx: Mapping[str, Any] = field(default_factory=dict)

    @property
    def location(self) -> str:
        """``loc`` formatted: ``items[0].runs``."""
        return format_loc(self.loc)

    def said(self, subject: str | None = None) -> str:
        """The sentence after ``subject`` (by default the location, or ``the whole input`` at the top)."""
        return f"{subject or self.location or 'the whole input'}{self.joiner}{self.sentence}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def problem(error: Mapping[str, Any], *, values: bool = True) -> Problem:
    """One error of ``ValidationError.errors()`` as a :class:`Problem`: the one rule of what it says.

    ``values=False`` leaves the offending value out of the sentence (``must be an integer``), for a message
    about data the reader did not write (a stored run).
    """
    kind = str(error.get("type", ""))
    loc: Loc = tuple(error.get("loc", ()))
    value = error.get("input")
    ctx = error.get("ctx") or {}
    msg = str(error.get("msg", ""))

    def made(code: str, sentence: str, joiner: str = " ") -> Problem:
        return Problem(loc, kind, code, sentence, joiner, value, ctx)

    if kind == "missing":
        return made("MISSING_FIELD", "is missing (a required key)")
    if kind in ("extra_forbidden", "invalid_key"):
        return made("UNKNOWN_FIELD", "is not a key defined here")
    if kind in _EXPECTED:
        got = f", got {type_name(value)}" if values else ""
        return made("TYPE_MISMATCH", f"must be {_EXPECTED[kind]}{got}")
    if kind.upper() in _OWN_CODES:  # raised by a model's own validator with PydanticCustomError
        return made(kind.upper(), msg)
    if kind in _INVALID:
        text = msg or "is not allowed"
        text = text.replace("Input should be", "must be").replace("Value error, ", "")
        got = f", got {shown(value)}" if values else ""
        return made("INVALID_VALUE", f"{_lower_first(text)}{got}")
    # Any other complaint of pydantic's is about the value's type (a date where a string belongs).
    return made("TYPE_MISMATCH", msg or "wrong type", ": ")


def problems(exc: Any, *, values: bool = True) -> list[Problem]:
    """Every error of a ``pydantic.ValidationError``, in pydantic's order (``values``: see :func:`problem`)."""
    return [problem(e, values=values) for e in exc.errors(include_url=False)]


def describe(exc: Any, *, limit: int = 3, whole: str = "the whole input", values: bool = True) -> str:
    """The first ``limit`` problems of a ``ValidationError`` in one line, ``location: sentence; ...``, with
    how many more there are: for a message about one file or one stored value.

    Args:
        exc: the error.
        limit: how many problems to show.
        whole: what a problem of the top level is called (``the whole definition``).
        values: whether the sentences show the offending values (see :func:`problem`).
    """
    found = problems(exc, values=values)
    shown_ = "; ".join(f"{p.location or whole}: {p.sentence}" for p in found[:limit])
    more = f" (and {len(found) - limit} more)" if len(found) > limit else ""
    return f"{shown_}{more}"
