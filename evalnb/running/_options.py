"""``RunOptions``: the options of a run, in one place.

``evalnb.run`` and ``run_async`` take them as keywords (or as ``options=RunOptions(...)``), the ``evalnb run``
command builds one from its flags, and the run's meta records the fields marked ``recorded``
(``result.meta.options``). An option added later is one field here: ``run``'s keywords are checked against
these fields by the tests, and everything below ``run`` reads the one object.

Example::

    options = RunOptions(concurrency=32, timeout=60.0, runs=3)
    result = evalnb.run(suite, agent, options=options)
    result.meta.options["concurrency"]     # 32
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeVar

from evalnb.running._budget import Budget
from evalnb.running._stopping import StopRule

if TYPE_CHECKING:
    from evalnb.results._recorders import Recorder
    from evalnb.typing import DataLike, JudgeLike, StoreLike

__all__ = ["RunOptions", "field_names", "one_of"]

_RECORDED = {"recorded": True}
"""A field the run's meta records (``meta.options``): what says how the run ran, as JSON."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """The options of ``evalnb.run`` / ``run_async`` (each as :func:`evalnb.run` documents it).

    Attributes:
        judge: the judge of judged checks (``None``: they fail as not evaluated).
        data: the data source of cube ``referenceQuery`` checks.
        runs: overrides every case's run count (recorded).
        concurrency: case runs in flight at once (recorded).
        timeout: seconds per agent call, ``None`` for no limit (recorded).
        retries: retries of transient agent failures and timeouts (recorded).
        cache: the judge cache (see ``evalnb.judges.as_judge``).
        progress: ``None`` a progress bar on a terminal or in a notebook; ``False`` never; ``True`` always.
        workdir: one working directory for every case run (recorded); ``None``: a fresh one each.
        create_workdir: create ``workdir`` when it does not exist.
        store: the store to save into, each case run as it finishes.
        version: the version label to save under.
        replace: replace the suite's run of that label.
        resume: the run id of an interrupted stored run to continue.
        executor: where case runs run (``None`` or ``"local"``, ``"ray"``, an executor object).
        preflight: check at start-up that the agents and the judge can be reached.
        recorders: more recorders to hand every record to.
        prices: what calls cost (a mapping of model prices or a TOML/YAML file; docs/costs.md).
        budget: an ``evalnb.Budget``: no new case run once it could be passed.
        baseline: with ``stop="decided"``: the Result, stored label or run id to decide against.
        stop: ``"decided"`` (the sequential gate) or a ``StopRule``; ``None``: every case runs.
        margin: with ``stop="decided"``: how much worse a check may get.
        confidence: with ``stop="decided"``: one-sided confidence of the gate.
        seed: with ``stop="decided"``: seed of the order the cases run in.

    Example::

        fast = RunOptions(concurrency=32, progress=False)
        evalnb.run(suite, agent, options=dataclasses.replace(fast, runs=1))
    """

    judge: JudgeLike = None
    data: DataLike = None
    runs: int | None = field(default=None, metadata=_RECORDED)
    concurrency: int = field(default=8, metadata=_RECORDED)
    timeout: float | None = field(default=120.0, metadata=_RECORDED)
    retries: int = field(default=2, metadata=_RECORDED)
    cache: Any = None
    progress: bool | None = None
    workdir: str | PathLike[str] | None = field(default=None, metadata=_RECORDED)
    create_workdir: bool = False
    store: StoreLike = None
    version: str | None = None
    replace: bool = False
    resume: str | None = None
    executor: Any = None
    preflight: bool = True
    recorders: Sequence[Recorder] = ()
    prices: Any = None
    budget: Budget | None = None
    baseline: Any = None
    stop: str | StopRule | None = None
    margin: Any = 0.0
    confidence: float = 0.95
    seed: int = 0

    @classmethod
    def of(cls, options: RunOptions | None, given: Mapping[str, Any]) -> RunOptions:
        """The options of a ``run`` call: ``options`` when given (then no keyword may differ from its
        default: the options come in one object), else the keywords ``given``.

        Raises:
            TypeError: when ``options`` is given beside keywords that set options too.

        Example::

            RunOptions.of(None, {"runs": 1}).runs     # 1
        """
        return one_of(cls, options, given)

    def recorded(self) -> dict[str, Any]:
        """The fields the run's meta records (``meta.options``), as JSON values.

        Example::

            RunOptions(runs=2).recorded()
            # {'runs': 2, 'concurrency': 8, 'timeout': 120.0, 'retries': 2, 'workdir': None}
        """
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.metadata.get("recorded"):
                value = getattr(self, f.name)
                out[f.name] = str(value) if isinstance(value, PathLike) else value
        return out


T = TypeVar("T")


def one_of(cls: type[T], options: T | None, given: Mapping[str, Any]) -> T:
    """``options`` (an instance of the dataclass ``cls``) or ``cls(**given)``: the one options object of a call
    that takes them as keywords or as ``options=``; keywords beside ``options=`` must be their defaults."""
    if options is None:
        return cls(**given)
    if not isinstance(options, cls):
        raise TypeError(f"options= takes an evalnb {cls.__name__}, not {type(options).__name__}")
    defaults = cls()
    beside = [k for k, v in given.items() if not _is_default(v, getattr(defaults, k))]
    if beside:
        raise TypeError(
            f"give the options in options= or as keywords, not both: {', '.join(beside)} given beside "
            "options= (dataclasses.replace(options, ...) makes the one object)"
        )
    return options


def _is_default(value: Any, default: Any) -> bool:
    # the defaults are None, numbers, text and (): equal values of the same type (a keyword left out of the call)
    return value is default or (type(value) is type(default) and value == default)


def field_names() -> tuple[str, ...]:
    """The names of the run options, in order (what ``run``'s keywords are)."""
    return tuple(f.name for f in dataclasses.fields(RunOptions))
