"""Values as Nunjucks prints and compares them in promptfoo (JavaScript's rules), and the filters evalnb renders
(docs/promptfoo.md, templates)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "FILTERS",
    "UNDEFINED",
    "_TemplateError",
    "_TemplateUnsupported",
    "get",
    "js_str",
    "num_out",
    "number",
    "truthy",
]


class _TemplateError(ValueError):
    """A template evalnb cannot render; the message names the construct."""


class _TemplateUnsupported(_TemplateError):
    """A template using what evalnb does not render (a custom filter, a macro): not a mistake in it."""


class _Undefined:
    """Nunjucks' ``undefined``: prints as nothing, is falsy, and any attribute of it is undefined too."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()

# ------------------------------------------------------------------------------------------------------
# Values printed as JavaScript prints them
# ------------------------------------------------------------------------------------------------------


def js_str(value: Any) -> str:
    """A value as Nunjucks prints it (JavaScript's ``String(value)``, null and undefined as nothing)."""
    if value is None or value is UNDEFINED:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, Mapping):
        return "[object Object]"
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None else js_str(v) for v in value)
    return str(value)


def truthy(value: Any) -> bool:
    # JavaScript truthiness: an empty list or object is true there; Nunjucks' `if` follows it.
    if isinstance(value, (list, tuple, dict)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip() or 0)
    except ValueError:
        return math.nan


def num_out(x: float) -> int | float:
    return int(x) if isinstance(x, float) and x.is_integer() else x


# ------------------------------------------------------------------------------------------------------
# Filters
# ------------------------------------------------------------------------------------------------------


def _dump(value: Any, indent: Any = None) -> str:
    # promptfoo replaces Nunjucks' dump: JSON.stringify of the value.
    if value is UNDEFINED:
        return ""
    spaces = int(indent) if isinstance(indent, (int, float)) and not isinstance(indent, bool) else None
    separators = (",", ":") if spaces is None else (",", ": ")
    return json.dumps(value, ensure_ascii=False, indent=spaces, separators=separators, default=str)


def _load(value: Any) -> Any:
    # promptfoo's `load` filter: JSON.parse of a string var.
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise _TemplateError(f"filter 'load': the value is not JSON ({exc.msg})") from None


def _join(value: Any, sep: Any = "", attr: Any = None) -> str:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if attr is not None:
        items = [get(i, attr) for i in items]
    return js_str(sep).join(js_str(i) for i in items)


def _default(value: Any, default: Any = "", boolean: Any = False) -> Any:
    if value is UNDEFINED or (boolean and not truthy(value)):
        return default
    return value


def _length(value: Any) -> int:
    if value is UNDEFINED or value is None:
        return 0
    try:
        return len(value)
    except TypeError:
        return 0


def _replace(value: Any, old: Any, new: Any, count: Any = None) -> str:
    text = js_str(value)
    n = int(count) if isinstance(count, (int, float)) else -1
    return text.replace(js_str(old), js_str(new), n)


def _round(value: Any, precision: Any = 0, method: Any = "common") -> float | int:
    x, digits = number(value), int(number(precision))
    factor = 10**digits
    if method == "ceil":
        out = math.ceil(x * factor) / factor
    elif method == "floor":
        out = math.floor(x * factor) / factor
    else:
        out = math.floor(x * factor + 0.5) / factor
    return num_out(out)


def _truncate(value: Any, length: Any = 255, killwords: Any = False, end: Any = "...") -> str:
    text, n = js_str(value), int(number(length))
    if len(text) <= n:
        return text
    if killwords:
        return text[:n] + js_str(end)
    cut = text[:n]
    space = cut.rfind(" ")
    return (cut[:space] if space > 0 else cut) + js_str(end)


def _escape(value: Any) -> str:
    import html

    return html.escape(js_str(value), quote=True).replace("&#x27;", "&#39;")


def _title(value: Any) -> str:
    return " ".join(w[:1].upper() + w[1:].lower() for w in js_str(value).split(" "))


def _sort(value: Any, reverse: Any = False, case_sensitive: Any = False, attr: Any = None) -> list[Any]:
    items = list(value) if isinstance(value, (list, tuple)) else []

    def key(v: Any) -> Any:
        v = get(v, attr) if attr is not None else v
        return v.lower() if isinstance(v, str) and not case_sensitive else v

    return sorted(items, key=key, reverse=bool(reverse))


FILTERS: dict[str, Callable[..., Any]] = {
    "abs": lambda v: num_out(abs(number(v))),
    "capitalize": lambda v: js_str(v)[:1].upper() + js_str(v)[1:].lower(),
    "default": _default,
    "d": _default,
    "dump": _dump,
    "e": _escape,
    "escape": _escape,
    "first": lambda v: (v[0] if len(v) else UNDEFINED) if isinstance(v, (list, tuple, str)) else UNDEFINED,
    "float": lambda v, d=0.0: d if math.isnan(number(v)) else number(v),
    "int": lambda v, d=0: d if math.isnan(number(v)) else int(number(v)),
    "join": _join,
    "json": _dump,
    "last": lambda v: (v[-1] if len(v) else UNDEFINED) if isinstance(v, (list, tuple, str)) else UNDEFINED,
    "length": _length,
    "list": lambda v: (
        list(v) if isinstance(v, (list, tuple, str)) else list(v.values()) if isinstance(v, dict) else []
    ),
    "load": _load,
    "lower": lambda v: js_str(v).lower(),
    "nl2br": lambda v: js_str(v).replace("\r\n", "<br />\n").replace("\n", "<br />\n"),
    "replace": _replace,
    "reverse": lambda v: v[::-1] if isinstance(v, (list, tuple, str)) else v,
    "round": _round,
    "safe": lambda v: v,
    "sort": _sort,
    "string": js_str,
    "striptags": lambda v: " ".join(re.sub(r"<[^>]*>", "", js_str(v)).split()),
    "sum": lambda v, attr=None, start=0: num_out(
        sum((number(get(i, attr) if attr is not None else i) for i in v), number(start))
    ),
    "title": _title,
    "trim": lambda v: js_str(v).strip(),
    "truncate": _truncate,
    "upper": lambda v: js_str(v).upper(),
    "urlencode": lambda v: __import__("urllib.parse").parse.quote(js_str(v), safe=""),
    "wordcount": lambda v: len(js_str(v).split()),
}
"""The filters evalnb renders: Nunjucks' built-ins that prompts use, with promptfoo's ``dump`` and ``load``."""


def get(obj: Any, key: Any) -> Any:
    if obj is UNDEFINED or obj is None:
        return UNDEFINED
    if isinstance(obj, Mapping):
        return obj.get(key, UNDEFINED) if not isinstance(key, float) else obj.get(js_str(key), UNDEFINED)
    if isinstance(obj, (list, tuple, str)):
        if isinstance(key, float) and key.is_integer():
            key = int(key)
        if isinstance(key, int) and not isinstance(key, bool):
            return obj[key] if -len(obj) <= key < len(obj) and key >= 0 else UNDEFINED
        if key == "length":
            return len(obj)
    return UNDEFINED
