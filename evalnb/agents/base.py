"""The Agent protocol, Request and Response, and the adapter for plain Python callables.

Any of these is an agent:

* a callable ``f(prompt: str) -> str``;
* a callable ``f(request: evalnb.Request) -> str | dict | evalnb.Response``; it receives the ``Request`` when
  its first parameter is annotated ``evalnb.Request`` or is named ``request`` or ``req``, otherwise it
  receives the prompt string (api contract);
* either of the above written ``async def``;
* an object from ``evalnb.agents`` (``Command``, ``OpenAIChat``, ``HTTP``, ``Record``, ``Replay``), or any object
  with an ``async def respond(self, request) -> Response`` method.

A ``str`` answer means ``Response(text=...)``; a ``dict`` maps onto the fields of ``Response``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import numbers
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from evalnb._caps import cap
from evalnb._unicode import clean, clean_data
from evalnb.errors import AgentError

__all__ = ["Agent", "CallableAgent", "Request", "Response", "as_agent", "capped", "encodable", "to_response"]


@dataclass
class Request:
    """What the agent is asked.

    Attributes:
        prompt: the text of this turn.
        history: earlier messages as ``{"role", "content"}`` dicts: the ones the suite wrote, then, for later
            turns of a conversation, the earlier prompts and the agent's actual answers.
        case: the case id.
        turn: the turn index (0-based).
        run: the run index (0-based).
        workdir: the run's working directory (where ``file_exists`` looks).
        suite: the suite name.
        case_meta: extra fields the suite gives for the case (category, cube, context ...).
    """

    prompt: str
    history: list[dict[str, str]] = field(default_factory=list)
    case: str = ""
    turn: int = 0
    run: int = 0
    workdir: Path | None = None
    suite: str = ""
    case_meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Response:
    """What the agent answered.

    Attributes:
        text: the final result text.
        stdout: standard output, for command agents (``regex on = "stdout"``).
        exit_code: process exit code, for command agents.
        intent: cube intent (``QUERY``, ``INSIGHT``, ``VIEW_CHANGE``, ``REFUSED``).
        rows: result rows, a list of dicts or a DataFrame.
        insight: insight markdown.
        refusal: the refusal reason.
        citations: structured citations, if the agent returns them.
        context: the grounding text the agent used (Groundedness reads it).
        model: the model name that answered.
        usage: token usage, e.g. ``{"prompt_tokens": 12, "completion_tokens": 30}``.
        latency_ms: wall time of the call; the runner fills it when the agent does not.
        meta: anything else worth keeping (the runner stores it with the run).
    """

    text: str | None = None
    stdout: str | None = None
    exit_code: int | None = None
    intent: str | None = None
    rows: Any = None
    insight: str | None = None
    refusal: str | None = None
    citations: list[Any] | None = None
    context: str | None = None
    model: str | None = None
    usage: dict[str, Any] | None = None
    latency_ms: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Response:
        """Build a Response from a dict with the same field names (``refusalReason`` etc. are not guessed).

        Raises:
            AgentError: when the dict has keys that are not fields of Response.
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise AgentError(
                f"the agent returned a dict with unknown key(s) {unknown}; "
                f"use the fields of evalnb.Response: {sorted(names)}"
            )
        return cls(**dict(data))


def to_response(value: Any) -> Response:
    """Normalise what an agent returned into a Response.

    Each text field is kept up to ``evalnb._caps.MAX_ANSWER`` characters (1,000,000, as a ``Command``'s output):
    the head, ending in a note that it was cut, with ``meta["<field>_truncated"]`` and ``meta["<field>_chars"]``.

    Raises:
        AgentError: for a value that is not a str, dict or Response (the run is then ``degraded``).
    """
    if isinstance(value, str):
        return capped(Response(text=value))
    if isinstance(value, Mapping):
        return capped(_checked(Response.from_dict(value)))
    if isinstance(value, Response):
        return capped(_checked(value))
    raise AgentError(f"the agent returned {type(value).__name__}; return a str, a dict or an evalnb.Response")


def capped(response: Response) -> Response:
    """An answer cut like a Command's output: each text field keeps its first 1,000,000 characters (``MAX_ANSWER``),
    a note that it was cut, and ``meta["<field>_truncated"]`` / ``meta["<field>_chars"]``."""
    for name in _TEXT_FIELDS:
        value = getattr(response, name)
        if isinstance(value, str):
            kept, cut = cap(value, name)
            if cut:
                setattr(response, name, kept)
                response.meta[f"{name}_truncated"] = True
                response.meta[f"{name}_chars"] = len(value)
    return response


_TEXT_FIELDS = ("text", "stdout", "intent", "insight", "refusal", "context", "model")


def _checked(response: Response) -> Response:
    """Reject field values of the wrong type, naming the field (the run is then ``degraded``).

    Without this, ``{"exit_code": "0"}`` failed its check as ``exit code 0, expected 0`` and a number as
    ``text`` made the text checks raise deep inside; an answer the checks cannot read is unusable (issue 3).
    """
    for name in _TEXT_FIELDS:
        v = getattr(response, name)
        if v is not None and not isinstance(v, str):
            raise AgentError(_wrong(name, v, "a str"))
    code = response.exit_code
    if code is not None and not isinstance(code, int):
        if isinstance(code, numbers.Integral) and not isinstance(code, bool):
            response.exit_code = int(code)  # numpy integers are integers
        else:
            raise AgentError(_wrong("exit_code", code, "an int"))
    elif isinstance(code, bool):
        raise AgentError(_wrong("exit_code", code, "an int"))
    lat = response.latency_ms
    if lat is not None and (isinstance(lat, bool) or not isinstance(lat, numbers.Real)):
        raise AgentError(_wrong("latency_ms", lat, "a number"))
    if response.usage is not None and not isinstance(response.usage, Mapping):
        raise AgentError(_wrong("usage", response.usage, "a dict"))
    return response


def _wrong(name: str, value: Any, want: str) -> str:
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"the agent returned {name}={shown} ({type(value).__name__}); {name} must be {want} or None"


def encodable(response: Response) -> Response:
    """The response with its text as every file, database and judge can take: lone surrogates (an escaped
    ``"\\ud800"`` in an HTTP service's JSON, a callable's ``surrogateescape`` text) become U+FFFD
    (:mod:`evalnb._unicode`). Changed in place; checks and judges see the cleaned text."""
    for name in _TEXT_FIELDS:
        value = getattr(response, name)
        if isinstance(value, str):
            setattr(response, name, clean(value))
    for name in ("rows", "citations", "meta"):
        value = getattr(response, name)
        if isinstance(value, (dict, list)):
            setattr(response, name, clean_data(value))
    return response


@runtime_checkable
class Agent(Protocol):
    """What the runner calls: one async method from Request to Response."""

    async def respond(self, request: Request) -> Response:  # pragma: no cover - protocol
        ...


_REQUEST_NAMES = ("request", "req")


def _wants_request(fn: Callable[..., Any]) -> bool:
    """api contract: the first parameter annotated ``Request`` or named ``request``/``req`` gets the Request."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not params:
        return False
    first = params[0]
    if first.name in _REQUEST_NAMES:
        return True
    ann = first.annotation
    if ann is Request:
        return True
    if isinstance(ann, str):  # postponed annotations: "Request", "evalnb.Request", "Request | None"
        parts = ann.replace("Optional[", "|").replace("]", "|").split("|")
        return any(part.strip().split(".")[-1] == "Request" for part in parts)
    return Request in getattr(ann, "__args__", ())  # Request | None, Optional[Request]


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - objects with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


class CallableAgent:
    """Adapts a plain sync or async callable to the Agent protocol (sync ones run in a worker thread).

    Example::

        agent = CallableAgent(lambda prompt: prompt.upper())
        asyncio.run(agent.respond(Request(prompt="hi"))).text
        # 'HI'
    """

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.wants_request = _wants_request(fn)
        self.is_async = _is_async_callable(fn)

    async def respond(self, request: Request) -> Response:
        arg: Any = request if self.wants_request else request.prompt
        if self.is_async:
            value = await self.fn(arg)
        else:
            value = await asyncio.to_thread(self.fn, arg)
            if inspect.isawaitable(value):  # a sync function that returns a coroutine
                value = await value
        return to_response(value)

    def __repr__(self) -> str:
        return f"CallableAgent({self.name})"


def as_agent(obj: Any) -> Agent:
    """Turn anything the api contract accepts as an agent into an object with ``async respond``.

    Raises:
        TypeError: for an object that is neither an agent nor callable.
    """
    if hasattr(obj, "respond") and inspect.iscoroutinefunction(obj.respond):
        return obj
    if hasattr(obj, "respond") and callable(obj.respond) and not callable(obj):
        raise TypeError(
            f"{type(obj).__name__}.respond must be `async def respond(self, request)`; "
            "for a sync agent pass a plain function instead"
        )
    if callable(obj):
        return CallableAgent(obj)
    raise TypeError(f"{type(obj).__name__} is not an agent: give a callable or an object from evalnb.agents")


AgentFn = Callable[[Request], Awaitable[Response]]
