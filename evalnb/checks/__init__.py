"""Checks: the registry and the built-in checks, grouped by what they look at.

``text`` (regex, ExactMatch, PartialMatch, Citations), ``process`` (exit_code, file_exists), ``cube`` (intent,
refusal, insight), ``rows`` (row comparison), ``judged`` (llm_judge and the 1-5 metrics) and ``tools``
(ToolCallSelection, ToolCallExecution). Register your own
with :func:`check` (the built-ins' signature) or :func:`register` (the short form).
"""

from evalnb._lazy import home, homes, submodule
from evalnb.checks._registry import (
    CheckContext,
    Score,
    check,
    get,
    known,
    register,
    unregister,
)

__all__ = [
    "CheckContext",
    "Score",
    "check",
    "citation_count",
    "compare_rows",
    "exact_match",
    "get",
    "known",
    "partial_match_f1",
    "register",
    "unregister",
]

# The building blocks notebooks call directly (api contract), loaded when first asked for: the row comparison
# needs numpy and pandas, which `import evalnb` must not pay for.
_BLOCKS = {
    "compare_rows": "evalnb.checks._rows",
    "exact_match": "evalnb.checks._text",
    "partial_match_f1": "evalnb.checks._text",
    "citation_count": "evalnb.checks._text",
}


def __getattr__(name: str) -> object:
    if name in _BLOCKS:
        import importlib

        return home(__name__, getattr(importlib.import_module(_BLOCKS[name]), name))  # its public home
    return submodule(__name__, name)  # evalnb.checks.scales ... after `import evalnb` alone


homes(__name__, globals(), __all__)  # reprs and docs name the public path
