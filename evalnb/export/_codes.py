"""The published dataset schema's categorised error codes (1.9.0), from what evalnb records.

A turn's ``runs.error`` (why the agent gave no usable answer) becomes an ErrorObject code, and the reason of a
score row whose evaluator produced no result an ErroredScore code. evalnb writes those texts itself (the runner,
the chat client, the judges, the checks), so each code is found by what its text says; each table is tried in
order and the first match wins.

Example::

    turn_error_code("TimeoutError: the agent did not answer within 30s")
    # 'agentTimeout'
    score_error_code("judge openai:m failed: ... HTTP 429 rate limited ...", judged=True)
    # 'judgeRateLimited'
"""

from __future__ import annotations

import re

from evalnb._scoring import TOOL_NOT_ALLOWED

__all__ = ["score_error_code", "turn_error_code"]

_I = re.IGNORECASE

#: published schema: ErrorObject.code, for a turn whose agent gave no usable answer (the generic one last)
_TURN_CODES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"^{re.escape(TOOL_NOT_ALLOWED)}"), "toolCallNotAllowed"),
    (re.compile(r"\bHTTP 429\b|rate.?limit", _I), "agentRateLimited"),
    (re.compile(r"\bHTTP 40[13]\b|unauthori[sz]ed|authenticat", _I), "agentAuthenticationError"),
    (re.compile(r"^TimeoutError\b|did not answer within|timed out", _I), "agentTimeout"),
    (
        re.compile(
            r"not JSON|unexpected body|unknown key|none of the mapped paths|cannot read|"
            r"the agent returned \w+(=|; return)|must be (a|an) \w+ or None",
            _I,
        ),
        "agentResponseUnparseable",
    ),
]

#: published schema: ErroredScore.code, for an evaluator that produced no result (the generic one last)
_JUDGE_CODES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bHTTP 429\b|rate.?limit", _I), "judgeRateLimited"),
    (re.compile(r"\bHTTP 40[13]\b|unauthori[sz]ed|authenticat", _I), "judgeAuthenticationError"),
    (re.compile(r"timed out|timeout", _I), "judgeTimeout"),
    (re.compile(r"no readable answer|not (valid )?JSON|unparseable", _I), "judgeOutputUnparseable"),
]
_SCORE_CODES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"tool-call evidence indeterminate", _I), "toolCallEvidenceIndeterminate"),
    (re.compile(r"no check registered", _I), "evaluatorLoadError"),
    (re.compile(r"gave no verdict|a check returned", _I), "invalidEvaluatorResult"),
    # a judged check without a judge, a metric without the expected response or context it needs: the
    # evaluator is not set up for this run or item
    (re.compile(r"not evaluated|no judge", _I), "evaluatorConfigurationError"),
]


def _first(table: list[tuple[re.Pattern[str], str]], text: str) -> str | None:
    for pattern, code in table:
        if pattern.search(text):
            return code
    return None


def turn_error_code(error: str | None) -> str:
    """The ErrorObject code of a turn whose agent gave no usable answer (``agentRequestFailed`` if nothing
    more precise fits)."""
    return _first(_TURN_CODES, error or "") or "agentRequestFailed"


def score_error_code(reason: str | None, *, judged: bool = False, empty_response: bool = False) -> str:
    """The ErroredScore code of an evaluator that produced no result.

    Args:
        reason: the score row's reason.
        judged: whether a judge scored (or was to score) the check; its failures have codes of their own.
        empty_response: whether the agent's answer was empty (``emptyAgentResponse`` when the evaluator then
            produced nothing).
    """
    text = reason or ""
    found = _first(_SCORE_CODES[:1], text)
    if found:
        return found
    if empty_response:
        return "emptyAgentResponse"
    if judged and text.startswith("judge "):
        return _first(_JUDGE_CODES, text) or "evaluatorError"
    return _first(_SCORE_CODES[1:], text) or "evaluatorError"
