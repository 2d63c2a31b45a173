"""The format registry: what each suite format tells :func:`evalnb.load` about itself.

A format module builds one :class:`Format` (name, file suffixes, content sniffing, parser, builder, JSON Schema,
its malformed-document code, and optionally a legacy upgrade and a starter document) and passes it to
:func:`register` when imported. ``evalnb.formats`` then loads, validates, describes and upgrades its files
without knowing it: nothing outside the format's module names the format.

Example::

    register(Format(name="prompts-csv", suffixes=(".pcsv",), malformed="MALFORMED_CSV",
                    parse=parse_csv, build=build_suite, schema=lambda: {"type": "object"}))
    evalnb.load("evals/prompts.pcsv").format    # 'prompts-csv'
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._registry import Registry
from evalnb.errors import SuiteError
from evalnb.formats._takers import takes_promptfoo

if TYPE_CHECKING:
    from evalnb.suite import Suite

__all__ = [
    "UNSUPPORTED",
    "Format",
    "Sniff",
    "Text",
    "for_path",
    "get",
    "guess",
    "is_format",
    "names",
    "register",
    "suffix_files",
    "suffixes",
    "taken",
    "unregister",
    "unsupported_as",
    "unsupported_mode",
]


@dataclass(frozen=True)
class Text:
    """A document's text with the features sniffing looks at.

    Attributes:
        text: the whole text.
        stripped: the text without a leading byte-order mark or blank space.
        head: its first character (``""`` for an empty text).
        first_line: its first line, stripped.
    """

    text: str

    @functools.cached_property
    def stripped(self) -> str:
        return self.text.lstrip("\ufeff \t\r\n")

    @property
    def head(self) -> str:
        return self.stripped[:1]

    @functools.cached_property
    def first_line(self) -> str:
        return self.stripped.split("\n", 1)[0].strip()

    @property
    def bracket_header(self) -> bool:
        """Whether the first line is a table header such as ``[name]`` or ``[[name]]`` (TOML, INI).

        Such a line is never the start of a JSON document: ``[tasks]`` holds a bare word, ``[[tasks]]`` too.
        """
        line = self.first_line
        return line.startswith("[[") or (
            line.startswith("[") and line.endswith("]") and "," not in line and '"' not in line
        )


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


@dataclass(frozen=True)
class Sniff:
    """How a format recognises its documents by content, when there is no file extension to go by.

    The formats are tried by ``order`` (lowest first). Each one whose ``tries`` holds parses the text; the
    first whose parsed document ``accepts`` wins. A parse failure of a format that ``claims`` the text is
    reported at once. When no format accepted the text, the first whose ``fallback`` holds is the verdict:
    its document, or its parse error.

    Attributes:
        order: the place among the formats (the built-ins: JSON 10, TOML 20, YAML 30).
        tries: whether the text is worth parsing as this format (cheap; looks at :class:`Text` only).
        accepts: whether a parsed document is one of this format's.
        claims: whether a parse failure means the text is this format's, malformed.
        fallback: whether this format is the verdict when no format accepted the text.
        takes_from: formats whose files this one takes when their parsed document ``accepts`` here: a
            ``.yaml`` file holding a promptfoo config is parsed as YAML, then built as promptfoo's.
    """

    order: int = 100
    tries: Callable[[Text], bool] = _always
    accepts: Callable[[Any], bool] = _always
    claims: Callable[[Text], bool] = _never
    fallback: Callable[[Text], bool] = _never
    takes_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class Format:
    """One suite format.

    Attributes:
        name: the format's name (``Suite.format``, ``evalnb.load(..., format=NAME)``, ``evalnb schema NAME``).
        suffixes: file name endings that mean this format, lower-case (``.yaml``, ``.eval.yaml``).
        malformed: the code of a document that does not parse (``MALFORMED_YAML``); also given to a file of
            this format that is not UTF-8.
        parse: text -> parsed document; raises :class:`~evalnb.errors.SuiteError` with ``malformed``.
        build: (parsed document, the file or None) -> :class:`~evalnb.suite.Suite`; raises
            :class:`~evalnb.errors.SuiteError` with every error of the document in ``.errors``. The file is
            there for rules such as "the suite name defaults to the file's stem".
        schema: the JSON Schema of the format's documents (for editors), without ``$schema``.
        sniff: how the format is recognised by content.
        upgrade: (parsed document, the file) -> the text of its current form, or None when it is current;
            for formats with a legacy form (``evalnb upgrade``). Raises when the document would not load.
        starter: the text of a starter document (``evalnb init``), for formats that have one.
        what: what its documents are called, in the plural (``"JSON datasets"``), for messages.
        file_names: whole file names (or their endings) that mean this format, lower-case
            (``promptfooconfig.yaml`` also matches ``my.promptfooconfig.yaml``); they win over suffixes.
    """

    name: str
    suffixes: tuple[str, ...]
    malformed: str
    parse: Callable[[str], Any]
    build: Callable[[Any, Path | None], Suite]
    schema: Callable[[], dict[str, Any]]
    sniff: Sniff = field(default_factory=Sniff)
    upgrade: Callable[[Any, Path], str | None] | None = None
    starter: Callable[[], str] | None = None
    what: str = ""
    file_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Builtin:
    """A built-in format as declared here: the module that registers it, the file endings that mean it, the
    formats whose files it may take (``Sniff.takes_from``) and which of their documents it takes (its
    ``Sniff.accepts``, from ``formats/_takers.py``: asked before its module is imported)."""

    module: str
    suffixes: tuple[str, ...] = ()
    file_names: tuple[str, ...] = ()
    takes_from: tuple[str, ...] = ()
    accepts: Callable[[Any], bool] | None = None


# The built-in formats, declared like entry points (name -> module, imported on first use), with the file
# endings and takes_from each one's Format declares: naming a file's format imports that format's module alone
# (and the formats that may take its files: promptfoo for .json and .yaml), so a .toml suite never imports the
# YAML parser. tests/formats/test_registry.py checks that every module declares what this table says.
_BUILTINS: dict[str, _Builtin] = {
    "tasks-toml": _Builtin("evalnb.formats._tasks_toml", (".toml",)),
    "cube-yaml": _Builtin("evalnb.formats._cube_yaml", (".yaml", ".yml")),
    "dataset-json": _Builtin("evalnb.formats._dataset_json", (".json",)),
    "table-csv": _Builtin("evalnb.formats._tables", (".csv", ".tsv")),
    "table-jsonl": _Builtin("evalnb.formats._tables", (".jsonl",)),
    "table-frame": _Builtin("evalnb.formats._tables"),
    "promptfoo": _Builtin(
        "evalnb.formats.promptfoo",
        file_names=("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json"),
        takes_from=("cube-yaml", "dataset-json"),
        accepts=takes_promptfoo,
    ),
    "inspect-log": _Builtin("evalnb.formats._inspect_log"),
}

_FORMATS: Registry[Format] = Registry("format", builtins={name: b.module for name, b in _BUILTINS.items()})


def register(fmt: Format, *, replace: bool = False) -> Format:
    """Register a format; its module calls this when imported.

    Raises:
        ValueError: when the name is taken (``replace=True`` replaces it) or a suffix is not lower-case
            with a leading dot.
    """
    for suffix in fmt.suffixes:
        if not suffix.startswith(".") or suffix != suffix.lower():
            raise ValueError(f"format {fmt.name!r}: suffix {suffix!r} must be lower-case and start with '.'")
    return _FORMATS.register(fmt.name, fmt, replace=replace)


def unregister(name: str) -> Format | None:
    """Remove a registered format (a test's toy format); the format, or None."""
    return _FORMATS.unregister(name)


def get(name: str) -> Format | None:
    """The format registered under ``name``, or None."""
    return _FORMATS.get(name)


def is_format(name: str) -> bool:
    """Whether ``name`` is a registered format (a built-in name is, without importing its module)."""
    return name in _FORMATS


def names() -> tuple[str, ...]:
    """Every registered format's name: the built-ins first (``tasks-toml``, ``cube-yaml``, ``dataset-json``)."""
    return _FORMATS.names()


@dataclass(frozen=True)
class _Declared:
    """What a format says of the files it reads, known without importing its module; ``accepts`` is None when
    only the format's module can tell which documents it takes."""

    name: str
    suffixes: tuple[str, ...]
    file_names: tuple[str, ...]
    takes_from: tuple[str, ...]
    accepts: Callable[[Any], bool] | None = None


def _declared() -> list[_Declared]:
    """Every format's endings and takes_from, in the order of :func:`names`, without importing a format: a
    registered format's own, a built-in whose module is not imported yet by its declaration (``_BUILTINS``)."""
    registered = _FORMATS.registered()
    out: list[_Declared] = []
    for name, builtin in _BUILTINS.items():
        fmt = registered.get(name)
        if fmt is not None:
            out.append(_Declared(name, fmt.suffixes, fmt.file_names, fmt.sniff.takes_from, fmt.sniff.accepts))
        elif builtin.module not in sys.modules:  # imported and not registered: unregistered since
            out.append(
                _Declared(name, builtin.suffixes, builtin.file_names, builtin.takes_from, builtin.accepts)
            )
    out.extend(
        _Declared(name, fmt.suffixes, fmt.file_names, fmt.sniff.takes_from, fmt.sniff.accepts)
        for name, fmt in registered.items()
        if name not in _BUILTINS
    )
    return out


def suffixes() -> tuple[str, ...]:
    """Every registered file suffix, in the order of :func:`names` (no format's module is imported for it)."""
    return tuple(dict.fromkeys(s for d in _declared() for s in d.suffixes))


def for_path(path: str | Path) -> Format | None:
    """The format a file name means by its ending (the longest matching suffix wins), or None.

    A whole file name (``promptfooconfig.yaml``) outranks any suffix; between equal endings the format first in
    :func:`names` wins. Only the format that matches is imported.
    """
    name = Path(path).name.lower()
    ranked: list[tuple[int, int, str]] = []
    for order, d in enumerate(_declared()):
        ranks = [len(e) + 1000 for e in d.file_names if name.endswith(e)]
        ranks += [len(s) for s in d.suffixes if name.endswith(s) and len(name) > len(s)]
        if ranks:
            ranked.append((-max(ranks), order, d.name))
    for _, _, fmt_name in sorted(ranked):
        fmt = _FORMATS.get(fmt_name)
        if fmt is not None:
            return fmt
    return None


def suffix_files(path: str | Path) -> list[Path]:
    """A file as itself; a folder as its files whose ending names a format, sorted (not its subfolders).

    Example::

        suffix_files("evals")
        # [PosixPath('evals/foodmart-sales.eval.yaml'), PosixPath('evals/tasks.toml')]
    """
    p = Path(path)
    if not p.is_dir():
        return [p]
    return sorted(f for f in p.iterdir() if f.is_file() and for_path(f) is not None)


UNSUPPORTED = ("error", "skip")
"""What :func:`evalnb.load` does with what a suite asks for that evalnb cannot run (``unsupported=``)."""

_UNSUPPORTED: contextvars.ContextVar[str] = contextvars.ContextVar("evalnb_unsupported", default="error")


def unsupported_mode() -> str:
    """``"error"`` or ``"skip"``: what the load in progress does with what evalnb cannot run (a format's builder
    asks; see :func:`evalnb.load`)."""
    return _UNSUPPORTED.get()


@contextlib.contextmanager
def unsupported_as(mode: str) -> Iterator[None]:
    """Build suites with ``unsupported=mode`` inside the block."""
    token = _UNSUPPORTED.set(mode)
    try:
        yield
    finally:
        _UNSUPPORTED.reset(token)


def taken(fmt: Format, data: Any) -> Format:
    """The format that builds a document ``fmt`` parsed: a format that takes ``fmt``'s files when the
    document is one of its own (``Sniff.takes_from``), else ``fmt`` itself. Only the formats that may take
    ``fmt``'s files, and whose declared test accepts the document, are imported."""
    for d in _declared():
        if fmt.name in d.takes_from and (d.accepts is None or d.accepts(data)):
            other = _FORMATS.get(d.name)
            if other is not None and fmt.name in other.sniff.takes_from and other.sniff.accepts(data):
                return other
    return fmt


def guess(text: str) -> tuple[Format, Any]:
    """The format of a text with no extension to go by, and the document it parsed to (parsed once).

    Raises:
        SuiteError: the parse error of the format the text is judged to be, or ``INVALID_VALUE`` when no
            registered format falls back to taking it.
    """
    t = Text(text)
    ordered = sorted(_FORMATS.values(), key=lambda f: f.sniff.order)  # stable: registration order breaks ties
    parsed: dict[str, Any] = {}
    failed: dict[str, SuiteError] = {}
    for fmt in ordered:
        if not fmt.sniff.tries(t):
            continue
        try:
            data = fmt.parse(text)
        except SuiteError as exc:
            if fmt.sniff.claims(t):
                raise
            failed[fmt.name] = exc
            continue
        if fmt.sniff.accepts(data):
            return fmt, data
        parsed[fmt.name] = data
    for fmt in ordered:
        if fmt.sniff.fallback(t):
            if fmt.name in failed:
                raise failed[fmt.name]
            return fmt, parsed[fmt.name] if fmt.name in parsed else fmt.parse(text)
    raise SuiteError(
        "INVALID_VALUE", f"the text is none of the registered formats ({', '.join(names())}); give format="
    )
