"""Build a CheckContext for one turn and response (shared by the check tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalnb.agents._base import Request, Response
from evalnb.checks._registry import CheckContext
from evalnb.suite import Case, Suite, Turn


def ctx_for(
    spec: Any,
    *,
    expected: str | None = None,
    workdir: Path | None = None,
    **response: Any,
) -> CheckContext:
    turn = Turn(prompt="q", expected=expected, checks=[spec])
    case = Case(id="c", name="c", turns=[turn])
    suite = Suite(name="s", format="dataset-json", cases=[case])
    return CheckContext(
        suite=suite,
        case=case,
        turn=turn,
        turn_index=0,
        run=0,
        request=Request(prompt="q", workdir=workdir),
        response=Response(**response),
        workdir=workdir,
    )


def score(spec: Any, **kw: Any) -> Any:
    """The check's Score, as the scoring core gets it (a check handing work off the loop is finished here)."""
    from evalnb.checks import _registry as registry

    out = registry.get(spec.type)(spec, ctx_for(spec, **kw))
    if isinstance(out, registry.Offload):
        out = out.fn(*out.args)
    return out
