"""Running suites: ``run`` / ``run_async`` / ``rescore``, and the recorder protocol of ``run(recorders=...)``.

The data flow: a Suite and the agents go into a run job (``evalnb.running._case_run``); an executor
(:mod:`evalnb.executors`, local asyncio by default) runs its case runs, each one a :class:`CaseRunRecord`;
records go to the recorders (:class:`Recorder`: the Result's, a store's, yours); the Result comes back.

Example::

    result = evalnb.run(evalnb.examples.path("tasks"), my_agent, runs=1)
    again = evalnb.rescore(result, judge="heuristic")
"""

from __future__ import annotations

from evalnb._lazy import homes
from evalnb.results._recorders import Prior, Recorder, RunInfo
from evalnb.results._records import CaseRunRecord, TurnRecord
from evalnb.running._api import run, run_async
from evalnb.running._budget import Budget
from evalnb.running._options import RunOptions
from evalnb.running._rescore import rescore, rescore_async
from evalnb.running._stopping import StopRule

__all__ = [
    "Budget",
    "CaseRunRecord",
    "Prior",
    "Recorder",
    "RunInfo",
    "RunOptions",
    "StopRule",
    "TurnRecord",
    "rescore",
    "rescore_async",
    "run",
    "run_async",
]

homes(__name__, globals(), __all__)  # reprs and docs name the public path
