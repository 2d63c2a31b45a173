"""The check registry: one table of every check, built-in or yours, and one signature for all of them.

A check is a small function ``fn(spec, ctx)`` that scores one response: ``spec`` is the check as the suite wrote
it (a :mod:`evalnb.suite` check spec; :class:`~evalnb.suite.CustomCheck` for yours, whose ``settings`` are its
options) and ``ctx`` the :class:`CheckContext` (turn, request, response, working directory, judge, data). It
returns a :class:`Score`, a ``(value, passed, reason)`` tuple or a bool, or an awaitable of one.

Registration records what a check needs, so the runner gives it just that and a saved run says what was
checked: ``workdir`` (it looks at the run's working directory or the Request naming it), ``judge``, ``data``
(a cube data source), ``cpu`` (it may burn CPU or block: it runs off the event loop, in a thread).

* :func:`builtin` registers the check of a built-in spec type (``regex``, ``ExactMatch``, ``rows`` ...);
* :func:`check` registers one of yours with the same signature (it sees what a built-in sees);
* :func:`register` registers one of yours written as ``fn(turn, response, **options)`` (the short form).

A dataset file's custom evaluator names, and ``CustomCheck(check="name")``, resolve to your checks.

Example::

    import evalnb

    @evalnb.checks.register("NoApology")
    def no_apology(turn, response, *, words=("sorry",)):
        hit = [w for w in words if w in (response.text or "").lower()]
        return (0.0 if hit else 1.0, not hit, f"found {hit}" if hit else "no apology")

    @evalnb.checks.check("MentionsFile", needs={"workdir"})
    def mentions_file(spec, ctx):
        names = {p.name for p in ctx.workdir.iterdir()} if ctx.workdir else set()
        return any(n in (ctx.response.text or "") for n in names)
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._registry import Registry
from evalnb._score import Score

if TYPE_CHECKING:
    from evalnb.agents._base import Request, Response
    from evalnb.suite import Case, Suite, Turn

__all__ = [
    "NEEDS",
    "CheckContext",
    "CheckDef",
    "Offload",
    "Score",
    "builtin",
    "check",
    "coerce_score",
    "definition",
    "get",
    "get_user",
    "install",
    "known",
    "register",
    "unregister",
]

NEEDS = frozenset({"workdir", "judge", "data", "cpu"})
"""What a check may declare it needs (see the module docstring)."""


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
    prices: Any = None  # the run's price table (evalnb._costs.PriceTable), for judges without their own


@dataclass(frozen=True, slots=True)
class Offload:
    """What a check returns to be finished off the event loop: ``fn(*args)`` runs in a worker thread.

    For a check that is usually instant but can take long (a regex search that hit its quick budget): the
    first attempt stays on the loop, the slow one leaves it, so other case runs and their latencies go on.
    """

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()


CheckFn = Callable[[Any, CheckContext], "Score | tuple[Any, Any, Any] | bool | Offload | Awaitable[Any]"]
BuiltinFn = CheckFn  # the name the runner's plans used


@dataclass(frozen=True, slots=True)
class CheckDef:
    """One registered check.

    Attributes:
        name: the spec type of a built-in (``regex``) or the name of yours (``NoApology``).
        fn: the check, ``fn(spec, ctx)``.
        needs: what it needs (subset of :data:`NEEDS`).
        builtin: whether evalnb defines it.
        options: the keyword options it accepts (``None``: any), checked when a suite is loaded.
        source: the function as it was registered (your short-form function for :func:`register`).
        higher_is_better: which way your check's value is better, when you said so (``None``: the scale's,
            see :func:`evalnb.checks.scales.higher_is_better`).
    """

    name: str
    fn: CheckFn
    needs: frozenset[str]
    builtin: bool = False
    options: tuple[str, ...] | None = None
    source: Callable[..., Any] | None = None
    higher_is_better: bool | None = None


_BUILTIN_MODULES = ("_text", "_process", "_cube", "_rows", "_judged", "_semantic", "_tools", "_matching")
"""The modules under ``evalnb.checks`` whose import registers the built-in checks."""

# Built-ins by spec type, their modules imported at the first lookup (keeping `import evalnb` light); yours by
# name (CustomCheck.check, a dataset's custom evaluator). A check registered again replaces the earlier one
# (a notebook cell run twice, a function registered over a built-in's name).
_CHECKS: Registry[CheckDef] = Registry(
    "built-in check", modules=tuple(f"evalnb.checks.{m}" for m in _BUILTIN_MODULES)
)
_USER: Registry[CheckDef] = Registry("check")


def _needs(needs: Iterable[str]) -> frozenset[str]:
    out = frozenset(needs)
    unknown = out - NEEDS
    if unknown:
        raise ValueError(f"unknown needs {sorted(unknown)}; a check may need {sorted(NEEDS)}")
    return out


def builtin(
    spec_type: str, *, needs: Iterable[str] = ("workdir", "judge", "data")
) -> Callable[[CheckFn], CheckFn]:
    """Register the function scoring a built-in spec type (``regex``, ``ExactMatch``, ``rows`` ...).

    ``needs`` says what it looks at besides the response; by default everything a check may see (a function
    registered over a built-in's name is not assumed to need what the built-in needed).
    """

    def deco(fn: CheckFn) -> CheckFn:
        _CHECKS.register(
            spec_type, CheckDef(spec_type, fn, _needs(needs), builtin=True, source=fn), replace=True
        )
        return fn

    return deco


def check(
    name: str,
    fn: CheckFn | None = None,
    *,
    needs: Iterable[str] = ("workdir", "judge", "data"),
    options: Iterable[str] | None = None,
    higher_is_better: bool | None = None,
) -> Any:
    """Register a check of yours with the built-ins' signature ``fn(spec, ctx)``; usable as a decorator.

    ``spec.settings`` holds the options the suite gave it. By default it is given everything a built-in may
    see (``needs``); say ``needs=()`` when it looks at the response only (its runs then skip creating working
    directories), ``needs={"cpu"}`` to run it off the event loop. ``higher_is_better=False`` says its value
    should go down (a count of retries): comparisons then gate when it rises.

    Example::

        @evalnb.checks.check("Short", needs=())
        def short(spec, ctx):
            return len((ctx.response.text or "").split()) <= spec.settings.get("max_words", 50)
    """
    _identifier(name)
    direction = _direction(higher_is_better)

    def deco(f: CheckFn) -> CheckFn:
        _USER.register(
            name,
            CheckDef(name, f, _needs(needs), options=_tuple(options), source=f, higher_is_better=direction),
            replace=True,
        )
        return f

    return deco(fn) if fn is not None else deco


def register(name: str, fn: Callable[..., Any] | None = None, *, higher_is_better: bool | None = None) -> Any:
    """Register a check of yours written as ``fn(turn, response, **options)``; usable as a decorator.

    The short form of :func:`check`: it receives the turn, the agent's Response and the options the suite gave
    it, and returns a :class:`Score`, a ``(value, passed, reason)`` tuple, or a bool. It may be ``async``.
    ``higher_is_better=False`` says its value should go down (comparisons gate when it rises).

    Example::

        evalnb.checks.register("Short", lambda turn, response, max_words=50:
            len((response.text or "").split()) <= max_words)
    """
    _identifier(name)
    direction = _direction(higher_is_better)

    def deco(f: Callable[..., Any]) -> Callable[..., Any]:
        def adapted(spec: Any, ctx: CheckContext) -> Any:
            return f(ctx.turn, ctx.response, **dict(spec.settings))

        # It sees the turn and the response only; the working directory is not its business.
        _USER.register(
            name,
            CheckDef(
                name, adapted, frozenset(), options=_keyword_options(f), source=f, higher_is_better=direction
            ),
            replace=True,
        )
        return f

    return deco(fn) if fn is not None else deco


def _direction(higher_is_better: bool | None) -> bool | None:
    if higher_is_better is not None and not isinstance(higher_is_better, bool):
        raise TypeError(f"higher_is_better must be True, False or None, not {higher_is_better!r}")
    return higher_is_better


def _identifier(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"check name {name!r} must be an identifier")


def _tuple(options: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if options is None else tuple(options)


def _keyword_options(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """The options a short-form check accepts, or None when it takes ``**kwargs`` (anything)."""
    try:
        params = list(inspect.signature(fn).parameters.values())[2:]
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def unregister(name: str) -> None:
    """Remove a check of yours (tests and notebooks re-registering use it)."""
    _USER.unregister(name)


def known() -> list[str]:
    """Names of your registered checks."""
    return sorted(_USER.names())


def definition(spec: Any) -> CheckDef:
    """The registered check a spec names: yours for a :class:`~evalnb.suite.CustomCheck`, else the built-in.

    Raises:
        KeyError: when nothing is registered under that name, with a sentence saying how to register it.
    """
    custom = getattr(spec, "check", None) if getattr(spec, "type", None) == "custom" else None
    if custom is not None:
        hit = _USER.get(custom)
        if hit is None:
            raise KeyError(f"no check registered as {custom!r}; register it with evalnb.checks.register")
        return hit
    hit = _CHECKS.get(spec.type)
    if hit is None:
        raise KeyError(f"no built-in check for spec type {spec.type!r}")
    return hit


def get(spec_type: str) -> CheckFn:
    """The scoring function of a built-in spec type.

    Raises:
        KeyError: when nothing is registered for it.
    """
    return _CHECKS[spec_type].fn


def get_user(name: str) -> Callable[..., Any] | None:
    """Your check registered under ``name`` (the function as you registered it), or None."""
    hit = _USER.get(name)
    return None if hit is None else hit.source


def user_definition(name: str) -> CheckDef | None:
    """The registration of your check ``name`` (with the options it accepts), or None."""
    return _USER.get(name)


def install(definitions: Mapping[str, CheckDef]) -> None:
    """Register checks of yours as another process registered them (a cluster worker gets the suite's checks
    this way: its own registry never ran your registrations)."""
    for name, registered in definitions.items():
        _USER.register(name, registered, replace=True)


def coerce_score(value: Any) -> Score:
    """Turn what a check returned into a Score."""
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
