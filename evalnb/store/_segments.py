"""A run's frames stored by columns (schema 8): one ``segments`` row per frame and writer batch.

Each transaction of a streamed run (and each block of :data:`SEGMENT_ROWS` rows of ``Store.save``) stores the
rows it adds to a frame (``runs``, ``scores``, ``mismatches``, ``tool_calls``) as one segment: the row
``(run_pk, frame, seq0, n, data)``, where ``data`` holds every column of those ``n`` rows. A million case runs
are about a thousand segments per frame where the row tables held three million rows, so a save is a few
blobs per transaction and a load a few thousand decompressions instead of a cursor over millions of tuples.

The bytes of ``data`` (version 1) need nothing beyond the standard library::

    b"evs1"  uint32 little-endian: the header's length  header (JSON)  column 1  column 2 ...

The header is ``{"n": rows, "columns": [[name, kind, size], ...]}`` in the frame's column order; each column is
``size`` bytes, compressed with zlib (level 1), by its ``kind`` (an entry ``[name, kind, size, 0]``: stored as
it is, a column zlib would not shrink, such as a run's latencies):

* ``"c"``: one value every row holds (text or missing), as a one-element JSON array (a run's agent, most
  statuses, the columns no agent reported); a run's sums (store/_aggregates.py) write a column of numbers or
  flags with one value so too;
* ``"s"``: a ``string`` column of text alone, its values joined by NUL in UTF-8 (a value holding NUL goes
  as JSON);
* ``"d"`` / ``"q"``: a ``float64`` / ``Int64`` column as little-endian doubles / 64-bit integers (missing
  floats as NaN, as the frame holds them; an integer column with missing values goes as JSON);
* ``"b"``: a ``boolean`` column, a byte per row (0 false, 1 true, 2 missing);
* ``"m"``: an ``Int64`` column with missing values: little-endian 64-bit integers (0 where missing), then a
  byte per row (1 where missing);
* ``"t"``: a ``string`` column in Arrow's layout: a byte (1 when values are missing, else 0), ``n + 1``
  little-endian unsigned 32-bit offsets from 0, when values are missing a byte per row (1 where there is a
  value), then the values' UTF-8 bytes one after another (what a run's collector holds: written without making
  a python string per value);
* ``"k"``: a ``string`` column of few distinct texts (a score's check, status and reason): a little-endian
  uint32, the length of a JSON array of the distinct texts, that array, then a little-endian int32 per row, the
  position of its text in the array (-1 where missing);
* ``"j"``: anything else, its values as a JSON array: JSON keeps text, integers, floats (``repr``-exact, NaN
  included), flags and missing values (``null``) exactly, NUL characters too; text is written ASCII-escaped,
  so any string Python holds reads back the same.

A reader takes only the columns it needs: the header says where each one is. A streamed run's segments are
made from the rows its collector gathered column by column (:func:`encode_chunk`); ``Store.save`` encodes a
frame's values (:func:`encode`).

Example::

    data = encode({"case_id": ["a", "b"], "passed": [True, None]}, 2)
    decode(data, ["passed"])            # {"passed": [True, None]}
"""

from __future__ import annotations

import json
import math
import struct
import sys
import zlib
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalnb._unicode import may_hold_surrogates
from evalnb.errors import StoreError
from evalnb.store._invalid import invalid
from evalnb.store._schema import MISMATCH_COLS, RUN_COLS, SCORE_COLS, TOOL_CALL_COLS

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

    from evalnb.results._columns import Chunk, Piece

__all__ = [
    "FRAMES",
    "OFFLOAD",
    "SEGMENT_ROWS",
    "TABLES",
    "Deferred",
    "Segment",
    "column_of",
    "damaged",
    "decode",
    "deferred_chunk",
    "encode",
    "encode_chunk",
    "has_segments",
    "insert",
    "next_seq",
    "segments",
    "write_frame",
]

MAGIC = b"evs1"
_LEN = struct.Struct("<I")
LEVEL = 1
"""zlib's fastest level: the columns shrink 5-20x, and compressing costs less than writing the bytes."""

SEGMENT_ROWS = 65_536
"""The rows of one segment when ``Store.save`` writes a whole frame (a streamed run writes one per batch)."""

FRAMES: dict[str, list[str]] = {
    "runs": RUN_COLS,
    "scores": SCORE_COLS,
    "mismatches": MISMATCH_COLS,
    "tool_calls": TOOL_CALL_COLS,
}
"""Each frame's stored columns, in the order a record's rows hold them (after the suite's name)."""

TABLES = {"runs": "run_rows", "scores": "scores", "mismatches": "mismatches", "tool_calls": "tool_calls"}
"""Each frame's row table (schema 7 and before; still read for runs stored then)."""


def _plain(value: Any) -> Any:
    """What ``json.dumps`` does not know: numpy scalars as python values, anything else as its text."""
    if hasattr(value, "item"):
        return value.item()
    return str(value)


_DUMPS = json.JSONEncoder(default=_plain, separators=(",", ":")).encode
_FLAG = {True: 1, False: 0, None: 2}
_UNFLAG = (False, True, None)


def _packed(values: Sequence[Any], n: int, dtype: str | None) -> tuple[str, bytes] | None:
    """A column of the frame's dtype in its compact kind (see the module docstring), or ``None`` for JSON."""
    if dtype == "string":
        try:
            text = "\x00".join(values)  # TypeError: a missing value or one that is not text
        except TypeError:
            return None
        return ("s", text.encode("utf-8", "surrogatepass")) if text.count("\x00") == n - 1 else None
    try:
        if dtype == "float64":
            try:
                packed = array("d", values)
            except TypeError:  # missing values: NaN, as the frame's float column holds them
                packed = array("d", [math.nan if v is None else v for v in values])
            return "d", _little(packed)
        if dtype == "Int64":
            return "q", _little(array("q", values))
        if dtype == "boolean":
            return "b", bytes(map(_FLAG.__getitem__, values))
    except (TypeError, OverflowError, KeyError):  # a value of another type: JSON keeps it as it is
        return None
    return None


def _little(packed: array[Any]) -> bytes:
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def _values(values: Sequence[Any], n: int, dtype: str | None) -> tuple[str, bytes]:
    """A column of python values in its kind: one value every row holds, packed, else JSON."""
    first = values[0] if n else None
    # One value for every row: text or missing only (1 == True == 1.0 would make a column of numbers one value
    # of another type; NaN != NaN).
    if n and (first is None or type(first) is str) and values.count(first) == n:
        return "c", _DUMPS([first]).encode("ascii")
    return _packed(values, n, dtype) or ("j", _DUMPS(list(values)).encode("ascii"))


def encode(columns: Mapping[str, Sequence[Any]], n: int, dtypes: Mapping[str, str] | None = None) -> bytes:
    """The bytes of one segment: ``n`` rows of ``columns`` (name -> values, in the frame's order); ``dtypes``
    (the frame's) let text, numbers and flags take their compact kinds."""
    dtypes = dtypes or {}
    made = []
    for name, values in columns.items():
        if len(values) != n:
            raise ValueError(f"column {name!r} holds {len(values)} values, not {n}")
        made.append((name, *_values(values, n, dtypes.get(name))))
    return _segment(n, made)


def encode_chunk(
    chunk: Chunk,
    names: Sequence[str],
    dtypes: Mapping[str, str],
    repeated: Collection[str] = (),
    *,
    numbers_once: bool = False,
) -> bytes:
    """The bytes of one segment of a collector's :class:`~evalnb.results._columns.Chunk`: its columns
    ``names`` (in that order), each written from its typed piece (numbers and text as their buffers are);
    the text of the columns ``repeated`` as its distinct values and a code per row where they are few. With
    ``numbers_once``, a column of numbers or flags with one value for every row is that value once (kind
    ``"c"``; for readers that take such a value as the column's, as a run's sums do)."""
    return _segment(chunk.n, _chunk_columns(chunk, names, dtypes, repeated, numbers_once))


def deferred_chunk(
    chunk: Chunk, names: Sequence[str], dtypes: Mapping[str, str], repeated: Collection[str], pool: Executor
) -> bytes | Deferred:
    """:func:`encode_chunk`, its columns of :data:`OFFLOAD` bytes or more compressed by ``pool``'s threads: the
    segment is :class:`Deferred` until they are."""
    columns = _chunk_columns(chunk, names, dtypes, repeated, False)
    made = _compressed(columns, pool)
    if all(isinstance(part, bytes) for _, _, part, _ in made):
        return _assembled(chunk.n, made)
    return Deferred(chunk.n, made, sum(len(raw) for _, _, raw in columns))


def _chunk_columns(
    chunk: Chunk,
    names: Sequence[str],
    dtypes: Mapping[str, str],
    repeated: Collection[str],
    numbers_once: bool,
) -> list[tuple[str, str, bytes]]:
    where = {name: i for i, name in enumerate(chunk.names)}
    made = []
    for name in names:
        piece = chunk.pieces[where[name]]
        kind, raw = _PIECES[piece.kind](piece, dtypes.get(name))
        if kind == "t" and name in repeated:
            kind, raw = _few_texts(piece.values) or (kind, raw)
        elif numbers_once and kind in ("d", "q", "b"):
            kind, raw = _one_number(piece) or (kind, raw)
        made.append((name, kind, raw))
    return made


def _one_number(piece: Piece) -> tuple[str, bytes] | None:
    """A column of numbers or flags that holds one value in every row (none missing) as kind ``"c"``."""
    values = piece.values
    if not piece.n or (piece.mask is not None and piece.mask.any()):
        return None
    first = values[0]
    if first != first or not (values == first).all():  # NaN is never one value
        return None
    return "c", _DUMPS([first.item()]).encode("ascii")


def _segment(n: int, columns: Sequence[tuple[str, str, bytes]]) -> bytes:
    """A segment of ``n`` rows from its columns ``(name, kind, raw bytes)``, each compressed (or, where zlib
    would not shrink it, as it is: see the module docstring)."""
    return _assembled(n, _compressed(columns, None))


def _compressed(columns: Sequence[tuple[str, str, bytes]], pool: Executor | None) -> list[_Column]:
    made: list[_Column] = []
    for name, kind, raw in columns:
        if len(raw) > _SAMPLE and len(zlib.compress(raw[:_SAMPLE], LEVEL)) > 0.9 * _SAMPLE:
            made.append((name, kind, raw, True))  # random numbers: compressing them costs and saves nothing
        elif pool is not None and len(raw) >= OFFLOAD:
            made.append((name, kind, pool.submit(zlib.compress, raw, LEVEL), False))
        else:
            made.append((name, kind, zlib.compress(raw, LEVEL), False))
    return made


_Column = tuple[str, str, "bytes | Future[bytes]", bool]
"""A column of a segment being made: name, kind, its bytes (or their compression, under way), stored plain."""


def _assembled(n: int, made: Sequence[_Column]) -> bytes:
    head: list[list[Any]] = []
    parts: list[bytes] = []
    for name, kind, part, plain in made:
        data = part if isinstance(part, bytes) else part.result()
        head.append([name, kind, len(data), 0] if plain else [name, kind, len(data)])
        parts.append(data)
    header = json.dumps({"n": n, "columns": head}, separators=(",", ":")).encode("ascii")
    return b"".join([MAGIC, _LEN.pack(len(header)), header, *parts])


@dataclass(frozen=True)
class Deferred:
    """A segment whose larger columns other threads are compressing (:func:`deferred_chunk`): zlib lets the
    interpreter lock go, so the run's thread pays only the hand-over, and the writer takes the bytes
    (:meth:`result`) when it inserts them. ``nbytes`` counts the columns uncompressed (what memory holds)."""

    n: int
    made: list[_Column]
    nbytes: int

    def result(self) -> bytes:
        """The segment's bytes, once its columns are compressed (an error of theirs is raised here)."""
        return _assembled(self.n, self.made)


OFFLOAD = 32 * 1024
"""Bytes from which a streamed run's column is compressed by another thread (a smaller one's hand-over costs more)."""


_SAMPLE = 2048
"""Bytes of a column that are compressed first to see whether compressing it is worth it."""


def _few_texts(text: Any) -> tuple[str, bytes] | None:
    """A column of text with few distinct values as kind ``"k"`` (None when they are not few)."""
    import numpy as np

    coded = text.dictionary_encode()
    distinct = coded.dictionary.to_pylist()
    if len(distinct) > max(16, len(text) // 8):
        return None
    codes = coded.indices.to_numpy(zero_copy_only=False)
    if coded.null_count:
        codes = np.where(coded.is_valid().to_numpy(zero_copy_only=False), codes, -1)
    listed = _DUMPS(distinct).encode("ascii")
    return "k", b"".join([_LEN.pack(len(listed)), listed, codes.astype("<i4", copy=False).tobytes()])


def _objects_piece(piece: Piece, dtype: str | None) -> tuple[str, bytes]:
    return _values(piece.values, piece.n, dtype)


def _floats_piece(piece: Piece, dtype: str | None) -> tuple[str, bytes]:
    import numpy as np

    values = piece.values
    # missing throughout (a cost nobody priced): one missing value, as encode writes it
    if np.isnan(values).all():
        return "c", b"[null]"
    return "d", values.astype("<f8", copy=False).tobytes()


def _masked_piece(piece: Piece, dtype: str | None) -> tuple[str, bytes]:
    import numpy as np

    values, mask = piece.values, piece.mask
    if values.dtype == np.bool_:
        return "b", np.where(mask, 2, values).astype(np.uint8).tobytes()
    data = values.astype("<i8", copy=False).tobytes()
    if not mask.any():
        return "q", data
    return "m", data + mask.astype(np.uint8).tobytes()


def _text_piece(piece: Piece, dtype: str | None) -> tuple[str, bytes]:
    import numpy as np

    text = piece.values  # a pyarrow LargeStringArray
    n = len(text)
    _, offsets, data = text.buffers()
    ends = np.frombuffer(offsets, dtype=np.int64, count=n + 1, offset=text.offset * 8)
    start, stop = int(ends[0]), int(ends[-1])
    if stop - start >= 2**32:  # beyond 32-bit offsets: as values
        return _values(text.to_pylist(), n, dtype)
    body = b"" if data is None else memoryview(data)[start:stop]
    if not text.null_count:
        return "t", b"".join([b"\x00", (ends - start).astype("<u4").tobytes(), body])
    valid = text.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8)
    return "t", b"".join([b"\x01", (ends - start).astype("<u4").tobytes(), valid.tobytes(), body])


def _missing_piece(piece: Piece, dtype: str | None) -> tuple[str, bytes]:
    return "c", b"[null]"


_PIECES = {
    "objects": _objects_piece,
    "floats": _floats_piece,
    "masked": _masked_piece,
    "text": _text_piece,
    "missing": _missing_piece,
}
"""How each kind of :class:`~evalnb.results._columns.Piece` is written (its segment kind and raw bytes)."""


class Segment:
    """One stored segment's header: its rows, and where each column's bytes are."""

    __slots__ = ("data", "n", "names", "plain", "spans")

    def __init__(self, data: bytes) -> None:
        data = bytes(data)  # a memoryview from some drivers
        if data[:4] != MAGIC:
            raise ValueError("a segment that does not start with the format's mark")
        (size,) = _LEN.unpack_from(data, 4)
        start = 8 + size
        doc = json.loads(data[8:start])
        self.data = data
        self.n = int(doc["n"])
        self.spans: dict[str, tuple[str, int, int]] = {}
        self.plain: set[str] = set()  # the columns stored as they are, not compressed
        for name, kind, length, *compressed in doc["columns"]:
            self.spans[name] = (kind, start, start + length)
            if compressed == [0]:
                self.plain.add(name)
            start += length
        self.names = list(self.spans)

    def _bytes(self, name: str) -> bytes:
        """A column's bytes, decompressed (its span must be there)."""
        _, a, b = self.spans[name]
        return self.data[a:b] if name in self.plain else zlib.decompress(self.data[a:b])

    def _raw(self, name: str) -> tuple[str, bytes] | None:
        span = self.spans.get(name)
        if span is None:
            return None
        return span[0], self._bytes(name)

    def integers(self, name: str) -> Any:
        """An ``Int64`` column stored packed (kinds ``"q"`` and ``"m"``) as a pandas ``IntegerArray`` made from
        its bytes; ``None`` for another kind."""
        span = self.spans.get(name)
        if span is None or span[0] not in ("q", "m"):
            return None
        import numpy as np
        import pandas as pd

        kind = span[0]
        raw = self._bytes(name)
        if kind == "q":
            return pd.arrays.IntegerArray(
                np.frombuffer(raw, dtype="<i8").astype(np.int64), np.zeros(self.n, bool)
            )
        values, mask = self._masked(raw)
        return pd.arrays.IntegerArray(values, mask)

    def _masked(self, raw: bytes) -> tuple[Any, Any]:
        import numpy as np

        if len(raw) != 9 * self.n:
            raise ValueError(f"a column of {self.n} integers with a mask of {len(raw):,} bytes")
        values = np.frombuffer(raw, dtype="<i8", count=self.n).astype(np.int64)
        mask = np.frombuffer(raw, dtype=np.uint8, offset=8 * self.n) != 0
        return values, mask

    def _arrow_parts(self, raw: bytes) -> tuple[Any, Any, bytes]:
        """A ``"t"`` column's offsets (int64), validity (bool) and UTF-8 bytes."""
        import numpy as np

        n = self.n
        if not raw or raw[0] not in (0, 1):
            raise ValueError("a column of text without its mark")
        masked = raw[0] == 1
        head = 1 + 4 * (n + 1) + (n if masked else 0)
        if len(raw) < head:
            raise ValueError(f"a column of {n} texts in {len(raw):,} bytes")
        offsets = np.frombuffer(raw, dtype="<u4", count=n + 1, offset=1).astype(np.int64)
        valid = (
            np.frombuffer(raw, dtype=np.uint8, count=n, offset=1 + 4 * (n + 1)) != 0
            if masked
            else np.ones(n, dtype=bool)
        )
        if offsets[0] != 0 or offsets[-1] != len(raw) - head or (n and np.any(offsets[1:] < offsets[:-1])):
            raise ValueError("a column of text whose offsets do not fit its bytes")
        return offsets, valid, raw[head:]

    def _few_parts(self, raw: bytes) -> tuple[list[Any], Any]:
        """A ``"k"`` column's distinct texts and its codes (int32, -1 where missing)."""
        import numpy as np

        (size,) = _LEN.unpack_from(raw, 0)
        distinct = json.loads(raw[4 : 4 + size])
        codes = np.frombuffer(raw, dtype="<i4", offset=4 + size).astype(np.int64)
        if (
            not isinstance(distinct, list)
            or len(codes) != self.n
            or (self.n and codes.max() >= len(distinct))
        ):
            raise ValueError("a column of few texts whose codes do not fit its values")
        return distinct, codes

    def array(self, name: str) -> Any:
        """The values of a column of numbers as a numpy array (float64 or int64); ``None`` for another kind."""
        span = self.spans.get(name)
        if span is None or span[0] not in _NUMBERS:
            return None
        import numpy as np

        kind = span[0]
        return np.frombuffer(self._bytes(name), dtype=_NUMBERS[kind])

    def flags(self, name: str) -> Any:
        """A ``boolean`` column stored as flags (kind ``"b"``) as a pandas ``BooleanArray`` made from its bytes
        (no Python value per row); ``None`` for another kind."""
        span = self.spans.get(name)
        if span is None or span[0] != "b":
            return None
        import numpy as np
        import pandas as pd

        raw = np.frombuffer(self._bytes(name), dtype=np.uint8)
        if len(raw) != self.n or raw.max(initial=0) > 2:
            raise ValueError(f"column {name!r} holds flags other than 0, 1 and 2")
        return pd.arrays.BooleanArray(raw == 1, raw == 2)

    def text(self, name: str) -> Any:
        """A column of text alone (kinds ``"s"``, ``"t"``, ``"k"``, or ``"c"`` of text or missing) as a pyarrow
        ``LargeStringArray`` made from its bytes, no Python string per value; ``None`` for another kind, or text
        that is not valid UTF-8 (a lone surrogate, which only Python's strings hold: :meth:`column` reads it)."""
        span = self.spans.get(name)
        read = None if span is None else _TEXT_READERS.get(span[0])
        return None if read is None else read(self, self._bytes(name))

    def _few_text(self, raw: bytes) -> Any:
        import numpy as np
        import pyarrow as pa

        distinct, codes = self._few_parts(raw)
        if any(type(v) is not str or may_hold_surrogates(v) for v in distinct):
            return None
        found = pa.array(np.where(codes < 0, 0, codes), mask=codes < 0, type=pa.int64())
        return pa.array(distinct, type=pa.large_string()).take(found)

    def _one_text(self, raw: bytes) -> Any:
        import pyarrow as pa

        (value,) = json.loads(raw)  # one value every row holds
        if value is None:
            return pa.nulls(self.n, pa.large_string())
        if type(value) is not str or may_hold_surrogates(value):
            return None
        return pa.repeat(pa.scalar(value, pa.large_string()), self.n)

    def _joined_text(self, joined: bytes) -> Any:
        import numpy as np
        import pyarrow as pa

        raw = np.frombuffer(joined, dtype=np.uint8)
        nul = np.flatnonzero(raw == 0)  # the separators: UTF-8 has no zero byte but NUL's own
        if len(nul) != self.n - 1:
            return None
        offsets = np.empty(self.n + 1, dtype=np.int64)
        offsets[0] = 0
        # each value ends where its separator was, less the separators before it
        offsets[1:-1] = nul - np.arange(len(nul))
        offsets[-1] = len(raw) - len(nul)
        # the text without its separators: bytes.replace copies in C runs (a mask and a copy took 5 s at 8M rows)
        values = pa.LargeStringArray.from_buffers(
            self.n, pa.py_buffer(offsets), pa.py_buffer(joined.replace(b"\x00", b""))
        )
        return _checked(values, raw)

    def _arrow_text(self, raw: bytes) -> Any:
        """A ``"t"`` column as a ``LargeStringArray`` on its bytes; ``None`` for text that is not UTF-8."""
        import numpy as np
        import pyarrow as pa

        offsets, valid, body = self._arrow_parts(raw)
        nulls = self.n - int(np.count_nonzero(valid))
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
        values = pa.LargeStringArray.from_buffers(
            self.n, pa.py_buffer(offsets), pa.py_buffer(body), bitmap, nulls
        )
        return _checked(values, np.frombuffer(body, dtype=np.uint8))

    def _text_values(self, raw: bytes) -> list[Any]:
        """A ``"t"`` column as python strings (``None`` where missing), without pyarrow."""
        offsets, valid, body = self._arrow_parts(raw)
        ends = offsets.tolist()
        text = body.decode("utf-8", "surrogatepass")
        if len(text) == len(body):  # ASCII: a character per byte, so the offsets index the text too
            return [
                text[a:b] if ok else None for a, b, ok in zip(ends, ends[1:], valid.tolist(), strict=False)
            ]
        return [
            body[a:b].decode("utf-8", "surrogatepass") if ok else None
            for a, b, ok in zip(ends, ends[1:], valid.tolist(), strict=False)
        ]

    def column(self, name: str) -> list[Any]:
        """The values of ``name`` (``None`` for every row when the segment has no such column)."""
        got = self._raw(name)
        if got is None:
            return [None] * self.n
        kind, raw = got
        if kind == "s":
            return raw.decode("utf-8", "surrogatepass").split("\x00")
        if kind == "t":
            return self._text_values(raw)
        if kind == "k":
            distinct, codes = self._few_parts(raw)
            return [None if k < 0 else distinct[k] for k in codes.tolist()]
        if kind == "m":
            numbers, mask = self._masked(raw)
            return [None if m else v for v, m in zip(numbers.tolist(), mask.tolist(), strict=True)]
        if kind == "b":
            return list(map(_UNFLAG.__getitem__, raw))
        if kind in _NUMBERS:
            values_: list[Any] = self.array(name).tolist()
            return values_
        values: list[Any] = json.loads(raw)
        return values * self.n if kind == "c" else values


_NUMBERS = {"d": "<f8", "q": "<i8"}

_TEXT_READERS: dict[str, Any] = {
    "t": Segment._arrow_text,
    "k": Segment._few_text,
    "c": Segment._one_text,
    "s": Segment._joined_text,
}
"""How :meth:`Segment.text` reads each kind of column that holds text alone."""


def _checked(values: Any, raw: Any) -> Any:
    """``values`` (Arrow text), or None when it is not valid UTF-8: text whose bytes ``raw`` (a uint8 array) are
    ASCII is valid as it is; anything beyond is checked."""
    import pyarrow as pa

    if len(raw) and raw.max() >= 0x80:
        try:
            values.validate(full=True)
        except pa.ArrowInvalid:
            return None
    return values


def decode(data: bytes, names: Iterable[str] | None = None) -> dict[str, list[Any]]:
    """The columns ``names`` (all of them: ``None``) of one segment's bytes."""
    seg = Segment(data)
    return {name: seg.column(name) for name in (seg.names if names is None else names)}


def insert(conn: Connection, table: Table, pk: int, parts: Sequence[tuple[str, int, bytes, int]]) -> None:
    """Store segments ``(frame, seq0, data, n)`` (within the caller's transaction)."""
    if conn.dialect.name == "sqlite":
        # the driver's executemany: one prepared statement, no SQL compiled per commit of a streamed run
        conn.exec_driver_sql(
            f"INSERT INTO {table.name} (run_pk, frame, seq0, n, data) VALUES (?, ?, ?, ?, ?)",
            [(pk, f, seq0, n, data) for f, seq0, data, n in parts],
        )
        return
    rows = [{"run_pk": pk, "frame": f, "seq0": seq0, "n": n, "data": data} for f, seq0, data, n in parts]
    # One multi-row INSERT per chunk, not an executemany: psycopg runs the latter in pipeline mode, and a run
    # whose row a later claim deleted meanwhile (docs/results.md, the store) would log "error ignored
    # terminating pipeline" to stderr beside the clear error it raises. 100 rows x 5 values stay under every
    # backend's limit.
    for start in range(0, len(rows), 100):
        conn.execute(table.insert().values(rows[start : start + 100]))


def write_frame(
    conn: Connection,
    table: Table,
    pk: int,
    frame: str,
    columns: dict[str, list[Any]],
    dtypes: Mapping[str, str],
) -> None:
    """A whole frame's columns as segments of :data:`SEGMENT_ROWS` rows."""
    n = len(next(iter(columns.values()))) if columns else 0
    for seq0 in range(0, n, SEGMENT_ROWS):
        part = {name: values[seq0 : seq0 + SEGMENT_ROWS] for name, values in columns.items()}
        rows = min(SEGMENT_ROWS, n - seq0)
        insert(conn, table, pk, [(frame, seq0, encode(part, rows, dtypes), rows)])


def segments(
    conn: Connection, table: Table, pk: int, frame: str, run: Mapping[str, Any]
) -> Iterator[Segment]:
    """The segments of a run's frame in the order they were written.

    Raises:
        StoreError: ``STORED_RUN_INVALID`` for a segment whose bytes do not read back.
    """
    from sqlalchemy import select

    q = select(table.c.data).where(table.c.run_pk == pk, table.c.frame == frame).order_by(table.c.seq0)
    for (data,) in conn.execute(q):
        try:
            yield Segment(data)
        except (ValueError, KeyError, TypeError, struct.error) as exc:
            raise damaged(run, exc) from None


def column_of(seg: Segment, name: str, run: Mapping[str, Any]) -> list[Any]:
    """``seg.column(name)``, a damaged column named as the run's error."""
    try:
        return seg.column(name)
    except (ValueError, zlib.error) as exc:
        raise damaged(run, exc) from None


def damaged(run: Mapping[str, Any], exc: BaseException) -> StoreError:
    """``STORED_RUN_INVALID`` for a run whose segment bytes do not read back."""
    return invalid(dict(run), "its rows", f"are damaged ({exc})")


def has_segments(conn: Connection, tables: Mapping[str, Table], pks: Sequence[int]) -> set[int]:
    """Which of these runs have segments (none before schema 8)."""
    from sqlalchemy import select

    t = tables.get("segments")
    if t is None or not pks:
        return set()
    q = select(t.c.run_pk).where(t.c.run_pk.in_(list(pks))).distinct()
    return {int(x) for x in conn.execute(q).scalars()}


def next_seq(conn: Connection, table: Table, pk: int) -> int:
    """The first free row number of a run: where a resumed run's segments go on."""
    from sqlalchemy import func, select

    # of the frames' rows: a run's case index (store/_case_index.py) numbers its own
    q = select(func.max(table.c.seq0 + table.c.n)).where(
        table.c.run_pk == pk, table.c.frame.in_(list(FRAMES))
    )
    value = conn.execute(q).scalar()
    return int(value or 0)
