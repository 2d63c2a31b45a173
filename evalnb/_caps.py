"""How much of an answer evalnb keeps: the head, up to a cap, with a note saying it was cut.

An agent or a judge can answer with hundreds of megabytes (a loop that never stops printing, a model that
repeats itself); kept whole, every copy a run makes of it (the record, the frames, the report, the store) would
cost that much again. So a ``Command``'s output, a callable agent's text fields, an HTTP service's or a chat
endpoint's body and a judge's answer are each cut to a cap, keeping the head, and the cut is said in the text
and in ``Response.meta``.

Example::

    text, cut = cap("x" * 2_000_000, "text")
    cut, text.endswith("[evalnb: text truncated at 1000000 characters; it had 2000000 characters]")
    # (True, True)
"""

from __future__ import annotations

__all__ = ["MAX_ANSWER", "MAX_BODY", "cap", "note"]

MAX_ANSWER = 1_000_000
"""The most characters kept of an answer's text (and bytes of a Command's output, its ``max_output``)."""

MAX_BODY = 8_000_000
"""The most bytes read of an HTTP answer's body (a JSON body holding a ``MAX_ANSWER`` answer, escaped)."""


def note(what: str, limit: int, total: int | None, unit: str = "characters") -> str:
    """The line that ends a cut text: what was cut, where, and how much there was (when known)."""
    had = f"; it had {total} {unit}" if total is not None else f"; it had more than {limit} {unit}"
    return f"\n[evalnb: {what} truncated at {limit} {unit}{had}]"


def cap(text: str, what: str, limit: int = MAX_ANSWER) -> tuple[str, bool]:
    """``text`` cut to its first ``limit`` characters with a :func:`note`, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit] + note(what, limit, len(text)), True
