"""The OpenAI-compatible chat agent: a model behind ``/chat/completions`` (OpenAI, Azure, Ollama, vLLM ...).

It shares the chat client of the judges (:mod:`evalnb.chat`): the same retries with backoff, ``Retry-After`` on
429 and one adaptive concurrency limit per endpoint, so agent and judge calls to one server back off together.

Example::

    agent = OpenAIChat("gpt-4o-mini", system="Answer in one sentence.")
    result = evalnb.run("data/suites/knowledge-base.json", agent)
    result.runs[["case_id", "model", "prompt_tokens", "completion_tokens"]]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalnb._secrets import expand_env
from evalnb.agents.base import Request, Response
from evalnb.agents.types import BuildContext, register_agent_type
from evalnb.chat import ChatClient, safe_url
from evalnb.errors import AgentError, ChatError, ConfigError, EvalnbError

__all__ = ["OpenAIAgentConfig", "OpenAIChat"]


class OpenAIChat:
    """A chat model as an agent; multi-turn through ``Request.history``.

    Args:
        model: the model name (Azure: defaults to the deployment).
        base_url: e.g. ``http://127.0.0.1:11434/v1``; default ``$OPENAI_BASE_URL``, then OpenAI's.
        api_key_env: the environment variable holding the key (never the key itself, so that configuration
            files and results hold no secret). No variable set: no auth header (local servers).
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
        name: a display name.

    The answer's text, the model the server reports and its token usage go into the Response (and from there
    into ``result.runs``: ``model``, ``prompt_tokens``, ``completion_tokens``).

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
        name: str | None = None,
    ) -> None:
        self.system = system
        self._secret_headers = {
            str(k): expand_env(str(v), what=f"OpenAIChat header {k}")
            for k, v in (secret_headers or {}).items()
        }
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        try:
            self.client = ChatClient(
                model,
                base_url=base_url,
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
        """Check at start-up that the endpoint accepts a connection (api contract: an unreachable agent is exit 2).

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
        """Ask the model once (the client retries what is worth retrying)."""
        try:
            reply = await self.client.complete(self.messages(request))
        except ChatError as e:
            # The client has scrubbed its secrets (key, secret headers, the URL's) from the message.
            message = e.message
            # Not transient for the runner: the client has already retried with backoff and Retry-After, and
            # retrying on top would multiply the waits.
            raise AgentError(message, code="AGENT_HTTP_ERROR") from None
        return Response(
            text=reply.text,
            model=reply.model,
            usage=dict(reply.usage) or None,
            latency_ms=reply.latency_ms,
            meta={"attempts": reply.attempts},
        )


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------------
# evalnb.toml: [agents.NAME] type = "openai"
# --------------------------------------------------------------------------------------------------


class OpenAIAgentConfig(BaseModel):
    """``type = "openai"``: the options of :class:`OpenAIChat` (a key only by its variable)."""

    model_config = ConfigDict(extra="forbid")

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


def _from_config(cfg: OpenAIAgentConfig, ctx: BuildContext) -> OpenAIChat:
    return OpenAIChat(name=ctx.name, **cfg.model_dump())


register_agent_type("openai", OpenAIAgentConfig, _from_config)
