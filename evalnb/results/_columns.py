"""Rows gathered column by column, for the frames of a large run.

A run of a million case runs makes a million run rows and two million score rows. Kept as one tuple per row
until the end and then transposed, they took ~3 KB per case run at the peak; gathered here they are transposed
in chunks as they arrive, each column into its final layout (numbers and flags in typed buffers; text in Arrow's
buffers when pandas stores text in Arrow, else Python strings with repeated text kept once), and each column
becomes the frame's array from those buffers, freed before the next one is built (docs/results.md, text
columns). The frames handed out keep their documented dtypes (``frames.py``).

Each flush makes a :class:`Chunk`: the rows it took, column by column in their typed form (:class:`Piece`), which
the columns keep and which a listener may take as they are (the store writes them as segments without
transposing the rows again: store/_segments.py).

Example::

    cols = Columns(RUNS_COLUMNS, shared=("status",))
    cols.add(rows, position=0, run=0)          # the rows of one case run, in turn order
    frame = cols.frame()                       # rows in (position, run) order, then arrival order
"""

from __future__ import annotations

import contextlib
import errno
import mmap
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPEATED", "Chunk", "Columns", "Piece", "Shared", "arrow_text"]

CHUNK = 4096
"""Rows held as tuples before they are transposed into the columns."""

REPEATED: dict[str, tuple[str, ...]] = {
    "runs": ("status", "error", "model", "agent", "context", "stdout", "intent", "refusal"),
    "scores": ("check", "check_id", "status", "reason", "judge", "options"),
    "mismatches": ("key", "tolerance", "reason"),
    "tool_calls": ("tool", "plugin_name", "function_name", "status"),
}
"""Per frame, the text columns whose values repeat from row to row (kept once each); answers, prompts and ids
are mostly distinct and are not looked up."""


class Shared:
    """One object for each repeated text: ``list(shared.many(["passed", "passed"]))`` holds one object twice.

    Bounded: after ``limit`` distinct texts new ones are kept as they are (unique answers must not fill it).
    """

    __slots__ = ("_seen", "limit")

    def __init__(self, limit: int = 20_000, *, known: Mapping[str, str] | None = None) -> None:
        # `known`: texts held elsewhere already (a suite's case ids and prompts), given back as those objects; a
        # dict is used as it is (and takes the new texts too): a million-case table is not copied per column
        self._seen: dict[str, str] = known if isinstance(known, dict) else dict(known or {})
        self.limit = limit + len(self._seen)

    def many(self, values: Iterable[Any]) -> Iterator[Any]:
        """``values`` with each text already seen replaced by the object first seen, at C speed (no python call
        per value); the table may pass its limit by one chunk before it stops taking new texts."""
        seen = self._seen
        if len(seen) < self.limit:
            return map(seen.setdefault, values, values)
        return map(seen.get, values, values)


class Piece(NamedTuple):
    """One column's values of a chunk of rows, in the typed form the column keeps them.

    ``kind`` says what ``values`` is: ``"objects"`` a tuple of python values (repeated text as one object
    each); ``"floats"`` a float64 numpy array (missing as NaN); ``"masked"`` an int64 or bool numpy array
    with ``mask`` (a bool array, True where missing); ``"text"`` a pyarrow ``LargeStringArray``; ``"missing"``
    nothing: every value is missing.
    """

    kind: str
    n: int
    values: Any = None
    mask: Any = None

    @property
    def nbytes(self) -> int:
        """The memory its buffers hold (a pointer per value of python values, which the rows share)."""
        if self.kind == "objects":
            return 8 * self.n
        held = 0 if self.values is None else int(self.values.nbytes)
        return held + (0 if self.mask is None else int(self.mask.nbytes))


class Chunk(NamedTuple):
    """The rows one flush took from a frame: ``n`` rows, one :class:`Piece` per column in the schema's order."""

    n: int
    names: list[str]
    pieces: list[Piece]

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.pieces)


class Columns:
    """The rows of one frame, gathered column by column (see the module docstring).

    Args:
        schema: the frame's columns and dtypes (``RUNS_COLUMNS`` ...); rows are tuples in its order.
        shared: the text columns whose values repeat (kept once each, through one :class:`Shared`).
        known: per column, texts held elsewhere whose objects the column takes instead of equal copies (a stored
            run's case ids and prompts are the loaded suite's own strings).
        manual: rows are flushed only when :meth:`flush` is called (a Result's recorder flushes its frames
            together, at the end of a case run); else every :data:`CHUNK` rows.
    """

    def __init__(
        self,
        schema: Mapping[str, str],
        *,
        shared: Sequence[str] = (),
        known: Mapping[str, Mapping[str, str]] | None = None,
        manual: bool = False,
    ) -> None:
        self.schema = dict(schema)
        self._names = list(schema)
        self._shared_names = set(shared)
        self._known = known or {}
        self._manual = manual
        self._columns: list[_Column] | None = None  # made at the first chunk (pandas is imported by then)
        self._chunk: list[tuple[Any, ...]] = []
        # Where each row belongs: the case's position in the suite and the run (rows of one case run arrive
        # together, in turn order).
        self._position = array("q")
        self._run = array("q")

    def __len__(self) -> int:
        return len(self._position)

    @property
    def waiting(self) -> int:
        """Rows added since the last flush."""
        return len(self._chunk)

    def add(self, rows: Sequence[tuple[Any, ...]], *, position: int, run: int) -> bool:
        """The rows of one case run (tuples in the schema's column order). Flushed every :data:`CHUNK` rows,
        or with ``manual`` the caller's to flush: True once that many wait."""
        if not rows:
            return False
        n = len(rows)
        if n == 1:  # a single-turn case run's one row
            self._position.append(position)
            self._run.append(run)
            self._chunk.append(rows[0])
        else:
            self._position.extend([position] * n)
            self._run.extend([run] * n)
            self._chunk.extend(rows)
        full = len(self._chunk) >= CHUNK
        if full and not self._manual:
            self.flush()
            return False
        return full

    def extend(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Rows that come in their final order (read back from a store): no sorting at :meth:`frame`."""
        if self.add(rows, position=0, run=0):
            self.flush()

    def _make(self) -> list[_Column]:
        arrow = arrow_text()
        out: list[_Column] = []
        for name, dtype in self.schema.items():
            kind = _KINDS.get(dtype, _Objects)
            if kind is _Text and not arrow:
                kind = _Objects  # pointers to the (shared) objects, as pandas' Python storage holds them
            shared = None
            if kind is _Objects and (name in self._shared_names or name in self._known):
                shared = Shared(known=self._known.get(name))
            out.append(kind(dtype, shared))
        return out

    def flush(self) -> Chunk | None:
        """The rows added since the last flush, transposed into the columns; they as a :class:`Chunk` (None
        when there were none)."""
        chunk = self.pieces()
        if chunk is not None:
            self.keep(chunk)
        return chunk

    def pieces(self) -> Chunk | None:
        """The rows added since the last flush as a :class:`Chunk`, still waiting (:meth:`keep` takes them): a
        chunk that cannot be made (short of memory) loses none of them."""
        rows = self._chunk
        if not rows:
            return None
        width = len(self._names)
        if any(len(row) != width for row in rows):
            raise ValueError(f"rows must hold the {width} columns of the schema")
        if self._columns is None:
            self._columns = self._make()
        made = [
            column.piece(values)
            for column, values in zip(self._columns, zip(*rows, strict=True), strict=True)
        ]
        return Chunk(len(rows), self._names, made)

    def keep(self, chunk: Chunk) -> None:
        """The rows of ``chunk`` (:meth:`pieces` made it of the rows waiting) kept in the columns."""
        self._chunk = []
        assert self._columns is not None
        for column, piece in zip(self._columns, chunk.pieces, strict=True):
            column.keep(piece)

    def unkept(self) -> Chunk | None:
        """The rows added since the last flush as a :class:`Chunk`, every row kept before let go first (a run
        short of memory hands these to its store once the memory of its columns is free)."""
        self._columns = None
        self._position, self._run = array("q"), array("q")
        chunk = self.pieces()
        self._chunk = []
        return chunk

    def frame(self) -> pd.DataFrame:
        """The typed frame of every row added, in (position, run) order; the gathered rows are let go."""
        import numpy as np
        import pandas as pd

        from evalnb.results._frames import frame_from_tuples

        self.flush()
        n = len(self)
        if not n or self._columns is None:
            return frame_from_tuples([], self.schema)
        order: Any = None
        position = np.frombuffer(self._position, dtype=np.int64)
        run = np.frombuffer(self._run, dtype=np.int64)
        key = position * (int(run.max()) + 1) + run
        if np.any(key[1:] < key[:-1]):
            order = np.argsort(key, kind="stable")  # stable: a case run's turns keep their order
        del position, run, key
        self._position, self._run = array("q"), array("q")
        columns, self._columns = self._columns, None
        arrays: dict[str, Any] = {}
        for i, name in enumerate(self._names):
            arrays[name] = columns[i].array(order)
            columns[i] = _DONE  # each column's buffers go before the next column is built
        return pd.DataFrame(arrays, columns=self._names, copy=False)


# -- one column's gathered values, by dtype -------------------------------------------------------------
#
# Numbers, flags and (with pyarrow) text are kept in growing buffers of their final layout, appended to a chunk
# at a time, and handed to the frame as they are (no copy at the end unless rows must be reordered): no Python
# object per cell outlives its chunk, and the frame's build does not hold a column twice. The buffers are
# memory maps of their own (:class:`_Grown`), not memory of the C allocator: a buffer the allocator grows by
# moving it leaves a hole behind that the process keeps, and a million-case run held ~500 MB of such holes at
# its end. A column that stays missing throughout (token counts of an agent that gives none, a cube's columns in
# a dataset's run) keeps only its length, and is made at the end of zero-filled memory the system hands out
# lazily: it costs no resident memory at all.


class _Grown:
    """A byte buffer that grows in an anonymous memory map of its own: grown in place by the system where it
    can (``mremap``), else copied into a larger map and the old one unmapped; what is never written is never
    resident, and what the frame no longer needs goes back to the system at once."""

    __slots__ = ("_map", "used")

    def __init__(self) -> None:
        self._map: mmap.mmap | None = None
        self.used = 0

    def extend(self, data: Any) -> None:
        """Append the bytes of ``data`` (bytes, a bytearray, a contiguous numpy array)."""
        n = memoryview(data).nbytes
        if not n:
            return
        end = self.used + n
        if self._map is None or end > len(self._map):
            self._grow(end)
        assert self._map is not None
        self._map[self.used : end] = data
        self.used = end

    def _grow(self, need: int) -> None:
        size = max(need, _FIRST_MAP, (len(self._map) * 3) // 2 if self._map is not None else 0)
        if self._map is None:
            self._map = _anonymous(size)
            return
        try:
            self._map.resize(size)
        except (OSError, SystemError, ValueError):  # no mremap (macOS): a larger map, the bytes copied
            bigger = _anonymous(size)
            bigger[: self.used] = self._map[: self.used]
            self._map.close()
            self._map = bigger

    def take(self) -> Any:
        """The bytes written, as a buffer the frame's arrays can be made on (the map is let go by this buffer
        and lives as long as they do)."""
        taken, self._map, used, self.used = self._map, None, self.used, 0
        if taken is None:
            return b""
        with contextlib.suppress(OSError, SystemError, ValueError):
            taken.resize(used)  # the unwritten tail back to the system (where it can be)
        return memoryview(taken)[:used]


_FIRST_MAP = 1 << 16
"""The first map's size in bytes (a small run's columns are small)."""


def _anonymous(size: int) -> mmap.mmap:
    """A private anonymous map (mmap adds the anonymity for ``-1``): a shared one, mmap's default, is a file of
    its first size in the kernel, and the pages a resize adds past that size fault when touched."""
    private = getattr(mmap, "MAP_PRIVATE", None)  # none on Windows, whose maps of -1 are private already
    try:
        return mmap.mmap(-1, size) if private is None else mmap.mmap(-1, size, flags=private)
    except OSError as exc:
        if exc.errno != errno.ENOMEM:
            raise
        # No room for the map is the run's memory running out, not a file error: as a MemoryError the run
        # stops as one that ran out of memory and says what it finished and saved (docs/results.md).
        raise MemoryError(f"no memory for {size:,} bytes of the run's columns") from None


class _Column:
    def __init__(self, dtype: str, shared: Shared | None) -> None:
        self.dtype = dtype

    def piece(self, values: tuple[Any, ...]) -> Piece:
        """A chunk's values in the column's typed form."""
        raise NotImplementedError

    def keep(self, piece: Piece) -> None:
        """A piece of this column's appended to its buffers."""
        raise NotImplementedError

    def array(self, order: Any) -> Any:
        """The column as the frame's array, rows in ``order`` (``None``: as they came)."""
        raise NotImplementedError


class _Objects(_Column):
    """Python values (``object`` columns, and text without pyarrow), repeated text kept once."""

    def __init__(self, dtype: str, shared: Shared | None) -> None:
        super().__init__(dtype, shared)
        self.shared = shared
        self.values: list[Any] = []

    def piece(self, values: tuple[Any, ...]) -> Piece:
        if self.shared is not None:
            # a value that is not hashable (not text): the chunk is kept as it is
            with contextlib.suppress(TypeError):
                values = tuple(self.shared.many(values))
        return Piece("objects", len(values), values)

    def keep(self, piece: Piece) -> None:
        self.values.extend(piece.values)

    def array(self, order: Any) -> Any:
        values, self.values = self.values, []
        try:
            return _typed(values, self.dtype, order)
        except (TypeError, ValueError):  # a value of another type: cast the way make_frame does
            cells = values if order is None else [values[j] for j in order]
            return _cast(cells, self.dtype)


class _Floats(_Column):
    def __init__(self, dtype: str, shared: Shared | None) -> None:
        super().__init__(dtype, shared)
        self.data = _Grown()

    def piece(self, values: tuple[Any, ...]) -> Piece:
        import numpy as np

        try:
            chunk = np.array(values, dtype="float64")  # None -> NaN
        except (TypeError, ValueError):
            chunk = _cast(list(values), "float64").to_numpy(dtype="float64", na_value=np.nan)
        return Piece("floats", len(chunk), chunk)

    def keep(self, piece: Piece) -> None:
        self.data.extend(piece.values)

    def array(self, order: Any) -> Any:
        import numpy as np

        out = np.frombuffer(self.data.take(), dtype="float64")
        return out if order is None else out[order]


class _Masked(_Column):
    """``Int64`` and ``boolean``: the values and a byte per row saying which are missing."""

    def __init__(self, dtype: str, shared: Shared | None) -> None:
        super().__init__(dtype, shared)
        self.kind = "int64" if dtype == "Int64" else "bool"
        self.data = _Grown()
        self.mask = _Grown()
        self.missing = 0  # rows missing before the first value (kept as a count until a value comes)

    def piece(self, values: tuple[Any, ...]) -> Piece:
        import numpy as np

        n = len(values)
        # most such columns of most runs are all missing (token counts of an agent that gives none)
        if values.count(None) == n:
            return Piece("missing", n)
        try:
            chunk = _typed(list(values), self.dtype, None)
        except (TypeError, ValueError):
            chunk = _cast(list(values), self.dtype)
        fill = 0 if self.dtype == "Int64" else False
        return Piece(
            "masked", n, chunk.to_numpy(dtype=self.kind, na_value=fill), np.asarray(chunk.isna(), dtype=bool)
        )

    def keep(self, piece: Piece) -> None:
        n = piece.n
        if piece.kind == "missing":
            if not self.data.used:
                self.missing += n
                return
            self.data.extend(bytes(n * (8 if self.dtype == "Int64" else 1)))
            self.mask.extend(b"\x01" * n)
            return
        self._fill()
        self.data.extend(piece.values)
        self.mask.extend(piece.mask)

    def _fill(self) -> None:
        """The missing rows before the first value, written out."""
        if self.missing and not self.data.used:
            self.data.extend(bytes(self.missing * (8 if self.dtype == "Int64" else 1)))
            self.mask.extend(b"\x01" * self.missing)
            self.missing = 0

    def array(self, order: Any) -> Any:
        import numpy as np
        import pandas as pd

        made = pd.arrays.IntegerArray if self.dtype == "Int64" else pd.arrays.BooleanArray
        if not self.data.used:  # missing throughout (or no rows): the order does not matter
            n, self.missing = self.missing, 0
            return made(np.zeros(n, dtype=self.kind), np.ones(n, dtype=bool))
        data = np.frombuffer(self.data.take(), dtype=self.kind)
        mask = np.frombuffer(self.mask.take(), dtype=bool)
        if order is not None:
            data, mask = data[order], mask[order]
        return made(data, mask)


class _Text(_Column):
    """``string`` with pyarrow: the Arrow layout itself (UTF-8 bytes, offsets, a byte per row saying which are
    missing), so the frame's column is made of these buffers without copying them."""

    def __init__(self, dtype: str, shared: Shared | None) -> None:
        super().__init__(dtype, shared)
        self.data = _Grown()
        self.offsets = _Grown()
        self.valid = _Grown()
        self.last = 0  # the offset the next value starts at
        self.missing = 0  # rows missing before the first value (kept as a count until a value comes)

    def piece(self, values: tuple[Any, ...]) -> Piece:
        import pyarrow as pa

        n = len(values)
        if values.count(None) == n:
            return Piece("missing", n)
        try:
            # what pd.array(..., dtype="string") makes of str and None, without its per-cell checks
            chunk = pa.array(values, type=pa.large_string(), from_pandas=True)
        except (TypeError, ValueError, pa.ArrowException):
            # (cast: the buffers below are read with large_string's 64-bit offsets, whatever pandas made)
            chunk = _cast(list(values), "string").__arrow_array__().combine_chunks().cast(pa.large_string())
        return Piece("text", n, chunk)

    def keep(self, piece: Piece) -> None:
        import numpy as np

        n = piece.n
        if piece.kind == "missing":
            if not self.offsets.used:
                self.missing += n
                return
            self.offsets.extend(np.full(n, self.last, dtype=np.int64))
            self.valid.extend(bytes(n))
            return
        self._fill()
        chunk = piece.values
        _, offsets, data = chunk.buffers()
        ends = np.frombuffer(offsets, dtype=np.int64, count=n + 1, offset=chunk.offset * 8)
        self.offsets.extend(ends[1:] - ends[0] + self.last)
        self.last += int(ends[-1] - ends[0])
        if data is not None:
            self.data.extend(memoryview(data)[int(ends[0]) : int(ends[-1])])
        if chunk.null_count:
            self.valid.extend(chunk.is_valid().to_numpy(zero_copy_only=False))
        else:
            self.valid.extend(b"\x01" * n)

    def _fill(self) -> None:
        """The first offset, and the missing rows before the first value, written out."""
        import numpy as np

        if not self.offsets.used:
            self.offsets.extend(np.zeros(self.missing + 1, dtype=np.int64))
            self.valid.extend(bytes(self.missing))
            self.missing = 0

    def array(self, order: Any) -> Any:
        import numpy as np
        import pandas as pd
        import pyarrow as pa

        if not self.offsets.used:  # missing throughout (or no rows): zero pages, never written
            n, self.missing = self.missing, 0
            offsets = pa.py_buffer(np.zeros(n + 1, dtype=np.int64))
            bitmap = pa.py_buffer(np.zeros((n + 7) // 8, dtype=np.uint8))
            empty = pa.LargeStringArray.from_buffers(n, offsets, pa.py_buffer(b""), bitmap, n)
            return pd.arrays.ArrowStringArray(empty)
        valid = np.frombuffer(self.valid.take(), dtype=bool)
        n = len(valid)
        nulls = n - int(np.count_nonzero(valid))
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
        del valid
        offsets, data = pa.py_buffer(self.offsets.take()), pa.py_buffer(self.data.take())
        whole = pa.LargeStringArray.from_buffers(n, offsets, data, bitmap, nulls)
        self.last = 0
        if order is not None:
            import pyarrow.compute as pc

            whole = pc.take(whole, pa.array(order), memory_pool=pa.system_memory_pool())
        return pd.arrays.ArrowStringArray(whole)


_KINDS: dict[str, type[_Column]] = {"float64": _Floats, "Int64": _Masked, "boolean": _Masked, "string": _Text}
"""How a column of each dtype is gathered (any other dtype as Python values)."""

_DONE: Any = None


def arrow_text() -> bool:
    """Whether pandas keeps ``string`` columns in Arrow buffers (pyarrow installed: docs/results.md, text
    columns)."""
    import pandas as pd

    return bool(pd.StringDtype().storage == "pyarrow")


def _cast(values: list[Any], dtype: str) -> Any:
    """Values of another type cast the way make_frame casts them (``"1"`` in an ``Int64`` column is 1)."""
    import pandas as pd

    from evalnb.results._frames import conform

    return conform(pd.DataFrame({"v": values}), {"v": dtype})["v"].array


def _typed(values: list[Any], dtype: str, order: Any) -> Any:
    import numpy as np
    import pandas as pd

    if dtype == "float64":
        out = np.array(values, dtype="float64")  # None -> NaN
        return out if order is None else out[order]
    if dtype == "string":
        cells = np.array(values, dtype=object)
        if order is not None:
            cells = cells[order]
        return pd.array(cells, dtype="string")
    if order is not None:
        values = [values[i] for i in order]
    return pd.array(values, dtype=dtype)
