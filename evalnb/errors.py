"""The one exception tree of evalnb, and the stable codes its errors carry.

Every error carries a stable ``.code`` so that CI scripts and notebooks can tell one failure from another
without parsing messages::

    EvalnbError         EvalnbCode   base of everything evalnb raises on purpose
    ├── SuiteError      SuiteCode    a suite could not be loaded (code, location, path; every error in .errors)
    ├── ConfigError     ConfigCode   a run could not start: configuration, agent routing, missing data, a bad
    │                                option, user code (module:function, a plugin) that does not load
    ├── AgentError      AgentCode    an agent call failed; ``transient=True`` asks the runner to retry it
    │   └── TransientError           shorthand for a retryable agent failure (rate limit, 5xx, dropped socket)
    ├── ChatError       ChatCode     a chat-completions call failed (after retries): status, transient, attempts
    ├── JudgeError      JudgeCode    a judge could not produce a usable verdict
    ├── ReferenceQueryError          a cube referenceQuery could not be built or run (CheckCode)
    ├── RegexTimeout                 a regex search ran past its time bound (CheckCode)
    ├── StoreError      StoreCode    the run store, or a results file, could not be read or written
    ├── RunError        RunCode      a run that started could not complete (it ran out of memory)
    └── FailuresError                raised by ``Result.raise_for_failures()`` when a check failed (CheckCode)

    SuiteWarning (a UserWarning)     a suite loaded with something to know (also in ``Suite.warnings``)
    CostWarning (a UserWarning)      a run priced its calls and found models without a price (their cost NA)

Codes are enumerations per area (one ``str``-valued enum per class above, pandera's ``SchemaErrorReason`` is
the model). A member is its plain string: ``err.code == "MALFORMED_YAML"`` holds, and ``str()``, f-strings and
``json.dumps`` show ``MALFORMED_YAML``. A code string given to an error is turned into its member, so
``err.code is SuiteCode.MALFORMED_YAML`` holds too; a code outside the enumeration (a plugin's own, such as
``MALFORMED_CSV``) stays a plain string.

Failures of agents and judges during a run become rows with a status and a reason; these exceptions are
raised to callers only when a run cannot start or when the caller asks (``raise_for_failures``). Parsers signal
inside their own module with private exceptions (a duplicate key, an alias bomb) that are always turned into a
``SuiteError`` there and never reach a caller.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar

__all__ = [
    "AgentCode",
    "AgentError",
    "ChatCode",
    "ChatError",
    "CheckCode",
    "Code",
    "ConfigCode",
    "ConfigError",
    "CostWarning",
    "EvalnbCode",
    "EvalnbError",
    "FailuresError",
    "JudgeCode",
    "JudgeError",
    "ReferenceQueryError",
    "RegexTimeout",
    "RunCode",
    "RunError",
    "StoreCode",
    "StoreError",
    "SuiteCode",
    "SuiteError",
    "SuiteWarning",
    "TransientError",
]


# --------------------------------------------------------------------------------------------------
# Codes
# --------------------------------------------------------------------------------------------------


class Code(str, enum.Enum):
    """Base of the code enumerations: a member compares, prints, formats and JSON-dumps as its plain string.

    ``enum.StrEnum`` does this from Python 3.11; evalnb supports 3.10, so the two methods are spelt out.
    """

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class EvalnbCode(Code):
    """The code of an :class:`EvalnbError` raised as such."""

    EVALNB_ERROR = "EVALNB_ERROR"


class SuiteCode(Code):
    """Why a suite did not load (docs/extending.md, error codes; each format's page lists its codes under Errors)."""

    MALFORMED_YAML = "MALFORMED_YAML"
    MISSING_FIELD = "MISSING_FIELD"
    BLANK_FIELD = "BLANK_FIELD"
    TYPE_MISMATCH = "TYPE_MISMATCH"
    INVALID_TOLERANCE = "INVALID_TOLERANCE"
    MALFORMED_TOML = "MALFORMED_TOML"
    MALFORMED_JSON = "MALFORMED_JSON"
    #: a table of cases (docs/tables.md): a CSV file that does not parse, a JSONL line that is not JSON
    MALFORMED_CSV = "MALFORMED_CSV"
    MALFORMED_JSONL = "MALFORMED_JSONL"
    UNKNOWN_FIELD = "UNKNOWN_FIELD"
    INVALID_VALUE = "INVALID_VALUE"
    UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
    #: something the suite asks for that evalnb cannot run (a promptfoo `javascript` assert, a custom filter);
    #: `evalnb.load(..., unsupported="skip")` leaves it out with a warning instead (docs/promptfoo.md)
    UNSUPPORTED_FEATURE = "UNSUPPORTED_FEATURE"
    FILE_NOT_FOUND = "FILE_NOT_FOUND"
    FILE_UNREADABLE = "FILE_UNREADABLE"
    #: not a problem of the document: evalnb itself failed while loading it (a bug to report)
    INTERNAL_ERROR = "INTERNAL_ERROR"


class ConfigCode(Code):
    """Why a run could not start: configuration files, options, user code named by ``module:function``."""

    CONFIG_ERROR = "CONFIG_ERROR"
    UNKNOWN_FIELD = "UNKNOWN_FIELD"
    MISSING_FIELD = "MISSING_FIELD"
    INVALID_VALUE = "INVALID_VALUE"
    BAD_AGENT_SPEC = "BAD_AGENT_SPEC"
    PLUGIN_ERROR = "PLUGIN_ERROR"
    REPLAY_MISSING = "REPLAY_MISSING"
    UNREACHABLE = "UNREACHABLE"
    MISSING_DEPENDENCY = "MISSING_DEPENDENCY"


class AgentCode(Code):
    """Why an agent call failed."""

    AGENT_ERROR = "AGENT_ERROR"
    AGENT_TRANSIENT = "AGENT_TRANSIENT"
    AGENT_HTTP_ERROR = "AGENT_HTTP_ERROR"
    REPLAY_MISSING = "REPLAY_MISSING"
    UNKNOWN_TASK = "UNKNOWN_TASK"


class ChatCode(Code):
    """A chat-completions call failed."""

    CHAT_ERROR = "CHAT_ERROR"


class JudgeCode(Code):
    """A judge gave no usable verdict."""

    JUDGE_ERROR = "JUDGE_ERROR"


class CheckCode(Code):
    """A check could not run, or a result had failures."""

    REFERENCE_QUERY = "REFERENCE_QUERY"
    #: a reference query that is not one SELECT or WITH statement which only reads (docs/cube-yaml.md), or one
    #: the database's read-only connection refused
    READ_ONLY_QUERY = "READ_ONLY_QUERY"
    REGEX_TIMEOUT = "REGEX_TIMEOUT"
    CHECKS_FAILED = "CHECKS_FAILED"


class StoreCode(Code):
    """The run store or a results file could not be read or written."""

    STORE_ERROR = "STORE_ERROR"
    STORE_BUSY = "STORE_BUSY"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    #: the file is not a SQLite database, or is truncated or damaged (named in the message; never changed)
    STORE_CORRUPT = "STORE_CORRUPT"
    #: the store can only be read here (its file or folder is not writable): saving into it is refused
    STORE_READ_ONLY = "STORE_READ_ONLY"
    STORE_SCHEMA_TOO_NEW = "STORE_SCHEMA_TOO_NEW"
    AMBIGUOUS_VERSION = "AMBIGUOUS_VERSION"
    RUN_NOT_FOUND = "RUN_NOT_FOUND"
    UNKNOWN_RESULTS = "UNKNOWN_RESULTS"
    RESULTS_NOT_FOUND = "RESULTS_NOT_FOUND"
    NO_SHARED_SUITE = "NO_SHARED_SUITE"
    VERSION_EXISTS = "VERSION_EXISTS"
    UNKNOWN_SUITE = "UNKNOWN_SUITE"
    #: a reading command (report, compare, trend, runs, delete) was given a store that is not there
    STORE_NOT_FOUND = "STORE_NOT_FOUND"
    #: a write failed because the disk (or the database's size limit) is full
    STORE_FULL = "STORE_FULL"
    #: a stored run (its suite definition, its meta) does not read back: edited, damaged or from another version
    STORED_RUN_INVALID = "STORED_RUN_INVALID"
    #: a run's row was deleted while it ran (a later run replaced its version label, or it was deleted)
    RUN_REPLACED = "RUN_REPLACED"
    #: ``store.load(where=...)`` is not a mapping of stored columns to values (SQL text is refused)
    INVALID_WHERE = "INVALID_WHERE"
    #: ``store.load(columns=...)`` names a column no stored frame has
    INVALID_COLUMNS = "INVALID_COLUMNS"
    #: an Inspect AI log of a format version evalnb does not read (evalnb.read_inspect_log)
    UNSUPPORTED_LOG_VERSION = "UNSUPPORTED_LOG_VERSION"


class RunCode(Code):
    """Why a run that started could not complete."""

    RUN_ERROR = "RUN_ERROR"
    #: the process ran out of memory; what a store had saved is kept (and can be resumed)
    OUT_OF_MEMORY = "OUT_OF_MEMORY"


def _member(codes: type[Code], code: str) -> str:
    """``code`` as a member of ``codes`` when it is one; a code from outside evalnb stays a plain string."""
    try:
        return codes(code)
    except ValueError:
        return code


# --------------------------------------------------------------------------------------------------
# The tree
# --------------------------------------------------------------------------------------------------


class EvalnbError(Exception):
    """Base class of every error evalnb raises on purpose.

    Attributes:
        code: a stable code, a member of the class's enumeration (``codes``).
        message: the sentence, without the code.
    """

    codes: ClassVar[type[Code]] = EvalnbCode
    code: str = EvalnbCode.EVALNB_ERROR

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = _member(self.codes, code)


SHOWN_ERRORS = 50
"""How many of a document's errors a SuiteError's message lists (the rest are counted per code)."""


class SuiteError(EvalnbError):
    """A suite could not be loaded.

    ``str(err)`` shows every error of the document, one per line, this one first (as ``evalnb validate``
    prints them); :meth:`describe` is this error alone.

    Attributes:
        code: a stable :class:`SuiteCode` such as ``UNKNOWN_FIELD`` or ``MALFORMED_YAML``.
        location: where in the document, e.g. ``"cases[2].tolerance.absolute"`` (``""`` for the whole file).
        path: the file, when the suite came from one.
        suggestion: the nearest valid key for a typo, if any.
        errors: every error found in the document, in document order, this one first (a list of one when
            the document has a single problem). ``.code`` and ``.location`` are those of the first.

    Example::

        try:
            evalnb.load("name: x", format="cube-yaml")
        except evalnb.SuiteError as e:
            print(e.code, e.location)
        # MISSING_FIELD cube
    """

    codes = SuiteCode

    def __init__(
        self,
        code: str,
        message: str,
        *,
        location: str = "",
        path: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        # A format's own messages quote values and keys cut to a readable length (formats._common.shown); this
        # bounds any other (a plugin's, a parser's) so that no message or location grows with the document.
        super().__init__(_bounded(message, MAX_MESSAGE), code=code)
        self.location = _bounded(location, MAX_LOCATION)
        self.path = path
        self.suggestion = suggestion
        self.errors: list[SuiteError] = [self]

    def describe(self) -> str:
        """This error alone, on one line: ``path:location: CODE message``."""
        where = ":".join(p for p in (self.path or "", self.location) if p)
        return f"{where}: {self.code} {self.message}" if where else f"{self.code} {self.message}"

    def __str__(self) -> str:
        # Every error of the document, this one first, so a traceback (from evalnb.run or evalnb.load) shows
        # what one fix-and-rerun round needs, like `evalnb validate`.
        # A systematic mistake in a large file (one wrong key in each of a million items) is shown by its first
        # errors and a count per code, not a million lines; all of them stay in `.errors`.
        rest = [e for e in self.errors if e is not self]
        shown = [self, *rest][:SHOWN_ERRORS]
        lines = [e.describe() for e in shown]
        left = rest[SHOWN_ERRORS - 1 :]
        if left:
            from collections import Counter

            codes = ", ".join(f"{code} x{n:,}" for code, n in Counter(e.code for e in left).most_common())
            lines.append(f"... and {len(left):,} more errors ({codes}); every one is in the error's .errors")
        return "\n".join(lines)

    def __reduce__(self) -> tuple[object, ...]:
        # `errors` holds this very error: it travels as state, set after the object exists, so pickle's memo
        # resolves the self-reference instead of recursing.
        args = (self.code, self.message, self.location, self.path, self.suggestion)
        return (_rebuild_suite_error, args, {"errors": self.errors})


MAX_MESSAGE = 1000
"""The most characters a SuiteError's message keeps (the rest is cut, ending in ``...``)."""
MAX_LOCATION = 200
"""The most characters a SuiteError's location keeps."""


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rebuild_suite_error(
    code: str, message: str, location: str, path: str | None, suggestion: str | None
) -> SuiteError:
    return SuiteError(code, message, location=location, path=path, suggestion=suggestion)


class CostWarning(UserWarning):
    """A run with ``prices=`` called models that have no price: their calls cost ``NA`` (docs/costs.md). Said
    once per run, naming the models (also in ``result.meta["unpriced"]``)."""


class SuiteWarning(UserWarning):
    """A suite loaded, with something its author should know (each sentence is in ``Suite.warnings`` too): rows
    of a table whose checks need an expected answer they lack, the default checks a legacy dataset got.

    Example::

        with warnings.catch_warnings():
            warnings.simplefilter("error", evalnb.errors.SuiteWarning)   # a CI that treats them as errors
            evalnb.load("evals/cases.csv")
    """


class ConfigError(EvalnbError):
    """A run could not start (unknown agent id, missing data source, invalid option, user code that fails)."""

    codes = ConfigCode
    code = ConfigCode.CONFIG_ERROR


class AgentError(EvalnbError):
    """An agent call failed.

    Adapters raise it with ``transient=True`` for failures worth retrying (rate limits, 5xx, timeouts);
    the runner retries those with backoff and never retries a wrong answer. ``usage`` is what the failed call
    spent before it failed (token counts, as ``Response.usage``): the run counts it (docs/costs.md).
    """

    codes = AgentCode
    code = AgentCode.AGENT_ERROR

    def __init__(
        self, message: str, *, transient: bool = False, code: str | None = None, usage: Any = None
    ) -> None:
        super().__init__(message, code=code)
        self.transient = transient
        self.usage = usage


class TransientError(AgentError):
    """A retryable agent failure; raise it from your own agent to ask for a retry."""

    code = AgentCode.AGENT_TRANSIENT

    def __init__(self, message: str, *, code: str | None = None, usage: Any = None) -> None:
        super().__init__(message, transient=True, code=code, usage=usage)


class JudgeError(EvalnbError):
    """A judge failed to produce a usable verdict (unreachable, unparseable after retries)."""

    codes = JudgeCode
    code = JudgeCode.JUDGE_ERROR

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

    codes = ChatCode
    code = ChatCode.CHAT_ERROR

    def __init__(
        self, message: str, *, status: int | None = None, transient: bool = False, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient
        self.attempts = attempts


class ReferenceQueryError(EvalnbError):
    """A reference query could not be built or run (the rows check reports it as an authoring mismatch)."""

    codes = CheckCode
    code = CheckCode.REFERENCE_QUERY


class RegexTimeout(EvalnbError):
    """A regex search ran longer than its time bound (``evalnb.checks._text.regex_search``)."""

    codes = CheckCode
    code = CheckCode.REGEX_TIMEOUT


class StoreError(EvalnbError):
    """The run store could not read or write (or a results file is not one evalnb reads).

    Attributes:
        result: when a run stopped because its store failed mid-run (a full disk): the Result of the case runs
            that finished (interrupted, the rest skipped); else None.
    """

    codes = StoreCode
    code = StoreCode.STORE_ERROR
    result: Any = None


class RunError(EvalnbError):
    """A run that started could not complete (``OUT_OF_MEMORY``); exit 2 on the command line.

    Attributes:
        result: the Result of what finished, when there was memory to keep it; else None (what a store had
            saved is kept there).
    """

    codes = RunCode
    code = RunCode.RUN_ERROR
    result: Any = None


class FailuresError(EvalnbError):
    """Raised by ``Result.raise_for_failures()`` when any case failed or was degraded."""

    codes = CheckCode
    code = CheckCode.CHECKS_FAILED
