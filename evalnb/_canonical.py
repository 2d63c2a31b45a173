"""A suite's content hash, streamed case by case.

The hash is SHA-256 over the suite's canonical JSON: its fields as ``model_dump(mode="json")`` gives them (the
load path left out), keys sorted, no spaces. Dumping the whole suite first held a second copy of it as python
objects (gigabytes at a million cases) and took 1-2 s per 100k cases. Here the same bytes are fed to the hash
one case at a time, and the JSON of a check object that many turns share (a dataset's defaults) is made once,
so memory stays flat and the time drops several-fold; a value the fast path cannot write exactly as pydantic
would (a date in a TOML suite's notes, keys of mixed types) sends that case through pydantic's own dump.

Example::

    content_hash(suite) == suite.content_hash()
    # True
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from json.encoder import encode_basestring_ascii
from typing import Any

__all__ = ["canonical", "content_hash", "packed"]

_SEP = (",", ":")

_LEVEL = 1
"""zlib's level for a packed document: a suite's JSON repeats itself (its keys, shared checks), and level 1
shrinks a million cases' 322 MB to 12 MB at about 500 MB/s."""

_PIECE = 1 << 22
"""Characters of the document handed to the packing thread at a time (see :func:`packed`)."""


def canonical(value: Any) -> str:
    """JSON with sorted keys and no spaces (how every part of the hashed document is written)."""
    return json.dumps(value, sort_keys=True, separators=_SEP)


def content_hash(suite: Any) -> str:
    """The first 16 hex digits of SHA-256 over the suite's canonical JSON (see the module docstring)."""
    h = hashlib.sha256()
    for part in _parts(suite):
        h.update(part.encode())
    return h.hexdigest()[:16]


def packed(suite: Any) -> tuple[str, bytes]:
    """The suite's content hash and its canonical JSON compressed with zlib, the form a store keeps: the hashed
    document with the load path and the warnings added as its last keys (still in sorted order); reading it
    back, the hash of all but those two keys says it is what evalnb wrote (``store/_trusted.py``).

    The document is made here in pieces of :data:`_PIECE` characters; a thread of its own hashes and compresses
    each piece while the next is made (both let the interpreter lock go), so packing costs about what making
    the text did, and the whole text is never held (a million cases: 322 MB of JSON, 12 MB packed)."""
    h = hashlib.sha256()
    z = zlib.compressobj(_LEVEL)
    out: list[bytes] = []

    def take(piece: bytes, hashed: int, end: bytes = b"") -> None:
        # the last piece: its head and the document's closing brace are hashed, not the stored tail
        h.update(memoryview(piece)[:hashed])
        h.update(end)
        out.append(z.compress(piece))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalnb-pack") as pool:
        behind: list[Future[None]] = []
        buffer: list[str] = []
        size = 0
        parts = _parts(suite)
        last = next(parts)
        for part in parts:
            buffer.append(last)
            size += len(last)
            last = part
            if size >= _PIECE:
                behind.append(pool.submit(take, "".join(buffer).encode(), size))
                buffer, size = [], 0
                if len(behind) > 2:  # at most two pieces wait: memory stays a few pieces
                    behind.pop(0).result()
        # the last part: hashed as it is, stored with the load path and the warnings as the last keys
        buffer.append(
            f'{last[:-1]},"path":{_plain(suite.path)},"warnings":{canonical(list(suite.warnings))}}}'
        )
        behind.append(pool.submit(take, "".join(buffer).encode(), size + len(last) - 1, b"}"))
        for future in behind:
            future.result()
    out.append(z.flush())
    return h.hexdigest()[:16], b"".join(out)


def _parts(suite: Any) -> Iterator[str]:
    """The hashed document in pieces: its head, each case (after a comma but the first), its tail."""
    specs: dict[Any, str] = {}  # by id: the suite holds its specs (so their ids) while it is hashed
    # Top-level keys in sorted order: cases, description, format, meta, name (``path`` is not hashed).
    yield '{"cases":['
    for i, case in enumerate(suite.cases):
        if i:
            yield ","
        yield _case(case, specs)
    rest = {"description": suite.description, "format": suite.format, "meta": suite.meta, "name": suite.name}
    try:
        tail = canonical(rest)
    except (TypeError, ValueError):
        tail = canonical(suite.model_dump(mode="json", include=set(rest)))
    yield "]," + tail[1:]


def _case(case: Any, specs: dict[Any, str]) -> str:
    try:
        turns = case.turns
        text = _turn(turns[0], specs) if len(turns) == 1 else ",".join(_turn(t, specs) for t in turns)
        # keys in sorted order: agent, category, id, meta, name, notes, runs, turns
        agent, category, notes = case.agent, case.category, case.notes
        return (
            f'{{"agent":{"null" if agent is None else _plain(agent)},'
            f'"category":{"null" if category is None else _plain(category)},"id":{_plain(case.id)},'
            f'"meta":{_mapping(case.meta)},"name":{_plain(case.name)},'
            f'"notes":{"null" if notes is None else _plain(notes)},"runs":{_plain(case.runs)},"turns":[{text}]}}'
        )
    except (TypeError, ValueError):
        return canonical(case.model_dump(mode="json"))


def _turn(turn: Any, specs: dict[Any, str]) -> str:
    # A turn's checks are often the same spec objects as another turn's (shared at load): their JSON, joined,
    # is made once per distinct list, keyed by the specs' ids (the suite holds them while it is hashed).
    key = tuple(map(id, turn.checks))
    checks = specs.get(key)
    if checks is None:
        checks = specs[key] = ",".join(_spec(spec, specs) for spec in turn.checks)
    history = (
        ",".join(canonical({"content": m.content, "role": m.role}) for m in turn.history)
        if turn.history
        else ""
    )
    # keys in sorted order: allowed_tools (absent when None), checks, context, expected, history, meta, prompt
    tools = "" if turn.allowed_tools is None else f'"allowed_tools":{canonical(list(turn.allowed_tools))},'
    context, expected = turn.context, turn.expected
    return (
        f'{{{tools}"checks":[{checks}],"context":{"null" if context is None else _plain(context)},'
        f'"expected":{"null" if expected is None else _plain(expected)},"history":[{history}],'
        f'"meta":{_mapping(turn.meta)},"prompt":{_plain(turn.prompt)}}}'
    )


def _spec(spec: Any, specs: dict[Any, str]) -> str:
    text = specs.get(id(spec))
    if text is None:
        text = specs[id(spec)] = canonical(spec.model_dump(mode="json"))
    return text


def _plain(value: Any) -> str:
    # What json.dumps writes for these, without its per-call cost (it runs ~10 times per case).
    if value is None:
        return "null"
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is int:
        return str(value)
    raise TypeError(kind.__name__)


def _mapping(value: Any) -> str:
    return "{}" if type(value) is dict and not value else canonical(value)
