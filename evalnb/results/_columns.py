"""Rows gathered column by column, for the frames of a large run.

A run of a million case runs makes a million run rows and two million score rows. Kept as one tuple per row
until the end and then transposed, they took ~3 KB per case run at the peak; gathered here they are transposed
in chunks as they arrive (one list per column), repeated text (statuses, check names, the reasons that checks
write the same way for many answers) is kept once, and each column becomes its typed array on its own, its list
freed before the next one is built. The frames handed out keep their documented dtypes (``frames.py``).

Example::

    cols = Columns(RUNS_COLUMNS, shared=("status",))
    cols.add(rows, position=0, run=0)          # the rows of one case run, in turn order
    frame = cols.frame()                       # rows in (position, run) order, then arrival order
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPEATED", "Columns", "Shared"]

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


class Columns:
    """The rows of one frame, gathered column by column (see the module docstring).

    Args:
        schema: the frame's columns and dtypes (``RUNS_COLUMNS`` ...); rows are tuples in its order.
        shared: the text columns whose values repeat (kept once each, through one :class:`Shared`).
        known: per column, texts held elsewhere whose objects the column takes instead of equal copies (a stored
            run's case ids and prompts are the loaded suite's own strings).
    """

    def __init__(
        self,
        schema: Mapping[str, str],
        *,
        shared: Sequence[str] = (),
        known: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        self.schema = dict(schema)
        self._names = list(schema)
        self._values: list[list[Any]] = [[] for _ in self._names]
        known = known or {}
        # one table per column: a column of unique answers fills its own table, not the statuses'
        self._shared = {
            i: Shared(known=known.get(name))
            for i, name in enumerate(self._names)
            if name in shared or name in known
        }
        self._chunk: list[tuple[Any, ...]] = []
        # Where each row belongs: the case's position in the suite and the run (rows of one case run arrive
        # together, in turn order).
        self._position = array("q")
        self._run = array("q")

    def __len__(self) -> int:
        return len(self._position)

    def add(self, rows: Sequence[tuple[Any, ...]], *, position: int, run: int) -> None:
        """The rows of one case run (tuples in the schema's column order)."""
        if not rows:
            return
        n = len(rows)
        if n == 1:  # a single-turn case run's one row
            self._position.append(position)
            self._run.append(run)
            self._chunk.append(rows[0])
        else:
            self._position.extend([position] * n)
            self._run.extend([run] * n)
            self._chunk.extend(rows)
        if len(self._chunk) >= CHUNK:
            self._flush()

    def extend(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Rows that come in their final order (read back from a store): no sorting at :meth:`frame`."""
        self.add(rows, position=0, run=0)

    def _flush(self) -> None:
        chunk, self._chunk = self._chunk, []
        if not chunk:
            return
        width = len(self._names)
        if any(len(row) != width for row in chunk):
            raise ValueError(f"rows must hold the {width} columns of the schema")
        for i, values in enumerate(zip(*chunk, strict=True)):
            intern = self._shared.get(i)
            if intern is not None:
                # a value that is not hashable (not text): the chunk is kept as it is
                with contextlib.suppress(TypeError):
                    values = tuple(intern.many(values))
            self._values[i].extend(values)

    def frame(self) -> pd.DataFrame:
        """The typed frame of every row added, in (position, run) order; the gathered rows are let go."""
        import numpy as np
        import pandas as pd

        from evalnb.results._frames import frame_from_tuples

        self._flush()
        n = len(self)
        if not n:
            return frame_from_tuples([], self.schema)
        order: Any = None
        position = np.frombuffer(self._position, dtype=np.int64)
        run = np.frombuffer(self._run, dtype=np.int64)
        key = position * (int(run.max()) + 1) + run
        if np.any(key[1:] < key[:-1]):
            order = np.argsort(key, kind="stable")  # stable: a case run's turns keep their order
        arrays: dict[str, Any] = {}
        for i, (name, dtype) in enumerate(self.schema.items()):
            values, self._values[i] = self._values[i], []
            try:
                arrays[name] = _typed(values, dtype, order)
            except (TypeError, ValueError):  # a value of another type: cast the way make_frame does
                from evalnb.results._frames import conform

                cells = values if order is None else [values[j] for j in order]
                arrays[name] = conform(pd.DataFrame({name: cells}), {name: dtype})[name].array
            del values
        self._position, self._run = array("q"), array("q")
        return pd.DataFrame(arrays, columns=self._names, copy=False)


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
        # pandas' default string storage, kept on purpose (docs/results.md, text columns): with pyarrow installed
        # the text is copied into Arrow buffers, so the sharing above saves memory while the rows are gathered but
        # not in the frame; measured per column of 1M rows, Arrow holds 14-21 MB against Python's 8 MB of
        # pointers and builds in 0.2-0.3 s against 0.05-0.12 s, but counts and compares text 3x faster, which is
        # what users do with the frames.
        return pd.array(cells, dtype="string")
    if order is not None:
        values = [values[i] for i in order]
    return pd.array(values, dtype=dtype)
