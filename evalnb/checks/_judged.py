"""Judged checks: ``llm_judge`` (tasks spec) and the 1-5 metrics Relevance, Coherence, Groundedness and
Similarity (dataset spec).

With no judge configured a judged check FAILS (api contract, tasks spec rule 4): nothing checked it, so it
cannot pass. With a judge, scoring is delegated to ``evalnb.judges.evaluate`` (imported lazily).
"""

from __future__ import annotations

from typing import Any

from evalnb.checks._registry import CheckContext, Score, builtin

NO_JUDGE_REASON = "llm judge not evaluated: this runner has no judge router"

NO_JUDGE_HINT = (
    "How to give a judge: --judge heuristic (offline word statistics, not an LLM) or --judge openai:MODEL on "
    'the command line; judge="heuristic", judge="openai:MODEL" or any f(prompt) -> str in Python; '
    "evalnb.rescore(result, judge=...) judges the same answers without calling the agent again."
)
"""What the report, the notebook scorecard and the command line say once beside :data:`NO_JUDGE_REASON`
(the reason itself stays exactly the tasks spec's)."""


async def _judged(spec: Any, ctx: CheckContext) -> Score:
    if ctx.judge is None:
        # tasks spec rule 4: exactly this reason, and never a pass.
        return Score(value=None, passed=False, reason=NO_JUDGE_REASON)
    from evalnb.judges import evaluate

    return await evaluate(spec, ctx)


for _name in ("llm_judge", "Relevance", "Coherence", "Groundedness", "Similarity"):
    builtin(_name, needs={"judge"})(_judged)
