"""Secrets stay out of everything evalnb shows or saves: the one home of the rules.

* :class:`Secret` holds a value that never shows itself (``repr`` and ``str`` give ``***``);
  :func:`expand_env` builds one from ``${NAME}`` references to the environment.
* :func:`scrub` replaces every secret value in a text built from what a server sent back (an error body that
  echoes the request's headers) before it becomes an error, a reason or a log line.
* :func:`safe_url` is a URL fit for a message: no ``user:password@``, no query string (either may carry a key);
  :func:`redact_urls` applies it to every URL inside a text, so a name that is a URL (an ``HTTP`` agent's) is
  stored and shown without them.
* :func:`url_secrets` are the secrets a URL itself carries (its password, the Basic auth token made from it,
  its query values).

Standard library only.

Example::

    scrub('{"echo": "Bearer abc123"}', [Secret("Bearer abc123")])
    # '{"echo": "***"}'
    redact_urls("HTTP agent https://bob:pw@example.com/ask?key=k1")
    # 'HTTP agent https://example.com/ask'
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.parse
from collections.abc import Iterable

__all__ = ["Secret", "expand_env", "redact_urls", "safe_url", "scrub", "url_secrets"]

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()]+")
_SHORTEST = 4  # shorter parts ("abc", "v1") would also blank out ordinary words
_SCHEMES = {"bearer", "basic", "token", "digest"}  # the word before a credential is no secret


class Secret:
    """A string that never shows itself: ``repr`` and ``str`` give ``***``; ``.get()`` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    def __str__(self) -> str:
        return "***"


def expand_env(template: str, *, what: str) -> Secret:
    """Replace ``${NAME}`` references by environment values, wrapped as a :class:`Secret`.

    Raises:
        ConfigError: naming the variable (never a value) when it is not set.

    Example::

        expand_env("Bearer ${ASK_TOKEN}", what="header Authorization").get()
        # 'Bearer abc'
    """
    from evalnb.errors import ConfigError

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in os.environ:
            raise ConfigError(f"{what} needs the environment variable {name}, which is not set")
        return os.environ[name]

    return Secret(_ENV_REF.sub(sub, template))


def _forms(value: str) -> set[str]:
    """The ways a server may echo a secret back: as sent, its words ("abc" of "Bearer abc"), JSON-escaped
    (``\\/`` too), URL-encoded."""
    forms: set[str] = set()
    for part in {value, *value.split()}:
        if len(part) < _SHORTEST or part.lower() in _SCHEMES:
            continue
        escaped = json.dumps(part)[1:-1]
        forms |= {part, escaped, escaped.replace("/", "\\/"), urllib.parse.quote(part, safe="")}
    return forms


def scrub(text: str, secrets: Iterable[Secret | str | None]) -> str:
    """``text`` with every secret value (and the forms a server echoes it in) replaced by ``***``.

    Example::

        scrub("token tok-123 rejected", [Secret("Bearer tok-123")])
        # 'token *** rejected'
    """
    forms: set[str] = set()
    for s in secrets:
        value = s.get() if isinstance(s, Secret) else s
        if value:
            forms |= _forms(value)
    for form in sorted(forms, key=len, reverse=True):  # the longest first: "Bearer abc" before "abc"
        text = text.replace(form, "***")
    return text


def safe_url(url: str) -> str:
    """``url`` fit for a message: no user name or password, no query string (either may carry a key).

    Example::

        safe_url("https://user:pw@example.com/v1?code=abc")
        # 'https://example.com/v1'
    """
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # an unbalanced "[" in the host: show nothing of what follows the scheme
        return url.split("://", 1)[0] + "://..."
    netloc = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def redact_urls(text: str) -> str:
    """``text`` with each URL in it made :func:`safe_url` (an agent's or a judge's name, a label).

    Example::

        redact_urls("http://127.0.0.1:8080/ask?key=k1")
        # 'http://127.0.0.1:8080/ask'
    """
    if "://" not in text:
        return text

    def safe(m: re.Match[str]) -> str:
        url = m.group(0).rstrip(".,;:!?")  # punctuation after a URL in a sentence is not part of it
        return safe_url(url) + m.group(0)[len(url) :]

    return _URL.sub(safe, text)


def url_secrets(url: str) -> list[str]:
    """What a URL carries that is secret: its password, the HTTP Basic token made of ``user:password`` (what
    a server echoing the Authorization header shows) and its query values."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return []
    out: list[str] = []
    if parts.password:
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password)
        out += [password, base64.b64encode(f"{user}:{password}".encode()).decode()]
    out += [v for _, v in urllib.parse.parse_qsl(parts.query) if v]
    return out
