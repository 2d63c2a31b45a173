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
from dataclasses import dataclass
from pathlib import Path

from evalnb._registry import Registry

__all__ = ["register_writer", "suffixes", "writer", "writer_for"]

Writer = Callable[..., Path]  # fn(result, path, **options)


@dataclass(frozen=True)
class _Output:
    fn: Writer
    suffixes: tuple[str, ...]


def _load_export() -> None:
    # The package whose import registers the built-in writers (evalnb.export, above results) is the slot
    # "writers" of evalnb._hooks, loaded on first use: exporting needs plotly, openpyxl and friends, which
    # `import evalnb` must not pay for.
    from evalnb import _hooks

    _hooks.implementation("writers")


_WRITERS: Registry[_Output] = Registry("writer", loader=_load_export)


def register_writer(kind: str, *, suffixes: tuple[str, ...] = ()) -> Callable[[Writer], Writer]:
    """Register ``fn(result, path) -> Path`` as the writer of ``kind`` (and of files with these suffixes);
    a kind registered again is replaced, and a suffix goes to the writer that registered it last."""

    def deco(fn: Writer) -> Writer:
        _WRITERS.register(kind, _Output(fn, tuple(s.lower() for s in suffixes)), replace=True)
        return fn

    return deco


def _suffixes() -> dict[str, str]:
    # Later registrations win a suffix, as the registration order says.
    out: dict[str, str] = {}
    for kind, output in _WRITERS.items():
        for suffix in output.suffixes:
            out.pop(suffix, None)
            out[suffix] = kind
    return out


def writer(kind: str) -> Writer:
    """The writer registered for ``kind``.

    Raises:
        KeyError: when none is, naming the kinds there are.
    """
    hit = _WRITERS.get(kind)
    if hit is None:
        raise KeyError(f"no writer for {kind!r}; known: {', '.join(sorted(_WRITERS.names()))}")
    return hit.fn


def writer_for(path: str | Path) -> tuple[str, Writer] | None:
    """The kind and writer for a file name by its suffix, or None."""
    kind = _suffixes().get(Path(path).suffix.lower())
    return None if kind is None else (kind, _WRITERS[kind].fn)


def suffixes() -> list[str]:
    """The file suffixes a writer is registered for (what ``--output`` accepts)."""
    return sorted(_suffixes())
