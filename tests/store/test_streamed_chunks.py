"""A streamed run is written from the rows its collector gathers column by column: batches of whole case runs,
segments of typed pieces (Arrow text, masked integers), read back as the rows were."""

from __future__ import annotations

import asyncio
import sqlite3
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import evalnb
from evalnb.results import _columns
from evalnb.results._columns import Columns
from evalnb.results._frames import RUNS_COLUMNS
from evalnb.results._recorders import Batch, ResultRecorder
from evalnb.store import Store
from evalnb.store import _recorder as recorder
from evalnb.store import _segments as segments
from evalnb.store._segments import OFFLOAD, Deferred, Segment, deferred_chunk, encode_chunk
from evalnb.suite import Case, ExactMatchCheck, PartialMatchCheck, Suite, Turn

TEXTS = ["plain", "", None, "ünïcödé ✓", "a\x00nul", "x" * 3000, None, "🙂 four bytes"]


def _chunk(schema: dict[str, str], rows: list[tuple[Any, ...]]) -> Any:
    cols = Columns(schema, manual=True)
    cols.add(rows, position=0, run=0)
    chunk = cols.pieces()
    assert chunk is not None
    return chunk


def test_text_and_masked_integers_go_as_their_buffers_and_read_back() -> None:
    schema = {"t": "string", "n": "Int64", "f": "float64", "b": "boolean", "gone": "float64", "o": "object"}
    rows = [
        (
            t,
            None if i % 3 == 0 else i * 10**12,
            None if i == 2 else i / 3,
            None if i == 1 else i % 2 == 0,
            None,
            {"k": i},
        )
        for i, t in enumerate(TEXTS)
    ]
    chunk = _chunk(schema, rows)
    assert [p.kind for p in chunk.pieces] == ["text", "masked", "floats", "masked", "floats", "objects"]
    seg = Segment(encode_chunk(chunk, list(schema), schema))
    kinds = {name: span[0] for name, span in seg.spans.items()}
    assert kinds == {"t": "t", "n": "m", "f": "d", "b": "b", "gone": "c", "o": "j"}
    assert seg.column("t") == TEXTS  # the python path (what a machine without pyarrow reads)
    assert seg.text("t").to_pylist() == TEXTS  # the Arrow path, made on the segment's bytes
    assert seg.column("n") == [None if i % 3 == 0 else i * 10**12 for i in range(len(TEXTS))]
    assert pd.Series(seg.integers("n")).tolist() == [
        pd.NA if i % 3 == 0 else i * 10**12 for i in range(len(TEXTS))
    ]
    assert seg.column("gone") == [None] * len(TEXTS)
    assert seg.column("o") == [{"k": i} for i in range(len(TEXTS))]
    assert pd.Series(seg.flags("b")).tolist() == [pd.NA if i == 1 else i % 2 == 0 for i in range(len(TEXTS))]


def test_integers_without_missing_values_stay_plain_and_damaged_text_is_refused() -> None:
    schema = {"n": "Int64", "t": "string"}
    seg = Segment(encode_chunk(_chunk(schema, [(i, f"v{i}") for i in range(5)]), list(schema), schema))
    assert seg.spans["n"][0] == "q" and seg.column("n") == [0, 1, 2, 3, 4]
    kind, a, b = seg.spans["t"]
    raw = bytearray(zlib.decompress(seg.data[a:b]))
    assert raw[0] == 0  # no value missing: no validity bytes
    raw[1 + 4 * 5 : 1 + 4 * 6] = (10**6).to_bytes(4, "little")  # the last offset past the bytes there are
    bad = Segment(seg.data[:a] + zlib.compress(bytes(raw)) + seg.data[b:])
    bad.spans["t"] = (kind, a, len(bad.data) - (len(seg.data) - b))
    with pytest.raises(ValueError, match="offsets"):
        bad.column("t")


def _suite(n: int, turns: int = 1) -> Suite:
    checks = [ExactMatchCheck(), PartialMatchCheck()]
    return Suite(
        name="chunks",
        format="dataset-json",
        cases=[
            Case(
                id=f"c{i}",
                name=f"case {i}",
                category=None if i % 3 else "third",
                turns=[Turn(prompt=f"p{i} t{t}", expected=f"p{i} t{t}", checks=checks) for t in range(turns)],
            )
            for i in range(n)
        ],
    )


def test_every_batch_holds_whole_case_runs_in_each_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    # a chunk of 7 rows, cases of 3 turns x 2 checks: the frames fill at different times, and a batch is
    # flushed whole after the case run that filled one
    monkeypatch.setattr(_columns, "CHUNK", 7)
    batches: list[Batch] = []
    suite = _suite(10, turns=3)
    collector = ResultRecorder(suite)
    collector.subscribe(batches.append)

    async def agent(prompt: str) -> str:
        return prompt

    result = evalnb.run(suite, agent, progress=False, recorders=[_Into(collector)])
    assert sum(b.case_runs for b in batches) == len(suite.cases)
    for batch in batches:
        runs, scores = batch.frames[0], batch.frames[1]
        assert runs is not None and scores is not None
        keys = [_keys(chunk) for chunk in (runs, scores)]
        assert keys[0] == keys[1] and len(keys[0]) == batch.case_runs
        assert runs.n == 3 * batch.case_runs and scores.n == 6 * batch.case_runs
    ids = [v for b in batches for v in b.frames[0].pieces[1].values.to_pylist()]  # type: ignore[union-attr]
    assert sorted(ids) == sorted(result.runs["case_id"].tolist())


class _Into:
    """A recorder handing every record to a collector of the test's own (as the runner hands its own)."""

    def __init__(self, collector: ResultRecorder) -> None:
        self.collector = collector

    def begin(self, info: Any) -> None:
        return None

    def completed(self) -> None:
        return None

    def record(self, record: Any) -> None:
        self.collector.record(record)

    def finish(self, result: Any) -> None:
        self.collector.unsubscribe()


def _keys(chunk: Any) -> set[tuple[str, int]]:
    where = {name: i for i, name in enumerate(chunk.names)}
    ids = chunk.pieces[where["case_id"]].values.to_pylist()
    runs = chunk.pieces[where["run"]].values.tolist()
    return set(zip(ids, runs, strict=True))


def test_a_streamed_run_stores_its_rows_as_the_collector_gathered_them(tmp_path: Path) -> None:
    suite = _suite(300, turns=2)
    store = Store(tmp_path / "s.db")

    async def agent(prompt: str) -> str:
        return prompt if hash(prompt) % 3 else f"{prompt} ✓ other"

    result = evalnb.run(suite, agent, store=store, version="v1", progress=False, concurrency=16)
    back = store.load("v1")
    for name in ("runs", "scores"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(result, name))
    with sqlite3.connect(tmp_path / "s.db") as con:
        data = con.execute("SELECT data FROM segments WHERE frame = 'runs' ORDER BY seq0 LIMIT 1").fetchone()[
            0
        ]
    con.close()
    kinds = {name: span[0] for name, span in Segment(data).spans.items()}
    assert kinds["response"] == "t" and kinds["turn"] == "q" and kinds["latency_ms"] == "d"


def test_larger_columns_are_compressed_by_other_threads_into_the_same_bytes() -> None:
    schema = {"t": "string", "f": "float64", "s": "string"}
    rows = [(f"text {i} " * 20, i / 7, "same") for i in range(2000)]
    chunk = _chunk(schema, rows)
    with ThreadPoolExecutor(2) as pool:
        made = deferred_chunk(chunk, list(schema), schema, ("s",), pool)
        assert isinstance(made, Deferred) and made.nbytes > OFFLOAD
        assert made.result() == encode_chunk(chunk, list(schema), schema, ("s",))
        small = _chunk(schema, rows[:3])  # nothing worth a hand-over: made at once
        assert deferred_chunk(small, list(schema), schema, (), pool) == encode_chunk(
            small, list(schema), schema
        )


@pytest.mark.parametrize("fails", [False, True])
def test_a_streamed_run_with_its_columns_compressed_elsewhere_saves_every_row_or_stops_with_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    monkeypatch.setattr(segments, "OFFLOAD", 64)  # every column of some size goes to the compressing threads
    monkeypatch.setattr(_columns, "CHUNK", 64)
    if fails:
        compress = zlib.compress

        def short(data: bytes, level: int = -1) -> bytes:
            if len(data) > 50_000:
                raise RuntimeError("the compressor failed")
            return compress(data, level)

        monkeypatch.setattr(segments.zlib, "compress", short)

    async def agent(prompt: str) -> str:
        return prompt + (" " + "z" * 60_000 if fails and prompt.startswith("p150 ") else " ✓")

    store = Store(tmp_path / "s.db")
    if fails:
        with pytest.raises(RuntimeError, match="the compressor failed"):
            evalnb.run(_suite(400), agent, store=store, version="v1", progress=False, concurrency=8)
        return
    result = evalnb.run(_suite(400), agent, store=store, version="v1", progress=False, concurrency=8)
    back = store.load("v1")
    for name in ("runs", "scores"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(result, name))


def test_a_slow_run_hands_its_case_runs_to_the_writer_as_they_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # far fewer rows than a chunk: the rows reach the store within the linger, not at the run's end
    monkeypatch.setattr(recorder, "LINGER", 0.2)
    db = tmp_path / "slow.db"
    seen: list[int] = []

    async def agent(prompt: str) -> str:
        await asyncio.sleep(0.15)
        if prompt.startswith("p5 "):  # by then the first case runs are in the store
            with sqlite3.connect(db) as con:
                seen.append(
                    con.execute("SELECT COALESCE(SUM(n), 0) FROM segments WHERE frame = 'runs'").fetchone()[0]
                )
            con.close()
        return prompt

    evalnb.run(_suite(8), agent, store=Store(db), version="v1", progress=False, concurrency=1)
    assert seen and seen[0] >= 3, seen


def test_waiting_rows_are_bounded_by_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # long answers: the run waits for the writer once a few batches' bytes are pending, and every row is saved
    monkeypatch.setattr(recorder, "MAX_PENDING_BYTES", 200_000)
    monkeypatch.setattr(_columns, "CHUNK", 16)
    held: list[int] = []
    take = recorder.StoreRecorder._take

    def spy(self: recorder.StoreRecorder, batch: Batch) -> None:
        take(self, batch)
        held.append(self._pending_bytes)

    monkeypatch.setattr(recorder.StoreRecorder, "_take", spy)

    async def agent(prompt: str) -> str:
        return prompt + " " + "y" * 20_000

    store = Store(tmp_path / "b.db")
    result = evalnb.run(_suite(400), agent, store=store, version="v1", progress=False, concurrency=8)
    assert len(store.load("v1").runs) == 400 == len(result.runs)
    assert max(held) < 200_000 + 16 * 2 * 21_000  # at most one batch beyond the bound
    assert np.all(np.asarray(store.load("v1").runs["response"].str.len()) > 20_000)


def test_the_collector_loses_no_row_when_a_chunk_cannot_be_made() -> None:
    cols = Columns(RUNS_COLUMNS, manual=True)
    row = tuple(None for _ in RUNS_COLUMNS)
    cols.add([row], position=0, run=0)
    assert cols.waiting == 1
    chunk = cols.pieces()
    assert chunk is not None and cols.waiting == 1  # made, not yet kept
    cols.keep(chunk)
    assert cols.waiting == 0 and len(cols.frame()) == 1


def test_few_distinct_texts_go_as_codes_and_random_numbers_as_they_are() -> None:
    import json
    import random

    rng = random.Random(5)
    n = 3000
    statuses = [rng.choice(["passed", "failed", None, "dégradé ✓"]) for _ in range(n)]
    answers = [f"answer {rng.random()}" for _ in range(n)]
    latency = [rng.random() * 1000 for _ in range(n)]
    schema = {"status": "string", "response": "string", "latency_ms": "float64"}
    chunk = _chunk(schema, list(zip(statuses, answers, latency, strict=True)))
    seg = Segment(encode_chunk(chunk, list(schema), schema, repeated=("status", "response")))
    kinds = {name: span[0] for name, span in seg.spans.items()}
    assert kinds == {"status": "k", "response": "t", "latency_ms": "d"}  # answers are not few: as text
    assert seg.column("status") == statuses and seg.text("status").to_pylist() == statuses
    assert seg.column("response") == answers and seg.array("latency_ms").tolist() == latency
    head = json.loads(seg.data[8 : 8 + int.from_bytes(seg.data[4:8], "little")])
    stored_as_is = [entry[0] for entry in head["columns"] if entry[3:] == [0]]
    assert stored_as_is == ["latency_ms"] and seg.plain == {"latency_ms"}  # zlib would not shrink them
