"""Tiny suites built in code, shared by the tests: a suite of cases, and a task case that passes when the answer
contains "ok"."""

from __future__ import annotations

from typing import Any

from evalnb.suite import Case, RegexCheck, Suite, Turn

__all__ = ["suite_of", "task"]


def suite_of(*cases: Case, fmt: str = "tasks-toml", name: str = "t") -> Suite:
    """A suite of ``cases`` (a TOML task suite unless ``fmt`` says otherwise)."""
    return Suite(name=name, format=fmt, cases=list(cases))


def task(
    cid: str, prompt: str | None = None, *, runs: int = 1, agent: str | None = None, checks: Any = None
) -> Case:
    """A one-turn case ``cid`` (its prompt is ``cid`` unless given), checked by ``regex "ok"`` unless ``checks``."""
    checks = checks if checks is not None else [RegexCheck(on="result", pattern="ok")]
    return Case(
        id=cid,
        name=cid,
        runs=runs,
        agent=agent,
        turns=[Turn(prompt=cid if prompt is None else prompt, checks=checks)],
    )
