"""Seeded flaky agents for the end-to-end gate trials (``--agent tests/agents_for_gate.py:NAME``).

Every case has its own pass probability (40% of the cases always pass, 20% always fail, the rest pass with a
probability between 0.2 and 0.9, fixed by the case id); each run draws its outcome from a hash of the trial
seed (``EVALNB_GATE_SEED``), the case and the run, so two trials with different seeds are two independent
runs of the same agent.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

#: The mean pass probability of the mix above (0.4 * 1 + 0.4 * 0.55).
MEAN_P = 0.62


def _uniform(*parts: object) -> float:
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def pass_probability(case: str) -> float:
    u = _uniform("case", case)
    return 1.0 if u < 0.4 else 0.0 if u < 0.6 else 0.2 + 0.7 * _uniform("flaky", case)


def _answer(request: Any, p: float) -> str:
    ok = _uniform(os.environ["EVALNB_GATE_SEED"], request.case, request.run) < p
    return "yes" if ok else "no"


def flaky(request: Any) -> str:
    """The baseline agent."""
    return _answer(request, pass_probability(request.case))


def dropped(request: Any) -> str:
    """The same agent with its pass rate 10 points lower, the drop spread over the cases in proportion."""
    return _answer(request, pass_probability(request.case) * (1 - 0.1 / MEAN_P))


def halved(request: Any) -> str:
    """The same agent with its pass probability halved: a drop of 31 points, for the sequential gate's trials."""
    return _answer(request, pass_probability(request.case) * 0.5)


async def kb_flawed(request: Any) -> Any:
    """The demo's knowledge-base assistant as its ``previous`` version was (it gives no citations)."""
    global _KB
    if _KB is None:
        from evalnb.demo.kb import KBAssistant

        _KB = KBAssistant(flaw="no-citations")
    return await _KB.respond(request)


_KB: Any = None
