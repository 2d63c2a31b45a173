"""``SemanticSimilarity``: the cosine of sentence embeddings of the response and the expected response.

The embeddings are wordllama's (the ``offline-judge`` extra), computed on this machine: no API, no judge. The
check needs CPU, so it runs off the event loop. Without wordllama installed, a run that has this check stops
before it starts, with the install command (``evalnb.running`` asks :func:`requirements`).
"""

from __future__ import annotations

from typing import Any

from evalnb.checks._registry import CheckContext, Score, builtin

__all__ = ["semantic_similarity"]


@builtin("similar", needs={"cpu"})  # promptfoo's spellings
@builtin("not-similar", needs={"cpu"})
@builtin("semantic_similarity", needs={"cpu"})  # the TOML tasks assertion's spelling
@builtin("SemanticSimilarity", needs={"cpu"})
def semantic_similarity(spec: Any, ctx: CheckContext) -> Score:
    from evalnb.judges.offline._embedding import cosines

    other = spec.value if spec.value is not None else ctx.turn.expected
    what = "the given text" if spec.value is not None else "the expected response"
    if other is None:
        return Score(
            value=None,
            passed=False,
            reason=f"{spec.name} not evaluated: the item has no expected_response to compare with",
        )
    response = ctx.response.text if ctx.response.text else (ctx.response.stdout or "")
    cos = float(cosines([response], [other])[0])
    close = cos >= spec.threshold
    # promptfoo's not-similar passes below the threshold (docs/promptfoo.md)
    passed = close != (spec.type == "not-similar")
    return Score(
        value=cos,
        passed=passed,
        reason=f"cosine {cos:.3f} between the response and {what} "
        f"({'>=' if close else '<'} threshold {spec.threshold:g}; wordllama embeddings)",
    )
