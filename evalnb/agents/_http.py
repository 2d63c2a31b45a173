"""The HTTP agent: POST a JSON body built from a template, map the JSON answer onto a Response.

The body template is JSON (a dict) whose string values may be placeholders. A string that is exactly one
placeholder is replaced by the value itself, as JSON (``"{history}"`` becomes a list, ``"{run}"`` a number);
a placeholder inside a longer string is replaced by its text. Nothing is pasted into JSON text, so a prompt
full of quotes cannot break or inject into the body.

Placeholders: ``{prompt}``, ``{history}``, ``{case}``, ``{turn}``, ``{run}``, ``{suite}``, ``{allowed_tools}``
(the turn's allowlist, a list, or null when the suite declares none), and ``{case_meta.NAME}`` (dotted) for
fields the suite gives for the case (e.g. the cube).

Tool calls: ``response_map={"tool_calls": "path"}`` (or a ``tool_calls`` key in an unmapped answer) reads a
list of calls, each a dict of :class:`~evalnb.agents._base.ToolCall` fields (``tool`` or ``name``,
``arguments``, ``status``, ``plugin_name``/``function_name``, ``response_status`` ...) or an OpenAI chat
``tool_calls`` entry. The service says what became of each call; without a ``status`` a call was ``requested``
(asked for, not reported run), and one with a ``response_status`` ran (2xx: ``succeeded``).

Headers marked secret take values from the environment with ``${NAME}`` (``"Bearer ${ASK_TOKEN}"``); the
values never appear in a ``repr``, an exception or a result.

Example::

    agent = HTTP("http://127.0.0.1:8080/ai/ask", body={"question": "{prompt}", "history": "{history}"},
                 secret_headers={"Authorization": "Bearer ${ASK_TOKEN}"},
                 response_map={"text": "answer", "rows": "data.rows"})
    agent = HTTP.ask("http://127.0.0.1:8080/ai/ask")    # the ready mapping of an "ask" service
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evalnb._caps import MAX_ANSWER, MAX_BODY, note
from evalnb._lazy import homes
from evalnb._numbers import seconds
from evalnb._secrets import Secret, expand_env, safe_url, scrub, url_secrets
from evalnb.agents._base import Request, Response, capped
from evalnb.agents._types import BuildContext, register_agent_type
from evalnb.chat._net import PREFLIGHT_TIMEOUT, parse_retry_after, require_reachable, send
from evalnb.chat._session import shared_pool
from evalnb.chat._wire import _WireError
from evalnb.errors import AgentError, ConfigError

__all__ = ["ASK_BODY", "ASK_MAPPING", "HTTP", "HTTPAgentConfig", "Secret", "expand_env", "get_path"]

#: The request body of an "ask" service (docs/cube-yaml.md, an analytics service over HTTP: the question, the seeding
#: history, the cube).
ASK_BODY: dict[str, Any] = {"question": "{prompt}", "history": "{history}", "cube": "{case_meta.cube}"}

#: How an "ask" answer ``{intent, rows, insight: {markdown}, refusalReason}`` maps onto a Response.
#: A list of paths means the first one present: the text is the insight, else the refusal reason.
ASK_MAPPING: dict[str, str | list[str]] = {
    "text": ["insight.markdown", "refusalReason", "answer", "text"],
    "intent": "intent",
    "rows": "rows",
    "insight": "insight.markdown",
    "refusal": "refusalReason",
    "model": "model",
}

_RESPONSE_FIELDS = (
    "text",
    "intent",
    "rows",
    "insight",
    "refusal",
    "citations",
    "context",
    "model",
    "usage",
    "tool_calls",
    # token counts one by one, for a service that reports them in a shape of its own (docs/costs.md)
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
    "reasoning_tokens",
)
_TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")
_PLACEHOLDER = re.compile(
    r"\{(prompt|history|case|turn|run|suite|allowed_tools|case_meta(?:\.[A-Za-z0-9_\-]+)+)\}"
)
_SNIPPET = 300


def get_path(data: Any, path: str) -> Any:
    """The value at a dotted path with list indices (``data.rows``, ``choices.0.text``, ``items[1].name``).

    Returns ``None`` when any step is missing.

    Example::

        get_path({"a": {"b": [{"c": 1}]}}, "a.b[0].c")
        # 1
    """
    return _lookup(data, path)[1]


def _lookup(data: Any, path: str) -> tuple[bool, Any]:
    """``(found, value)``: whether every step of the path exists (a present ``null`` is found), and the value."""
    value = data
    for part in re.split(r"\.|\[(-?\d+)\]", path):
        if part is None or part == "":
            continue
        if isinstance(value, Mapping):
            if part not in value:
                return False, None
            value = value[part]
        elif isinstance(value, list) and re.fullmatch(r"-?\d+", part):
            i = int(part)
            if not -len(value) <= i < len(value):
                return False, None
            value = value[i]
        else:
            return False, None
    return True, value


def _fill(template: Any, values: Mapping[str, Any]) -> Any:
    """The body template with placeholders replaced by request values (as JSON values, never pasted text)."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole:
            return values.get(whole.group(1))
        return _PLACEHOLDER.sub(lambda m: _text(values.get(m.group(1))), template)
    if isinstance(template, Mapping):
        return {k: _fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, values) for v in template]
    return template


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _values(request: Request) -> dict[str, Any]:
    values: dict[str, Any] = {
        "prompt": request.prompt,
        "history": [dict(m) for m in request.history],
        "case": request.case,
        "turn": request.turn,
        "run": request.run,
        "suite": request.suite,
        "allowed_tools": None if request.allowed_tools is None else list(request.allowed_tools),
    }
    for key, value in _flatten(request.case_meta, "case_meta"):
        values[key] = value
    return values


def _flatten(data: Mapping[str, Any], prefix: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for k, v in data.items():
        key = f"{prefix}.{k}"
        out.append((key, v))
        if isinstance(v, Mapping):
            out.extend(_flatten(v, key))
    return out


class HTTP:
    """An agent behind an HTTP JSON API.

    Args:
        url: the endpoint.
        method: the HTTP method (``POST`` by default; with ``GET`` no body is sent).
        body: the JSON body template (a dict, or JSON text); default ``{"prompt": "{prompt}",
            "history": "{history}"}``.
        headers: plain headers (shown in the ``repr``).
        secret_headers: headers whose values are read from the environment with ``${NAME}``, e.g.
            ``{"Authorization": "Bearer ${ASK_TOKEN}"}``; never shown anywhere.
        response_map: Response field -> dotted path (or a list of paths, first present wins) in the JSON answer.
            Fields: ``text``, ``intent``, ``rows``, ``insight``, ``refusal``, ``citations``, ``context``,
            ``model``, ``usage``, ``tool_calls``. Default: a JSON string answer is the text; a JSON object's keys that are
            Response fields are taken as they are; a non-JSON answer is the text. Token usage: ``usage`` maps
            an object in the OpenAI shape (``prompt_tokens``, ``completion_tokens``,
            ``prompt_tokens_details.cached_tokens``, ``completion_tokens_details.reasoning_tokens``), or
            ``prompt_tokens``, ``completion_tokens``, ``cached_tokens``, ``reasoning_tokens`` map each count
            on its own (``{"prompt_tokens": "meta.tokens.in"}``).
        timeout: seconds for the whole call.
        name: a display name.

    HTTP 429, 5xx, timeouts and connection failures raise a transient :class:`~evalnb.errors.AgentError`
    (the runner retries them); other 4xx raise a permanent one. Both make the run ``degraded`` in the end.

    Example::

        agent = HTTP("http://127.0.0.1:8080/answer", response_map={"text": "answer", "rows": "data.rows"})
    """

    def __init__(
        self,
        url: str,
        *,
        method: str = "POST",
        body: Mapping[str, Any] | str | None = None,
        headers: Mapping[str, str] | None = None,
        secret_headers: Mapping[str, str] | None = None,
        response_map: Mapping[str, str | Sequence[str]] | None = None,
        timeout: float = 60.0,
        name: str | None = None,
    ) -> None:
        self.url = url
        self.method = method.upper()
        if isinstance(body, str):
            try:
                body = json.loads(body)
            except ValueError as e:
                raise ConfigError(f"HTTP body template is not valid JSON: {e}") from None
        self.body: Any = dict(body) if isinstance(body, Mapping) else body
        if self.body is None:
            self.body = {"prompt": "{prompt}", "history": "{history}"}
        self.headers = {str(k): str(v) for k, v in (headers or {}).items()}
        # Secrets are resolved now, so that a missing variable stops the run before it starts.
        self._secret_headers = {
            str(k): expand_env(str(v), what=f"HTTP header {k}") for k, v in (secret_headers or {}).items()
        }
        if response_map is not None:
            unknown = sorted(set(response_map) - set(_RESPONSE_FIELDS))
            if unknown:
                raise ConfigError(
                    f"HTTP response_map has unknown field(s) {unknown}; use {list(_RESPONSE_FIELDS)}"
                )
        self.response_map = None if response_map is None else dict(response_map)
        self.timeout = float(seconds("HTTP timeout", timeout) or 0.0)
        # The name is stored with every run and shown in reports: without the URL's password or query string.
        self.name = name or safe_url(url)

    @classmethod
    def ask(cls, url: str, **kwargs: Any) -> HTTP:
        """An agent for an "ask" service answering ``{intent, rows, insight: {markdown}, refusalReason}``.

        Example::

            agent = HTTP.ask("http://127.0.0.1:8080/ai/ask",
                             secret_headers={"Authorization": "Bearer ${ASK_TOKEN}"})
        """
        kwargs.setdefault("body", ASK_BODY)
        kwargs.setdefault("response_map", ASK_MAPPING)
        return cls(url, **kwargs)

    def __repr__(self) -> str:
        parts = [repr(_without_query(self.url)), f"method={self.method!r}"]
        if self.headers:
            parts.append(f"headers={sorted(self.headers)!r}")
        if self._secret_headers:
            parts.append(f"secret_headers={sorted(self._secret_headers)!r}")
        return f"HTTP({', '.join(parts)})"

    async def preflight(self, *, timeout: float | None = None) -> None:
        """Check at start-up that the URL's host and port accept a connection (README.md, Use it in CI: exit 2 if
        not).

        No request is sent: the service may not be idempotent, and any HTTP answer would count as reachable.

        Raises:
            ConfigError: naming the URL (without its query string) and what to do about it.

        Example::

            await HTTP("http://127.0.0.1:9/ai/ask").preflight()
            # Traceback (most recent call last):
            # evalnb.errors.ConfigError: agent endpoint http://127.0.0.1:9/ai/ask is not reachable: connection refused; ...
        """
        await require_reachable(
            self.url,
            what="agent endpoint",
            hint="start the service, or check the agent's URL",
            timeout=PREFLIGHT_TIMEOUT if timeout is None else timeout,
        )

    def _secrets(self) -> list[Secret | str]:
        return [*self._secret_headers.values(), *url_secrets(self.url)]

    def build_body(self, request: Request) -> Any:
        """The JSON body sent for this request."""
        return _fill(self.body, _values(request))

    async def respond(self, request: Request) -> Response:
        """Send one request and map the answer."""
        headers = {"Accept": "application/json", **self.headers}
        headers.update({k: v.get() for k, v in self._secret_headers.items()})
        data: str | None = None
        if self.method not in ("GET", "HEAD"):
            data = json.dumps(self.build_body(request))
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
        secrets = self._secrets()
        where = _without_query(self.url)
        started = time.perf_counter()
        try:
            # Redirects are followed; the configured headers (secret or not) stay with their origin.
            sent = await send(
                await shared_pool(), self.method, self.url, headers=headers, data=data, timeout=self.timeout
            )
        except asyncio.TimeoutError:
            raise AgentError(f"{where} did not answer within {self.timeout:g}s", transient=True) from None
        except _WireError as e:
            msg = scrub(str(e), secrets)
            raise AgentError(f"could not reach {where}: {msg}", transient=True) from None
        elapsed = (time.perf_counter() - started) * 1000.0
        resp = sent.response
        status, raw, cut = resp.status, resp.body, resp.cut
        retry_after = resp.headers.get("Retry-After")
        text = raw.decode(resp.charset or "utf-8", errors="replace")
        if status >= 400:
            snippet = scrub(text.strip().replace("\n", " ")[:_SNIPPET], secrets)
            transient = status == 429 or status >= 500 or status == 408
            error = AgentError(f"{where} answered HTTP {status}: {snippet}{sent.note()}", transient=transient)
            if transient and retry_after:
                # The runner waits this long before its retry (it reads ``retry_after`` from the error).
                error.retry_after = parse_retry_after(retry_after)  # type: ignore[attr-defined]
            raise error
        if cut:
            # Only the head was read: as text it is kept (and cut to the answer cap below); a mapping needs JSON.
            if self.response_map is not None:
                raise AgentError(
                    f"{where} answered more than {MAX_BODY} bytes; evalnb reads at most that much, and the mapped "
                    "fields need the whole JSON body"
                )
            head = text[:MAX_ANSWER] + note("the answer", MAX_BODY, None, unit="bytes of the response body")
            response = Response(text=head, meta={"body_truncated": True, "max_body": MAX_BODY})
        else:
            response = capped(self._map(text, resp.headers.get("Content-Type", ""), where))
        response.latency_ms = elapsed
        response.meta.setdefault("http_status", status)
        return response

    def _map(self, text: str, content_type: str, where: str) -> Response:
        try:
            data: Any = json.loads(text) if text.strip() else None
        except ValueError:
            if self.response_map is not None:
                snippet = scrub(text.strip()[:_SNIPPET], self._secrets())
                raise AgentError(
                    f"{where} answered with a body that is not JSON ({content_type or 'no content type'}): "
                    f"{snippet}"
                ) from None
            return Response(text=text)
        if self.response_map is None:
            if isinstance(data, Mapping):
                known = {f.name for f in fields(Response)} - {"meta", "latency_ms"}
                return Response(**{k: v for k, v in data.items() if k in known})
            return Response(text=data if isinstance(data, str) else _text(data))
        return Response(**_fitted(self._mapped(data, where), where))

    def _mapped(self, data: Any, where: str) -> dict[str, Any]:
        """The value of each mapped field: the first of its paths that holds one; an error if no path exists."""
        response_map = self.response_map or {}
        values: dict[str, Any] = {}
        found_any = False
        for target, paths in response_map.items():
            for path in [paths] if isinstance(paths, str) else list(paths):
                found, value = _lookup(data, path)
                found_any = found_any or found
                if value is not None:
                    values[target] = value
                    break
        if not found_any and response_map:
            # Not one mapped path exists in the answer: the mapping does not fit this service (a typo, another
            # API version). Saying so beats an empty Response whose checks all fail with "no result".
            wanted = ", ".join(
                f"{t}: {' | '.join([p] if isinstance(p, str) else list(p))}" for t, p in response_map.items()
            )
            has = sorted(map(str, data))[:20] if isinstance(data, Mapping) else type(data).__name__
            raise AgentError(
                scrub(
                    f"{where} answered JSON with none of the mapped paths ({wanted}); the answer has {has}",
                    self._secrets(),
                )
            )
        return values


def _fitted(values: dict[str, Any], where: str) -> dict[str, Any]:
    """Mapped values in the types of Response's fields: text as text, one citation as a list; rows and tool
    calls that are not lists are an error, a usage that is not a mapping is dropped."""
    for key in ("text", "intent", "insight", "refusal", "context", "model"):
        if key in values and not isinstance(values[key], str):
            values[key] = _text(values[key])
    if "rows" in values and not isinstance(values["rows"], list):
        raise AgentError(f"{where} answered rows that are not a list: {_text(values['rows'])[:_SNIPPET]}")
    if "citations" in values and not isinstance(values["citations"], list):
        values["citations"] = [values["citations"]]
    if "usage" in values and not isinstance(values["usage"], Mapping):
        values.pop("usage")
    counts = {k: values.pop(k) for k in _TOKEN_FIELDS if k in values}
    if counts:
        values["usage"] = {**(values.get("usage") or {}), **counts}
    if "tool_calls" in values and not isinstance(values["tool_calls"], list):
        raise AgentError(
            f"{where} answered tool_calls that are not a list: {_text(values['tool_calls'])[:_SNIPPET]}"
        )
    return values


def _without_query(url: str) -> str:
    # A query string may carry a key (``?code=...``), and ``user:password@`` a password: reprs and messages
    # show the URL without either (evalnb._secrets, the one home of the rule).
    return safe_url(url)


# --------------------------------------------------------------------------------------------------
# evalnb.toml: [agents.NAME] type = "http"
# --------------------------------------------------------------------------------------------------


class HTTPAgentConfig(BaseModel):
    """``type = "http"``: the options of :class:`HTTP`; ``preset = "ask"`` for an ask service."""

    model_config = ConfigDict(extra="forbid")

    url: str
    preset: Literal["ask"] | None = None
    method: str = "POST"
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    secret_headers: dict[str, str] = Field(default_factory=dict)
    response_map: dict[str, str | list[str]] | None = None
    timeout: float = Field(default=60.0, gt=0)


def _from_config(cfg: HTTPAgentConfig, ctx: BuildContext) -> HTTP:
    opts = cfg.model_dump()
    if opts.pop("preset") == "ask":
        # The preset's body and mapping stand unless the table gives its own.
        opts = {k: v for k, v in opts.items() if not (k in ("body", "response_map") and v is None)}
        return HTTP.ask(name=ctx.name, **opts)
    return HTTP(name=ctx.name, **opts)


register_agent_type("http", HTTPAgentConfig, _from_config)

# exported lazily by evalnb.agents: its public home from the start, whoever imports this module first
homes("evalnb.agents", globals(), ["HTTP"])
