"""Reference queries only read: the statement check that runs before every query, and the engine's own locks.

docs/cube-yaml.md, "Reference queries only read": a reference query is one ``SELECT`` or ``WITH`` statement
that changes nothing. Two layers hold the rule, so that neither depends on the other being complete:

* :func:`check_statement` reads the SQL before it is sent (comments, string literals and quoted names are
  skipped as the database would skip them) and refuses a second statement, a first word other than ``SELECT``
  or ``WITH``, a write anywhere (``WITH d AS (DELETE ... RETURNING *) SELECT ...``, ``SELECT ... INTO``), a
  row lock, and calls of functions that act outside the query (``pg_terminate_backend``, ``lo_export``,
  ``set_config``, ``load_extension`` ...). Text it cannot read the same way in every database (an unclosed
  comment or string, a comment inside a comment, ``\\'`` inside a string) is refused too.
* the connection itself cannot write: SQLite through an authorizer that allows only reading (no ATTACH,
  VACUUM, pragma or write of any kind), ``query_only`` and no attached databases; DuckDB read-only, with
  file system access, extension installs and loads turned off and its configuration locked; PostgreSQL in a
  read-only transaction that is always rolled back.

Every refusal is a :class:`~evalnb.errors.ReferenceQueryError` with the code ``READ_ONLY_QUERY``.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evalnb.errors import CheckCode, ReferenceQueryError

__all__ = [
    "DUCKDB_CONFIG",
    "RULE",
    "check_statement",
    "open_sqlite",
    "refusal",
    "refused",
    "sqlite_reading",
]

RULE = CheckCode.READ_ONLY_QUERY

#: What a DuckDB connection of a data source is opened with: no file outside the database is read or written
#: (COPY TO, ATTACH, EXPORT, read_csv), no extension is downloaded or loaded, and no SET can undo it.
DUCKDB_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}

# Words that only a statement which changes something contains (outside literals, comments and quoted names).
_WRITES = frozenset(
    {
        *("INSERT", "UPDATE", "DELETE", "MERGE", "INTO", "CREATE", "DROP", "ALTER", "TRUNCATE"),
        *("ATTACH", "DETACH", "PRAGMA", "VACUUM", "REINDEX", "COPY", "INSTALL", "GRANT", "REVOKE"),
    }
)

# Functions that act outside the query (other sessions, server files, settings, sequences, locks), or run SQL
# given as text, which the statement check cannot read. PostgreSQL's read-only transaction stops the writes
# among them, not all (pg_terminate_backend, lo_export and set_config of a session setting still run there).
_POSTGRES_FUNCTIONS = re.compile(
    r"pg_(terminate|cancel)_backend|pg_reload_conf|pg_rotate_logfile|pg_promote|pg_switch_wal|pg_switch_xlog"
    r"|pg_create_restore_point|pg_(start|stop)_backup|pg_backup_(start|stop)|pg_log_backend_memory_contexts"
    r"|pg_stat_reset\w*|pg_(try_)?advisory\w*|pg_notify|pg_sleep\w*|pg_read_(binary_)?file|pg_ls_\w+"
    r"|pg_stat_file|pg_file_\w+|pg_(create|drop|copy)_\w*replication_slot|pg_replication_\w+|pg_logical_\w+"
    r"|pg_wal_replay_\w+|pg_import_system_collations|lo_\w+|set_config|setval|nextval|query_to_xml\w*"
    r"|cursor_to_xml\w*|dblink\w*"
)
_SQLITE_FUNCTIONS = re.compile(r"load_extension|writefile|readfile|edit|fts3_tokenizer")
_DUCKDB_FUNCTIONS = re.compile(r"query|query_table|nextval|setval")
_FUNCTIONS: dict[str, list[re.Pattern[str]]] = {
    "sqlite": [_SQLITE_FUNCTIONS],
    "postgresql": [_POSTGRES_FUNCTIONS],
    "duckdb": [_DUCKDB_FUNCTIONS],
}
_ALL_FUNCTIONS = [_POSTGRES_FUNCTIONS, _SQLITE_FUNCTIONS, _DUCKDB_FUNCTIONS]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "name" (a quoted identifier), "string", ";", "(" or "op"
    text: str


def refused(why: str) -> ReferenceQueryError:
    """The error of a query the read-only rule refuses, naming the rule and why."""
    return ReferenceQueryError(
        f"{RULE}: a reference query only reads (one SELECT or WITH statement that changes nothing); {why}",
        code=RULE,
    )


def check_statement(sql: str, *, dialect: str) -> None:
    """Refuse ``sql`` unless it is one statement that only reads, as docs/cube-yaml.md says.

    Args:
        sql: the statement as it will be sent.
        dialect: ``sqlite``, ``duckdb``, ``postgresql``, or another SQLAlchemy dialect name (read with the
            rules of all three, the strictest way).

    Raises:
        ReferenceQueryError: code ``READ_ONLY_QUERY``, saying what was found.

    Example::

        check_statement("SELECT 1; DROP TABLE sales", dialect="sqlite")
        # ReferenceQueryError: READ_ONLY_QUERY: ...; this one has 2 statements (separated by ';')
    """
    tokens = _one_statement(sql, dialect)
    first = next((t for t in tokens if t.kind != "("), None)
    if first is None or first.kind != "word" or first.text.upper() not in ("SELECT", "WITH"):
        raise refused(f"this one starts with {first.text if first else '('!r}")
    _no_writes(tokens, _FUNCTIONS.get(dialect, _ALL_FUNCTIONS))


def _one_statement(sql: str, dialect: str) -> list[_Token]:
    """The tokens of the one statement ``sql`` holds; refused if it holds none or several."""
    statements: list[list[_Token]] = [[]]
    for token in _tokens(sql, dialect):
        if token.kind == ";":
            statements.append([])
        else:
            statements[-1].append(token)
    statements = [s for s in statements if s]
    if not statements:
        raise refused("this one is empty")
    if len(statements) > 1:
        raise refused(f"this one has {len(statements)} statements (separated by ';')")
    return statements[0]


def _no_writes(tokens: list[_Token], patterns: list[re.Pattern[str]]) -> None:
    """Refuse a statement with a word that writes, a row lock, or a call of a function that acts outside it."""
    words = [t.text.upper() if t.kind == "word" else "" for t in tokens]
    for i, token in enumerate(tokens):
        if token.kind == "word" and words[i] in _WRITES:
            raise refused(
                f"this one contains {words[i]}, which writes (if it is a column or table name here, "
                f'quote it: "{token.text}")'
            )
        if words[i] == "SHARE" and i > 0 and words[i - 1] in ("FOR", "KEY"):
            raise refused("this one locks rows (FOR SHARE)")
        called = i + 1 < len(tokens) and tokens[i + 1].kind == "("
        if called and token.kind in ("word", "name"):
            name = token.text.lower()
            if any(p.fullmatch(name) for p in patterns):
                raise refused(f"this one calls {name}(), which acts outside the query")


def _tokens(sql: str, dialect: str) -> Iterator[_Token]:
    """The tokens of ``sql`` that matter to the rule, comments dropped, literals and quoted names whole.

    Raises:
        ReferenceQueryError: for text the databases would read differently (see the module docstring).
    """
    postgres_like = dialect in ("postgresql", "duckdb")
    sqlite_like = dialect not in ("postgresql", "duckdb")  # SQLite's quoting, and the other dialects'
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c.isspace():
            i += 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*!", i):
            raise refused("this one has a /*! comment, which MySQL runs as SQL")
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end < 0:
                raise refused("this one ends inside a /* comment")
            if "/*" in sql[i + 2 : end]:
                # PostgreSQL nests comments, SQLite does not: the same text hides different SQL in each.
                raise refused("this one has a comment inside a comment")
            i = end + 2
        elif c == "'":
            # PostgreSQL and DuckDB: E'...' (a lone E before the quote) reads backslash escapes.
            escaped = postgres_like and _escape_prefix(sql, i)
            i, text = _quoted(sql, i, "'", backslashes=escaped, ambiguous=dialect not in ("sqlite", "duckdb"))
            yield _Token("string", text)
        elif c == '"' or (c == "`" and sqlite_like):
            i, text = _quoted(sql, i, c, backslashes=False, ambiguous=dialect not in ("sqlite", "duckdb"))
            yield _Token("name", text)
        elif c == "[" and sqlite_like:
            end = sql.find("]", i + 1)
            if end < 0:
                raise refused("this one ends inside a [name]")
            yield _Token("name", sql[i + 1 : end])
            i = end + 1
        elif c == "$" and postgres_like and (tag := _DOLLAR_TAG.match(sql, i)):
            end = sql.find(tag.group(0), tag.end())
            if end < 0:
                raise refused(f"this one ends inside a {tag.group(0)} string")
            yield _Token("string", sql[tag.end() : end])
            i = end + len(tag.group(0))
        elif word := _WORD.match(sql, i):
            yield _Token("word", word.group(0))
            i = word.end()
        elif c in ";(":
            yield _Token(c, c)
            i += 1
        else:
            yield _Token("op", c)
            i += 1


def _escape_prefix(sql: str, i: int) -> bool:
    """Whether the quote at ``i`` opens an ``E'...'`` string: a lone ``E`` right before it."""
    return i > 0 and sql[i - 1] in "eE" and (i == 1 or not (sql[i - 2].isalnum() or sql[i - 2] in "_$"))


def _quoted(sql: str, start: int, quote: str, *, backslashes: bool, ambiguous: bool) -> tuple[int, str]:
    """``(index after the closing quote, content)`` of the literal or name opening at ``start``.

    ``ambiguous``: the database may read a backslash before the quote as an escape (MySQL; PostgreSQL with
    ``standard_conforming_strings`` off), so an odd run of backslashes before the closing quote is refused.
    """
    i, out = start + 1, []
    while i < len(sql):
        c = sql[i]
        if backslashes and c == "\\":
            out.append(sql[i : i + 2])
            i += 2
            continue
        if c == quote:
            if sql.startswith(quote * 2, i):
                out.append(quote)
                i += 2
                continue
            text = "".join(out)
            if ambiguous and not backslashes and (len(text) - len(text.rstrip("\\"))) % 2:
                raise refused(
                    f"this one has \\{quote} in a quoted text, which databases read differently: "
                    f"write {quote * 2} for a {quote} inside it"
                )
            return i + 1, text
        out.append(c)
        i += 1
    raise refused(f"this one ends inside a {quote}...{quote} {'string' if quote == chr(39) else 'name'}")


# --------------------------------------------------------------------------------------------------
# Engine errors that are the read-only locks at work
# --------------------------------------------------------------------------------------------------

_REFUSALS = (
    "not authorized",  # SQLite's authorizer
    "authorization denied",
    "attempt to write a readonly database",
    "readonly database",
    "read-only transaction",  # PostgreSQL: cannot execute DELETE in a read-only transaction
    "read-only mode",  # DuckDB: attached in read-only mode
    "permission error",  # DuckDB: file system operations are disabled by configuration
    "disabled through configuration",
    "disabled by configuration",
    "configuration has been locked",
)


def refusal(message: str) -> ReferenceQueryError | None:
    """The read-only rule's error when a database's own message says one of its locks stopped the query."""
    low = message.lower()
    if any(marker in low for marker in _REFUSALS):
        return refused(f"the database refused it: {message}")
    return None


# --------------------------------------------------------------------------------------------------
# SQLite
# --------------------------------------------------------------------------------------------------

_SQLITE_READS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
_SQLITE_FUNCTION = sqlite3.SQLITE_FUNCTION
_LIMIT_ATTACHED: int | None = getattr(sqlite3, "SQLITE_LIMIT_ATTACHED", None)  # Connection.setlimit: 3.11+


def _authorize(
    action: int, _arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None
) -> int:
    # Only reading is allowed: every write, ATTACH (which VACUUM INTO asks for too), PRAGMA and transaction is
    # denied, and functions with effects outside the query (load_extension ...) are.
    if action in _SQLITE_READS:
        return sqlite3.SQLITE_OK
    if action == _SQLITE_FUNCTION and not _SQLITE_FUNCTIONS.fullmatch(str(arg2 or "").lower()):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def open_sqlite(path: str) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at ``path`` (never created when it is missing).

    Raises:
        sqlite3.Error: when the file cannot be opened.
    """
    from pathlib import Path

    con = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, check_same_thread=False)
    con.execute("PRAGMA query_only = ON")
    return con


@contextlib.contextmanager
def sqlite_reading(con: Any) -> Iterator[None]:
    """Hold a sqlite3 connection to reading while a query runs (docs/cube-yaml.md, "Reference queries only
    read"): an authorizer that allows only reading, ``query_only`` on, and no database can be attached.

    A caller's connection has its ``query_only`` setting and attached-databases limit back afterwards, and no
    authorizer (sqlite3 cannot say which one it had).
    """
    was_query_only = con.execute("PRAGMA query_only").fetchone()[0]
    con.execute("PRAGMA query_only = ON")
    limit = con.setlimit(_LIMIT_ATTACHED, 0) if _LIMIT_ATTACHED is not None else None
    con.set_authorizer(_authorize)
    try:
        yield
    finally:
        if sys.version_info >= (3, 11):
            con.set_authorizer(None)
        else:  # Python 3.10 would keep None as the callback and deny everything: one that allows all
            con.set_authorizer(lambda *_: sqlite3.SQLITE_OK)
        if limit is not None:
            con.setlimit(_LIMIT_ATTACHED, limit)
        con.execute(f"PRAGMA query_only = {int(bool(was_query_only))}")
