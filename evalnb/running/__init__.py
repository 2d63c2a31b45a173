"""Running suites: ``run`` / ``run_async`` / ``rescore``, run records, recorders and executors.

The data flow: a Suite and the agents go into a :class:`~evalnb.running._case_run.RunJob`; an executor
(:mod:`~evalnb.running._executors`, local asyncio by default) runs its case runs, each one a
:class:`~evalnb.results._records.CaseRunRecord`; records go to the recorders
(:mod:`~evalnb.results._recorders`: the Result, a store); the Result comes back.

Example::

    result = evalnb.run(evalnb.examples.path("tasks"), my_agent, runs=1)
    again = evalnb.rescore(result, judge="heuristic")
"""

from __future__ import annotations

from evalnb.results._recorders import Prior, Recorder, ResultRecorder, RunInfo
from evalnb.results._records import CaseRunRecord, TurnRecord
from evalnb.running._api import run, run_async
from evalnb.running._case_run import RunJob, Worker
from evalnb.running._executors import Executor, Local, as_executor, register_executor
from evalnb.running._loops import run_blocking
from evalnb.running._rescore import rescore, rescore_async

__all__ = [
    "CaseRunRecord",
    "Executor",
    "Local",
    "Prior",
    "Recorder",
    "ResultRecorder",
    "RunInfo",
    "RunJob",
    "TurnRecord",
    "Worker",
    "as_executor",
    "register_executor",
    "rescore",
    "rescore_async",
    "run",
    "run_async",
    "run_blocking",
]
