"""Checks on what a run did as a process: ``exit_code`` and ``file_exists`` (tasks spec)."""

from __future__ import annotations

from pathlib import Path, PurePath

from evalnb.checks._registry import CheckContext, Score, builtin
from evalnb.suite import ExitCodeCheck, FileExistsCheck

__all__ = ["exit_code_check", "file_exists_check"]


@builtin("exit_code", needs=())
def exit_code_check(spec: ExitCodeCheck, ctx: CheckContext) -> Score:
    # tasks spec: passes when the run's exit code equals `equals`. No exit code is not a pass: a callable
    # agent that wants this check returns `exit_code` in its dict or Response.
    code = ctx.response.exit_code
    if code is None:
        return Score.of(False, f"no exit code: the agent reported none (expected {spec.equals})")
    if code == spec.equals:
        return Score.of(True, f"exit code {code}")
    return Score.of(False, f"exit code {code}, expected {spec.equals}")


@builtin("file_exists", needs={"workdir"})
def file_exists_check(spec: FileExistsCheck, ctx: CheckContext) -> Score:
    # tasks spec: `path` is relative to the run's working directory; an absolute path (suites written for one
    # repository check those) is checked as written.
    rel = PurePath(spec.path)
    if rel.is_absolute():
        target = Path(spec.path)
        if target.is_file():
            return Score.of(True, f"{spec.path} exists")
        if target.exists():
            return Score.of(False, f"{spec.path} exists but is not a file")
        return Score.of(False, f"{spec.path} does not exist")
    workdir = ctx.workdir or ctx.request.workdir
    if workdir is None:
        return Score.degraded("file_exists needs a working directory and this run has none")
    root = Path(workdir).resolve()
    target = (root / rel).resolve()
    if target != root and root not in target.parents:
        return Score.degraded(f"path {spec.path!r} escapes the working directory")
    if target.is_file():
        return Score.of(True, f"{spec.path} exists")
    if target.exists():
        return Score.of(False, f"{spec.path} exists but is not a file")
    return Score.of(False, f"{spec.path} does not exist in the working directory")
