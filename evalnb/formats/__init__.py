"""Suite formats: each module validates one file format strictly and builds the one ``Suite`` model.

* ``tasks_toml``: the TOML task suite (``"tasks-toml"``);
* ``cube_yaml``: the YAML cube suite (``"cube-yaml"``);
* ``dataset_json``: the JSON evaluation dataset (``"dataset-json"``).

:func:`load` is the door in: a path or a text, the format from the extension, else from the content. Every
failure is a :class:`~evalnb.errors.SuiteError` with a stable code; no other exception escapes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from evalnb.errors import SuiteError
from evalnb.suite import FormatName, Suite

__all__ = ["FORMATS", "discover", "json_schema", "load", "upgrade", "write_starter"]

FORMATS: tuple[str, ...] = get_args(FormatName)
_BY_SUFFIX = {".toml": "tasks-toml", ".yaml": "cube-yaml", ".yml": "cube-yaml", ".json": "dataset-json"}
_MALFORMED = {"tasks-toml": "MALFORMED_TOML", "cube-yaml": "MALFORMED_YAML", "dataset-json": "MALFORMED_JSON"}
# dataset spec, discovery: these names in the current directory, then in ./evals/.
DISCOVERY_NAMES = ("prompts.json", "evals.json", "tests.json")
DISCOVERY_DIRS = (".", "evals")


def load(path_or_text: str | os.PathLike[str] | bytes, format: str | None = None) -> Suite:
    """Load a suite of any format into the one model.

    Args:
        path_or_text: a file path, or the text of a suite (``str`` or ``bytes``). A ``str`` is read as a path
            when it is one line naming an existing file or ending in ``.toml``, ``.yaml``, ``.yml`` or ``.json``.
        format: ``"tasks-toml"``, ``"cube-yaml"`` or ``"dataset-json"``; by default from the file's
            extension, then from the content.

    Returns:
        The loaded :class:`~evalnb.suite.Suite`.

    Raises:
        SuiteError: for any problem with the input, with ``.code``, ``.location`` and ``.path``. A document
            with several problems raises the first (in document order) with all of them in ``.errors``;
            a syntax error (``MALFORMED_*``) is reported alone.

    Example:
        >>> suite = evalnb.load("data/suites/tasks.toml")
        >>> suite.format
        'tasks-toml'
        >>> evalnb.load('name = "s"', format="tasks-toml").cases
        []
    """
    path: Path | None = None
    try:
        if format is not None and format not in FORMATS:
            raise SuiteError(
                "INVALID_VALUE", f"unknown format {format!r}; expected one of {', '.join(FORMATS)}"
            )
        path, raw = _source(path_or_text)
        fmt = format or (_BY_SUFFIX.get(path.suffix.lower()) if path is not None else None)
        text = _decode(raw, fmt)
        if fmt is None:
            fmt = _sniff(text)
        return _load_text(text, fmt, path)
    except SuiteError as exc:
        if path is not None:
            for err in exc.errors:
                if err.path is None:
                    err.path = str(path)
        raise
    except RecursionError:
        raise SuiteError("INVALID_VALUE", "the document is nested too deeply", path=_str(path)) from None
    except Exception as exc:  # the contract: nothing but SuiteError escapes load
        raise SuiteError(
            "INTERNAL_ERROR", f"could not load the suite ({type(exc).__name__}: {exc})", path=_str(path)
        ) from exc


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
        with contextlib.suppress(OSError, ValueError):
            if candidate.is_file() or candidate.suffix.lower() in _BY_SUFFIX:
                return _read(candidate)
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


def _decode(raw: bytes | str, fmt: str | None) -> str:
    if isinstance(raw, str):
        # A text read with a plain `open(...).read()` keeps the byte-order mark that the path route drops
        # (utf-8-sig below); the same file must load either way.
        return raw.removeprefix("\ufeff")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        code = _MALFORMED.get(fmt or "", "MALFORMED_" + (_guess_kind(raw) or "JSON"))
        raise SuiteError(code, f"the file is not UTF-8 text (byte {exc.start})") from None


def _guess_kind(raw: bytes) -> str | None:
    head = raw.lstrip()[:1]
    return "JSON" if head in (b"{", b"[") else None


def _sniff(text: str) -> str:
    """The format of a text with no extension to go by: JSON, then TOML, then YAML."""
    from evalnb.formats import cube_yaml, dataset_json, tasks_toml

    stripped = text.lstrip("\ufeff \t\r\n")
    first_line = stripped.split("\n", 1)[0].strip()
    toml_header = first_line.startswith("[[") or (
        first_line.startswith("[")
        and first_line.endswith("]")
        and "," not in first_line
        and '"' not in first_line
    )
    if stripped[:1] in ("{", "[") and not toml_header:
        try:
            dataset_json.parse(text)
            return "dataset-json"
        except SuiteError:
            if stripped[:1] == "{":
                return "dataset-json"  # report the JSON error: a TOML or YAML file does not start with `{`
    try:
        data = tasks_toml.parse(text)
        if data:
            return "tasks-toml"
    except SuiteError:
        pass
    try:
        if isinstance(cube_yaml.parse(text), dict):
            return "cube-yaml"
    except SuiteError:
        pass
    if stripped[:1] == "[" and not toml_header:
        return "dataset-json"
    if "=" in first_line or toml_header:
        return "tasks-toml"
    return "cube-yaml"


def _load_text(text: str, fmt: str, path: Path | None) -> Suite:
    from evalnb.formats import cube_yaml, dataset_json, tasks_toml

    if fmt == "tasks-toml":
        suite = tasks_toml.load_text(text)
    elif fmt == "cube-yaml":
        suite = cube_yaml.load_text(text)
    else:
        # dataset spec: Suite.name is metadata.name, else the file's stem.
        suite = dataset_json.load_text(text, name=_stem(path) if path is not None else None)
    if path is not None:
        suite.path = str(path)
    return suite


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".json", ".eval"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or path.stem


def discover(root: str | os.PathLike[str] = ".") -> Path | None:
    """The dataset to use when none is named, in the dataset spec's order, or None.

    Looks for ``prompts.json``, ``evals.json``, ``tests.json`` in ``root``, then in ``root/evals/``.

    Example:
        >>> evalnb.discover(".")
        PosixPath('evals/evals.json')
    """
    base = Path(root)
    for folder in DISCOVERY_DIRS:
        for name in DISCOVERY_NAMES:
            candidate = base / folder / name if folder != "." else base / name
            if candidate.is_file():
                return candidate
    return None


def upgrade(path: str | os.PathLike[str]) -> Path | None:
    """Rewrite a legacy JSON dataset in the versioned form, keeping a byte-identical backup.

    The backup ``<file>.bak.<yyyymmddHHMMSS>`` is written (and flushed to disk) first; then the file is
    replaced atomically (a temporary file in the same folder, then ``os.replace``), so a crash leaves either
    the old file or the new one, never half of one. The upgraded file loads to the same items. A document
    that is already versioned is left untouched.

    Args:
        path: the dataset file.

    Returns:
        The backup's path, or None when the file already was versioned (nothing changed).

    Raises:
        SuiteError: when the file is not a loadable JSON dataset (nothing is written then).

    Example:
        >>> evalnb.upgrade("evals/legacy.json")
        PosixPath('evals/legacy.json.bak.20260301120000')
    """
    from evalnb.formats import dataset_json

    target = Path(path)
    kind = _BY_SUFFIX.get(target.suffix.lower())
    if kind is not None and kind != "dataset-json":
        # Only the JSON dataset has a legacy form; parsing a TOML or YAML suite as JSON would report a
        # misleading MALFORMED_JSON.
        raise SuiteError(
            "INVALID_VALUE",
            f"only JSON datasets have a legacy form to upgrade; {target.name} is a {kind} suite",
            path=str(target),
        )
    _, raw = _read(target)
    try:
        text = _decode(raw, "dataset-json")
        data = dataset_json.parse(text)
        dataset_json.load_data(data, name=_stem(target))  # never upgrade what would not load
        new = dataset_json.to_versioned(data)
    except SuiteError as exc:
        for err in exc.errors:
            err.path = str(target)
        raise
    if new is None:
        return None
    stamp = datetime.now().strftime("%Y%m%d%H%M%S")
    backup = _write_backup(target, stamp, raw)
    body = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return backup


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
    """Write the starter dataset (dataset spec: ``./evals/evals.json`` with sample prompts).

    Raises:
        FileExistsError: when the file already exists (it is never overwritten).

    Example:
        >>> evalnb.formats.write_starter()
        PosixPath('evals/evals.json')
    """
    from evalnb.formats.dataset_json import STARTER

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "x", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(STARTER, indent=2, ensure_ascii=False) + "\n")
    return target


def json_schema(format: str) -> dict[str, Any]:
    """A JSON Schema of a format's documents, from the models at the format edge (for editors).

    Example:
        >>> evalnb.formats.json_schema("tasks-toml")["title"]
        'TasksDoc'
    """
    from evalnb.formats import cube_yaml, dataset_json, tasks_toml

    if format == "tasks-toml":
        schema = tasks_toml.TasksDoc.model_json_schema(by_alias=True)
    elif format == "cube-yaml":
        schema = cube_yaml.CubeSuiteDoc.model_json_schema(by_alias=True)
    elif format == "dataset-json":
        schema = dataset_json.json_schema()
    else:
        raise ValueError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
