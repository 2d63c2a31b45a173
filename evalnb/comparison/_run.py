"""``evalnb.run`` and ``evalnb.run_async``: the runner's run, and with ``baseline=`` and ``stop="decided"`` the
sequential gate as its stop rule (docs/comparison.md, "Deciding with fewer cases").

The runner (``evalnb.running``) sits below the comparison and never imports it: the rule is built here, above
both, and handed to it through its ``StopRule`` protocol. Nothing in the package imports this module; the
top-level ``evalnb.run`` resolves to it.

Example::

    result = evalnb.run(suite, agent, baseline=v1, stop="decided", margin=0.02, seed=0)
    result.stopped_early, result.calls_saved
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalnb.comparison._stopping import Sequential
from evalnb.comparison.verdicts import Margin

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["run", "run_async"]


_SEQUENTIAL_ARGS = """
    Deciding with fewer calls (docs/comparison.md, "Deciding with fewer cases"):

        baseline: the Result to compare with, or a stored version label or run id (with ``store=``).
        stop: ``"decided"``: run the cases in a seeded random order in batches of at most 5% of the suite and
            stop once every gating check is decided ``worse`` or ``not worse`` (anytime-valid at
            ``confidence``); the case runs not run are ``skipped``. An ``evalnb.running.StopRule`` object is
            used as it is. ``None``: every case runs.
        margin: how much worse a check may get (as for ``evalnb.compare``).
        confidence: one-sided confidence of the sequential gate, over every check.
        seed: seed of the order the cases run in.
"""


def _rule(
    suite: Any, *, baseline: Any, stop: Any, margin: Margin, confidence: float, seed: int, store: Any,
    resume: str | None,
) -> Any:  # fmt: skip
    """The stop rule ``evalnb.run`` passes to the runner: ``None``, the caller's object, or the sequential
    gate against ``baseline`` (a Result, or a version or run id of ``store``)."""
    from evalnb.errors import ConfigError

    if stop is None and baseline is None and resume is not None and store is not None:
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
    return Sequential(baseline, margin=margin, confidence=confidence, seed=seed)


def _resumed_rule(resume: str, store: Any) -> Sequential | None:
    """The sequential gate a stored run started with, to resume it the same way (None: it had none)."""
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


def _stored_baseline(label: str, *, suite: Any, store: Any, resume: str | None) -> Result:
    from evalnb.errors import ConfigError
    from evalnb.store import Store

    if store is None:
        raise ConfigError(
            f"baseline={label!r} names a stored version: give store= (an evalnb.Store or its path)",
            code="INVALID_VALUE",
        )
    the_store = store if isinstance(store, Store) else Store(store, create=False)
    name = getattr(suite, "name", None)
    if name is None and suite is not None:
        from evalnb.formats import load

        name = load(suite).name
    if name is None and resume is not None:
        name = the_store.load(resume).suite.name
    return the_store.load(label, suite=name)


def run(
    suite: Any, agent: Any, *, baseline: Any = None, stop: Any = None, margin: Margin = 0.0,
    confidence: float = 0.95, seed: int = 0, **options: Any,
) -> Result:  # fmt: skip
    """``evalnb.run``: the run of ``evalnb.running.run``, and with ``baseline=`` and ``stop="decided"`` the
    sequential gate (see below).

    Example::

        result = evalnb.run(suite, agent, baseline=v1, stop="decided", margin=0.02)
        result.stopped_early, result.calls_saved
        print(evalnb.compare(v1, result).report())
    """
    from evalnb.running import run as run_all

    rule = _rule(suite, baseline=baseline, stop=stop, margin=margin, confidence=confidence, seed=seed,
                 store=options.get("store"), resume=options.get("resume"))  # fmt: skip
    return run_all(suite, agent, stop=rule, **options)


async def run_async(
    suite: Any, agent: Any, *, baseline: Any = None, stop: Any = None, margin: Margin = 0.0,
    confidence: float = 0.95, seed: int = 0, **options: Any,
) -> Result:  # fmt: skip
    """``evalnb.run_async``: the async form of :func:`run` (same arguments).

    Example::

        result = await evalnb.run_async(suite, agent, baseline=v1, stop="decided")
    """
    from evalnb.running import run_async as run_all_async

    rule = _rule(suite, baseline=baseline, stop=stop, margin=margin, confidence=confidence, seed=seed,
                 store=options.get("store"), resume=options.get("resume"))  # fmt: skip
    return await run_all_async(suite, agent, stop=rule, **options)


def _signed(wrapper: Any, inner: Any) -> None:
    """The wrapper shows the runner's arguments and documentation, then its own (help(evalnb.run))."""
    import inspect

    extra = [
        p for p in inspect.signature(wrapper).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    params = [p for p in inspect.signature(inner).parameters.values() if p.name != "stop"]
    wrapper.__signature__ = inspect.signature(inner).replace(parameters=[*params, *extra])
    wrapper.__doc__ = (inner.__doc__ or "").rstrip() + "\n" + _SEQUENTIAL_ARGS


def _sign_all() -> None:
    from evalnb.running import run as run_all
    from evalnb.running import run_async as run_all_async

    _signed(run, run_all)
    _signed(run_async, run_all_async)


_sign_all()
