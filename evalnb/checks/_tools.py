"""Checks on the tool calls an agent reported (published dataset schema 1.11): ``ToolCallSelection`` and
``ToolCallExecution``.

Both read ``Response.tool_calls``. ``None`` there means the agent reports no tool calls at all: the evidence is
unavailable, so the check cannot give a verdict (degraded; the dataset output document writes it as an errored
score with code ``toolCallEvidenceIndeterminate``). ``[]`` is an authoritative observation that no tool was
called. Both score 1.0 on pass and 0.0 on fail (published schema: ToolCallEvaluatorScore, threshold 1.0), and the
reason names every unmet expectation.
"""

from __future__ import annotations

from collections import Counter

from evalnb.agents._base import ToolCall
from evalnb.checks._registry import CheckContext, Score, builtin
from evalnb.suite import ToolCallExecutionCheck, ToolCallSelectionCheck, ToolRef

__all__ = ["NO_TOOL_EVIDENCE", "tool_call_execution_check", "tool_call_selection_check"]

NO_TOOL_EVIDENCE = (
    "{check} not evaluated: tool-call evidence indeterminate, the agent reports no tool calls "
    "(Response.tool_calls is None; an agent that made none returns [])"
)


def _of(calls: list[ToolCall], ref: ToolRef) -> list[ToolCall]:
    return [c for c in calls if c.matches(ref.plugin_name, ref.function_name)]


@builtin("ToolCallSelection", needs=())
def tool_call_selection_check(spec: ToolCallSelectionCheck, ctx: CheckContext) -> Score:
    calls = ctx.response.tool_calls
    if calls is None:
        return Score.degraded(NO_TOOL_EVIDENCE.format(check="ToolCallSelection"))
    # published schema: repeated identities are de-duplicated; selection asserts which tools, not how often
    expected = list(dict.fromkeys(c.tool.label for c in spec.calls))
    refs = {c.tool.label: c.tool for c in spec.calls}
    missing = [name for name in expected if not _of(calls, refs[name])]
    extra: list[str] = []
    if not spec.allow_additional_calls:
        extra = list(dict.fromkeys(c.tool for c in calls if not any(_of([c], r) for r in refs.values())))
    selected = ", ".join(dict.fromkeys(c.tool for c in calls)) or "none"
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"not selected: {', '.join(missing)}")
        if extra:
            parts.append(
                f"selected beyond the expected (allow_additional_calls is false): {', '.join(extra)}"
            )
        return Score.of(False, f"{'; '.join(parts)} (selected: {selected})")
    more = "" if spec.allow_additional_calls else ", and nothing else"
    return Score.of(True, f"selected {', '.join(expected)}{more} (selected: {selected})")


@builtin("ToolCallExecution", needs=())
def tool_call_execution_check(spec: ToolCallExecutionCheck, ctx: CheckContext) -> Score:
    calls = ctx.response.tool_calls
    if calls is None:
        return Score.degraded(NO_TOOL_EVIDENCE.format(check="ToolCallExecution"))
    # published schema: repeating an identity requires that many successful executions
    need = Counter(c.tool.label for c in spec.calls)
    refs = {c.tool.label: c.tool for c in spec.calls}
    short: list[str] = []
    met: list[str] = []
    for name, n in need.items():
        mine = _of(calls, refs[name])
        ok = sum(c.status == "succeeded" for c in mine)
        if ok >= n:
            met.append(f"{name} x{ok}")
            continue
        others = Counter(c.status for c in mine if c.status != "succeeded")
        seen = "".join(f", {k} {v}" for k, v in sorted(others.items()))
        short.append(f"{name}: {ok} successful execution(s) of {n} expected{seen}")
    if short:
        return Score.of(False, "; ".join(short))
    return Score.of(True, f"executed successfully: {', '.join(met)}")
