"""Record and replay: keep every answer of a live run in a JSONL cassette, answer later runs from it.

A cassette is a text file with one JSON object per line, one line per agent call, keys sorted::

    {"agent": "OpenAIChat('gpt-4o', ...)", "hash": "9f1c...", "key": {"case": "sales-by-country",
     "history": [], "prompt": "...", "run": 0, "suite": "foodmart-sales-evals", "turn": 0},
     "recorded_at": "2026-01-05T10:00:00+00:00", "response": {"intent": "QUERY", "rows": [...], ...}, "v": 1}

An answer is keyed by suite, case, turn, run, prompt and history (the ``hash`` is over exactly those), so a
changed prompt or a different earlier answer is a miss, never a stale hit.

Files the agent wrote in the run's working directory during the call (created or modified since it started;
at most 100 files and 2 MB per call, hidden folders skipped) are stored with the answer and written back into
the working directory when replaying, so ``file_exists`` checks score the same.

Only successful answers are recorded: an error is not an answer, and replaying it would hide that the live
call failed. A call that failed while recording is a miss when replayed, so it is ``degraded`` again, with
the key named in the reason.

Writing a cassette is atomic per answer, not per file: rewriting the whole file for every answer (the way evalnb
writes its other files) would cost time growing with the cassette, and a recording killed at its 500th answer
should keep 499. So each answer is one line appended under a lock (a thread lock, plus an OS file lock
between processes), then fsynced: concurrent calls never interleave, and an interrupted recording keeps every
answer that finished. The file only ever grows by whole lines:

* a write that fails part-way (a full disk, a quota) is cut back to where the line began, and raises;
* a torn last line left by a process killed mid-write is cut off before the next line is appended (a last
  line that is whole JSON but lacks its newline, as an editor may save it, is kept and ended instead);
* when replaying, a torn last line (a recording killed and never resumed) is skipped.

Example::

    result = evalnb.run(suite, evalnb.agents.Record(my_agent, "answers.jsonl"))
    again = evalnb.run(suite, evalnb.agents.Replay("answers.jsonl"))   # no agent call at all
"""

from __future__ import annotations

import asyncio
import base64
import datetime as _dt
import decimal
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from evalnb._files import atomic_write
from evalnb._lazy import homes
from evalnb.agents._base import Agent, Request, Response, as_agent
from evalnb.errors import AgentError, ConfigError

__all__ = [
    "Record",
    "Replay",
    "request_key",
    "response_from_json",
    "response_to_json",
    "restore_files",
    "snapshot_files",
]

CASSETTE_VERSION = 1
_KEY_FIELDS = ("suite", "case", "turn", "run", "prompt", "history")
_MAX_FILES = 100
_MAX_FILE_BYTES = 2_000_000
_SKIP_DIRS = {"node_modules", "__pycache__"}
# Seconds of slack on "modified since the call started": file times come from a coarser clock.
_MTIME_SLACK = 1.0

# One lock per cassette file in this process; the OS lock below covers other processes.
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def request_key(request: Request) -> dict[str, Any]:
    """The fields that identify a call in a cassette.

    Example::

        request_key(evalnb.Request(prompt="hi", case="c1"))["case"]
        # 'c1'
    """
    return {
        "suite": request.suite,
        "case": request.case,
        "turn": request.turn,
        "run": request.run,
        "prompt": request.prompt,
        "history": [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in request.history],
    }


def key_hash(key: dict[str, Any]) -> str:
    """A short stable hash of a key (sorted keys, compact separators, UTF-8)."""
    blob = json.dumps({k: key.get(k) for k in _KEY_FIELDS}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


def _json_default(value: Any) -> Any:
    # Values agents commonly put in rows: numpy scalars, Decimals, dates, pandas timestamps.
    if hasattr(value, "item") and callable(value.item):
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def response_to_json(response: Response) -> dict[str, Any]:
    """A Response as a JSON-ready dict: ``None`` fields left out, rows as a list of dicts.

    Example::

        response_to_json(evalnb.Response(text="hi", exit_code=0))
        # {'exit_code': 0, 'text': 'hi'}
    """
    out: dict[str, Any] = {}
    for f in fields(Response):
        value = getattr(response, f.name)
        if value is None or (f.name == "meta" and not value):
            continue
        if f.name == "rows" and hasattr(value, "to_dict"):
            value = value.to_dict(orient="records")  # a DataFrame
        if f.name == "tool_calls":
            value = [call.to_dict() for call in value]  # read back by Response (a dict per ToolCall)
        out[f.name] = value
    # Through JSON once so that what is returned equals what a replay will read back.
    return json.loads(json.dumps(out, default=_json_default, ensure_ascii=False))


def response_from_json(data: dict[str, Any]) -> Response:
    """The Response a cassette line holds."""
    return Response.from_dict(data)


def snapshot_files(workdir: Path, since: float) -> dict[str, dict[str, str]]:
    """Files under ``workdir`` modified since ``since`` (epoch seconds), as ``{relpath: {"text"|"base64": ...}}``."""
    out: dict[str, dict[str, str]] = {}
    budget = _MAX_FILE_BYTES
    for root, dirs, files in os.walk(workdir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(files):
            path = Path(root) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if not path.is_file() or path.is_symlink() or st.st_mtime < since - _MTIME_SLACK:
                continue
            if len(out) >= _MAX_FILES or st.st_size > budget:
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            budget -= len(data)
            rel = path.relative_to(workdir).as_posix()
            try:
                out[rel] = {"text": data.decode("utf-8")}
            except UnicodeDecodeError:
                out[rel] = {"base64": base64.b64encode(data).decode("ascii")}
    return out


def restore_files(workdir: Path, files: dict[str, dict[str, str]]) -> None:
    """Write recorded files back under ``workdir`` (paths that would escape it are ignored)."""
    root = workdir.resolve()
    for rel, content in files.items():
        target = (root / rel).resolve()
        if root not in target.parents:
            continue
        data = (
            base64.b64decode(content["base64"]) if "base64" in content else content.get("text", "").encode()
        )
        atomic_write(target, data)


def _lock_for(path: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(str(path), threading.Lock())


def _append_line(path: Path, line: str) -> None:
    data = (line + "\n").encode("utf-8")
    with _lock_for(path):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _os_lock(fd)
            try:
                end = _end_of_whole_lines(fd)
                try:
                    view = memoryview(data)
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                    os.fsync(fd)  # a finished answer survives an interruption right after it
                except BaseException:
                    os.ftruncate(fd, end)  # never leave our own half line behind
                    raise
            finally:
                _os_unlock(fd)
        finally:
            os.close(fd)


def _end_of_whole_lines(fd: int) -> int:
    """The size of the file once it ends with a whole line: a torn tail (no newline, not JSON) is cut off."""
    size = os.fstat(fd).st_size
    if size == 0 or _read_at(fd, size - 1, 1) == b"\n":
        return size
    # Find the start of the last line, reading backwards (a line may hold megabytes of recorded files).
    start, pos, chunk = 0, size, 1 << 16
    while pos > 0:
        pos = max(0, pos - chunk)
        found = _read_at(fd, pos, min(chunk, size - pos)).rfind(b"\n")
        if found >= 0:
            start = pos + found + 1
            break
    tail = _read_at(fd, start, size - start)
    try:
        json.loads(tail)
    except ValueError:
        os.ftruncate(fd, start)
        return start
    os.write(fd, b"\n")  # a whole entry without its newline: end it, keep it
    return size + 1


def _read_at(fd: int, offset: int, n: int) -> bytes:
    # lseek + read rather than os.pread, which Windows lacks; writes go to the end anyway (O_APPEND).
    os.lseek(fd, offset, os.SEEK_SET)
    out = b""
    while len(out) < n:
        got = os.read(fd, n - len(out))
        if not got:
            break
        out += got
    return out


def _os_lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: O_APPEND writes of one line, same-process lock only
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _os_unlock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    fcntl.flock(fd, fcntl.LOCK_UN)


class Record:
    """Wrap an agent and append each of its answers to a JSONL cassette.

    Args:
        agent: any agent (a callable or an object from ``evalnb.agents``).
        path: the cassette file; created with its folder when missing, appended to when it exists (a later
            line for the same key wins when replaying).
        files: also store the files the agent wrote in the run's working directory during the call.

    Example::

        agent = Record(OpenAIChat("gpt-4o-mini"), "cassettes/kb.jsonl")
        result = evalnb.run(evalnb.examples.path("knowledge-base"), agent)
    """

    @classmethod
    def around(cls, agent: Any, path: str | os.PathLike[str], **options: Any) -> Any:
        """``agent`` recorded to ``path``; for a mapping of agents (routed by case), each of them, to the one
        cassette (``evalnb run --record``)."""
        if isinstance(agent, Mapping) and not hasattr(agent, "respond"):
            return {k: cls(v, path, **options) for k, v in agent.items()}
        return cls(agent, path, **options)

    def __init__(self, agent: Any, path: str | os.PathLike[str], *, files: bool = True) -> None:
        self.agent: Agent = as_agent(agent)
        self.path = Path(path)
        self.files = files
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.recorded = 0

    @property
    def name(self) -> str:
        return str(getattr(self.agent, "name", None) or repr(self.agent))

    def __repr__(self) -> str:
        return f"Record({self.agent!r}, {str(self.path)!r})"

    async def preflight(self) -> None:
        """The wrapped agent's start-up check, if it has one (the runner calls it before any case runs)."""
        check = getattr(self.agent, "preflight", None)
        if check is not None:
            await check()

    async def respond(self, request: Request) -> Response:
        """Call the wrapped agent; write the answer when it is one (errors pass through unrecorded)."""
        started = time.time()
        response = await self.agent.respond(request)
        if not isinstance(response, Response):  # an object agent that returned a str or dict
            from evalnb.agents._base import to_response

            response = to_response(response)
        key = request_key(request)
        entry = {
            "v": CASSETTE_VERSION,
            "key": key,
            "hash": key_hash(key),
            "agent": repr(self.agent),
            "recorded_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "response": response_to_json(response),
        }
        if self.files and request.workdir is not None and Path(request.workdir).is_dir():
            written = await asyncio.to_thread(snapshot_files, Path(request.workdir), started)
            if written:
                entry["files"] = written
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False, default=_json_default)
        # Shielded: a run timeout that lands during the write must not leave half a line behind.
        await asyncio.shield(asyncio.to_thread(_append_line, self.path, line))
        self.recorded += 1
        return response


class Replay:
    """Answer from a cassette written by :class:`Record`, calling nothing.

    Args:
        path: the cassette file.
        strict: what a call missing from the cassette does. ``False`` (default): an
            :class:`~evalnb.errors.AgentError` naming the key, so that run is ``degraded`` and the rest goes on.
            ``True``: a :class:`~evalnb.errors.ConfigError` (code ``REPLAY_MISSING``): the cassette does not
            match the suite, which is a setup problem rather than an agent failure.

    Raises:
        ConfigError: when the file does not exist or holds no readable line.

    Example::

        result = evalnb.run(suite, Replay("cassettes/kb.jsonl"))
        result.runs["error"].dropna()   # misses, each naming its key
    """

    def __init__(self, path: str | os.PathLike[str], *, strict: bool = False) -> None:
        self.path = Path(path)
        self.strict = strict
        self.entries: dict[str, dict[str, Any]] = {}
        self.skipped_lines = 0
        self.hits = 0
        self.misses: list[str] = []  # one message per missing call, each naming its key
        self._load()

    def _load(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"replay cassette not found: {self.path}") from None
        except OSError as e:
            raise ConfigError(f"replay cassette {self.path} could not be read: {e.strerror}") from None
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key, response = entry["key"], entry["response"]
                h = key_hash(key)
                response_from_json(response)  # a line we could not answer from is not an entry
            except (ValueError, KeyError, TypeError, AgentError):
                self.skipped_lines += 1  # a torn line from an interrupted recording
                continue
            self.entries[h] = {"key": key, "response": response, "files": entry.get("files") or {}}

    @property
    def name(self) -> str:
        return f"replay:{self.path.name}"

    def __repr__(self) -> str:
        return f"Replay({str(self.path)!r}, entries={len(self.entries)}, strict={self.strict})"

    def __len__(self) -> int:
        return len(self.entries)

    async def preflight(self) -> None:
        """Check at start-up that the cassette is still there and readable (it was read when built).

        Raises:
            ConfigError: when the file is gone or cannot be read.
        """
        if not self.path.is_file():
            raise ConfigError(f"replay cassette not found: {self.path}")
        if not os.access(self.path, os.R_OK):
            raise ConfigError(f"replay cassette {self.path} cannot be read (permission denied)")

    async def respond(self, request: Request) -> Response:
        """The recorded answer for this request."""
        key = request_key(request)
        h = key_hash(key)
        entry = self.entries.get(h)
        if entry is None:
            message = self._miss_message(key, h)
            self.misses.append(message)
            if self.strict:
                raise ConfigError(message, code="REPLAY_MISSING")
            raise AgentError(message, code="REPLAY_MISSING")
        self.hits += 1
        if entry["files"] and request.workdir is not None:
            restore_files(Path(request.workdir), entry["files"])
        return response_from_json(entry["response"])

    def _miss_message(self, key: dict[str, Any], h: str) -> str:
        prompt = key["prompt"] if len(key["prompt"]) <= 60 else key["prompt"][:57] + "..."
        where = (
            f"suite={key['suite']!r} case={key['case']!r} turn={key['turn']} run={key['run']} "
            f"prompt={prompt!r} history={len(key['history'])} message(s)"
        )
        near = [
            e["key"]
            for e in self.entries.values()
            if all(e["key"].get(k) == key[k] for k in ("suite", "case", "turn", "run"))
        ]
        hint = ""
        if near:
            differs = "prompt" if near[0].get("prompt") != key["prompt"] else "history"
            hint = f"; the cassette answers this case, turn and run for a different {differs}"
        return f"no recorded answer in {self.path.name} for {where} (key {h}){hint}"


# exported lazily by evalnb.agents: its public home from the start, whoever imports this module first
homes("evalnb.agents", globals(), ["Record", "Replay"])
