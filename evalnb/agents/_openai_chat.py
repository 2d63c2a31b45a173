"""The OpenAI-compatible chat agent: a model behind ``/chat/completions`` (OpenAI, Azure, Ollama, vLLM ...).

It shares the chat client of the judges (:mod:`evalnb.chat`): the same retries with backoff, ``Retry-After`` on
429 and one adaptive concurrency limit per endpoint, so agent and judge calls to one server back off together.

Tool calls: the chat API only reports the calls the model asks for (``message.tool_calls``); it runs none. So
``Response.tool_calls`` holds them with status ``requested``, unless the agent is given ``tool_functions``: then
it runs each call with its Python function and sends the result back (``role: tool``) until the model answers
without calls, and each call's status says what happened (``succeeded``, ``failed``, or ``refused`` for a tool
the request's ``allowed_tools`` does not permit: it is not run, and the turn ends there).

Example::

    agent = OpenAIChat("gpt-4o-mini", system="Answer in one sentence.")
    result = evalnb.run(evalnb.examples.path("knowledge-base"), agent)
    result.runs[["case_id", "model", "prompt_tokens", "completion_tokens"]]
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalnb._costs import add_usage
from evalnb._lazy import homes
from evalnb._numbers import count
from evalnb._secrets import expand_env
from evalnb.agents._base import Request, Response, ToolCall
from evalnb.agents._types import BuildContext, register_agent_type
from evalnb.chat import ChatClient
from evalnb.chat._client import decoding_note
from evalnb.chat._net import safe_url
from evalnb.errors import AgentError, ChatError, ConfigError, EvalnbError

__all__ = ["OpenAIAgentConfig", "OpenAIChat"]


class OpenAIChat:
    """A chat model as an agent; multi-turn through ``Request.history``.

    Args:
        model: the model name (Azure: defaults to the deployment).
        base_url: e.g. ``http://127.0.0.1:11434/v1``; default ``$OPENAI_BASE_URL``, then OpenAI's.
        api_key: the key itself (from Python; a configuration file names only ``api_key_env``). It is sent as
            ``Authorization: Bearer`` (Azure: ``api-key``) and appears in no output: the ``repr`` says
            ``api_key=<set>``, errors are scrubbed of it, and nothing stored or reported holds it.
        api_key_env: the environment variable holding the key when ``api_key`` is not given (default
            ``OPENAI_API_KEY``). No key at all: no auth header (local servers).
        system: a system message sent first.
        temperature: sampling temperature (0 by default, for repeatable evaluations).
        max_tokens: completion token cap, if any.
        headers: plain extra headers.
        secret_headers: headers read from the environment with ``${NAME}`` (a gateway token ...).
        azure_endpoint: ``https://NAME.openai.azure.com`` for Azure OpenAI (with ``deployment``).
        deployment: the Azure deployment name.
        api_version: the Azure ``api-version``.
        timeout: seconds per attempt.
        retries: retries of 429, 5xx, timeouts and dropped connections (with backoff) inside one call.
        extra_body: extra request fields (``seed``, ``response_format`` ...).
        tools: tool definitions sent with every request (the chat API's ``tools``); with ``tool_functions`` and
            no ``tools``, one definition per function (its name and docstring) is sent.
        tool_functions: tool name -> a Python function (sync or async) that runs the call with the call's
            arguments as keywords; without it no call is run (status ``requested``).
        max_tool_rounds: how many rounds of calls are run before the last answer is taken as it is.
        name: a display name.

    The answer's text, the model the server reports and its token usage (every round of tool calls added) go
    into the Response (and from there into ``result.runs``: ``model``, ``prompt_tokens``, ``completion_tokens``,
    ``cached_tokens``, ``reasoning_tokens`` and, with ``prices=``, ``cost``).

    Example::

        agent = OpenAIChat("llama3.1", base_url="http://127.0.0.1:11434/v1", system="Be brief.")
        asyncio.run(agent.respond(evalnb.Request(prompt="2+2?"))).text
        # '4'
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        system: str | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        headers: Mapping[str, str] | None = None,
        secret_headers: Mapping[str, str] | None = None,
        azure_endpoint: str | None = None,
        deployment: str | None = None,
        api_version: str | None = None,
        timeout: float = 60.0,
        retries: int = 4,
        extra_body: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_functions: Mapping[str, Callable[..., Any]] | None = None,
        max_tool_rounds: int = 8,
        name: str | None = None,
    ) -> None:
        self.system = system
        self.tool_functions = dict(tool_functions or {})
        self.tools = (
            [dict(t) for t in tools] if tools else [_definition(n, f) for n, f in self.tool_functions.items()]
        )
        self.max_tool_rounds = int(count("max_tool_rounds", max_tool_rounds) or 0)
        self._secret_headers = {
            str(k): expand_env(str(v), what=f"OpenAIChat header {k}")
            for k, v in (secret_headers or {}).items()
        }
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        try:
            self.client = ChatClient(
                model,
                base_url=base_url,
                api_key=api_key,
                api_key_env=api_key_env,
                azure_endpoint=azure_endpoint,
                deployment=deployment,
                api_version=api_version,
                headers=self.headers,
                secret_headers={k: v.get() for k, v in self._secret_headers.items()},
                temperature=temperature,
                max_tokens=max_tokens,
                timeout=timeout,
                retries=retries,
                extra_body=extra_body,
            )
        except EvalnbError as e:
            raise ConfigError(e.message) from None
        self.model = self.client.model
        self.name = name or self.model

    def __repr__(self) -> str:
        key = "set" if self.client._api_key else "none"
        # The repr goes into cassettes (Record writes the agent's repr): no password of the URL.
        parts = [repr(self.model), f"endpoint={safe_url(self.client.endpoint)!r}", f"api_key=<{key}>"]
        if self.system is not None:
            parts.append(f"system={_short(self.system)!r}")
        if self._secret_headers:
            parts.append(f"secret_headers={sorted(self._secret_headers)!r}")
        return f"OpenAIChat({', '.join(parts)})"

    async def preflight(self, *, timeout: float | None = None) -> None:
        """Check at start-up that the endpoint accepts a connection (README.md, Use it in CI: an unreachable agent is
        exit 2).

        Raises:
            ConfigError: naming the endpoint (never a key) and what to do about it.

        Example::

            await OpenAIChat("m", base_url="http://127.0.0.1:9/v1").preflight()
            # Traceback (most recent call last):
            # evalnb.errors.ConfigError: agent endpoint http://127.0.0.1:9/v1 is not reachable: connection refused; ...
        """
        await self.client.preflight(
            role="agent", elsewhere="base_url=... or OPENAI_BASE_URL", timeout=timeout
        )

    def messages(self, request: Request) -> list[dict[str, Any]]:
        """The messages sent for this request: system, the history, then the prompt as a user message."""
        out: list[dict[str, Any]] = []
        if self.system:
            out.append({"role": "system", "content": self.system})
        out.extend({"role": m["role"], "content": m["content"]} for m in request.history)
        out.append({"role": "user", "content": request.prompt})
        return out

    async def respond(self, request: Request) -> Response:
        """Ask the model (the client retries what is worth retrying); with ``tool_functions``, run the calls it
        asks for and ask again with their results, up to ``max_tool_rounds`` rounds."""
        messages = self.messages(request)
        extra = {"tools": self.tools} if self.tools else {}
        calls: list[ToolCall] = []
        usage: dict[str, Any] = {}
        latency, attempts, rounds, replaced = 0.0, 0, 0, 0
        while True:
            reply = await self._complete(messages, extra, usage)
            latency += reply.latency_ms
            attempts += reply.attempts
            replaced += reply.replaced
            add_usage(usage, reply.usage)
            asked = [_call(raw) for raw in reply.tool_calls]
            if not asked or not self.tool_functions or rounds >= self.max_tool_rounds:
                calls += asked
                break
            rounds += 1
            messages.append(
                {"role": "assistant", "content": reply.text or None, "tool_calls": list(reply.tool_calls)}
            )
            ran = [await self._run(call, request.allowed_tools) for call in asked]
            calls += ran
            messages += [
                {"role": "tool", "tool_call_id": call.id or "", "content": _content(call.output)}
                for call in ran
            ]
            if any(call.status == "refused" for call in ran):
                break  # the turn is an error (toolCallNotAllowed): asking the model again changes nothing
        return Response(
            text=reply.text,
            model=reply.model,
            usage=usage or None,
            latency_ms=latency,
            tool_calls=calls,
            meta={
                "attempts": attempts,
                **({"tool_rounds": rounds} if rounds else {}),
                # bytes that were not UTF-8 became U+FFFD: the answer is kept, and says so
                **({"invalid_utf8": replaced, "note": decoding_note(replaced)} if replaced else {}),
            },
        )

    async def _complete(
        self, messages: list[dict[str, Any]], extra: Mapping[str, Any], spent: Mapping[str, int]
    ) -> Any:
        try:
            return await self.client.complete(messages, **extra)
        except ChatError as e:
            # The client has scrubbed its secrets (key, secret headers, the URL's) from the message.
            message = e.message
            # Not transient for the runner: the client has already retried with backoff and Retry-After, and
            # retrying on top would multiply the waits. The rounds answered before it were paid for.
            raise AgentError(message, code="AGENT_HTTP_ERROR", usage=dict(spent) or None) from None

    async def _run(self, call: ToolCall, allowed: list[str] | None) -> ToolCall:
        """One call run with its tool function; refused (not run) when the allowlist does not permit it."""
        if allowed is not None and call.tool.strip() not in {a.strip() for a in allowed}:
            call.status, call.output = "refused", "refused: allowed_tools does not permit this tool"
            return call
        fn = self.tool_functions.get(call.tool)
        if fn is None:
            call.status, call.output = "failed", f"no tool function is given for {call.tool!r}"
            return call
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        try:
            out = await fn(**args) if inspect.iscoroutinefunction(fn) else await asyncio.to_thread(fn, **args)
        except Exception as exc:  # a tool that raises is a failed call, not a failed agent
            call.status, call.output = "failed", f"{type(exc).__name__}: {exc}"
            return call
        call.status, call.output = "succeeded", out
        return call


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _call(raw: Mapping[str, Any]) -> ToolCall:
    """A chat API ``tool_calls`` entry as a ToolCall (status ``requested``: the API runs nothing)."""
    try:
        return ToolCall.from_value(raw)
    except AgentError as exc:
        raise AgentError(f"the chat answer holds a tool call evalnb cannot read: {exc.message}") from None


def _definition(name: str, fn: Callable[..., Any]) -> dict[str, Any]:
    doc = inspect.getdoc(fn) or ""
    return {
        "type": "function",
        "function": {"name": name, "description": doc.split("\n\n")[0], "parameters": {"type": "object"}},
    }


def _content(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)


# --------------------------------------------------------------------------------------------------
# evalnb.toml: [agents.NAME] type = "openai"
# --------------------------------------------------------------------------------------------------


class OpenAIAgentConfig(BaseModel):
    """``type = "openai"``: the options of :class:`OpenAIChat` (a key only by its variable)."""

    # Built when a configuration file is read, not at every import of the agents.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    system: str | None = None
    temperature: float | None = 0.0
    max_tokens: int | None = Field(default=None, ge=1)
    headers: dict[str, str] = Field(default_factory=dict)
    secret_headers: dict[str, str] = Field(default_factory=dict)
    azure_endpoint: str | None = None
    deployment: str | None = None
    api_version: str | None = None
    timeout: float = Field(default=60.0, gt=0)
    retries: int = Field(default=4, ge=0)
    extra_body: dict[str, Any] = Field(default_factory=dict)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    #: tool name -> ``module:function`` or ``path/to/file.py:function`` (a relative file: the config's folder)
    tool_functions: dict[str, str] = Field(default_factory=dict)
    max_tool_rounds: int = Field(default=8, ge=0)


def _from_config(cfg: OpenAIAgentConfig, ctx: BuildContext) -> OpenAIChat:
    from evalnb._usercode import load_object

    opts = cfg.model_dump()
    opts["tool_functions"] = {
        name: load_object(spec, what=f"tool function {name!r}", code="BAD_AGENT_SPEC", base=ctx.folder)
        for name, spec in cfg.tool_functions.items()
    }
    return OpenAIChat(name=ctx.name, **opts)


register_agent_type("openai", OpenAIAgentConfig, _from_config)

# exported lazily by evalnb.agents: its public home from the start, whoever imports this module first
homes("evalnb.agents", globals(), ["OpenAIChat"])
