"""Where a Result can be written: a registry of writers by kind (``html``, ``xlsx``, ``csv`` ...).

The writers live in :mod:`evalnb.export` (and in any package that registers more); :class:`Result` asks this
registry, so results never import the exporters, and a new output kind is one module that registers itself.
A comparison's page is found the same way, by its kind ``comparison-html`` (a writer of a comparison, with no
suffix: ``--output`` never picks it).

Example::

    from evalnb.results.outputs import register_writer

    @register_writer("md", suffixes=(".md",))
    def to_markdown(result, path): ...
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["register_writer", "suffixes", "writer", "writer_for"]

Writer = Callable[..., Path]  # fn(result, path, **options)

_WRITERS: dict[str, Writer] = {}
_SUFFIXES: dict[str, str] = {}

_loaded = False


def register_writer(kind: str, *, suffixes: tuple[str, ...] = ()) -> Callable[[Writer], Writer]:
    """Register ``fn(result, path) -> Path`` as the writer of ``kind`` (and of files with these suffixes)."""

    def deco(fn: Writer) -> Writer:
        _WRITERS[kind] = fn
        for s in suffixes:
            _SUFFIXES[s.lower()] = kind
        return fn

    return deco


def _load() -> None:
    # The package whose import registers the built-in writers (evalnb.export, above results) is the slot
    # "writers" of evalnb._hooks, loaded on first use: exporting needs plotly, openpyxl and friends, which
    # `import evalnb` must not pay for.
    global _loaded
    if not _loaded:
        from evalnb import _hooks

        _hooks.implementation("writers")
        _loaded = True


def writer(kind: str) -> Writer:
    """The writer registered for ``kind``.

    Raises:
        KeyError: when none is, naming the kinds there are.
    """
    _load()
    try:
        return _WRITERS[kind]
    except KeyError:
        raise KeyError(f"no writer for {kind!r}; known: {', '.join(sorted(_WRITERS))}") from None


def writer_for(path: str | Path) -> tuple[str, Writer] | None:
    """The kind and writer for a file name by its suffix, or None."""
    _load()
    kind = _SUFFIXES.get(Path(path).suffix.lower())
    return None if kind is None else (kind, _WRITERS[kind])


def suffixes() -> list[str]:
    """The file suffixes a writer is registered for (what ``--output`` accepts)."""
    _load()
    return sorted(_SUFFIXES)
