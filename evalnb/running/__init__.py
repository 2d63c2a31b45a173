"""Running suites: ``run`` / ``run_async`` / ``rescore``, run records, recorders and executors.

The data flow: a Suite and the agents go into a :class:`~evalnb.running.case_run.RunJob`; an executor
(:mod:`~evalnb.running.executors`, local asyncio by default) runs its case runs, each one a
:class:`~evalnb.running.records.CaseRunRecord`; records go to the recorders
(:mod:`~evalnb.running.recorders`: the Result, a store); the Result comes back.

Example::

    result = evalnb.run(evalnb.examples.path("tasks"), my_agent, runs=1)
    again = evalnb.rescore(result, judge="heuristic")
"""

from __future__ import annotations

from evalnb.running._budget import Budget
from evalnb.running.api import run, run_async
from evalnb.running.case_run import RunJob, Worker
from evalnb.running.executors import Executor, Local, as_executor, register_executor
from evalnb.running.loops import run_blocking
from evalnb.running.recorders import Prior, Recorder, ResultRecorder, RunInfo
from evalnb.running.records import CaseRunRecord, TurnRecord
from evalnb.running.rescore import rescore, rescore_async

__all__ = [
    "Budget",
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
