"""RunMeta: a run's meta is typed (attributes) and versioned, and reads as the mapping it always was: `meta["run_id"]`,
`meta.get(...)`, `dict(meta)`, `in`; a run stored by an evalnb that wrote the meta as a plain dict loads back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import StoreError
from evalnb.formats._dataset_json import inline_suite
from evalnb.results import Result, RunMeta

SUITE = inline_suite(["say 1", "say 2"], ["1", "2"])

#: The meta of a stored run as evalnb 0.2 wrote it into the store's JSON (a plain dict; no schema_version), with
#: a key of a stop rule of the user's own.
OLD_META = {
    "agent": "callable:answer",
    "model": None,
    "judge": None,
    "started_at": "2026-01-02T03:04:05+00:00",
    "options": {"runs": 1, "concurrency": 8, "timeout": 120.0, "retries": 2, "workdir": None},
    "checks": {"ExactMatch": {"check": "ExactMatch", "options": {}}},
    "workdirs": {"keep_failed": 20, "keep_runs": 100},
    "my_rule": {"spent": 3},
    "finished_at": "2026-01-02T03:04:06+00:00",
    "elapsed_ms": 812.5,
    "interrupted": False,
    "row_order": "suite",
}


def _answer(prompt: str) -> str:
    return prompt.split()[-1]


def test_a_runs_meta_is_typed_and_reads_as_a_mapping() -> None:
    result = evalnb.run(SUITE, _answer, runs=1, progress=False)
    meta = result.meta
    assert isinstance(meta, RunMeta) and meta.schema_version == 1
    assert meta.agent == meta["agent"] and meta.judge is None and meta["judge"] is None
    assert meta.options == meta["options"] and meta.options["runs"] == 1
    assert meta.interrupted is False and meta.elapsed_ms is not None and meta.elapsed_ms > 0
    # keys of a run's meta, as before: agent, model and judge even when unknown; no run_id before it is saved
    assert "model" in meta and meta["model"] is None
    assert "run_id" not in meta and meta.get("run_id") is None and meta.get("run_id", "x") == "x"
    with pytest.raises(KeyError):
        meta["run_id"]
    plain = dict(meta)
    assert plain == meta.to_dict() and meta == plain and list(plain) == list(meta) and len(meta) == len(plain)
    assert json.loads(json.dumps(meta.to_dict())) == plain
    assert "schema_version" not in plain  # the keys every evalnb wrote, unchanged


def test_the_meta_is_read_only_and_replaced_whole() -> None:
    result = evalnb.run(SUITE, _answer, runs=1, progress=False)
    with pytest.raises(TypeError):
        result.meta["version"] = "v1"  # type: ignore[index]
    with pytest.raises(AttributeError):
        result.meta.version = "v1"  # type: ignore[misc]
    before = result.meta
    result.meta = result.meta.replace(version="v1", note="kept")
    assert (
        result.meta.version == "v1"
        and result.meta["note"] == "kept"
        and result.meta.extra == {"note": "kept"}
    )
    assert before.version is None  # the old meta did not change
    result.meta = {"agent": "a"}  # a mapping becomes a RunMeta
    assert (
        isinstance(result.meta, RunMeta) and result.meta.agent == "a" and dict(result.meta) == {"agent": "a"}
    )


def test_unknown_keys_are_kept_and_a_newer_form_is_refused() -> None:
    meta = RunMeta.from_mapping(OLD_META)
    assert meta.extra == {"my_rule": {"spent": 3}, "row_order": "suite"}
    assert meta["my_rule"] == {"spent": 3} and dict(meta) == OLD_META
    assert RunMeta.from_mapping(meta.to_dict()) == meta and RunMeta.from_mapping(None) == {}
    assert RunMeta.from_mapping({**OLD_META, "schema_version": 1}) == meta
    with pytest.raises(StoreError) as info:
        RunMeta.from_mapping({**OLD_META, "schema_version": 2})
    assert info.value.code == "UNKNOWN_RESULTS" and "upgrade evalnb" in str(info.value)


def test_a_stored_run_whose_meta_an_older_evalnb_wrote_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "evalnb.db"
    store = evalnb.Store(path)
    run = evalnb.run(SUITE, _answer, runs=1, progress=False, store=store, version="v1")
    assert run.meta.run_id is not None and run.meta.version == "v1" and run.meta["run_id"] == run.meta.run_id
    stored = json.loads(_stored_meta(path))
    assert "schema_version" not in stored and stored["options"] == run.meta.options  # the same JSON keys
    # the run as an older evalnb stored it: its meta JSON a plain dict of those keys (and one of a user's rule)
    old = {**OLD_META, "frame_dtypes": stored.get("frame_dtypes", {})}
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET meta = ?", (json.dumps(old),))
    store.engine.dispose()
    loaded = evalnb.Store(path).load("v1")
    assert isinstance(loaded.meta, RunMeta)
    assert loaded.meta.version == "v1" and loaded.meta.run_id == run.meta.run_id
    assert loaded.meta.started_at == OLD_META["started_at"] and loaded.meta["elapsed_ms"] == 812.5
    assert loaded.meta.options == OLD_META["options"] and loaded.meta.get("my_rule") == {"spent": 3}
    assert loaded.passed and loaded.summary()["pass_rate"].tolist() == run.summary()["pass_rate"].tolist()


def test_a_result_file_with_an_old_meta_reads_back(tmp_path: Path) -> None:
    result = evalnb.run(SUITE, _answer, runs=1, progress=False)
    data = json.loads(json.dumps(result.to_dict(), default=str))
    data["meta"] = dict(OLD_META)
    again = Result.from_dict(data)
    assert again.meta.agent == "callable:answer" and again.meta["my_rule"] == {"spent": 3}
    path = tmp_path / "r.json"
    result.to_json(path)
    assert evalnb.read_results(path).meta == result.meta.to_dict() | {"elapsed_ms": result.meta.elapsed_ms}


def _stored_meta(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("SELECT meta FROM runs").fetchone()[0])
