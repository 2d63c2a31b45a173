"""The one exception tree of evalnb.

Every error carries a stable ``.code`` so that CI scripts and notebooks can tell one failure from another
without parsing messages::

    EvalnbError                  base of everything evalnb raises on purpose
    ├── SuiteError               a suite file could not be loaded (code, location, path)
    ├── ConfigError              a run could not start: agent routing, missing data, a bad option
    ├── AgentError               an agent call failed; ``transient=True`` asks the runner to retry it
    │   └── TransientError       shorthand for a retryable agent failure (rate limit, 5xx, dropped socket)
    ├── ChatError                a chat-completions call failed (after retries): status, transient, attempts
    ├── JudgeError               a judge could not produce a usable verdict
    ├── ReferenceQueryError      a cube referenceQuery could not be built or run
    ├── StoreError               the run store could not read or write
    └── FailuresError            raised by ``Result.raise_for_failures()`` when a check failed

Failures of agents and judges during a run become rows with a status and a reason; these exceptions are
raised to callers only when a run cannot start or when the caller asks (``raise_for_failures``).
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "ChatError",
    "ConfigError",
    "EvalnbError",
    "FailuresError",
    "JudgeError",
    "ReferenceQueryError",
    "StoreError",
    "SuiteError",
    "TransientError",
]


class EvalnbError(Exception):
    """Base class of every error evalnb raises on purpose."""

    code: str = "EVALNB_ERROR"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class SuiteError(EvalnbError):
    """A suite could not be loaded.

    Attributes:
        code: a stable string such as ``UNKNOWN_FIELD`` or ``MALFORMED_YAML``.
        location: where in the document, e.g. ``"cases[2].tolerance.absolute"`` (``""`` for the whole file).
        path: the file, when the suite came from one.
        suggestion: the nearest valid key for a typo, if any.
        errors: every error found in the document, in document order, this one first (a list of one when
            the document has a single problem). ``.code`` and ``.location`` are those of the first.

    Example:
        >>> try:
        ...     evalnb.load("name: x", format="cube-yaml")
        ... except evalnb.SuiteError as e:
        ...     print(e.code, e.location)
        MISSING_FIELD cube
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        location: str = "",
        path: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.location = location
        self.path = path
        self.suggestion = suggestion
        self.errors: list[SuiteError] = [self]

    def __str__(self) -> str:
        where = ":".join(p for p in (self.path or "", self.location) if p)
        return f"{where}: {self.code} {self.message}" if where else f"{self.code} {self.message}"

    def __reduce__(self) -> tuple[object, ...]:
        # `errors` holds this very error: it travels as state, set after the object exists, so pickle's memo
        # resolves the self-reference instead of recursing.
        args = (self.code, self.message, self.location, self.path, self.suggestion)
        return (_rebuild_suite_error, args, {"errors": self.errors})


def _rebuild_suite_error(
    code: str, message: str, location: str, path: str | None, suggestion: str | None
) -> SuiteError:
    return SuiteError(code, message, location=location, path=path, suggestion=suggestion)


class ConfigError(EvalnbError):
    """A run could not start (unknown agent id, missing data source, invalid option)."""

    code = "CONFIG_ERROR"


class AgentError(EvalnbError):
    """An agent call failed.

    Adapters raise it with ``transient=True`` for failures worth retrying (rate limits, 5xx, timeouts);
    the runner retries those with backoff and never retries a wrong answer.
    """

    code = "AGENT_ERROR"

    def __init__(self, message: str, *, transient: bool = False, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.transient = transient


class TransientError(AgentError):
    """A retryable agent failure; raise it from your own agent to ask for a retry."""

    code = "AGENT_TRANSIENT"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message, transient=True, code=code)


class JudgeError(EvalnbError):
    """A judge failed to produce a usable verdict (unreachable, unparseable after retries)."""

    code = "JUDGE_ERROR"

    def __init__(self, message: str, *, transient: bool = False, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.transient = transient


class ChatError(EvalnbError):
    """A chat-completions call failed (after retries, for retryable failures).

    Attributes:
        status: the HTTP status, or ``None`` for a timeout or a connection failure.
        transient: whether the failure was of a retryable kind (429, 5xx, timeout, connection).
        attempts: how many attempts were made.
    """

    code = "CHAT_ERROR"

    def __init__(
        self, message: str, *, status: int | None = None, transient: bool = False, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient
        self.attempts = attempts


class ReferenceQueryError(EvalnbError):
    """A reference query could not be built or run (the rows check reports it as an authoring mismatch)."""

    code = "REFERENCE_QUERY"


class StoreError(EvalnbError):
    """The run store could not read or write."""

    code = "STORE_ERROR"


class FailuresError(EvalnbError):
    """Raised by ``Result.raise_for_failures()`` when any case failed or was degraded."""

    code = "CHECKS_FAILED"
