"""What the format modules share: strict edge models, error builders, locations and suggestions.

Every load failure is a :class:`~evalnb.errors.SuiteError` with a stable code. The code rules are those of
docs/extending.md, error codes, the same in every format:

* ``TYPE_MISMATCH``: the value has the wrong type (a string where an integer belongs);
* ``INVALID_VALUE``: the type is right but the value is not allowed (range, enumeration, bad regex);
* ``BLANK_FIELD``: a required string is empty or only whitespace;
* ``MISSING_FIELD``: a required key is absent;
* ``UNKNOWN_FIELD``: a key the format does not define, with the nearest valid key as a suggestion; when the
  unknown key is a near miss of a missing required key, the unknown key is what gets reported.

A loader reports every error it can find in one pass, not just the first: :class:`Problems` collects them
(all of pydantic's, plus the format's own checks) and raises one :class:`SuiteError`, the first in document
order, whose ``.errors`` lists them all. Parser failures (``MALFORMED_*``) stay single: past a syntax error
there is no document to check.
"""

from __future__ import annotations

import math
import sys
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal, NoReturn, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from evalnb._text import nearest
from evalnb._validation import format_loc, problem, shown, type_name
from evalnb.errors import SuiteCode, SuiteError

__all__ = [
    "CODES",
    "EXPECTED_CHECKS",
    "Edge",
    "Loc",
    "NonBlank",
    "Problems",
    "custom_error",
    "fail",
    "format_loc",
    "from_validation_error",
    "from_validation_errors",
    "nearest",
    "shown",
    "type_name",
    "validate",
]

Loc = tuple[str | int, ...]

EXPECTED_CHECKS: tuple[str, ...] = ("ExactMatch", "PartialMatch")
"""The checks a case with an expected answer gets when nothing names its checks: the deterministic matchers,
so a first run needs no judge. The one home of that default: tables of cases (``evalnb.from_frame``, CSV,
JSONL; docs/tables.md), ``evalnb run --prompts/--expected``, the starter of ``evalnb init`` and saved prompts."""

# The stable codes of a document's problems (errors.SuiteCode; docs/extending.md, error codes). INTERNAL_ERROR is left
# out: it marks a failure of evalnb, not of the document.
CODES: tuple[str, ...] = tuple(c.value for c in SuiteCode if c is not SuiteCode.INTERNAL_ERROR)


class Edge(BaseModel):
    """Base of the models at the format edge: strict types, no unknown keys, no NaN or infinity."""

    # defer_build: a model's validator is built when it first validates, not at import; a plain dataset item never
    # goes through most of them (8 ms of a dataset's load).
    model_config = ConfigDict(
        extra="forbid", strict=True, allow_inf_nan=False, populate_by_name=False, defer_build=True
    )


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank_field", "must not be empty or only whitespace")
    return value


# docs/extending.md, error codes: a required string that is empty or only whitespace is BLANK_FIELD.
NonBlank = Annotated[str, AfterValidator(_not_blank)]


def custom_error(code: str, message: str) -> PydanticCustomError:
    """A validation error raised inside an edge model that maps to ``code`` (e.g. ``INVALID_VALUE``)."""
    return PydanticCustomError(code.lower(), message)


def fail(
    code: str,
    message: str,
    loc: Loc | str = (),
    *,
    path: str | None = None,
    suggestion: str | None = None,
) -> NoReturn:
    """Raise a :class:`SuiteError`; ``loc`` is a path tuple or an already formatted location."""
    location = loc if isinstance(loc, str) else format_loc(loc)
    raise SuiteError(code, message, location=location, path=path, suggestion=suggestion)


# ------------------------------------------------------------------------------------------------------
# pydantic ValidationError -> SuiteError (each error said by evalnb._validation, the one translator)
# ------------------------------------------------------------------------------------------------------


def from_validation_errors(
    exc: ValidationError, *, root: type[BaseModel], data: Any, prefix: Loc = ()
) -> list[tuple[Loc, SuiteError]]:
    """Every error of a pydantic ``ValidationError`` of edge model ``root``, each with its path.

    Args:
        exc: the error pydantic raised validating ``data`` against ``root``.
        root: the edge model (used to name valid keys for suggestions).
        data: the validated input (used to find near-miss keys and offending values).
        prefix: where ``data`` sits in the whole document (``("items", 3)``).

    Returns:
        ``(path, error)`` pairs in pydantic's order; :class:`Problems` puts them in document order.
    """
    resolved = [(_clean(root, tuple(e["loc"])), e) for e in exc.errors(include_url=False)]

    # docs/extending.md, error codes: an unknown key that is a near miss of a missing required key is reported as the
    # unknown key with its suggestion, and the missing key is not reported as well.
    stands_for: dict[Loc, str] = {}
    dropped: set[int] = set()
    for n, ((loc, _), e) in enumerate(resolved):
        if e["type"] != "missing" or not loc:
            continue
        parent, missing = loc[:-1], str(loc[-1])
        for (other, _), o in resolved:
            if (
                o["type"] == "extra_forbidden"
                and other[:-1] == parent
                and other not in stands_for
                and nearest(other[-1], [missing]) is not None
            ):
                stands_for[other] = missing
                dropped.add(n)
                break
    out: list[tuple[Loc, SuiteError]] = []
    for n, ((loc, parent_model), e) in enumerate(resolved):
        if n in dropped:
            continue
        if e["type"] == "extra_forbidden" and loc in stands_for:
            full = prefix + loc
            out.append((full, _unknown(full, parent_model, suggestion=stands_for[loc])))
        else:
            out.append(_one(e, loc, parent_model, data=data, prefix=prefix))
    return out


def from_validation_error(
    exc: ValidationError, *, root: type[BaseModel], data: Any, prefix: Loc = ()
) -> SuiteError:
    """The first error, in document order, of a pydantic ``ValidationError``; ``.errors`` holds them all."""
    problems = Problems(data, base=prefix)
    problems.extend(from_validation_errors(exc, root=root, data=data, prefix=prefix))
    return problems.error()  # type: ignore[return-value]


def _one(
    e: Any, loc: Loc, parent_model: type[BaseModel] | None, *, data: Any, prefix: Loc
) -> tuple[Loc, SuiteError]:
    """One pydantic error -> ``(path it reports, SuiteError)``."""
    kind: str = e["type"]
    if loc and loc[-1] == "[key]":
        # pydantic checks a mapping's keys at `<mapping>.<key>.[key]`. Only YAML can give a key that is not
        # a string (`1997:`, `on:`, `~:`); report it at the mapping, naming the key as the file wrote it.
        full = prefix + loc[:-2]
        where = format_loc(full) or "the top level"
        key_value = e.get("input")
        return full, SuiteError(
            "TYPE_MISMATCH",
            f"key {shown(key_value)} in {where} must be a string, got {type_name(key_value)}; "
            "quote it in the file to keep it as text",
            location=format_loc(full),
        )
    full = prefix + loc
    where = format_loc(full)
    key = str(full[-1]) if full and isinstance(full[-1], str) else ""
    subject = shown(key) if key else (where or "the document")
    if kind == "missing":
        inside = format_loc(full[:-1])
        return full, SuiteError(
            "MISSING_FIELD",
            f"missing required key '{key}'" + (f" in {inside}" if inside else ""),
            location=where,
        )
    if kind in ("extra_forbidden", "invalid_key"):
        return full, _unknown(full, parent_model)
    if kind in ("union_tag_not_found", "union_tag_invalid"):
        # A discriminated union (an assertion's `type`): point at the tag itself.
        tag = "type"
        at_tag = (*full, tag)
        found = _at(data, loc)
        if isinstance(found, Mapping):
            if kind == "union_tag_not_found":
                near = [k for k in found if isinstance(k, str) and nearest(k, [tag])]
                if near:
                    return (*full, near[0]), _unknown((*full, near[0]), None, suggestion=tag)
                return at_tag, SuiteError(
                    "MISSING_FIELD",
                    f"missing required key '{tag}' in {where or 'the document'}",
                    location=format_loc(at_tag),
                )
            choices = [
                c.strip().strip("'") for c in str(e.get("ctx", {}).get("expected_tags", "")).split(",")
            ]
            tag_value = found.get(tag)
            if not isinstance(tag_value, str):
                return at_tag, SuiteError(
                    "TYPE_MISMATCH",
                    f"'{tag}' must be a string, got {type_name(tag_value)}",
                    location=format_loc(at_tag),
                )
            hint = nearest(tag_value, choices)
            return at_tag, SuiteError(
                "INVALID_VALUE",
                f"unknown {tag} {shown(tag_value)} at {where}; expected one of {', '.join(choices)}"
                + (f"; did you mean {hint!r}?" if hint else ""),
                location=format_loc(at_tag),
                suggestion=hint,
            )
        return full, SuiteError(
            "TYPE_MISMATCH", f"{subject} must be a mapping, got {type_name(found)}", location=where
        )
    said = problem(e)
    return full, SuiteError(said.code, said.said(subject), location=where)


def _unknown(full: Loc, parent_model: type[BaseModel] | None, *, suggestion: str | None = None) -> SuiteError:
    bad = full[-1] if full else ""
    inside = format_loc(full[:-1]) or "the top level"
    if suggestion is None and parent_model is not None:
        suggestion = nearest(bad, _keys(parent_model))
    msg = f"unknown key {shown(bad)} in {inside}"
    if suggestion:
        msg += f"; did you mean '{suggestion}'?"
    elif parent_model is not None:
        msg += f"; valid keys: {', '.join(_keys(parent_model))}"
    return SuiteError("UNKNOWN_FIELD", msg, location=format_loc(full), suggestion=suggestion)


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _at(data: Any, loc: Loc) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


# ------------------------------------------------------------------------------------------------------
# Walking edge-model types along a pydantic error location
# ------------------------------------------------------------------------------------------------------


def _clean(root: type[BaseModel], loc: Loc) -> tuple[Loc, type[BaseModel] | None]:
    """Drop pydantic's union tags from ``loc`` and find the model that holds its last key.

    Pydantic puts the discriminator value into locations (``tasks.0.assertions.1.regex.on``); the document
    has no such key, so it is removed (``tasks[0].assertions[1].on``).
    """
    tp: Any = root
    out: list[str | int] = []
    parent: type[BaseModel] | None = None
    for part in loc:
        if tp is None:  # past what the types describe (free-form mappings): keep the rest as is
            out.append(part)
            parent = None
            continue
        holder = _as_model(tp)
        nxt, is_tag = _step(tp, part)
        if is_tag:
            tp = nxt
            continue
        parent = holder
        out.append(part)
        tp = nxt
    return tuple(out), parent


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(tp)
    if origin is Union or (sys.version_info >= (3, 10) and origin is types.UnionType):
        return typing.get_args(tp)
    return None


def _as_model(tp: Any) -> type[BaseModel] | None:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    args = _union_args(tp)
    if args:
        models = [m for m in (_as_model(a) for a in args) if m is not None]
        return models[0] if len(models) == 1 else None
    return None


def _tag_of(model: type[BaseModel]) -> str | None:
    field = model.model_fields.get("type")
    if field is not None and typing.get_origin(field.annotation) is Literal:
        args = typing.get_args(field.annotation)
        return str(args[0]) if len(args) == 1 else None
    return None


def _step(tp: Any, part: str | int) -> tuple[Any, bool]:
    """One step down a type; returns (new type or None, whether ``part`` was a union tag)."""
    tp = _unwrap(tp)
    args = _union_args(tp)
    if args:
        for a in args:
            m = _as_model(a)
            if m is not None and isinstance(part, str) and part in (_tag_of(m), m.__name__):
                return m, True
        for a in args:
            if _unwrap(a) is type(None):
                continue
            nxt, tag = _step(a, part)
            if nxt is not None:
                return nxt, tag
        return None, False
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if not isinstance(part, str):
            return None, False
        for name, f in tp.model_fields.items():
            if part in (name, f.alias):
                return f.annotation, False
        return None, False
    origin = typing.get_origin(tp)
    if origin in (list, Sequence, tuple) and isinstance(part, int):
        inner = typing.get_args(tp)
        return (inner[0] if inner else Any), False
    if origin in (dict, Mapping) and isinstance(part, str):
        inner = typing.get_args(tp)
        return (inner[1] if len(inner) == 2 else Any), False
    return None, False


class Problems:
    """Every error found in one document, kept with its path so they can be reported in document order.

    A loader validates each part it can, adds its own checks' findings, then calls :meth:`raise_if_any`.

    Example::

        problems = Problems(data)
        doc = problems.validate(TasksDoc, data)  # None when invalid; every error is recorded
        problems.add("INVALID_VALUE", "duplicate task id 't'", ("tasks", 1, "id"))
        problems.raise_if_any()  # the first error in document order; .errors holds them all

    Args:
        data: the whole parsed document (positions are looked up in it).
        base: where ``data`` sits when it is only part of a document.
    """

    def __init__(self, data: Any, *, base: Loc = ()) -> None:
        self.data = data
        self.base = base
        self._found: list[tuple[Loc, SuiteError]] = []

    def __len__(self) -> int:
        return len(self._found)

    def add(self, code: str, message: str, loc: Loc = (), *, suggestion: str | None = None) -> None:
        """Record one error at path ``loc`` (a tuple such as ``("cases", 2, "name")``)."""
        self._found.append((loc, SuiteError(code, message, location=format_loc(loc), suggestion=suggestion)))

    def extend(self, found: Iterable[tuple[Loc, SuiteError]]) -> None:
        """Record ``(path, error)`` pairs, e.g. from :func:`from_validation_errors`."""
        self._found.extend(found)

    def validate(self, model: type[Edge], data: Any, *, prefix: Loc = ()) -> Any:
        """Validate ``data`` (found at ``prefix``) against ``model``; the model, or None after recording why."""
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            self.extend(from_validation_errors(exc, root=model, data=data, prefix=prefix))
        except RecursionError:
            self.add("INVALID_VALUE", "the document is nested too deeply", prefix)
        return None

    def errors(self) -> list[SuiteError]:
        """The recorded errors in document order, one per location (the first recorded there wins)."""
        seen: set[str] = set()
        unique: list[tuple[Loc, SuiteError]] = []
        for loc, err in self._found:
            if err.location not in seen:
                seen.add(err.location)
                unique.append((loc, err))
        # Stable sort: errors at one position keep the order they were found in.
        unique.sort(key=lambda pair: _position(self.data, pair[0][len(self.base) :]))
        return [err for _, err in unique]

    def error(self) -> SuiteError | None:
        """The first error in document order, carrying all of them in ``.errors``; None when there are none."""
        errors = self.errors()
        if not errors:
            return None
        first = errors[0]
        first.errors = errors
        return first

    def raise_if_any(self) -> None:
        """Raise :meth:`error` when anything was recorded."""
        err = self.error()
        if err is not None:
            raise err


def _position(data: Any, loc: Loc) -> tuple[int, ...]:
    """Where ``loc`` sits in the parsed document, as a sortable tuple (mappings keep their key order).

    A key the document lacks (a missing required key) sorts after its siblings that are present.
    """
    out: list[int] = []
    for part in loc:
        index = 0
        if isinstance(data, Mapping):
            keys = list(data)
            try:
                index = keys.index(part)
                data = data[part]
            except ValueError:
                index, data = len(keys), None
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            index, data = part, data[part]
        else:
            index, data = (part if isinstance(part, int) else 0), None
        out.append(index)
    return tuple(out)


def validate(model: type[Edge], data: Any, *, prefix: Loc = ()) -> Any:
    """Validate ``data`` against edge ``model``; failures raise one :class:`SuiteError` with all in ``.errors``."""
    problems = Problems(data, base=prefix)
    doc = problems.validate(model, data, prefix=prefix)
    problems.raise_if_any()
    return doc


def check_finite(value: float) -> bool:
    """Whether a parsed number is finite (NaN and infinity are never valid thresholds)."""
    return math.isfinite(value)
