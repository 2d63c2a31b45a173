"""Inspect AI logs (``.eval`` and ``.json``) read into a :class:`~evalnb.results.Result` (docs/results.md, Inspect
AI logs), with the standard library and pydantic: Inspect itself is never imported.

One case per sample id, one run per epoch, the model's answer as the response, each scorer a check (a
dict-valued score one check per key), token usage and the model per run, a sample that errored a degraded run.
Score values become numbers as Inspect's ``value_to_float`` makes them: ``C`` 1.0, ``P`` 0.5, ``I`` and ``N``
0.0, numbers as they are, ``yes`` / ``true`` 1.0, ``no`` / ``false`` 0.0. A score passes at full credit (1.0).
"""

from __future__ import annotations

import json
import math
import struct
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evalnb._validation import describe
from evalnb.errors import StoreError
from evalnb.results import Result
from evalnb.results._frames import RUNS_COLUMNS, SCORES_COLUMNS, make_frame
from evalnb.suite import Case, CheckSpec, CustomCheck, Message, Suite, Turn

__all__ = ["LOG_VERSIONS", "read_inspect_log", "value_to_float"]

LOG_VERSIONS = (1, 2)
"""The Inspect log file format versions this reader reads (``EvalLog.version``)."""

CORRECT, INCORRECT, PARTIAL, NOANSWER = "C", "I", "P", "N"


class _Loose(BaseModel):
    # Logs gain keys with every Inspect release: the parts read here are typed, the rest is kept as it is.
    model_config = ConfigDict(extra="allow")


class _Score(_Loose):
    value: Any = None
    answer: Any = None
    explanation: str | None = None


class _Sample(_Loose):
    id: int | str
    epoch: int = 1
    input: Any = ""
    target: Any = ""
    output: dict[str, Any] = {}
    scores: dict[str, _Score] | None = None
    metadata: dict[str, Any] | None = None
    model_usage: dict[str, dict[str, Any]] | None = None
    total_time: float | None = None
    working_time: float | None = None
    error: dict[str, Any] | None = None


class _Eval(_Loose):
    task: str
    model: str = ""
    created: str | None = None
    run_id: str | None = None
    eval_id: str | None = None
    task_id: str | None = None
    dataset: dict[str, Any] | None = None
    scorers: list[dict[str, Any]] | None = None


class _Log(_Loose):
    version: int = 1
    status: str = "success"
    eval: _Eval
    results: dict[str, Any] | None = None
    stats: dict[str, Any] | None = None
    samples: list[_Sample] | None = None


# ------------------------------------------------------------------------------------------------------
# Values
# ------------------------------------------------------------------------------------------------------


def value_to_float(value: Any) -> tuple[float | None, str]:
    """A score value as a number, the way Inspect's ``value_to_float`` reads it, and a note when it could not.

    ``None`` / NaN is no value (Inspect leaves it unscored).

    Example::

        value_to_float("P"), value_to_float("yes"), value_to_float(3)
        # ((0.5, ''), (1.0, ''), (3.0, ''))
    """
    # The letters are compared first, as Inspect does (so True == 1.0 style matches cannot shadow them).
    if value == CORRECT:
        return 1.0, ""
    if value == PARTIAL:
        return 0.5, ""
    if value in (INCORRECT, NOANSWER):
        return 0.0, ""
    if value is None:
        return None, "no value"
    if isinstance(value, (bool, int, float)):
        x = float(value)
        return (None, "no value (NaN)") if math.isnan(x) else (x, "")
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("yes", "true"):
            return 1.0, ""
        if text in ("no", "false"):
            return 0.0, ""
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if math.isfinite(x):
            return x, ""
    return 0.0, f"Inspect reads {str(value)[:40]!r} as 0.0 (not a number)"


# ------------------------------------------------------------------------------------------------------
# Files
# ------------------------------------------------------------------------------------------------------


def _zstd(raw: bytes) -> bytes:
    # Inspect writes .eval archives with zstandard compression, which zipfile reads only from Python 3.14 on:
    # the standard library's module there, else the backport (the `inspect` extra), else the zstandard package.
    import importlib

    for name in ("compression.zstd", "backports.zstd"):
        try:
            module: Any = importlib.import_module(name)
        except ImportError:
            continue
        return bytes(module.decompress(raw))
    try:
        zstandard: Any = importlib.import_module("zstandard")
    except ImportError:
        raise ImportError(
            'this .eval log is compressed with zstandard, which this Python cannot read: pip install "evalnb[inspect]"'
        ) from None
    return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(raw))


def _member(archive: zipfile.ZipFile, fh: Any, info: zipfile.ZipInfo) -> bytes:
    if info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA):
        return archive.read(info)
    if info.compress_type != 93:  # 93: zstandard (APPNOTE 4.4.5)
        raise StoreError(
            f"{info.filename}: zip compression {info.compress_type} is unknown", code="UNKNOWN_RESULTS"
        )
    # Read the member's raw bytes past its local header, then decompress them here.
    fh.seek(info.header_offset)
    header = fh.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    fh.seek(info.header_offset + 30 + name_len + extra_len)
    return _zstd(fh.read(info.compress_size))


def _read_eval(p: Path) -> dict[str, Any]:
    with open(p, "rb") as fh, zipfile.ZipFile(fh) as archive:
        infos = {i.filename: i for i in archive.infolist()}

        def data(name: str) -> Any:
            return json.loads(_member(archive, fh, infos[name]))

        if "header.json" in infos:
            log = data("header.json")
        elif "_journal/start.json" in infos:  # a log still being written: its start, and the samples so far
            log = {**data("_journal/start.json"), "status": "started"}
        else:
            raise StoreError(f"{p}: an .eval archive without header.json", code="UNKNOWN_RESULTS")
        names = sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json"))
        log["samples"] = [data(n) for n in names]
    return dict(log)


def _read(p: Path) -> dict[str, Any]:
    if not p.exists():
        raise StoreError(f"{p}: no such file", code="RESULTS_NOT_FOUND")
    try:
        if zipfile.is_zipfile(p):
            return _read_eval(p)
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, zipfile.BadZipFile, KeyError) as exc:
        raise StoreError(f"{p}: not an Inspect AI log ({exc})", code="UNKNOWN_RESULTS") from None
    if not isinstance(data, dict) or "eval" not in data:
        raise StoreError(f"{p}: not an Inspect AI log (no 'eval' header)", code="UNKNOWN_RESULTS")
    return data


# ------------------------------------------------------------------------------------------------------
# The Result
# ------------------------------------------------------------------------------------------------------


def _content(content: Any) -> str:
    # A message's content: a text, or a list of parts whose text parts are joined.
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type", "text") == "text"
        )
    return ""


def _turn_of(sample: _Sample, checks: list[CheckSpec]) -> Turn:
    target = sample.target
    expected = " | ".join(map(str, target)) if isinstance(target, list) else (str(target) if target else None)
    if isinstance(sample.input, list):
        messages = [m for m in sample.input if isinstance(m, dict)]
        last = messages[-1] if messages else {}
        history = [
            Message(role=str(m.get("role", "user")), content=_content(m.get("content")))
            for m in messages[:-1]
        ]
        return Turn(prompt=_content(last.get("content")), expected=expected, history=history, checks=checks)
    return Turn(prompt=str(sample.input), expected=expected, checks=checks)


def _answer(sample: _Sample) -> str | None:
    out = sample.output or {}
    if isinstance(out.get("completion"), str) and (out["completion"] or not out.get("choices")):
        return str(out["completion"])
    choices = out.get("choices") or []
    if choices and isinstance(choices[0], dict):
        return _content((choices[0].get("message") or {}).get("content"))
    return None


def _usage(sample: _Sample) -> tuple[int | None, int | None]:
    usage = list((sample.model_usage or {}).values())
    if not usage and isinstance((sample.output or {}).get("usage"), dict):
        usage = [sample.output["usage"]]
    if not usage:
        return None, None
    prompt = sum(int(u.get("input_tokens") or 0) for u in usage)
    completion = sum(int(u.get("output_tokens") or 0) for u in usage)
    return prompt, completion


def _score_rows(sample: _Sample, names: list[str]) -> dict[str, tuple[float | None, bool | None, str, str]]:
    """check name -> (value, passed, status, reason) for one sample x epoch."""
    out: dict[str, tuple[float | None, bool | None, str, str]] = {}
    for scorer, score in (sample.scores or {}).items():
        parts = score.value.items() if isinstance(score.value, Mapping) else [(None, score.value)]
        for key, value in parts:
            name = scorer if key is None else f"{scorer}.{key}"
            number, note = value_to_float(value)
            why = " ".join(str(x) for x in (score.explanation, note) if x)
            shown = f"{value!r}" if not isinstance(value, str) else value
            reason = f"{shown}: {why}" if why else shown
            if number is None:
                out[name] = (None, None, "skipped", f"unscored ({note})")
            else:
                out[name] = (number, number >= 1.0, "passed" if number >= 1.0 else "failed", reason)
    for name in names:
        if name not in out:
            error = (sample.error or {}).get("message")
            reason = f"the sample errored: {error}" if error else "the scorer gave this sample no score"
            out[name] = (None, False, "degraded" if error else "skipped", reason)
    return out


def _check_names(log: _Log, samples: list[_Sample]) -> list[str]:
    names: dict[str, None] = {}
    for s in samples:
        for scorer, score in (s.scores or {}).items():
            if isinstance(score.value, Mapping):
                names.update({f"{scorer}.{k}": None for k in score.value})
            else:
                names[scorer] = None
    if not names:
        for entry in log.eval.scorers or []:
            if isinstance(entry.get("name"), str):
                names[entry["name"]] = None
    return list(names)


def read_inspect_log(path: str | Path) -> Result:
    """Read an Inspect AI log (``.eval`` or ``.json``) as a :class:`~evalnb.results.Result`.

    Such a Result compares, plots, saves to a :class:`~evalnb.Store` and loads back like one of evalnb's own runs:
    its suite (format ``inspect-log``) holds one case per sample (the input as the prompt, the target as the
    expected answer), one run per epoch, and one check per scorer (``scorer.key`` for each key of a dict-valued
    score). ``meta["inspect"]`` keeps the log's task, ids, status and the metrics Inspect computed.

    Raises:
        StoreError: ``RESULTS_NOT_FOUND`` for a missing file, ``UNKNOWN_RESULTS`` for a file that is not an Inspect
            log, ``UNSUPPORTED_LOG_VERSION`` for a log format version this evalnb does not read.

    Example::

        result = evalnb.read_inspect_log("logs/2026-12-01T23-51-44_qa-match_5shr.eval")
        result.summary()[["check", "n", "mean", "pass_rate"]]    # mean is Inspect's accuracy
    """
    p = Path(path)
    data = _read(p)
    version = data.get("version", 1)
    if version not in LOG_VERSIONS:
        raise StoreError(
            f"{p}: Inspect log format version {version!r}; this evalnb reads versions "
            f"{', '.join(map(str, LOG_VERSIONS))} (upgrade evalnb, or re-save the log with an Inspect that writes one)",
            code="UNSUPPORTED_LOG_VERSION",
        )
    try:
        log = _Log.model_validate(data)
    except ValidationError as exc:
        raise StoreError(
            f"{p}: not an Inspect AI log Inspect's version {version} would read: {describe(exc, whole='the log')}",
            code="UNKNOWN_RESULTS",
        ) from None
    return _result(log, p)


def _result(log: _Log, p: Path) -> Result:
    samples = log.samples or []
    names = _check_names(log, samples)
    checks: list[CheckSpec] = [CustomCheck(check=n) for n in names]
    task = log.eval.task
    by_id: dict[str, list[_Sample]] = {}
    for s in samples:
        by_id.setdefault(str(s.id), []).append(s)
    cases = []
    for sid, group in by_id.items():
        meta = group[0].metadata or {}
        category = meta.get("category")
        cases.append(
            Case(
                id=sid,
                name=sid,
                category=category if isinstance(category, str) else None,
                runs=len(group),
                turns=[_turn_of(group[0], checks)],
                meta={"metadata": json.loads(json.dumps(meta, default=str))},
            )
        )
    warnings = []
    if log.status != "success":
        warnings.append(f"the log's status is {log.status!r}: it may hold only some samples")
    if not samples:
        warnings.append("the log holds no samples (a header-only log): its metrics are in meta['inspect']")
    suite = Suite(name=task, format="inspect-log", cases=cases, path=str(p), warnings=warnings)
    runs, scores = _rows(log, by_id, names)
    stats = log.stats or {}
    meta = {
        "agent": log.eval.model,
        "model": log.eval.model,
        "started_at": stats.get("started_at") or log.eval.created,
        "finished_at": stats.get("completed_at"),
        "source": "inspect",
        "inspect": {
            "log": str(p),
            "version": log.version,
            "status": log.status,
            "task": task,
            "task_id": log.eval.task_id,
            "run_id": log.eval.run_id,
            "eval_id": log.eval.eval_id,
            "metrics": _metrics(log.results or {}),
        },
    }
    return Result.from_frames(
        suite=suite,
        runs=make_frame(runs, RUNS_COLUMNS),
        scores=make_frame(scores, SCORES_COLUMNS),
        meta=meta,
    )


def _rows(
    log: _Log, by_id: dict[str, list[_Sample]], names: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    runs: list[dict[str, Any]] = []
    scores: list[dict[str, Any]] = []
    for sid, group in by_id.items():
        for s in sorted(group, key=lambda x: x.epoch):
            run = s.epoch - 1
            error = (s.error or {}).get("message")
            rows = _score_rows(s, names)
            statuses = [r[2] for r in rows.values()]
            status = (
                "degraded"
                if error
                else ("failed" if "failed" in statuses or "degraded" in statuses else "passed")
            )
            prompt_tokens, completion_tokens = _usage(s)
            turn = _turn_of(s, [])
            seconds = s.total_time if s.total_time is not None else s.working_time
            base = {
                "suite": log.eval.task,
                "case_id": sid,
                "case_name": sid,
                "category": None,
                "run": run,
                "turn": 0,
            }
            runs.append(
                {
                    **base,
                    "prompt": turn.prompt,
                    "expected": turn.expected,
                    "response": _answer(s) if not error else None,
                    "status": status,
                    "error": error,
                    "latency_ms": None if seconds is None else seconds * 1000.0,
                    "model": (s.output or {}).get("model") or log.eval.model,
                    "agent": log.eval.model,
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                }
            )
            counts: dict[str, int] = {}
            for name in names:
                value, passed, st, reason = rows[name]
                counts[name] = counts.get(name, 0) + 1
                scores.append(
                    {
                        **base,
                        "check": name,
                        "check_id": name,
                        "value": value,
                        "passed": passed,
                        "status": st,
                        "reason": reason,
                        "options": "{}",
                    }
                )
    return runs, scores


def _metrics(results: Mapping[str, Any]) -> dict[str, float]:
    """``scorer/metric -> value`` of the log's results (both the older single-scorer shape and ``scores[]``)."""
    out: dict[str, float] = {}
    entries = results.get("scores")
    if not isinstance(entries, list):
        entries = [
            {
                "name": (results.get("scorer") or {}).get("name", "score"),
                "metrics": results.get("metrics") or {},
            }
        ]
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        for metric, body in (entry.get("metrics") or {}).items():
            value = body.get("value") if isinstance(body, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[f"{entry.get('name')}/{metric}"] = float(value)
    return out
