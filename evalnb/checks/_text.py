"""Checks on the response text: ``regex`` (docs/tasks-toml.md, keys and assertions), ``ExactMatch``,
``PartialMatch``, ``Citations`` and the retrieval diagnostics ``RetrievalQuery`` / ``RetrievalResult``
(docs/dataset-json.md, evaluators).

All are deterministic and need no LLM. Each returns a :class:`~evalnb.checks._registry.Score`.
"""

from __future__ import annotations

import functools
import re
import string
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from evalnb._text import ARTICLES, caseless, f1, nfc, normalize_tokens
from evalnb.checks._registry import CheckContext, Offload, Score, builtin
from evalnb.errors import RegexTimeout
from evalnb.suite import (
    CITATION_FORMATS,
    CitationsCheck,
    ExactMatchCheck,
    PartialMatchCheck,
    RegexCheck,
    RetrievalQueryCheck,
    RetrievalResultCheck,
)

__all__ = [
    "REGEX_TIMEOUT",
    "RegexTimeout",
    "citation_count",
    "compile_pattern",
    "exact_match",
    "excerpt",
    "match_score_reason",
    "normalize_tokens",
    "partial_match_f1",
    "partial_match_reason",
    "regex_search",
]

REGEX_TIMEOUT = 1.0
"""Seconds a single regex search may take before the check reports ``degraded`` (docs/tasks-toml.md, keys and
assertions)."""

MISSING_EXPECTED = "expected_response is missing: {check} needs one to compare against"

# --------------------------------------------------------------------------------------------------
# regex
# --------------------------------------------------------------------------------------------------

_COMPILED: dict[str, Any] = {}
_fallback_pool: ThreadPoolExecutor | None = None
_fallback_lock = threading.Lock()


@functools.cache
def _regex_engine() -> Any:
    """The third-party ``regex`` engine, which can stop a match after a timeout (the stdlib ``re`` cannot); None
    without it. Imported by the first pattern, not with the checks: most runs have none (6 ms of start-up)."""
    try:
        import regex
    except ImportError:  # pragma: no cover - regex is a dependency; the thread fallback keeps it optional
        return None
    return regex


def compile_pattern(pattern: str) -> Any:
    """Compile ``pattern`` with the engine that runs the ``regex`` check (cached), in Unicode NFC as the text
    it searches (docs/tasks-toml.md, keys and assertions).

    Loading a suite compiles its patterns with this too, so a pattern the run accepts (``\\p{L}``) is
    never rejected at load, and one the run would reject never loads.

    Raises:
        ValueError: when the pattern is not a valid regular expression (the message says why).
    """
    compiled = _COMPILED.get(pattern)
    if compiled is not None:
        return compiled
    engine: Any = _regex_engine() or re
    try:
        compiled = engine.compile(nfc(pattern))
    except (engine.error, RecursionError, OverflowError, ValueError, TypeError) as exc:
        raise ValueError(str(exc)) from None
    _COMPILED[pattern] = compiled
    return compiled


def regex_search(pattern: str, text: str, *, timeout: float | None = None, concurrent: bool = False) -> Any:
    """Search ``pattern`` in ``text`` (search semantics, not full match), bounded by ``timeout`` seconds.

    Both are read in Unicode NFC, so a pattern ``Zürich`` finds the word however it was typed. Returns the
    match object or None. ``timeout`` defaults to :data:`REGEX_TIMEOUT`. Raises
    :class:`RegexTimeout` when the search takes too long, so a catastrophic pattern such as ``(a+)+$`` cannot
    hang a run. ``concurrent=True`` lets other threads run meanwhile (the engine releases the GIL), for
    searches run off the event loop.

    Example::

        bool(regex_search(r"\\bsummary\\b", "here is the summary."))
        # True
    """
    if timeout is None:
        timeout = REGEX_TIMEOUT
    compiled = compile_pattern(pattern)
    text = nfc(text)
    if _regex_engine() is not None:
        try:
            return compiled.search(text, timeout=timeout, concurrent=concurrent)
        except TimeoutError as exc:
            raise RegexTimeout(f"regex timed out after {timeout:g}s") from exc
    return _search_in_thread(compiled, text, timeout)  # pragma: no cover - only without the regex package


def _search_in_thread(compiled: Any, text: str, timeout: float) -> Any:  # pragma: no cover - fallback
    # The stdlib engine cannot be interrupted: the search runs in a worker thread and the check stops
    # waiting after `timeout` (the thread finishes on its own; it only costs CPU).
    global _fallback_pool
    with _fallback_lock:
        if _fallback_pool is None:
            _fallback_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evalnb-regex")
    fut = _fallback_pool.submit(compiled.search, text)
    try:
        return fut.result(timeout=timeout)
    except FutureTimeout as exc:
        raise RegexTimeout(f"regex timed out after {timeout:g}s") from exc


def _preview(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def excerpt(text: str, limit: int = 120) -> str:
    """What a reason quotes of a longer text: whitespace collapsed, its start and its end when it is long.

    Example::

        excerpt("one two three " * 20, limit=40)
        # 'one two three one two … two three'
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    n_tail = limit // 3
    head, tail = text[: limit - n_tail - 3], text[-n_tail:]
    # cut at word boundaries when one is near, so the excerpt quotes whole words
    if " " in head[-15:]:
        head = head[: head.rindex(" ")]
    if " " in tail[:15]:
        tail = tail[tail.index(" ") + 1 :]
    return f"{head} … {tail}"


REGEX_QUICK = 0.002
"""Seconds a regex search may take on the event loop; a longer one is finished in a worker thread."""


@builtin("regex", needs=())
def regex_check(spec: RegexCheck, ctx: CheckContext) -> Score | Offload:
    # docs/tasks-toml.md, keys and assertions: `on = "stdout"` is the streamed standard output, `on = "result"` the
    # final result text.
    text = ctx.response.stdout if spec.on == "stdout" else ctx.response.text
    if text is None:
        # An adapter that could not extract the result (a Command's json:/file: result) says why in meta.
        why = ctx.response.meta.get("result_error") if spec.on == "result" else None
        return Score.of(
            False, f"no {spec.on} to search: the agent returned none" + (f" ({why})" if why else "")
        )
    # Almost every search is instant: it runs here. One that is not would stall every other case run on
    # the loop (and their latencies): it starts again in a worker thread, with the whole time limit.
    quick = min(REGEX_QUICK, REGEX_TIMEOUT)
    try:
        return _regex_score(spec, text, regex_search(spec.pattern, text, timeout=quick))
    except RegexTimeout:
        if quick >= REGEX_TIMEOUT:
            return Score.degraded(f"regex timed out after {REGEX_TIMEOUT:g}s")
        return Offload(_regex_slow, (spec, text))


def _regex_slow(spec: RegexCheck, text: str) -> Score:
    try:
        found = regex_search(spec.pattern, text, concurrent=True)
    except RegexTimeout as exc:
        return Score.degraded(str(exc))
    return _regex_score(spec, text, found)


def _regex_score(spec: RegexCheck, text: str, m: Any) -> Score:
    # The pattern as the suite wrote it (a repr would double every backslash: '\\d+' for \d+).
    if m is None:
        # The text searched is quoted (shortened), so the reason shows what the pattern missed.
        searched = f": {excerpt(text)!r}" if text.strip() else " (blank)"
        return Score.of(
            False, f"pattern '{spec.pattern}' not found in {spec.on} ({len(text)} chars){searched}"
        )
    return Score.of(True, f"pattern '{spec.pattern}' found in {spec.on}: {_preview(m.group(0))!r}")


# --------------------------------------------------------------------------------------------------
# ExactMatch / PartialMatch
# --------------------------------------------------------------------------------------------------


def exact_match(response: str | None, expected: str, *, case_sensitive: bool = False) -> bool:
    """docs/dataset-json.md, text comparison: the response contains the expected string, both trimmed and in Unicode
    NFC; case-insensitive by default (Unicode case folding: ``STRASSE`` matches ``straße``).

    Example::

        exact_match("It is a unified API endpoint.", "unified api")
        # True
    """
    got, want = nfc((response or "").strip()), nfc(expected.strip())
    if not case_sensitive:
        got, want = caseless(got), caseless(want)
    return want in got


_EXACT_PASSES = {
    sensitive: Score.of(
        True, f"response contains the expected text ({'case-sensitive' if sensitive else 'case-insensitive'})"
    )
    for sensitive in (True, False)
}
"""The passing ExactMatch score by case sensitivity: a Score is immutable, so every pass is one object."""


@builtin("ExactMatch", needs=())
def exact_match_check(spec: ExactMatchCheck, ctx: CheckContext) -> Score:
    expected = ctx.turn.expected
    if expected is None or not expected.strip():
        # docs/dataset-json.md, where evalnb differs from the published schema: checks that need
        # expected_response report it missing instead of passing.
        return Score.of(False, MISSING_EXPECTED.format(check="ExactMatch"))
    ok = exact_match(ctx.response.text, expected, case_sensitive=spec.case_sensitive)
    if ok:
        return _EXACT_PASSES[spec.case_sensitive]
    how = "case-sensitive" if spec.case_sensitive else "case-insensitive"
    return Score.of(False, f"response does not contain the expected text {_preview(expected)!r} ({how})")


_ASCII_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = frozenset(ARTICLES)


def _tokens(text: str | None, case_sensitive: bool) -> list[str]:
    """:func:`evalnb._text.normalize_tokens`, with ASCII text (nearly all of it) normalised in a few C calls:
    NFC leaves it as it is and its punctuation is ``string.punctuation``."""
    if text is None or not text.isascii():
        return normalize_tokens(text, case_sensitive=case_sensitive)
    if not case_sensitive:
        text = text.lower()
        return [t for t in text.translate(_ASCII_PUNCT).split() if t not in _ARTICLES]
    return [t for t in text.translate(_ASCII_PUNCT).split() if t.lower() not in _ARTICLES]


@functools.lru_cache(maxsize=4096)
def _expected_counts(expected: str, case_sensitive: bool) -> tuple[dict[str, int], int]:
    # The expected side is the same for every run of a case: normalised once.
    tokens = _tokens(expected, case_sensitive)
    counts: dict[str, int] = {}
    for t in tokens:  # a few tokens: quicker than a Counter's constructor
        counts[t] = counts.get(t, 0) + 1
    return counts, len(tokens)


def partial_match_f1(response: str | None, expected: str, *, case_sensitive: bool = False) -> float:
    """Token-level F1 between the response and the expected response after normalisation (0..1).

    Example::

        round(partial_match_f1("unified API endpoint", "A unified API endpoint for services"), 3)
        # 0.75
    """
    got = _tokens(response, case_sensitive)
    want, n_want = _expected_counts(expected, case_sensitive)
    if not got or not n_want:
        # Nothing expected and nothing said is a match; one side empty is none.
        return 1.0 if not got and not n_want else 0.0
    # sum(min(got count, expected count)) over tokens, by using up a copy of the expected counts: no
    # Counter of the response per call (this runs on every turn).
    left = dict(want)
    same = 0
    for t in got:
        n = left.get(t)
        if n:
            left[t] = n - 1
            same += 1
    return f1(same, len(got), n_want)


def match_score_reason(f1: float) -> str:
    """A PartialMatch reason as the dataset tool writes it in its output documents: ``Match score: 0.667``."""
    return f"Match score: {f1:.3f}"


def partial_match_reason(f1: float, threshold: float) -> str:
    """evalnb's PartialMatch reason: the dataset tool's words, then the threshold the score was held to.

    Example::

        partial_match_reason(2 / 3, 0.5)
        # 'Match score: 0.667 (threshold 0.5)'
    """
    return f"{match_score_reason(f1)} (threshold {threshold:g})"


_PARTIAL_SCORES: dict[tuple[float, float], Score] = {}
"""PartialMatch scores by (F1, threshold): a Score is immutable, and the F1s of short answers repeat (1.0, 0.5,
0.667 ...), so a million case runs hold a few score objects and reason texts, not a million each."""
_PARTIAL_KEEP = 4096


@builtin("PartialMatch", needs=())
def partial_match_check(spec: PartialMatchCheck, ctx: CheckContext) -> Score:
    expected = ctx.turn.expected
    if expected is None or not expected.strip():
        return Score.of(False, MISSING_EXPECTED.format(check="PartialMatch"), value=0.0)
    f1 = partial_match_f1(ctx.response.text, expected, case_sensitive=spec.case_sensitive)
    key = (f1, spec.threshold)
    score = _PARTIAL_SCORES.get(key)
    if score is None:
        if len(_PARTIAL_SCORES) >= _PARTIAL_KEEP:
            _PARTIAL_SCORES.clear()  # answers of every length: the cache stays small
        # docs/dataset-json.md, the output document: the reason reads `Match score: 0.667`; the threshold it was
        # held to follows.
        score = _PARTIAL_SCORES[key] = Score(
            value=f1, passed=f1 >= spec.threshold, reason=partial_match_reason(f1, spec.threshold)
        )
    return score


# --------------------------------------------------------------------------------------------------
# Citations
# --------------------------------------------------------------------------------------------------

_CITATION_PATTERNS = {
    # 【3:0†source】 (OpenAI file-search markers)
    "oai_unicode": re.compile(r"【[^【】\n]*†[^【】\n]*】"),
    # [1], [2, 3] but not a markdown link text [1](...) nor a footnote [^1]
    "bracket": re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\](?![(:])"),
    # [text](url) links and [^1] footnote references (not the `[^1]: ...` definitions)
    "markdown_link": re.compile(r"(?<!!)\[[^\[\]\n]+\]\([^()\s]+(?:\s+\"[^\"]*\")?\)"),
    "footnote": re.compile(r"\[\^[^\[\]\s]+\](?!:)"),
}


_FORMAT_KINDS = {
    "oai_unicode": ("oai_unicode",),
    "bracket": ("bracket",),
    "markdown": ("markdown_link", "footnote"),
    "mixed": ("oai_unicode", "bracket", "markdown_link", "footnote"),
}


def citation_count(text: str | None, citation_format: str = "oai_unicode") -> int:
    """Count citations in ``text``: ``oai_unicode`` markers, ``bracket`` numbers, ``markdown`` links and
    footnotes, or ``mixed`` (any of these). Any other format (``citation_format`` is an open string, e.g.
    ``"inline"``: docs/dataset-json.md, citations) counts the citations of every known format, as ``mixed``.

    Example::

        citation_count("See [1] and [docs](https://x.org) and 【3:0†source】", "mixed")
        # 3
    """
    text = text or ""
    kinds = _FORMAT_KINDS.get(citation_format, _FORMAT_KINDS["mixed"])
    n = 0
    for kind in kinds:
        for m in _CITATION_PATTERNS[kind].finditer(text):
            # `[1, 2]` cites two sources.
            n += len(m.group(1).split(",")) if kind == "bracket" else 1
    return n


@builtin("Citations", needs=())
def citations_check(spec: CitationsCheck, ctx: CheckContext) -> Score:
    in_text = citation_count(ctx.response.text, spec.citation_format)
    structured = len(ctx.response.citations or [])
    count = in_text + structured
    ok = count >= spec.threshold
    how = spec.citation_format
    if how not in _FORMAT_KINDS:
        how = f"format {how!r} is not one evalnb detects, so every known format was counted: {', '.join(CITATION_FORMATS[:3])}"
    where = f"{in_text} in the text ({how})" + (f" + {structured} structured" if structured else "")
    return Score(
        value=float(count),
        passed=ok,
        reason=f"{count} citation(s): {where}; needs >= {spec.threshold}",
    )


# --------------------------------------------------------------------------------------------------
# Retrieval diagnostics
# --------------------------------------------------------------------------------------------------


def _retrieval(ctx: CheckContext) -> dict[str, Any] | None:
    diag = (ctx.response.meta or {}).get("retrieval")
    return diag if isinstance(diag, dict) else None


_NO_DIAG = (
    "{check} not evaluated: the response carries no retrieval diagnostics "
    "(return meta={{'retrieval': {{'queries': [...], 'results': [...]}}}} from the agent)"
)


@builtin("RetrievalQuery", needs=())
def retrieval_query_check(spec: RetrievalQueryCheck, ctx: CheckContext) -> Score:
    diag = _retrieval(ctx)
    if diag is None:
        # Never a pass without evidence: the agent did not say what it retrieved.
        return Score(value=None, passed=False, reason=_NO_DIAG.format(check="RetrievalQuery"))
    queries = [q for q in (diag.get("queries") or ([diag["query"]] if diag.get("query") else [])) if q]
    ok = bool(queries)
    return Score(
        value=float(len(queries)),
        passed=ok,
        reason=f"{len(queries)} retrieval quer{'y' if len(queries) == 1 else 'ies'} issued"
        if ok
        else "no retrieval query was issued",
    )


@builtin("RetrievalResult", needs=())
def retrieval_result_check(spec: RetrievalResultCheck, ctx: CheckContext) -> Score:
    diag = _retrieval(ctx)
    if diag is None:
        return Score(value=None, passed=False, reason=_NO_DIAG.format(check="RetrievalResult"))
    results = diag.get("results") or []
    need = int(spec.settings.get("threshold", 1))
    n = len(results)
    return Score(
        value=float(n),
        passed=n >= need,
        reason=f"{n} retrieval result(s); needs >= {need}",
    )
