"""A run's frames stored by columns (schema 8): one ``segments`` row per frame and writer batch.

Each transaction of a streamed run (and each block of :data:`SEGMENT_ROWS` rows of ``Store.save``) stores the
rows it adds to a frame (``runs``, ``scores``, ``mismatches``, ``tool_calls``) as one segment: the row
``(run_pk, frame, seq0, n, data)``, where ``data`` holds every column of those ``n`` rows. A million case runs
are about a thousand segments per frame where the row tables held three million rows, so a save is a few
blobs per transaction and a load a few thousand decompressions instead of a cursor over millions of tuples.

The bytes of ``data`` (version 1) need nothing beyond the standard library::

    b"evs1"  uint32 little-endian: the header's length  header (JSON)  column 1  column 2 ...

The header is ``{"n": rows, "columns": [[name, kind, size], ...]}`` in the frame's column order; each column is
``size`` bytes, compressed with zlib (level 1), by its ``kind``:

* ``"c"``: one value every row holds (text or missing), as a one-element JSON array (a run's agent, most
  statuses, the columns no agent reported);
* ``"s"``: a ``string`` column of text alone, its values joined by NUL in UTF-8 (a value holding NUL goes
  as JSON);
* ``"d"`` / ``"q"``: a ``float64`` / ``Int64`` column as little-endian doubles / 64-bit integers (missing
  floats as NaN, as the frame holds them; an integer column with missing values goes as JSON);
* ``"b"``: a ``boolean`` column, a byte per row (0 false, 1 true, 2 missing);
* ``"j"``: anything else, its values as a JSON array: JSON keeps text, integers, floats (``repr``-exact, NaN
  included), flags and missing values (``null``) exactly, NUL characters too; text is written ASCII-escaped,
  so any string Python holds reads back the same.

A reader takes only the columns it needs: the header says where each one is.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalnb._unicode import may_hold_surrogates
from evalnb.errors import StoreError
from evalnb.store._invalid import invalid
from evalnb.store._schema import MISMATCH_COLS, RUN_COLS, SCORE_COLS, TOOL_CALL_COLS

if TYPE_CHECKING:
    from sqlalchemy import Connection, Table

__all__ = [
    "FRAMES",
    "SEGMENT_ROWS",
    "TABLES",
    "Segment",
    "column_of",
    "damaged",
    "decode",
    "encode",
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


def encode(columns: Mapping[str, Sequence[Any]], n: int, dtypes: Mapping[str, str] | None = None) -> bytes:
    """The bytes of one segment: ``n`` rows of ``columns`` (name -> values, in the frame's order); ``dtypes``
    (the frame's) let text, numbers and flags take their compact kinds."""
    head: list[list[Any]] = []
    parts: list[bytes] = []
    dtypes = dtypes or {}
    for name, values in columns.items():
        if len(values) != n:
            raise ValueError(f"column {name!r} holds {len(values)} values, not {n}")
        first = values[0] if n else None
        # One value for every row: text or missing only (1 == True == 1.0 would make a column of numbers
        # one value of another type; NaN != NaN).
        if n and (first is None or type(first) is str) and values.count(first) == n:
            kind, raw = "c", _DUMPS([first]).encode("ascii")
        else:
            kind, raw = _packed(values, n, dtypes.get(name)) or ("j", _DUMPS(list(values)).encode("ascii"))
        part = zlib.compress(raw, LEVEL)
        head.append([name, kind, len(part)])
        parts.append(part)
    header = json.dumps({"n": n, "columns": head}, separators=(",", ":")).encode("ascii")
    return b"".join([MAGIC, _LEN.pack(len(header)), header, *parts])


class Segment:
    """One stored segment's header: its rows, and where each column's bytes are."""

    __slots__ = ("data", "n", "names", "spans")

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
        for name, kind, length in doc["columns"]:
            self.spans[name] = (kind, start, start + length)
            start += length
        self.names = list(self.spans)

    def _raw(self, name: str) -> tuple[str, bytes] | None:
        span = self.spans.get(name)
        if span is None:
            return None
        kind, a, b = span
        return kind, zlib.decompress(self.data[a:b])

    def array(self, name: str) -> Any:
        """The values of a column of numbers as a numpy array (float64 or int64); ``None`` for another kind."""
        span = self.spans.get(name)
        if span is None or span[0] not in _NUMBERS:
            return None
        import numpy as np

        kind, a, b = span
        return np.frombuffer(zlib.decompress(self.data[a:b]), dtype=_NUMBERS[kind])

    def flags(self, name: str) -> Any:
        """A ``boolean`` column stored as flags (kind ``"b"``) as a pandas ``BooleanArray`` made from its bytes
        (no Python value per row); ``None`` for another kind."""
        span = self.spans.get(name)
        if span is None or span[0] != "b":
            return None
        import numpy as np
        import pandas as pd

        _, a, b = span
        raw = np.frombuffer(zlib.decompress(self.data[a:b]), dtype=np.uint8)
        if len(raw) != self.n or raw.max(initial=0) > 2:
            raise ValueError(f"column {name!r} holds flags other than 0, 1 and 2")
        return pd.arrays.BooleanArray(raw == 1, raw == 2)

    def text(self, name: str) -> Any:
        """A column of text alone (kind ``"s"``, or ``"c"`` of text or missing) as a pyarrow
        ``LargeStringArray`` made from its bytes, no Python string per value; ``None`` for another kind, or text
        that is not valid UTF-8 (a lone surrogate, which only Python's strings hold: :meth:`column` reads it)."""
        span = self.spans.get(name)
        if span is None or span[0] not in ("s", "c"):
            return None
        import numpy as np
        import pyarrow as pa

        kind, a, b = span
        if kind == "c":  # one value every row holds
            (value,) = json.loads(zlib.decompress(self.data[a:b]))
            if value is None:
                return pa.nulls(self.n, pa.large_string())
            if type(value) is not str or may_hold_surrogates(value):
                return None
            return pa.repeat(pa.scalar(value, pa.large_string()), self.n)
        joined = zlib.decompress(self.data[a:b])
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
        if len(raw) and raw.max() >= 0x80:  # ASCII is valid UTF-8 as it is; anything else is checked
            try:
                values.validate(full=True)
            except pa.ArrowInvalid:
                return None
        return values

    def column(self, name: str) -> list[Any]:
        """The values of ``name`` (``None`` for every row when the segment has no such column)."""
        got = self._raw(name)
        if got is None:
            return [None] * self.n
        kind, raw = got
        if kind == "s":
            return raw.decode("utf-8", "surrogatepass").split("\x00")
        if kind == "b":
            return list(map(_UNFLAG.__getitem__, raw))
        if kind in _NUMBERS:
            values_: list[Any] = self.array(name).tolist()
            return values_
        values: list[Any] = json.loads(raw)
        return values * self.n if kind == "c" else values


_NUMBERS = {"d": "<f8", "q": "<i8"}


def decode(data: bytes, names: Iterable[str] | None = None) -> dict[str, list[Any]]:
    """The columns ``names`` (all of them: ``None``) of one segment's bytes."""
    seg = Segment(data)
    return {name: seg.column(name) for name in (seg.names if names is None else names)}


def insert(conn: Connection, table: Table, pk: int, parts: Sequence[tuple[str, int, bytes, int]]) -> None:
    """Store segments ``(frame, seq0, data, n)`` (within the caller's transaction)."""
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
