"""``evaluate``: one judged check on one response, from prompt to :class:`~evalnb.checks._registry.Score`.

Rules (docs/dataset-json.md, evaluators; docs/tasks-toml.md, keys and assertions; README.md, judges):

* Relevance, Coherence, Groundedness and Similarity are integers 1..5 and pass at ``score >= threshold``;
  ``llm_judge`` is PASS or FAIL against its rubric.
* What a rubric needs and lacks (no context for Groundedness, no expected response for Similarity) fails the
  check with a reason saying so: it is not evaluated, so it cannot pass.
* An unreadable answer is asked again (a fresh prompt with a reminder); still unreadable, the check is
  ``degraded`` with the judge's raw answer in the reason. A judge that fails (HTTP errors after retries, an
  exception in a callable) makes the check ``degraded``. Never a pass, never a NaN.
* Model judges' readable answers are cached on disk; an unreadable answer is never cached.
* When the judge's answer comes with token probabilities (``JudgeReply.logprobs``), a 1..5 score also gets
  its probability-weighted value ``sum p(k) * k`` over the score tokens (G-Eval) and that distribution's
  standard deviation (``Score.weighted``, ``Score.spread``); the check passes at ``weighted >= threshold``.
  ``value`` stays the score the judge wrote. Without probabilities nothing changes.
* A judge that computes a continuous score itself beside its level (``JudgeReply.continuous``: the embedding
  judge's measure on the 1-5 scale) fills ``Score.weighted`` with it; ``spread`` stays empty and the check
  passes at ``score >= threshold``, on the level it wrote.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from evalnb._caps import cap
from evalnb._costs import add_usage
from evalnb._score import Score
from evalnb._secrets import redact_urls
from evalnb.judges._base import JudgeCache, JudgeReply, judge_prices
from evalnb.judges._rubrics import JudgePrompt, build_prompt, parse_score, parse_verdict, score_distribution

if TYPE_CHECKING:
    from evalnb.checks._registry import CheckContext

__all__ = ["evaluate", "judge_label"]

PARSE_RETRIES = 1
"""How many times an unreadable answer is asked again before the check is degraded."""


def judge_label(judge: Any) -> str:
    """What score rows and the meta name as the judge (``openai:gpt-4o-mini``, ``heuristic (not an LLM)``); a URL
    in it without password or query string."""
    label = getattr(judge, "label", None) or getattr(judge, "name", None) or type(judge).__name__
    return redact_urls(str(label))


def _response_text(ctx: CheckContext) -> str:
    r = ctx.response
    # Command agents may print their answer instead of returning a result text.
    return (r.text if r.text else r.stdout) or ""


def _missing(task: str, ctx: CheckContext) -> str | None:
    if task == "Groundedness" and not (ctx.response.context or ctx.turn.context):
        return (
            "Groundedness not evaluated: no context to check the response against "
            "(give Response.context from the agent, or a context for the item)"
        )
    if task == "Similarity" and not ctx.turn.expected:
        return "Similarity not evaluated: the item has no expected_response to compare with"
    return None


def _short(text: str, limit: int = 400) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _cache_key(judge: Any, prompt: str) -> str:
    key_of = getattr(judge, "cache_key", None)
    if key_of is not None:
        return str(key_of(prompt))
    # A Judge written against the protocol has no cache_key of its own, yet run(cache=...) gives it a cache:
    # key its answers by its label and model, as CallableJudge does.
    label = judge_label(judge)
    model = str(getattr(judge, "model", None) or label)
    return JudgeCache.key(endpoint=f"judge:{label}", model=model, prompt=prompt, options={})


async def _ask(judge: Any, prompt: JudgePrompt) -> JudgeReply:
    cache = getattr(judge, "cache", None)
    if cache is not None:
        hit = cache.get(_cache_key(judge, prompt))
        if hit is not None:
            return hit  # type: ignore[no-any-return,unused-ignore]
    reply = await judge.complete(prompt)
    if not isinstance(reply, JudgeReply):  # a Judge written against the protocol loosely
        reply = JudgeReply(text=str(reply))
    text, cut = cap(reply.text, "the judge's answer")  # a judge that never stops: its head, like an agent's
    return dataclasses.replace(reply, text=text) if cut else reply


async def evaluate(spec: Any, ctx: CheckContext, *, judge: Any = None) -> Score:
    """Score one judged check (``llm_judge`` or a 1..5 metric) with ``judge`` (default ``ctx.judge``).

    Args:
        spec: an ``LLMJudgeCheck`` or a ``JudgedMetricCheck`` from the suite.
        ctx: the check context (turn, response, conversation so far, judge).
        judge: a judge to use instead of ``ctx.judge`` (anything :func:`~evalnb.judges.as_judge` accepts).

    Returns:
        A Score with value, passed, reason, the judge's label, usage and cost; ``degraded`` when the judge
        failed or never gave a readable answer.

    Example::

        score = await evaluate(JudgedMetricCheck(type="Relevance"), ctx, judge=HeuristicJudge())
        score.judge
        # 'heuristic (not an LLM)'
    """
    from evalnb.judges._resolve import as_judge

    judge = as_judge(judge if judge is not None else ctx.judge)
    label = judge_label(judge)
    task = str(spec.type)
    missing = _missing(task, ctx)
    if missing:
        return Score(value=None, passed=False, reason=missing, judge=label)
    prompt = _prompt(task, spec, ctx)
    spend = _Spend(judge, ctx)
    raw: list[str] = []
    for attempt in range(PARSE_RETRIES + 1):
        asked = prompt if attempt == 0 else prompt.with_reminder()
        try:
            reply = await _ask(judge, asked)
        except Exception as exc:  # any judge failure is data (STYLE: failures are data)
            return Score.degraded(f"judge {label} failed: {exc}", judge=label, **spend.fields())
        spend.add(reply)
        parsed = _parse(task, reply.text, spec, reply.logprobs, reply.continuous)
        if parsed is not None:
            cache = getattr(judge, "cache", None)
            if cache is not None and not reply.cached:
                cache.put(_cache_key(judge, asked), reply)
            return _scored(parsed, reply, label, spend)
        raw.append(reply.text)
    return Score.degraded(
        f"judge {label} gave no readable answer after {len(raw)} attempt(s); raw answer: {_short(raw[-1])!r}",
        judge=label,
        **spend.fields(),
    )


def _prompt(task: str, spec: Any, ctx: CheckContext) -> JudgePrompt:
    """The judge's prompt for one check on one turn's answer."""
    return build_prompt(
        task,
        question=ctx.turn.prompt,
        response=_response_text(ctx),
        context=ctx.response.context or ctx.turn.context,
        expected=ctx.turn.expected,
        rubric=getattr(spec, "rubric", None),
        conversation=ctx.conversation or ctx.request.history,
    )


class _Spend:
    """What one judged check cost, over its attempts (docs/costs.md): the judge's own prices first, then the
    run's; every attempt's usage is added, so an answer asked again costs twice; a call whose price is unknown
    makes the total unknown (NA, never 0); a cached answer costs nothing this time."""

    def __init__(self, judge: Any, ctx: CheckContext) -> None:
        self.prices = judge_prices(getattr(judge, "prices", None)) or ctx.prices
        self.model: str | None = getattr(judge, "model", None)
        self.usage: dict[str, int] = {}
        self.cost: float | None = None
        self.unpriced = False

    def add(self, reply: JudgeReply) -> None:
        self.model = reply.model or self.model
        if not reply.cached:
            add_usage(self.usage, reply.usage)
            c = self.prices.cost(reply.usage, self.model) if self.prices else None
            if c is not None:
                self.cost = (self.cost or 0.0) + c
            elif reply.usage:
                self.unpriced = True
        elif self.prices and self.prices.find(self.model) is not None:
            self.cost = self.cost or 0.0
        if self.unpriced:
            self.cost = None

    def fields(self) -> dict[str, Any]:
        """The Score keywords: usage, cost, model."""
        return {"usage": self.usage or None, "cost": self.cost, "model": self.model}


def _scored(
    parsed: tuple[float, bool, str, float | None, float | None], reply: JudgeReply, label: str, spend: _Spend
) -> Score:
    value, passed, reason, weighted, spread = parsed
    if reply.note:
        reason = f"{reason} ({reply.note})"
    # A judge that handed this check to another names that one: the row says who scored it.
    return Score(
        value=value,
        passed=passed,
        reason=reason,
        judge=reply.label or label,
        weighted=weighted,
        spread=spread,
        **spend.fields(),
    )


def _parse(
    task: str,
    text: str,
    spec: Any,
    logprobs: list[dict[str, Any]] | None = None,
    continuous: float | None = None,
) -> tuple[float, bool, str, float | None, float | None] | None:
    if task == "llm_judge":
        verdict = parse_verdict(text)
        if verdict is None:
            return None
        ok, why = verdict
        return (
            (1.0 if ok else 0.0),
            ok,
            f"{'PASS' if ok else 'FAIL'}: {why}" if why else ("PASS" if ok else "FAIL"),
            None,
            None,
        )
    score = parse_score(text)
    if score is None:
        return None
    value, why = score
    threshold = float(getattr(spec, "threshold", 3))
    weighted = spread = None
    dist = score_distribution(text, logprobs) if logprobs else None
    if dist is not None:
        weighted = sum(k * p for k, p in dist.items())
        spread = sum(p * (k - weighted) ** 2 for k, p in dist.items()) ** 0.5
    # docs/dataset-json.md, evaluators: the 1-5 evaluators pass at score >= threshold (a fractional one, 3.5, as
    # given); with the score's distribution, the probability-weighted score is the one compared (G-Eval).
    passed = (weighted if weighted is not None else value) >= threshold
    if weighted is None and continuous is not None and 1.0 <= continuous <= 5.0:
        # a judge's own continuous score (docs/results.md, `scores`: weighted): compared by the comparison, while the pass
        # decision stays with the level it wrote
        weighted = float(continuous)
    head = (
        f"{value:g}/5, weighted {weighted:.2f} (sd {spread:.2f}, threshold {threshold:g})"
        if weighted is not None and spread is not None
        else f"{value:g}/5 (threshold {threshold:g})"
    )
    return value, passed, f"{head}: {why}" if why else head, weighted, spread
