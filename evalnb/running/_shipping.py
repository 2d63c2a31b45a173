"""What travels to the workers of a cluster executor: the job, serialised once, and the checks it uses.

A :class:`~evalnb.running._case_run.RunJob` holds live things: agents, the judge, the data source, and the suite's
checks of yours, registered in this process. :func:`pack` turns them into bytes with cloudpickle (as Ray does:
functions, lambdas and closures travel by value when they cannot be imported by name); :func:`unpack` turns the
bytes back into a job on a worker. What makes connections makes them again where it runs: the agents and judges
of evalnb open their HTTP sessions per event loop (``evalnb.chat._session``), a ``Command`` starts its program
wherever it is called, and a data source re-opens from what it was opened from (``evalnb.data._sources.Source``).

Your checks (``evalnb.checks.register`` / ``check``) live in this process's registry, which a worker does not
have: the registrations the suite names travel with the job and are installed on the worker before it runs.

Something that cannot be serialised (a live socket, a lock, an event loop, an open file) is a ``ConfigError``
before anything runs, naming the object and where it sits (``agent 'default': fn -> closure 'conn' ->
socket``), so that it can be made on the worker instead.

Example::

    payload = pack(job)            # ConfigError naming what cannot travel
    job = unpack(payload)          # on a worker
"""

from __future__ import annotations

import contextlib
import io
import pickle
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from evalnb._usercode import FILE_MODULE_PREFIX
from evalnb.checks import _registry as registry
from evalnb.errors import ConfigError
from evalnb.running._case_run import RunJob

__all__ = ["Packed", "culprit", "pack", "unpack"]

_DEPTH = 12
"""How deep :func:`culprit` looks for the object that cannot be serialised."""


@dataclass
class Packed:
    """A job ready to travel.

    Attributes:
        payload: the serialised job and the registrations of the checks of yours it uses.
        endpoints: whether an agent or the judge calls an OpenAI-compatible endpoint (its rate limit is then
            shared by the workers).
        checks: the names of the checks of yours that travel with it.
    """

    payload: bytes
    endpoints: bool = False
    checks: list[str] = field(default_factory=list)


def _cloudpickle() -> Any:
    try:
        import cloudpickle
    except ImportError:
        from ray import cloudpickle  # Ray vendors it; the Ray executor is what ships jobs
    return cloudpickle


def _pickler(buffer: io.BytesIO) -> Any:
    """A cloudpickle pickler that notes whether it met an OpenAI-compatible chat client."""
    from evalnb.chat._client import ChatClient

    base = _cloudpickle().Pickler

    class Packer(base):  # type: ignore[misc,valid-type]
        endpoints = False

        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, ChatClient):
                self.endpoints = True
            return super().reducer_override(obj)

    return Packer(buffer, protocol=pickle.HIGHEST_PROTOCOL)


def _user_checks(job: RunJob) -> dict[str, registry.CheckDef]:
    """The registrations of the checks of yours the suite names (a worker's registry lacks them)."""
    out: dict[str, registry.CheckDef] = {}
    for case in job.suite.cases:
        for turn in case.turns:
            for spec in turn.checks:
                name = getattr(spec, "check", None) if getattr(spec, "type", None) == "custom" else None
                if name is not None and name not in out:
                    hit = registry.user_definition(name)
                    if hit is not None:  # an unknown name scores as it does locally (the check says so)
                        out[name] = hit
    return out


def pack(job: RunJob) -> Packed:
    """Serialise ``job`` (and the checks of yours it uses) for the workers.

    Raises:
        ConfigError: naming the object that cannot be serialised and where it sits in the job.
    """
    checks = _user_checks(job)
    buffer = io.BytesIO()
    pickler = _pickler(buffer)
    with _files_by_value():
        try:
            pickler.dump((job, checks))
        except Exception as exc:
            raise ConfigError(_unshippable(job, checks, exc)) from None
    return Packed(payload=buffer.getvalue(), endpoints=bool(pickler.endpoints), checks=sorted(checks))


@contextlib.contextmanager
def _files_by_value() -> Iterator[None]:
    """Code loaded from a file (``--agent path/to/file.py:fn``) travels by value: a worker cannot import the
    module evalnb named it by (``evalnb._usercode``), and its folder may not exist there."""
    cloudpickle = _cloudpickle()
    modules = [m for name, m in list(sys.modules.items()) if name.startswith(FILE_MODULE_PREFIX)]
    for module in modules:
        cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        for module in modules:
            with contextlib.suppress(ValueError):
                cloudpickle.unregister_pickle_by_value(module)


def unpack(payload: bytes) -> RunJob:
    """The job :func:`pack` serialised, with its checks installed in this process's registry."""
    job, checks = pickle.loads(payload)
    registry.install(checks)
    assert isinstance(job, RunJob)
    return job


# -- naming what cannot travel ------------------------------------------------------------------------


def _parts(job: RunJob, checks: dict[str, registry.CheckDef]) -> Iterator[tuple[str, Any]]:
    for route, agent in job.routes.items():
        yield f"agent {route!r}", agent
    yield "the judge", job.judge
    yield "the data source", job.data
    for name, definition in checks.items():
        yield f"check {name!r}", definition.source or definition.fn
    yield "the suite", job.suite


def _unshippable(job: RunJob, checks: dict[str, registry.CheckDef], exc: Exception) -> str:
    for label, obj in _parts(job, checks):
        found = culprit(obj)
        if found is not None:
            path, leaf, why = found
            where = f"{label}: {' -> '.join(path)}" if path else label
            return (
                f"{where} is a {_kind(leaf)} that cannot be sent to the workers ({why}); make it where it is "
                "used (inside the agent or check, on its first call) or pass what it is made from, or run "
                "with the local executor"
            )
    return f"the run cannot be sent to the workers: {type(exc).__name__}: {exc}"


def _kind(obj: Any) -> str:
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _dumps(obj: Any) -> str | None:
    """Why ``obj`` cannot be serialised, or None when it can."""
    try:
        _cloudpickle().dumps(obj)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def culprit(obj: Any) -> tuple[list[str], Any, str] | None:
    """The innermost part of ``obj`` that cannot be serialised: ``(path, object, reason)``, or None.

    The path names attributes, items, closure variables and globals a function uses, from ``obj`` down.

    Example::

        culprit({"conn": socket.socket()})
        # (["['conn']"], <socket.socket ...>, "TypeError: cannot pickle 'socket' object")
    """
    why = _dumps(obj)
    if why is None:
        return None
    seen: set[int] = set()
    path: list[str] = []
    while len(path) < _DEPTH:
        seen.add(id(obj))
        for name, child in _children(obj):
            if id(child) in seen:
                continue
            child_why = _dumps(child)
            if child_why is not None:
                path.append(name)
                obj, why = child, child_why
                break
        else:
            break  # no part of it fails alone: it is the culprit
    return path, obj, why


def _children(obj: Any) -> Iterator[tuple[str, Any]]:
    """The parts cloudpickle serialises ``obj`` from, with a readable name each."""
    import functools
    import types

    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"[{k!r}]", v
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield f"[{i}]", v
        return
    if isinstance(obj, functools.partial):
        yield "func", obj.func
        yield from ((f"args[{i}]", a) for i, a in enumerate(obj.args))
        yield from ((f"keywords[{k!r}]", v) for k, v in obj.keywords.items())
        return
    if isinstance(obj, types.MethodType):
        yield "__self__", obj.__self__
        yield "__func__", obj.__func__
        return
    if isinstance(obj, types.FunctionType):
        code = obj.__code__
        for name, cell in zip(code.co_freevars, obj.__closure__ or (), strict=False):
            try:
                yield f"closure {name!r}", cell.cell_contents
            except ValueError:  # an empty cell
                continue
        for name in code.co_names:
            if name in obj.__globals__:
                yield f"global {name!r}", obj.__globals__[name]
        return
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        for k, v in state.items():
            yield f".{k}", v
    for slot in _slots(type(obj)):
        if hasattr(obj, slot):
            yield f".{slot}", getattr(obj, slot)


def _slots(kind: type) -> list[str]:
    out: list[str] = []
    for klass in kind.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        out += (
            [slots] if isinstance(slots, str) else [s for s in slots if s not in ("__dict__", "__weakref__")]
        )
    return out
