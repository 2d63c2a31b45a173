"""Runs that may stop early: the cases in batches, and a rule asked after each batch whether to go on.

The runner owns the loop; what decides comes in through :class:`StopRule`, a small protocol (the sequential
gate of ``evalnb.comparison`` is one, which :func:`as_stop_rule` builds for ``run(..., baseline=,
stop="decided")``; a budget would be another, asked at the same point). The
rule says in which order the cases run and how they are cut into batches, sees every record as it arrives
(the ones a resumed run already had first), and after each whole batch says whether the run stops. When it
does, the case runs not run are recorded as ``skipped`` with the rule's reason, in the Result and the store
alike: the run is complete, it decided with fewer calls. Every batch is finished before the rule is asked, so
no case run in flight is wasted (docs/comparison.md, "Deciding with fewer cases").

Example::

    class FirstBatchOnly:
        name = "first-batch"
        def batches(self, suite, runs): return [suite.cases[:5], suite.cases[5:]]
        def begin(self, suite, prior): pass
        def record(self, record): pass
        def decided(self): return "skipped: one batch was enough"
        def info(self): return {}
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Container, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from evalnb.results import Result
    from evalnb.results._records import CaseRunRecord
    from evalnb.suite import Case, Suite

__all__ = ["StopRule", "as_stop_rule", "run_in_batches"]


@runtime_checkable
class StopRule(Protocol):
    """Decides, after each batch of cases, whether a run goes on (see the module docstring)."""

    name: str

    def batches(self, suite: Suite, runs: int | None) -> Sequence[Sequence[Case]]:
        """The cases in the order they run, cut into batches (every case of the suite once)."""
        ...

    def begin(self, suite: Suite, prior: Result | None) -> None:
        """Called once before the first batch, with what a resumed run already holds."""
        ...

    def record(self, record: CaseRunRecord) -> None:
        """Every finished case run, as it arrives."""
        ...

    def decided(self) -> str | None:
        """After a whole batch: the reason to stop (the skipped rows' reason), or ``None`` to go on."""
        ...

    def info(self) -> dict[str, Any]:
        """What the run's meta keeps under the rule's ``name`` (JSON-able)."""
        ...


Execute = Callable[[Iterator[tuple[Any, int]]], Awaitable[tuple[bool, Any]]]


async def run_in_batches(
    rule: StopRule,
    suite: Suite,
    runs: int | None,
    done: Container[tuple[str, int]],
    execute: Execute,
) -> tuple[bool, Any, str | None, list[tuple[Case, int]]]:
    """Run the rule's batches one after another until it stops the run.

    ``execute(todo)`` runs some case runs and returns ``(interrupted, failure)`` as the runner's executor call
    does. Returns ``(interrupted, failure, reason, left)``: ``reason`` is the rule's when it stopped the run,
    ``left`` the case runs it will not run (to be recorded as skipped).
    """
    batches = [list(b) for b in rule.batches(suite, runs)]
    for i, batch in enumerate(batches):
        todo = ((case, r) for case in batch for r in range(_runs(case, runs)) if (case.id, r) not in done)
        interrupted, failed = await execute(todo)
        if interrupted or failed is not None:
            return interrupted, failed, None, []
        reason = rule.decided()
        if reason is not None:
            left = [
                (case, r)
                for rest in batches[i + 1 :]
                for case in rest
                for r in range(_runs(case, runs))
                if (case.id, r) not in done
            ]
            return False, None, reason, left
    return False, None, None, []


def _runs(case: Case, runs: int | None) -> int:
    return case.runs if runs is None else runs


def as_stop_rule(
    suite: Any, *, baseline: Any, stop: Any, margin: Any, confidence: float, seed: int, store: Any,
    resume: str | None,
) -> Any:  # fmt: skip
    """The stop rule of ``run(..., baseline=, stop=)``: ``None``, the caller's object, or the sequential gate of
    ``evalnb.comparison`` against ``baseline`` (a Result, or a version or run id of ``store``); resuming a run
    that ran it, the gate it started with.

    Raises:
        ConfigError: ``INVALID_VALUE`` for options that do not go together.
    """
    from evalnb.errors import ConfigError

    if stop is None and baseline is None and resume is not None:
        resumed = _resumed_rule(resume, store)
        if resumed is not None:
            return resumed
    if stop is None:
        if baseline is not None:
            raise ConfigError(
                'baseline= goes with stop="decided" (the sequential gate); to compare a full run, '
                "evalnb.compare(baseline, result)",
                code="INVALID_VALUE",
            )
        return None
    if not isinstance(stop, str):
        return stop
    if stop != "decided":
        raise ConfigError(f'stop must be "decided" or a stop rule, not {stop!r}', code="INVALID_VALUE")
    if baseline is None:
        raise ConfigError('stop="decided" needs baseline= (the Result or stored version to compare with)',
                          code="INVALID_VALUE")  # fmt: skip
    if isinstance(baseline, str):
        baseline = _stored_baseline(baseline, suite=suite, store=store, resume=resume)
    # imported only here: a run without a stop rule does not import the comparison (its start-up)
    from evalnb.comparison import Sequential

    return Sequential(baseline, margin=margin, confidence=confidence, seed=seed)


def _resumed_rule(resume: str, store: Any) -> Any:
    """The sequential gate a stored run started with, to resume it the same way (None: it had none)."""
    from evalnb.comparison import Sequential
    from evalnb.comparison._stopping import design_of
    from evalnb.errors import ConfigError
    from evalnb.store import Store

    the_store = store if isinstance(store, Store) else Store(store, create=False)
    design = design_of(the_store.load(resume))
    if design is None:
        return None
    if not design.get("baseline_run"):
        raise ConfigError(
            f"run {resume} ran the sequential gate against a baseline that is not in the store: give baseline= "
            'and stop="decided" to resume it',
            code="INVALID_VALUE",
        )
    base = the_store.load(str(design["baseline_run"]))
    return Sequential(
        base, margin=design.get("margin", 0.0), confidence=float(design.get("confidence", 0.95)),
        seed=int(design["seed"]), share=float(design.get("share", 1.0)),
    )  # fmt: skip


def _stored_baseline(label: str, *, suite: Any, store: Any, resume: str | None) -> Any:
    from evalnb.errors import ConfigError
    from evalnb.store import Store

    if store is None:
        raise ConfigError(
            f"baseline={label!r} names a stored version: give store= (an evalnb.Store or its path)",
            code="INVALID_VALUE",
        )
    the_store = store if isinstance(store, Store) else Store(store, create=False)
    from evalnb.running._setup import as_suite

    # the suite's name picks the baseline's run when a label is shared by suites (a path or DataFrame loads)
    name = as_suite(suite).name if suite is not None else None
    if name is None and resume is not None:
        name = the_store.load(resume).suite.name
    return the_store.load(label, suite=name)
