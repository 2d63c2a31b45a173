"""The case runs a run has finished, as ``(case id, run)`` keys, in a bit per case and run.

A run keeps them to know, when it is interrupted or stopped, which case runs never finished (they are recorded as
skipped), and a resumed run to leave out what the store holds. A set of a million ``(id, run)`` tuples took
~125 MB; here a case's first eight runs are bits of one byte at its place in the suite, read through the map
of case ids to places the Result's recorder holds anyway.

Example::

    done = Finished({"a": 0, "b": 1})
    done.add(("b", 0))
    ("b", 0) in done, ("a", 0) in done, len(done)
    # (True, False, 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

__all__ = ["Finished"]

_BITS = 8
"""Runs of a case kept as bits of its byte; later runs (and ids the map does not hold) in a plain set."""


class Finished:
    """A set of ``(case id, run)`` keys (``in``, ``add``, ``update``, ``len``, iteration), compact for a suite's
    own cases: ``positions`` maps each case id to its place in the suite."""

    __slots__ = ("_bits", "_count", "_other", "_positions")

    def __init__(self, positions: Mapping[str, int], keys: Iterable[tuple[str, int]] = ()) -> None:
        self._positions = positions
        self._bits = bytearray(max(positions.values(), default=-1) + 1)
        self._other: set[tuple[str, int]] = set()
        self._count = 0
        self.update(keys)

    def _place(self, key: tuple[str, int]) -> int | None:
        at = self._positions.get(key[0])
        run = key[1]
        if at is None or type(run) is not int or not 0 <= run < _BITS:
            return None
        return at

    def add(self, key: tuple[str, int]) -> None:
        at = self._place(key)
        if at is None:
            if key not in self._other:
                self._other.add(key)
                self._count += 1
            return
        bit = 1 << key[1]
        held = self._bits[at]
        if not held & bit:
            self._bits[at] = held | bit
            self._count += 1

    def update(self, keys: Iterable[tuple[str, int]]) -> None:
        for key in keys:
            self.add(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        at = self._place(key)
        if at is None:
            return key in self._other
        return bool(self._bits[at] >> key[1] & 1)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[str, int]]:
        bits = self._bits
        for case_id, at in self._positions.items():
            held = bits[at]
            for run in range(_BITS):
                if held >> run & 1:
                    yield (case_id, run)
        yield from self._other
