"""Checks: the registry and the built-in checks, grouped by what they look at.

``text`` (regex, ExactMatch, PartialMatch, Citations), ``process`` (exit_code, file_exists), ``cube`` (intent,
refusal, insight), ``rows`` (row comparison) and ``judged`` (llm_judge and the 1-5 metrics).
"""

from evalnb.checks.registry import CheckContext, Score, builtin, get, known, register, unregister

__all__ = ["CheckContext", "Score", "builtin", "get", "known", "register", "unregister"]
