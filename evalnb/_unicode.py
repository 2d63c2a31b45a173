"""Text that can be encoded: lone surrogates become U+FFFD, surrogate pairs the character they stand for.

A Python ``str`` may hold surrogate code points (U+D800-U+DFFF) that no UTF-8 file, database or terminal can
take: a YAML ``"\\ud83d\\ude00"`` escape that PyYAML leaves as two code points, a JSON ``"\\ud800"``, an agent's
answer decoded with ``surrogateescape``. Writing one raises ``UnicodeEncodeError``, which used to end a whole
run after it had finished. evalnb keeps such text with a replacement character instead (the one rule, applied
where text enters: loaded suites, run records, frames built from a caller's data, files written).

XML 1.0 is stricter still: besides surrogates, it cannot hold the C0 control characters other than tab, line
feed and carriage return, nor U+FFFE and U+FFFF, even escaped (``&#1;`` is not well-formed either). A strict
parser refuses the whole file over one of them. :func:`xml_text` is the rule for every XML-based output (the
JUnit report, the Excel workbook): lone surrogates become U+FFFD as above, and the other code points are shown
as visible escapes (``\\x01``, ``\\uffff``) so the reader still sees that something was there.

Standard library only: it runs on every loaded string and every recorded answer.

Example::

    clean("ok \\ud83d\\ude00 \\ud800")
    # 'ok 😀 \\ufffd'
    xml_text("bell \\x07, not a character \\uffff")
    # 'bell \\\\x07, not a character \\\\uffff'
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["clean", "clean_data", "cleaned_already", "is_cleaned", "may_hold_surrogates", "xml_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")
# An escape that a parser turns into a surrogate: JSON/TOML/YAML "\ud800", YAML "\U0000d800".
_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
# What XML 1.0 cannot hold (its Char production allows tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD and above).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CLEANED: ContextVar[bool] = ContextVar("evalnb_text_cleaned", default=False)


@contextmanager
def cleaned_already() -> Iterator[None]:
    """While it lasts, models built here take their text as clean: the loader cleans a whole parsed document
    once (:func:`clean_data`), and walking every model's fields again doubled the time of a large load."""
    token = _CLEANED.set(True)
    try:
        yield
    finally:
        _CLEANED.reset(token)


def is_cleaned() -> bool:
    """Whether the text being built was cleaned already (inside :func:`cleaned_already`)."""
    return _CLEANED.get()


def clean(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD (the same object when it has
    none, which is nearly always)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    # UTF-16 is where surrogates belong: a pair decodes to its character, a lone one to U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def may_hold_surrogates(text: str) -> bool:
    """Whether the data parsed from ``text`` may hold a surrogate: one in the text itself, or an escape of one.

    When not, the walk of :func:`clean_data` over the parsed document can be skipped (a large suite's load).
    """
    return _SURROGATE.search(text) is not None or _SURROGATE_ESCAPE.search(text) is not None


def clean_data(data: Any, _seen: dict[int, Any] | None = None) -> Any:
    """Parsed data (mappings, lists, strings; keys too) with every string :func:`clean`.

    Unchanged parts are returned as they are, and a part shared by several places (a YAML alias) is cleaned
    once and stays shared, so the walk is linear in the document as written.
    """
    if isinstance(data, str):
        return clean(data)
    if type(data) not in (dict, list, tuple):
        return data  # numbers, None, and objects of a caller's own (a namedtuple, a frame) stay as they are
    if _flat_and_ascii(data):
        return data  # the common case (an answer's meta, a usage object): nothing in it can hold a surrogate
    seen: dict[int, Any] = {} if _seen is None else _seen
    key = id(data)
    if key in seen:
        return seen[key]
    out: Any
    if isinstance(data, dict):
        items = [(clean_data(k, seen), clean_data(v, seen)) for k, v in data.items()]
        same = all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, data.items(), strict=True))
        out = data if same else dict(items)
    else:
        values = [clean_data(v, seen) for v in data]
        same = all(v is v0 for v, v0 in zip(values, data, strict=True))
        out = data if same else type(data)(values)
    seen[key] = out
    return out


_SCALARS = frozenset({int, float, bool, type(None)})


def _flat_and_ascii(data: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> bool:
    """Whether ``data`` holds only ASCII text and numbers (keys too), no container: then it is clean as it is."""
    values = data.values() if type(data) is dict else data
    if type(data) is dict:
        for key in data:
            if type(key) is not str or not key.isascii():
                return False
    for value in values:
        kind = type(value)
        if kind is str:
            if not value.isascii():
                return False
        elif kind not in _SCALARS:
            return False
    return True


def _xml_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """``text`` as an XML 1.0 document can hold it: surrogates as :func:`clean` leaves them (a pair joined, a
    lone one U+FFFD), and every other code point XML 1.0 does not allow (C0 controls but tab, line feed and
    carriage return; U+FFFE, U+FFFF) written as a visible escape, ``\\x01`` or ``\\uffff``. The same object
    when there is nothing to change.

    Example::

        xml_text("ok \\x1b[31m red")
        # 'ok \\\\x1b[31m red'
    """
    if _NOT_XML.search(text) is None:
        return text
    return _NOT_XML.sub(_xml_escape, clean(text))
