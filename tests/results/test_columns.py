"""Rows gathered column by column give the frame the row tuples gave, in suite order."""

from __future__ import annotations

import random

import pandas as pd

from evalnb.results._columns import CHUNK, Columns, Shared
from evalnb.results._frames import RUNS_COLUMNS, SCORES_COLUMNS, frame_from_tuples


def score_row(case: int, run: int, turn: int, check: int) -> tuple[object, ...]:
    passed = (case + run + check) % 3 != 0
    return (
        "suite",
        f"c{case}",
        f"case {case}",
        None if case % 4 else "cat",
        run,
        turn,
        f"check{check}",
        f"check{check}",
        1.0 if passed else (None if case % 5 == 0 else 0.0),
        passed if case % 7 else None,
        "passed" if passed else "failed",
        f"reason {'ok' if passed else 'bad'}",
        None,
        "{}",
        None if case % 2 else 10 + case,
        None,
        0.5 if case % 3 == 0 else None,
        None,
        None,
        None if case % 2 else "judge-model",
        None if case % 2 else 4,
        None,
    )


def test_rows_arriving_in_any_order_come_out_in_suite_order_with_the_documented_dtypes() -> None:
    rng = random.Random(3)
    records = [(c, r) for c in range(3 * CHUNK // 4) for r in range(2)]
    rng.shuffle(records)  # case runs finish in any order
    cols = Columns(SCORES_COLUMNS, shared=("check", "status", "reason"))
    for c, r in records:
        # the rows of one case run arrive together, turn by turn, check by check
        cols.add([score_row(c, r, t, k) for t in range(2) for k in range(2)], position=c, run=r)
    got = cols.frame()
    want = frame_from_tuples(
        [
            score_row(c, r, t, k)
            for c in range(3 * CHUNK // 4)
            for r in range(2)
            for t in range(2)
            for k in range(2)
        ],
        SCORES_COLUMNS,
    )
    pd.testing.assert_frame_equal(got, want)
    assert list(got.dtypes.astype(str)) == list(SCORES_COLUMNS.values())
    assert len(cols) == 0  # the gathered rows were let go


def test_repeated_text_is_kept_once_and_other_columns_as_given() -> None:
    cols = Columns(SCORES_COLUMNS, shared=("reason",))
    for c in range(10):
        row = list(score_row(c, 0, 0, 0))
        row[11] = "".join(["same ", "reason"])  # equal text, a new object each time
        cols.add([tuple(row)], position=c, run=0)
    frame = cols.frame()
    assert frame["reason"].tolist() == ["same reason"] * 10
    if frame["reason"].dtype.storage == "python":
        # Python storage holds the objects: one for the ten rows. (With pyarrow installed, pandas keeps text in
        # Arrow buffers instead, and there are no per-row objects to share.)
        reasons = frame["reason"].array.to_numpy()
        assert len({id(x) for x in reasons}) == 1


def test_a_bounded_table_of_shared_text() -> None:
    shared = Shared(limit=2)
    a, b = shared.many(["a" * 3, "".join(["aa", "a"])])
    assert a is b
    list(shared.many(["b"]))  # the table is full now
    late = "".join(["c", "c"])
    again = list(shared.many([late, "".join(["c", "c"])]))
    assert again[0] is late and again[1] is not late  # full: new texts are kept as given
    assert list(shared.many([None, 3, "".join(["aa", "a"])])) == [None, 3, "aaa"]
    known = "".join(["id-", "1"])
    (given,) = Shared(known={"id-1": known}).many(["id-1"])
    assert given is known  # a text held elsewhere is given back as that object


def test_values_of_another_type_are_cast_as_make_frame_casts_them() -> None:
    cols = Columns(RUNS_COLUMNS)
    row = [None] * len(RUNS_COLUMNS)
    row[:6] = ["s", "c", "c", None, "1", 0]  # a run number given as text
    row[17] = "12.5"  # latency as text
    cols.add([tuple(row)], position=0, run=0)
    frame = cols.frame()
    assert frame["run"].tolist() == [1] and str(frame["run"].dtype) == "Int64"
    assert frame["latency_ms"].tolist() == [12.5]


def test_no_rows_give_the_empty_typed_frame() -> None:
    frame = Columns(RUNS_COLUMNS).frame()
    assert frame.empty and list(frame.columns) == list(RUNS_COLUMNS)
    assert list(frame.dtypes.astype(str)) == list(RUNS_COLUMNS.values())


def test_a_shared_column_with_a_value_that_is_not_text_keeps_its_chunk_as_given() -> None:
    cols = Columns({"a": "object", "b": "string"}, shared=("a", "b"))
    cols.extend([(["not", "hashable"], "x"), ("y", "x")])
    frame = cols.frame()
    assert frame["a"].tolist() == [["not", "hashable"], "y"] and frame["b"].tolist() == ["x", "x"]


def test_text_of_another_type_and_missing_chunks_come_back_in_order() -> None:
    # a chunk with a number in a text column takes the cast path; an all-missing chunk the short one
    cols = Columns({"t": "string", "n": "Int64", "f": "float64", "b": "boolean"})
    cols.add([("a", 1, 0.5, True), (None, None, None, None)], position=1, run=0)
    cols.add([(5, "2", "1.5", False)], position=0, run=0)
    cols.add([(None, None, None, None)], position=2, run=0)
    frame = cols.frame()
    assert (
        frame["t"].iloc[0] == "5"
        and frame["t"].iloc[1] == "a"
        and frame["t"].isna().tolist()[2:] == [True, True]
    )
    assert frame["n"].tolist()[:2] == [2, 1] and frame["n"].isna().tolist()[2:] == [True, True]
    assert frame["f"].tolist()[:2] == [1.5, 0.5] and frame["f"].isna().tolist()[2:] == [True, True]
    assert frame["b"].tolist()[:2] == [False, True] and frame["b"].isna().tolist()[2:] == [True, True]
    assert list(frame.dtypes.astype(str)) == ["string", "Int64", "float64", "boolean"]


def test_a_column_missing_for_whole_chunks_before_its_first_value_keeps_every_row_in_place() -> None:
    # the first value comes two chunks in: the missing rows before it are kept as a count, then written out
    n = 2 * CHUNK + 10
    rows = [
        (f"t{i}", i, i / 2, i % 2 == 0) if i >= 2 * CHUNK + 3 else (None, None, None, None) for i in range(n)
    ]
    cols = Columns({"t": "string", "n": "Int64", "f": "float64", "b": "boolean"})
    for i in reversed(range(n)):  # out of suite order, so the reordering path is taken too
        cols.add([rows[i]], position=i, run=0)
    got = cols.frame()
    pd.testing.assert_frame_equal(got, frame_from_tuples(rows, dict(got.dtypes.astype(str))))
    assert got["t"].isna().sum() == 2 * CHUNK + 3 and got["n"].iloc[-1] == n - 1


_MISSING_THROUGHOUT = """
from evalnb.results._columns import CHUNK, Columns

def resident_mb():
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(row for row in status if row.startswith("VmRSS"))
    return int(line.split()[1]) / 1024

schema = {"t": "string", "u": "string", "n": "Int64"}
warm = Columns(schema)  # pandas and pyarrow imported and their arrays made once, as in a notebook that ran
warm.extend([(None, "x", 1)] * 10)
warm.frame()
n = 2_000_000
cols = Columns(schema)
before = resident_mb()
for start in range(0, n, CHUNK):
    cols.extend([(None, None, None)] * min(CHUNK, n - start))
frame = cols.frame()
grown = resident_mb() - before
assert len(frame) == n and frame["t"].isna().all() and frame["u"].isna().all() and frame["n"].isna().all()
print(grown)
"""


def test_columns_missing_throughout_cost_no_resident_memory() -> None:
    # 2M rows of four all-missing columns took 9 bytes a row each (offsets or values, and a byte saying
    # missing): ~70 MB; now the text is zero pages never touched, and the numbers keep their mask byte only.
    # Measured in a process of its own: the test process's resident memory also moves with what the rest of
    # the suite left in it (30 MB there, beside the whole suite, for 3 MB alone).
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _MISSING_THROUGHOUT], capture_output=True, text=True, timeout=120, check=True
    )
    grown = float(done.stdout.split()[-1])
    # what is left: the Int64 mask, 2 MB (49 MB with the buffers before)
    print(f"\n2,000,000 rows missing throughout: {grown:.1f} MB resident")
    assert grown < 25, f"{grown:.0f} MB resident for 2,000,000 rows"


def test_a_buffer_grown_many_times_keeps_its_bytes() -> None:
    from evalnb.results._columns import _Grown

    buffer = _Grown()
    written = bytearray()
    rng = random.Random(5)
    for i in range(300):
        piece = bytes([i % 251]) * rng.randrange(1, 20_000)
        buffer.extend(piece)
        written += piece
    assert bytes(buffer.take()) == bytes(written)
    assert bytes(buffer.take()) == b""  # taken: the buffer starts again empty


def test_no_room_for_a_buffer_is_running_out_of_memory_not_a_file_error() -> None:
    # docs/results.md: a run whose columns find no room stops as one that ran out of memory (what finished is
    # counted and saved), not with the OSError "[Errno 12] Cannot allocate memory" of the map
    code = (
        "import resource\n"
        "from evalnb.results._columns import _Grown\n"
        "buffer = _Grown()\n"
        "buffer.extend(b'x' * 1000)\n"
        "limit = 1 << 30\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "try:\n"
        "    buffer.extend(b'y' * (1 << 20))\n"
        "    buffer._grow(2 << 30)\n"
        "except MemoryError as exc:\n"
        "    print('MemoryError', exc)\n"
        "    taken = buffer.take()\n"
        "    print(bytes(taken[:3]), len(taken))\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "MemoryError no memory for 2,147,483,648 bytes of the run's columns",
        f"b'xxx' {1000 + (1 << 20)}",  # what was written before is kept
    ], done.stdout
