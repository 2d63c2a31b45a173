"""``RunMeta``: what a run records about itself (``Result.meta``), typed and versioned.

The fields are the keys docs/results.md (``meta``) lists; each is an attribute (``result.meta.run_id``) and,
for code written against the mapping, a key (``result.meta["run_id"]``, ``meta.get("judge")``,
``dict(meta)``). A key is present when its field is set (not ``None``); ``agent``, ``model`` and ``judge`` are
present in every run's meta (``None`` when unknown), ``version`` in every saved run's. Keys no field names (a
stop rule of your own, an imported log's ``inspect``) are kept in ``extra`` and read the same way.

The meta is read-only: a changed meta is a new one (``meta.replace(version="v2")``; ``result.meta = ...``).
``to_dict()`` is its JSON form, the keys a store and ``result.to_json`` write. Version 1 is the form every
evalnb so far wrote (the same keys), so stored runs and files read back unchanged; a later form says its
``schema_version`` and is migrated here when read.

Example::

    result.meta.run_id, result.meta["judge"], result.meta.get("unpriced", [])
    again = result.meta.replace(version="v2")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalnb.errors import StoreError

__all__ = ["SCHEMA_VERSION", "RunMeta"]

SCHEMA_VERSION = 1
"""The form of the meta this evalnb writes (the same keys every evalnb so far wrote)."""

_RUN_KEYS = ("agent", "model", "judge")
"""Present in a run's meta (one with ``started_at``) also when unknown (``None``), as a run always wrote them."""


@dataclass(frozen=True, kw_only=True, slots=True, eq=False)
class RunMeta(Mapping[str, Any]):
    """What a run records about itself: read as attributes or as a read-only mapping.

    Attributes:
        agent: the agent's name, or ``{agent_id: name}`` for routed agents.
        model: the first model an answer named.
        judge: the judge's name.
        started_at: when the run started (ISO 8601, UTC).
        finished_at: when it finished (ISO 8601, UTC).
        elapsed_ms: how long it took.
        interrupted: whether it was interrupted (Ctrl-C, an exhausted budget: resumable when stored).
        options: the run options recorded (``runs``, ``concurrency``, ``timeout``, ``retries``, ``workdir``;
            ``replace`` and ``priced_models`` when used).
        checks: every ``check_id`` with its check name and options.
        run_id: the stored run's id (a saved run).
        version: the version label it was saved under (a saved run; ``None`` without one).
        executor: the executor's name when not ``local``.
        executor_info: what the executor reports (batches, nodes ...).
        workdirs: how many working directories are kept (``keep_failed``, ``keep_runs``).
        not_started: case runs an interrupted run neither ran nor listed as skipped.
        unpriced: the models without a price (docs/costs.md).
        budget: what a budget allowed and spent, and why it stopped.
        sequential: the sequential gate's design and decision (docs/comparison.md).
        stopped_early: whether a stop rule stopped the run before every case run ran.
        calls_saved: the case runs a stop rule saved.
        rescored_at: when ``evalnb.rescore`` judged the answers again.
        source: where an imported result came from (``"inspect"``).
        extra: every other key.
        schema_version: the form of the meta (:data:`SCHEMA_VERSION`); not a key.

    Example::

        meta = RunMeta(agent="bot", judge=None, started_at="2026-01-01T00:00:00+00:00")
        meta["agent"], meta.judge, dict(meta)["judge"]      # ('bot', None, None)
    """

    agent: str | Mapping[str, str] | None = None
    model: str | None = None
    judge: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    elapsed_ms: float | None = None
    interrupted: bool | None = None
    options: Mapping[str, Any] | None = None
    checks: Mapping[str, Mapping[str, Any]] | None = None
    run_id: str | None = None
    version: str | None = None
    executor: str | None = None
    executor_info: Mapping[str, Any] | None = None
    workdirs: Mapping[str, Any] | None = None
    not_started: int | None = None
    unpriced: list[str] | None = None
    budget: Mapping[str, Any] | None = None
    sequential: Mapping[str, Any] | None = None
    stopped_early: bool | None = None
    calls_saved: int | None = None
    rescored_at: str | None = None
    source: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    # -- construction -------------------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> RunMeta:
        """A RunMeta from its mapping form (a stored run's JSON meta, ``to_dict()``, an older evalnb's dict).

        Raises:
            StoreError: ``UNKNOWN_RESULTS`` for a ``schema_version`` newer than this evalnb reads.

        Example::

            RunMeta.from_mapping({"run_id": "3f2a", "judge": "heuristic", "note": 1}).extra   # {'note': 1}
        """
        if isinstance(data, RunMeta):
            return data
        given = dict(data or {})
        version = given.pop("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSION:
            raise StoreError(
                f"the run's meta is of schema_version {version!r}; this evalnb reads up to "
                f"{SCHEMA_VERSION}: upgrade evalnb to read it",
                code="UNKNOWN_RESULTS",
            )
        known = {k: given.pop(k) for k in _FIELDS if k in given}
        return cls(**known, extra=given)

    def replace(self, **changes: Any) -> RunMeta:
        """A copy with ``changes`` (fields or extra keys; a field set to ``None`` is unset).

        Example::

            saved = meta.replace(run_id="3f2a", version="v1")
        """
        return RunMeta.from_mapping({**self.to_dict(), **changes})

    # -- the mapping view ---------------------------------------------------------------------------

    def _shown(self) -> Iterator[str]:
        for name in _FIELDS:
            if getattr(self, name) is not None or self._null_shown(name):
                yield name
        yield from self.extra

    def _null_shown(self, name: str) -> bool:
        if name in _RUN_KEYS:
            return self.started_at is not None
        return name == "version" and self.run_id is not None

    def __getitem__(self, key: str) -> Any:
        if key in _FIELD_SET:
            value = getattr(self, key)
            if value is None and not self._null_shown(key):
                raise KeyError(key)
            return value
        return self.extra[key]

    def __iter__(self) -> Iterator[str]:
        return self._shown()

    def __len__(self) -> int:
        return sum(1 for _ in self._shown())

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str) and key in _FIELD_SET:
            return getattr(self, key) is not None or self._null_shown(key)
        return key in self.extra

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the keys present, as a plain dict (what a store and ``result.to_json`` write).

        Example::

            json.dumps(result.meta.to_dict(), default=str)
        """
        return {key: self[key] for key in self._shown()}

    def __repr__(self) -> str:
        return f"RunMeta({self.to_dict()!r})"


_FIELDS = tuple(f.name for f in dataclasses.fields(RunMeta) if f.name not in ("extra", "schema_version"))
_FIELD_SET = frozenset(_FIELDS)
