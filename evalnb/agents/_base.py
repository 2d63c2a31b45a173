"""The Agent protocol, Request and Response, and the adapter for plain Python callables.

Any of these is an agent:

* a callable ``f(prompt: str) -> str``;
* a callable ``f(request: evalnb.Request) -> str | dict | evalnb.Response``; it receives the ``Request`` when
  its first parameter is annotated ``evalnb.Request`` or is named ``request`` or ``req``, otherwise it
  receives the prompt string (README.md, agents);
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
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from evalnb._caps import MAX_ANSWER, cap
from evalnb._unicode import clean, clean_data
from evalnb.errors import AgentError

__all__ = [
    "TOOL_STATUSES",
    "Agent",
    "CallableAgent",
    "DeferredPath",
    "Request",
    "Response",
    "ToolCall",
    "as_agent",
    "capped",
    "encodable",
    "to_response",
]

TOOL_STATUSES = ("requested", "succeeded", "failed", "refused")
"""What became of a tool call (:attr:`ToolCall.status`): ``requested`` (the agent asked for it and nobody reports
running it: the chat API's ``tool_calls`` without tool functions), ``succeeded`` / ``failed`` (it ran), ``refused``
(it was not run because the allowlist does not permit it)."""


@dataclass
class ToolCall:
    """One tool call an agent reported: which tool, with which arguments, and what became of it.

    Attributes:
        tool: the full tool identifier, ``namespace_toolname`` as allowlists name it
            (``zavainsurance_get-claim-summary``); for an OpenAI-style function call, the function's name.
        arguments: the arguments (a dict when they were JSON, else as given).
        status: one of :data:`TOOL_STATUSES` (default ``requested``).
        plugin: the plugin (namespace) of the identity, when the agent reports it apart.
        function: the function of the identity, when the agent reports it apart.
        id: the call's id (OpenAI ``tool_call_id``), if any.
        http_status: the HTTP status the tool's execution answered (the schema's
            ``diagnostics.tool_calls.executions[].response_status``; docs/dataset-json.md, the output document), if
            any.
        output: what the tool returned, when it ran.

    Example::

        ToolCall("zava_get-claim", {"claim": "C-1"}, status="succeeded").identity
        # ('zava', 'get-claim')
    """

    tool: str = ""
    arguments: Any = None
    status: str = "requested"
    plugin: str | None = None
    function: str | None = None
    id: str | None = None
    http_status: int | None = None
    output: Any = None

    def __post_init__(self) -> None:
        if not self.tool and self.plugin and self.function:
            self.tool = f"{self.plugin}_{self.function}"
        if not isinstance(self.tool, str) or not self.tool.strip():
            raise AgentError(f"a tool call needs its tool's name, got {self.tool!r}")
        if self.status not in TOOL_STATUSES:
            raise AgentError(
                f"tool call {self.tool!r}: status {self.status!r} is not one of {list(TOOL_STATUSES)}"
            )
        if self.http_status is not None and (
            isinstance(self.http_status, bool) or not isinstance(self.http_status, int)
        ):
            raise AgentError(f"tool call {self.tool!r}: http_status must be an int, got {self.http_status!r}")
        if isinstance(self.arguments, str):
            self.arguments = _json_or_text(self.arguments)

    @property
    def identity(self) -> tuple[str | None, str]:
        """``(plugin, function)``: as reported, else the tool identifier split at its first ``_`` (no ``_``: no
        plugin). A dataset names a tool by ``plugin_name`` and ``function_name`` (docs/dataset-json.md, tool calls and
        allowlists)."""
        if self.plugin is not None and self.function is not None:
            return self.plugin, self.function
        name = self.tool.strip()
        plugin, sep, function = name.partition("_")
        return (plugin, function) if sep and plugin and function else (None, name)

    def matches(self, plugin: str, function: str) -> bool:
        """Whether this call is the tool ``plugin`` / ``function`` (the reported identity, else ``plugin_function``)."""
        if self.plugin is not None and self.function is not None:
            return (self.plugin, self.function) == (plugin, function)
        return self.tool.strip() == f"{plugin}_{function}"

    def to_dict(self) -> dict[str, Any]:
        """The call as a plain dict, without the fields that are not set (what cassettes and files hold)."""
        return {
            k: v
            for k, v in asdict(self).items()
            if v is not None and not (k == "status" and v == "requested")
        }

    @classmethod
    def from_value(cls, value: Any) -> ToolCall:
        """A ToolCall from what agents report: a ToolCall; a dict of its fields (``name`` for ``tool``;
        ``plugin_name``, ``function_name``, ``response_status`` as a dataset writes them: docs/dataset-json.md, tool
        calls and allowlists); or an OpenAI chat ``tool_calls`` entry
        ``{"id", "type": "function", "function": {"name", "arguments"}}``.

        Raises:
            AgentError: for anything else, naming what is wrong.
        """
        if isinstance(value, ToolCall):
            return value
        if not isinstance(value, Mapping):
            raise AgentError(f"a tool call must be an evalnb.ToolCall or a dict, got {type(value).__name__}")
        data = dict(value)
        fn = data.get("function")
        if isinstance(fn, Mapping):  # the OpenAI chat shape
            data.pop("type", None)
            data.pop("function")
            data.setdefault("tool", fn.get("name") or "")
            data.setdefault("arguments", fn.get("arguments"))
        for alias, name in _TOOL_ALIASES.items():
            if alias in data:
                if name in data:
                    raise AgentError(f"a tool call gives both {alias!r} and {name!r}")
                data[name] = data.pop(alias)
        if "http_status" in data and "status" not in data and isinstance(data["http_status"], int):
            # docs/dataset-json.md, tool calls and allowlists: an execution with an HTTP status (response_status) ran
            data["status"] = "succeeded" if 200 <= data["http_status"] < 300 else "failed"
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise AgentError(f"a tool call has unknown key(s) {unknown}; use {sorted(known)}")
        return cls(**data)


_TOOL_ALIASES = {
    "name": "tool",
    "plugin_name": "plugin",
    "function_name": "function",
    "response_status": "http_status",
}


def _json_or_text(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


class DeferredPath:
    """A working directory made the first time someone asks for it (``make()`` creates it and returns it, or
    None once it can no longer be made).

    The runner gives each case run one: a run whose agent never reads ``Request.workdir`` and whose checks need
    no directory leaves nothing in the temporary folder (running/_workdirs.py).
    """

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Path | None]) -> None:
        self.make = make


class _Workdir:
    """``Request.workdir``: a path or None, or a :class:`DeferredPath` made into its path when first read."""

    def __get__(self, obj: Any, objtype: Any = None) -> Path | None:
        if obj is None:
            return None  # the dataclass's default
        value = obj.__dict__.get("_workdir")
        if isinstance(value, DeferredPath):
            value = obj.__dict__["_workdir"] = value.make()
        return value

    def __set__(self, obj: Any, value: Path | DeferredPath | None) -> None:
        obj.__dict__["_workdir"] = value


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
        workdir: the run's working directory (where ``file_exists`` looks); a fresh one is made when first read.
        suite: the suite name.
        case_meta: extra fields the suite gives for the case (category, cube, context ...).
        allowed_tools: the tools the agent may call in this turn, when the suite declares an allowlist (a
            dataset's ``allowed_tools``, resolved); ``None`` when it declares none (nothing is enforced). A call
            the agent reports outside the list makes the turn an error (``toolCallNotAllowed``).
    """

    prompt: str
    history: list[dict[str, str]] = field(default_factory=list)
    case: str = ""
    turn: int = 0
    run: int = 0
    workdir: _Workdir = _Workdir()
    suite: str = ""
    case_meta: dict[str, Any] = field(default_factory=dict)
    allowed_tools: list[str] | None = None


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
        tool_calls: the tool calls the agent made, in order (:class:`ToolCall`, or dicts of its fields);
            ``None`` when the agent does not report tool calls at all, ``[]`` when it made none.
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
    tool_calls: list[ToolCall] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tool_calls is not None:
            if isinstance(self.tool_calls, (str, bytes, Mapping)) or not hasattr(self.tool_calls, "__iter__"):
                raise AgentError(_wrong("tool_calls", self.tool_calls, "a list of tool calls"))
            self.tool_calls = [ToolCall.from_value(c) for c in self.tool_calls]

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
        # the answer of most agents: one text field, whose length alone says it is not cut
        return Response(text=value) if len(value) <= MAX_ANSWER else capped(Response(text=value))
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
    ``text`` made the text checks raise deep inside; an answer the checks cannot read is unusable.
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
        # ASCII text (nearly all of it) holds no surrogate: nothing to do, on every answer of a run.
        if isinstance(value, str) and not value.isascii():
            setattr(response, name, clean(value))
    for name in ("rows", "citations", "meta"):
        value = getattr(response, name)
        if isinstance(value, (dict, list)) and value:
            setattr(response, name, clean_data(value))
    return response


@runtime_checkable
class Agent(Protocol):
    """What the runner calls: one async method from Request to Response."""

    async def respond(self, request: Request) -> Response:  # pragma: no cover - protocol
        ...


_REQUEST_NAMES = ("request", "req")


def _wants_request(fn: Callable[..., Any]) -> bool:
    """README.md, agents: the first parameter annotated ``Request`` or named ``request``/``req`` gets the Request."""
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
    """Turn anything README.md (agents) accepts as an agent into an object with ``async respond``.

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
