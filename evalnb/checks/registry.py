"""The check registry: names to small, pure functions that score one response.

Built-in checks are registered per spec type with :func:`builtin` and receive ``(spec, ctx)``; a check
returns a :class:`Score` (or an awaitable of one, for judged checks). Users register their own checks by name
with :func:`register`; a dataset file's custom evaluator names resolve to them (dataset spec), and a suite
may also name them directly as ``CustomCheck(check="name")``.

Example:
    >>> import evalnb
    >>> @evalnb.checks.register("NoApology")
    ... def no_apology(turn, response, *, words=("sorry",)):
    ...     hit = [w for w in words if w in (response.text or "").lower()]
    ...     return (0.0 if hit else 1.0, not hit, f"found {hit}" if hit else "no apology")
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from evalnb.agents.base import Request, Response
    from evalnb.suite import Case, Suite, Turn

__all__ = [
    "CheckContext",
    "Score",
    "builtin",
    "get",
    "known",
    "register",
    "unregister",
]

ScoreStatus = Literal["ok", "degraded", "not_checked"]


@dataclass(frozen=True)
class Score:
    """The outcome of one check on one response.

    Attributes:
        value: the numeric value (1-5 score, F1, count, 1.0/0.0 for booleans); ``None`` when not checked.
        passed: pass flag; ``None`` when the check was not checked (e.g. after a cube intent mismatch).
        reason: one readable sentence.
        status: ``ok``; ``degraded`` when the check could not run (a judge failed); ``not_checked``.
        judge: the judge that scored it, for judged checks (``heuristic`` for the offline one).
        usage: judge token usage.
        cost: judge cost, when a price table is given.
        details: structured detail (row mismatches, per-cell) that a result frame can expand.
    """

    value: float | None
    passed: bool | None
    reason: str = ""
    status: ScoreStatus = "ok"
    judge: str | None = None
    usage: dict[str, Any] | None = None
    cost: float | None = None
    details: list[dict[str, Any]] | None = None

    @classmethod
    def of(cls, passed: bool, reason: str = "", value: float | None = None) -> Score:
        """A boolean score whose value is 1.0 or 0.0 unless given."""
        return cls(value=float(passed) if value is None else value, passed=passed, reason=reason)

    @classmethod
    def degraded(cls, reason: str, **kw: Any) -> Score:
        """A check that could not run: never a pass, never a NaN counted as a score."""
        return cls(value=None, passed=False, reason=reason, status="degraded", **kw)

    @classmethod
    def not_checked(cls, reason: str) -> Score:
        return cls(value=None, passed=None, reason=reason, status="not_checked")


@dataclass
class CheckContext:
    """Everything a check may look at besides its own spec."""

    suite: Suite
    case: Case
    turn: Turn
    turn_index: int
    run: int
    request: Request
    response: Response
    workdir: Path | None = None
    judge: Any = None
    data: Any = None
    conversation: list[dict[str, str]] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)


BuiltinFn = Callable[[Any, CheckContext], "Score | Awaitable[Score]"]

_BUILTINS: dict[str, BuiltinFn] = {}
_USER: dict[str, Callable[..., Any]] = {}


def builtin(spec_type: str) -> Callable[[BuiltinFn], BuiltinFn]:
    """Register the function scoring a built-in spec type (``regex``, ``ExactMatch``, ``rows`` ...)."""

    def deco(fn: BuiltinFn) -> BuiltinFn:
        _BUILTINS[spec_type] = fn
        return fn

    return deco


def register(name: str, fn: Callable[..., Any] | None = None) -> Any:
    """Register a user check under ``name``; usable as a decorator.

    The function receives ``(turn, response, **options)`` (options from the suite) and returns a
    :class:`Score`, a ``(value, passed, reason)`` tuple, or a bool. It may be ``async``.

    Example:
        >>> evalnb.checks.register("Short", lambda turn, response, max_words=50:
        ...     len((response.text or "").split()) <= max_words)
    """
    if not name.isidentifier():
        raise ValueError(f"check name {name!r} must be an identifier")

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        _USER[name] = f
        return f

    return deco(fn) if fn is not None else deco


def unregister(name: str) -> None:
    """Remove a user check (tests and notebooks re-registering use it)."""
    _USER.pop(name, None)


def known() -> list[str]:
    """Names of the user-registered checks."""
    return sorted(_USER)


def get(spec_type: str) -> BuiltinFn:
    """The scoring function of a built-in spec type.

    Raises:
        KeyError: when nothing is registered for it.
    """
    _load_builtins()
    return _BUILTINS[spec_type]


def get_user(name: str) -> Callable[..., Any] | None:
    return _USER.get(name)


def coerce_score(value: Any) -> Score:
    """Turn what a user check returned into a Score."""
    if isinstance(value, Score):
        return value
    if _is_bool(value):
        # numpy's bool_ (what `np.mean(x) > 0.5` or a pandas comparison gives) counts as a bool.
        flag = bool(value)
        return Score.of(flag, "passed" if flag else "failed")
    if isinstance(value, tuple) and len(value) == 3:
        v, p, r = value
        if p is None:
            # A check that gives no verdict did not check anything: it cannot pass (STYLE habit 5: the row
            # says so), and a case must not read FAIL without a line saying why.
            return Score.degraded(f"the check gave no verdict (passed is None): {r}")
        return Score(value=None if v is None else float(v), passed=bool(p), reason=str(r))
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    raise TypeError(f"a check returned {name}; return a Score, (value, passed, reason) or bool")


def _is_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    kind = type(value)
    return kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool")


async def call_user(name: str, turn: Turn, response: Response, options: dict[str, Any]) -> Score:
    fn = _USER[name]
    out = fn(turn, response, **options)
    if inspect.isawaitable(out):
        out = await out
    return coerce_score(out)


_loaded = False
_BUILTIN_MODULES = ("text", "process", "cube", "rows", "judged")
"""The modules under ``evalnb.checks`` whose import registers the built-in checks."""


def _load_builtins() -> None:
    # Import the modules that register built-ins on first use, keeping `import evalnb` light.
    global _loaded
    if _loaded:
        return
    import importlib

    # Every one exists: a failing import is a broken install and must surface, not leave checks unknown.
    # Marked loaded only afterwards, so a later call raises the same error again instead of a KeyError.
    for mod in _BUILTIN_MODULES:
        importlib.import_module(f"evalnb.checks.{mod}")
    _loaded = True
