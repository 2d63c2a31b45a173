"""Suite formats: a registry, and one module (or package) per file format that registers itself.

* ``tasks_toml``: the TOML task suite (``"tasks-toml"``, ``.toml``);
* ``cube_yaml``: the YAML cube suite (``"cube-yaml"``, ``.yaml`` / ``.yml``);
* ``dataset_json``: the JSON evaluation dataset (``"dataset-json"``, ``.json``);
* ``tables``: tables of cases, one per row (``"table-csv"``, ``.csv``/``.tsv``; ``"table-jsonl"``, ``.jsonl``;
  a DataFrame with :func:`from_frame`, ``"table-frame"``).

:func:`load` is the door in: a path or a text, the format from the extension, else from the content. Every
failure is a :class:`~evalnb.errors.SuiteError` with a stable code; no other exception escapes it. A new
format is one module that builds a :class:`Format` and calls :func:`register` (see ``formats.registry``);
``load``, :func:`json_schema`, ``evalnb validate`` and ``evalnb schema`` then know it.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb import _gc
from evalnb._deprecation import Renamed
from evalnb._files import atomic_write
from evalnb._lazy import homes, submodule
from evalnb._unicode import clean_data, cleaned_already, may_hold_surrogates
from evalnb.errors import ConfigCode, ConfigError, SuiteError
from evalnb.formats._registry import (
    UNSUPPORTED,
    Format,
    Sniff,
    Text,
    for_path,
    get,
    guess,
    names,
    register,
    suffix_files,
    suffixes,
    taken,
    unregister,
    unsupported_as,
)

if TYPE_CHECKING:
    from evalnb.suite import Suite

__all__ = [
    "Format",
    "Sniff",
    "Text",
    "discover",
    "for_path",
    "from_frame",
    "get",
    "json_schema",
    "load",
    "load_upgrading",
    "names",
    "register",
    "suffix_files",
    "suffixes",
    "unregister",
    "upgrade",
    "write_starter",
]

# docs/dataset-json.md, without a file: these names in the current directory, then in ./evals/.
DISCOVERY_NAMES = ("prompts.json", "evals.json", "tests.json")
DISCOVERY_DIRS = (".", "evals")


_FORMATS_NAME = Renamed("evalnb.formats.FORMATS", "evalnb.formats.names()")


def __getattr__(name: str) -> Any:
    # FORMATS: the registered names when asked, as names() gives them (docs/extending.md, Deprecations)
    if name == "FORMATS":
        _FORMATS_NAME.warn()
        return names()
    if name == "from_frame":  # imported when first asked: `import evalnb` does not load the table format
        from evalnb.formats._tables import from_frame

        return from_frame
    return submodule(__name__, name)  # evalnb.formats.promptfoo after `import evalnb` alone


def load(
    path_or_text: str | os.PathLike[str] | bytes, format: str | None = None, *, unsupported: str = "error"
) -> Suite:
    """Load a suite of any format into the one model.

    Args:
        path_or_text: a file path, or the text of a suite (``str`` or ``bytes``). A ``str`` is read as a path
            when it is one line naming an existing file or ending in a registered suffix (``.toml``, ``.yaml``,
            ``.yml``, ``.json``).
        format: ``"tasks-toml"``, ``"cube-yaml"``, ``"dataset-json"``, ``"promptfoo"`` or another registered
            format; by default from the file's name, then from the content.
        unsupported: ``"error"`` (default): what the suite asks for that evalnb cannot run (a promptfoo
            ``javascript`` assert) is a ``SuiteError`` naming it; ``"skip"``: it is left out, and the suite's
            warnings say what was left out and where.

    Returns:
        The loaded :class:`~evalnb.suite.Suite`.

    Raises:
        SuiteError: for any problem with the input, with ``.code``, ``.location`` and ``.path``. A document
            with several problems raises the first (in document order) with all of them in ``.errors``, and
            prints them all; a syntax error (``MALFORMED_*``) is reported alone.
        ConfigError: ``PLUGIN_ERROR`` when a plugin (an installed ``evalnb.plugins`` entry point, a module
            named in ``$EVALNB_PLUGINS``) does not load.

    Example::

        suite = evalnb.load(evalnb.examples.path("tasks"))
        suite.format
        # 'tasks-toml'
        evalnb.load('name = "s"', format="tasks-toml").cases
        # []
    """
    path: Path | None = None
    try:
        if unsupported not in UNSUPPORTED:
            raise SuiteError(
                "INVALID_VALUE", f"unsupported={unsupported!r}; expected one of {', '.join(UNSUPPORTED)}"
            )
        fmt = None
        if format is not None:
            fmt = get(format)
            if fmt is None:
                raise SuiteError(
                    "INVALID_VALUE", f"unknown format {format!r}; expected one of {', '.join(names())}"
                )
        path, raw = _source(path_or_text)
        if fmt is None and path is not None:
            fmt = for_path(path)
        text = _decode(raw, fmt)
        # the file's bytes are not needed past their decoding: not held beside the text at the parse
        raw = b""
        with _gc.paused():  # a parsed document and the suite built from it hold no cycles to collect
            if fmt is None:
                fmt, data = guess(text)  # parsed once: the sniffing parse is the loading parse
            else:
                data = fmt.parse(text)
            if format is None:
                taker = taken(fmt, data)  # a .yaml file holding a promptfoo config is promptfoo's
                if taker is not fmt:
                    fmt, data = taker, taker.parse(text)  # read as that format reads its files
            # Lone surrogates ("\ud800" escapes) become U+FFFD here, keys included: every later step can
            # encode it. The models built from the cleaned document need not clean it again.
            if may_hold_surrogates(text):
                data = clean_data(data)
            text = ""  # nor is the text past the parse (a large file's memory)
            with cleaned_already(), unsupported_as(unsupported):
                suite = fmt.build(data, path)
        if path is not None:
            suite.path = str(path)
    except SuiteError as exc:
        if path is not None:
            for err in exc.errors:
                if err.path is None:
                    err.path = str(path)
        raise
    except RecursionError:
        raise SuiteError("INVALID_VALUE", "the document is nested too deeply", path=_str(path)) from None
    except Exception as exc:  # docs/extending.md, error codes: nothing but SuiteError escapes load...
        if isinstance(exc, ConfigError) and exc.code == ConfigCode.PLUGIN_ERROR:
            raise  # ...but a plugin that does not load is no problem of the suite
        raise SuiteError(
            "INTERNAL_ERROR", f"could not load the suite ({type(exc).__name__}: {exc})", path=_str(path)
        ) from exc
    _warn(suite)  # outside the try: a warning filter set to "error" raises the warning itself, as asked
    return suite


def _warn(suite: Suite, lines: list[str] | None = None) -> None:
    # What loading noticed (Suite.warnings) is shown where people look: a warning in a notebook or a script.
    import warnings

    from evalnb.errors import SuiteWarning

    where = f"{suite.path}: " if suite.path else ""
    for line in suite.warnings if lines is None else lines:
        warnings.warn(where + line, SuiteWarning, stacklevel=3)


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _source(path_or_text: str | os.PathLike[str] | bytes) -> tuple[Path | None, bytes | str]:
    if isinstance(path_or_text, bytes):
        return None, path_or_text
    if isinstance(path_or_text, os.PathLike):
        return _read(Path(path_or_text))
    if not isinstance(path_or_text, str):
        raise SuiteError(
            "TYPE_MISMATCH", f"expected a path or the text of a suite, got {type(path_or_text).__name__}"
        )
    text = path_or_text
    if text and "\n" not in text and len(text) < 4096 and "\x00" not in text:
        candidate = Path(text)
        try:
            if candidate.is_file() or for_path(candidate) is not None:
                return _read(candidate)
        except (OSError, ValueError):
            pass  # not a usable path: the string is the text
    return None, text


def _read(path: Path) -> tuple[Path, bytes]:
    try:
        return path, path.read_bytes()
    except FileNotFoundError:
        raise SuiteError("FILE_NOT_FOUND", f"no such file: {path}", path=str(path)) from None
    except OSError as exc:
        raise SuiteError(
            "FILE_UNREADABLE", f"cannot read {path}: {exc.strerror or exc}", path=str(path)
        ) from None


def _decode(raw: bytes | str, fmt: Format | None) -> str:
    if isinstance(raw, str):
        # A text read with a plain `open(...).read()` keeps the byte-order mark that the path route drops
        # (utf-8-sig below); the same file must load either way.
        return raw.removeprefix("\ufeff")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        code = (
            fmt.malformed if fmt is not None else _malformed_code(raw.decode("utf-8-sig", errors="replace"))
        )
        raise SuiteError(code, f"the file is not UTF-8 text (byte {exc.start})") from None


def _malformed_code(lenient: str) -> str:
    # No extension to go by: the format the content would be, read leniently, names the malformed code.
    try:
        return guess(lenient)[0].malformed
    except SuiteError as guessed:
        return guessed.code  # the parse error of the format it would be: that format's malformed code


def discover(root: str | os.PathLike[str] = ".") -> Path | None:
    """The dataset to use when none is named, in the order of docs/dataset-json.md, without a file, or None.

    Looks for ``prompts.json``, ``evals.json``, ``tests.json`` in ``root``, then in ``root/evals/``.

    Example::

        evalnb.discover(".")
        # PosixPath('evals/evals.json')
    """
    base = Path(root)
    for folder in DISCOVERY_DIRS:
        for name in DISCOVERY_NAMES:
            candidate = base / folder / name if folder != "." else base / name
            if candidate.is_file():
                return candidate
    return None


def upgrade(path: str | os.PathLike[str]) -> Path | None:
    """Rewrite a legacy document (a legacy JSON dataset) in its current form, keeping a byte-identical backup.

    The backup ``<file>.bak.<yyyymmddHHMMSS>`` is written (and flushed to disk) first; then the file is
    replaced atomically (a temporary file in the same folder, then ``os.replace``), so a crash leaves either
    the old file or the new one, never half of one. The upgraded file loads to the same items. A document
    that is already current is left untouched.

    Args:
        path: the file; its format from the extension, else the one format with a legacy form (else from the
            content, when several have one).

    Returns:
        The backup's path, or None when the file already was current (nothing changed).

    Raises:
        SuiteError: when the file is not a loadable document of a format with a legacy form (nothing is
            written then).

    Example::

        evalnb.upgrade("evals/legacy.json")
        # PosixPath('evals/legacy.json.bak.20260301120000')
    """
    target = Path(path)
    upgradable = _formats_with("upgrade")
    fmt = for_path(target)
    if fmt is None and len(upgradable) == 1:
        fmt = upgradable[0]
    if fmt is not None and fmt.upgrade is None:
        # Checked before reading: parsing a TOML or YAML suite as JSON would report a misleading MALFORMED_JSON.
        raise _no_legacy_form(target, fmt, upgradable)
    _, raw = _read(target)
    try:
        text = _decode(raw, fmt)
        fmt, data = (fmt, fmt.parse(text)) if fmt is not None else guess(text)
        if fmt.upgrade is None:
            raise _no_legacy_form(target, fmt, upgradable)
        body = fmt.upgrade(clean_data(data), target)  # never upgrades what would not load
    except SuiteError as exc:
        for err in exc.errors:
            err.path = str(target)
        raise
    if body is None:
        return None
    stamp = datetime.now().strftime("%Y%m%d%H%M%S")
    backup = _write_backup(target, stamp, raw)
    atomic_write(target, body)
    return backup


def load_upgrading(path: str | os.PathLike[str], *, unsupported: str = "error") -> tuple[Suite, Path | None]:
    """Load a suite file, upgrading it in place first when it is a legacy document (with :func:`upgrade`'s
    backup): docs/dataset-json.md, shapes, cases and names: running a legacy dataset upgrades it. Returns the suite
    and the backup (or None).

    Raises:
        SuiteError: as :func:`load` does.

    Example::

        suite, backup = evalnb.formats.load_upgrading("evals/legacy.json")
    """
    import warnings

    from evalnb.errors import SuiteWarning

    fmt = for_path(Path(path))
    if fmt is None or fmt.upgrade is None:
        return load(path, unsupported=unsupported), None
    # What the legacy form loads to is what the warnings speak of (the defaults it got): read them first.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SuiteWarning)
        before = load(path)
    backup = upgrade(path)
    if backup is None:
        _warn(before)
        return before, None
    suite = load(path)
    legacy = [w for w in before.warnings if w not in suite.warnings]
    suite.warnings[:0] = legacy
    _warn(suite, legacy)
    return suite, backup


def _no_legacy_form(target: Path, fmt: Format, upgradable: list[Format]) -> SuiteError:
    having = " and ".join(f.what or f.name for f in upgradable) or "no formats"
    return SuiteError(
        "INVALID_VALUE",
        f"only {having} have a legacy form to upgrade; {target.name} is a {fmt.name} suite",
        path=str(target),
    )


def _formats_with(hook: str) -> list[Format]:
    return [f for f in (get(n) for n in names()) if f is not None and getattr(f, hook) is not None]


def _write_backup(target: Path, stamp: str, raw: bytes) -> Path:
    for n in range(100):
        backup = target.with_name(f"{target.name}.bak.{stamp}" + (f".{n}" if n else ""))
        try:
            with open(backup, "xb") as fh:  # never overwrite an earlier backup
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
            return backup
        except FileExistsError:
            continue
    raise SuiteError(
        "FILE_UNREADABLE", f"could not find a free backup name next to {target}", path=str(target)
    )


def write_starter(path: str | os.PathLike[str] = "evals/evals.json") -> Path:
    """Write a starter document (docs/dataset-json.md, without a file: ``./evals/evals.json`` with sample prompts).

    The starter of the path's format; a path with no registered suffix gets the first format's that has one
    (the JSON dataset's).

    Raises:
        FileExistsError: when the file already exists (it is never overwritten).
        ValueError: when the path's format has no starter document.

    Example::

        evalnb.formats.write_starter()
        # PosixPath('evals/evals.json')
    """
    target = Path(path)
    having = _formats_with("starter")
    fmt = for_path(target) or (having[0] if having else None)
    if fmt is None or fmt.starter is None:
        suffixes = ", ".join(s for f in having for s in f.suffixes)
        raise ValueError(
            f"no starter document for {target.name}; starters are written as {suffixes or 'nothing'}"
        )
    body = fmt.starter()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "x", encoding="utf-8", newline="\n") as fh:
        fh.write(body)
    return target


def json_schema(format: str) -> dict[str, Any]:
    """A JSON Schema of a format's documents, from the models at the format edge (for editors).

    Raises:
        ValueError: for a format that is not registered.

    Example::

        evalnb.formats.json_schema("tasks-toml")["title"]
        # 'TasksDoc'
    """
    fmt = get(format)
    if fmt is None:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(names())}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **fmt.schema()}


homes(__name__, globals(), __all__)  # reprs and docs name the public path
