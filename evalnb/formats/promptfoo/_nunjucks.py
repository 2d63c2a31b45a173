"""The part of Nunjucks that promptfoo templates use, rendered as promptfoo renders it (docs/promptfoo.md, templates).

Supported: ``{{ expr }}`` with variables, attribute and index access (``user.name``, ``items[0]``,
``row['key']``), string / number / boolean literals, lists, ``~`` (concatenation), arithmetic, comparisons,
``and`` / ``or`` / ``not`` / ``in``, the conditional expression ``a if cond else b``, and filters with
arguments; ``{% if %}`` / ``{% elif %}`` / ``{% else %}``, ``{% for x in xs %}`` (with ``loop.index``,
``loop.first``, ``loop.last``, ``{% else %}``), ``{% set %}``, ``{% raw %}``, comments ``{# #}`` and the
whitespace controls ``{%-`` / ``-%}``. As promptfoo configures Nunjucks: no HTML escaping, an undefined variable
renders as nothing, an object prints as ``[object Object]`` and a list as its items joined by commas.

Anything else (an unknown filter, a macro, an include) is a :class:`TemplateError` naming it: a prompt is never
sent half-rendered.

Example::

    render("Hello {{ name | upper }}!", {"name": "ada"})
    # 'Hello ADA!'
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["FILTERS", "TemplateError", "TemplateUnsupported", "render", "variables"]


class TemplateError(ValueError):
    """A template evalnb cannot render; the message names the construct."""


class TemplateUnsupported(TemplateError):
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


def _truthy(value: Any) -> bool:
    # JavaScript truthiness: an empty list or object is true there; Nunjucks' `if` follows it.
    if isinstance(value, (list, tuple, dict)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def _number(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip() or 0)
    except ValueError:
        return math.nan


def _num_out(x: float) -> int | float:
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
        raise TemplateError(f"filter 'load': the value is not JSON ({exc.msg})") from None


def _join(value: Any, sep: Any = "", attr: Any = None) -> str:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if attr is not None:
        items = [_get(i, attr) for i in items]
    return js_str(sep).join(js_str(i) for i in items)


def _default(value: Any, default: Any = "", boolean: Any = False) -> Any:
    if value is UNDEFINED or (boolean and not _truthy(value)):
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
    x, digits = _number(value), int(_number(precision))
    factor = 10**digits
    if method == "ceil":
        out = math.ceil(x * factor) / factor
    elif method == "floor":
        out = math.floor(x * factor) / factor
    else:
        out = math.floor(x * factor + 0.5) / factor
    return _num_out(out)


def _truncate(value: Any, length: Any = 255, killwords: Any = False, end: Any = "...") -> str:
    text, n = js_str(value), int(_number(length))
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
        v = _get(v, attr) if attr is not None else v
        return v.lower() if isinstance(v, str) and not case_sensitive else v

    return sorted(items, key=key, reverse=bool(reverse))


FILTERS: dict[str, Callable[..., Any]] = {
    "abs": lambda v: _num_out(abs(_number(v))),
    "capitalize": lambda v: js_str(v)[:1].upper() + js_str(v)[1:].lower(),
    "default": _default,
    "d": _default,
    "dump": _dump,
    "e": _escape,
    "escape": _escape,
    "first": lambda v: (v[0] if len(v) else UNDEFINED) if isinstance(v, (list, tuple, str)) else UNDEFINED,
    "float": lambda v, d=0.0: d if math.isnan(_number(v)) else _number(v),
    "int": lambda v, d=0: d if math.isnan(_number(v)) else int(_number(v)),
    "join": _join,
    "json": _dump,
    "last": lambda v: (v[-1] if len(v) else UNDEFINED) if isinstance(v, (list, tuple, str)) else UNDEFINED,
    "length": _length,
    "list": lambda v: list(v) if isinstance(v, (list, tuple, str)) else list(v.values()) if isinstance(v, dict) else [],
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
    "sum": lambda v, attr=None, start=0: _num_out(
        sum((_number(_get(i, attr) if attr is not None else i) for i in v), _number(start))
    ),
    "title": _title,
    "trim": lambda v: js_str(v).strip(),
    "truncate": _truncate,
    "upper": lambda v: js_str(v).upper(),
    "urlencode": lambda v: __import__("urllib.parse").parse.quote(js_str(v), safe=""),
    "wordcount": lambda v: len(js_str(v).split()),
}
"""The filters evalnb renders: Nunjucks' built-ins that prompts use, with promptfoo's ``dump`` and ``load``."""


def _get(obj: Any, key: Any) -> Any:
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


# ------------------------------------------------------------------------------------------------------
# Expressions: tokens, then a small precedence-climbing parser that evaluates as it parses an AST
# ------------------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>\d+(?:\.\d+)?)
      | (?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<name>[A-Za-z_$][A-Za-z0-9_$]*)
      | (?P<op>==|!=|<=|>=|\*\*|//|[-+*/%<>()\[\]{}.,|~:?=])
    )""",
    re.VERBOSE,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TemplateError(f"cannot read the expression {text.strip()!r} at {text[pos:].strip()[:20]!r}")
        pos = m.end()
        if m.group("num") is not None:
            out.append(("num", float(m.group("num"))))
        elif m.group("str") is not None:
            body = m.group("str")[1:-1]
            out.append(("str", re.sub(r"\\(.)", lambda e: _ESCAPES.get(e.group(1), e.group(1)), body)))
        elif m.group("name") is not None:
            out.append(("name", m.group("name")))
        else:
            out.append(("op", m.group("op")))
    out.append(("end", None))
    return out


Node = tuple[Any, ...]


class _Parser:
    """Parses one expression into nested tuples; :func:`_eval` evaluates them against a scope."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, kind: str | None = None, value: Any = None) -> bool:
        k, v = self.toks[self.i]
        return (kind is None or k == kind) and (value is None or v == value)

    def take(self) -> tuple[str, Any]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, kind: str, value: Any = None) -> Any:
        if not self.peek(kind, value):
            got = self.toks[self.i][1]
            raise TemplateError(f"in {self.text.strip()!r}: expected {value or kind}, got {got!r}")
        return self.take()[1]

    def done(self) -> None:
        if not self.peek("end"):
            raise TemplateError(f"in {self.text.strip()!r}: unexpected {self.toks[self.i][1]!r}")

    # precedence, lowest first: conditional, or, and, not, comparison/in, ~, + -, * / // %, **, unary, postfix
    def expr(self) -> Node:
        node = self.or_()
        if self.peek("name", "if"):
            self.take()
            cond = self.or_()
            other: Node = ("lit", UNDEFINED)
            if self.peek("name", "else"):
                self.take()
                other = self.expr()
            node = ("cond", cond, node, other)
        return node

    def or_(self) -> Node:
        node = self.and_()
        while self.peek("name", "or"):
            self.take()
            node = ("or", node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.not_()
        while self.peek("name", "and"):
            self.take()
            node = ("and", node, self.not_())
        return node

    def not_(self) -> Node:
        if self.peek("name", "not"):
            self.take()
            return ("not", self.not_())
        return self.compare()

    def compare(self) -> Node:
        node = self.concat()
        while True:
            if self.peek("op") and self.toks[self.i][1] in ("==", "!=", "<", ">", "<=", ">="):
                op = self.take()[1]
                node = ("cmp", op, node, self.concat())
            elif self.peek("name", "in"):
                self.take()
                node = ("in", node, self.concat())
            elif self.peek("name", "not") and self.toks[self.i + 1] == ("name", "in"):
                self.take()
                self.take()
                node = ("not", ("in", node, self.concat()))
            else:
                return node

    def concat(self) -> Node:
        node = self.additive()
        while self.peek("op", "~"):
            self.take()
            node = ("concat", node, self.additive())
        return node

    def additive(self) -> Node:
        node = self.term()
        while self.peek("op") and self.toks[self.i][1] in ("+", "-"):
            op = self.take()[1]
            node = ("arith", op, node, self.term())
        return node

    def term(self) -> Node:
        node = self.power()
        while self.peek("op") and self.toks[self.i][1] in ("*", "/", "//", "%"):
            op = self.take()[1]
            node = ("arith", op, node, self.power())
        return node

    def power(self) -> Node:
        node = self.unary()
        if self.peek("op", "**"):
            self.take()
            node = ("arith", "**", node, self.power())
        return node

    def unary(self) -> Node:
        if self.peek("op", "-"):
            self.take()
            return ("neg", self.unary())
        if self.peek("op", "+"):
            self.take()
            return self.unary()
        return self.filtered()

    def filtered(self) -> Node:
        node = self.postfix()
        while self.peek("op", "|"):
            self.take()
            name = self.expect("name")
            args: list[Node] = []
            if self.peek("op", "("):
                args = self.args()
            node = ("filter", name, node, args)
        return node

    def args(self) -> list[Node]:
        self.expect("op", "(")
        args: list[Node] = []
        while not self.peek("op", ")"):
            if self.peek("name") and self.toks[self.i + 1] == ("op", "="):
                self.take()
                self.take()  # keyword arguments are taken by position: the filters here name theirs in order
            args.append(self.expr())
            if not self.peek("op", ")"):
                self.expect("op", ",")
        self.expect("op", ")")
        return args

    def postfix(self) -> Node:
        node = self.atom()
        while True:
            if self.peek("op", "."):
                self.take()
                node = ("get", node, ("lit", self.expect("name")))
            elif self.peek("op", "["):
                self.take()
                key = self.expr()
                self.expect("op", "]")
                node = ("get", node, key)
            elif self.peek("op", "("):
                raise TemplateUnsupported(f"in {self.text.strip()!r}: calling functions is not supported")
            else:
                return node

    def atom(self) -> Node:
        kind, value = self.take()
        if kind == "num":
            return ("lit", _num_out(value))
        if kind == "str":
            return ("lit", value)
        if kind == "name":
            literal = {"true": True, "True": True, "false": False, "False": False, "none": None, "null": None}
            if value in literal:
                return ("lit", literal[value])
            return ("var", value)
        if (kind, value) == ("op", "("):
            node = self.expr()
            self.expect("op", ")")
            return node
        if (kind, value) == ("op", "["):
            items: list[Node] = []
            while not self.peek("op", "]"):
                items.append(self.expr())
                if not self.peek("op", "]"):
                    self.expect("op", ",")
            self.expect("op", "]")
            return ("list", items)
        if (kind, value) == ("op", "{"):
            pairs: list[tuple[Node, Node]] = []
            while not self.peek("op", "}"):
                k = self.expr()
                self.expect("op", ":")
                pairs.append((k, self.expr()))
                if not self.peek("op", "}"):
                    self.expect("op", ",")
            self.expect("op", "}")
            return ("dict", pairs)
        raise TemplateError(f"in {self.text.strip()!r}: unexpected {value!r}")


def parse_expr(text: str) -> Node:
    p = _Parser(text)
    node = p.expr()
    p.done()
    return node


def _arith(op: str, a: Any, b: Any) -> Any:
    if op == "+" and (isinstance(a, str) or isinstance(b, str)):
        return js_str(a) + js_str(b)  # JavaScript's + joins text
    x, y = _number(a), _number(b)
    if op == "+":
        return _num_out(x + y)
    if op == "-":
        return _num_out(x - y)
    if op == "*":
        return _num_out(x * y)
    if op == "**":
        return _num_out(x**y)
    if y == 0:
        return math.nan if x == 0 or op != "/" else math.copysign(math.inf, x)
    if op == "/":
        return _num_out(x / y)
    if op == "//":
        return math.floor(x / y)
    return _num_out(math.fmod(x, y))


def _compare(op: str, a: Any, b: Any) -> bool:
    a = None if a is UNDEFINED else a
    b = None if b is UNDEFINED else b
    if op == "==":
        return bool(a == b)
    if op == "!=":
        return bool(a != b)
    if isinstance(a, str) and isinstance(b, str):
        x: Any
        y: Any
        x, y = a, b
    else:
        x, y = _number(a), _number(b)
    return bool({"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op])


def _eval(node: Node, scope: Mapping[str, Any]) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "var":
        return scope.get(node[1], UNDEFINED)
    if kind == "get":
        return _get(_eval(node[1], scope), _eval(node[2], scope))
    if kind == "filter":
        fn = FILTERS.get(node[1])
        if fn is None:
            raise TemplateUnsupported(
                f"the filter {node[1]!r} is not one evalnb renders ({', '.join(sorted(FILTERS))})"
            )
        args = [_eval(a, scope) for a in node[3]]
        try:
            return fn(_eval(node[2], scope), *args)
        except TemplateError:
            raise
        except (TypeError, ValueError, AttributeError) as exc:
            raise TemplateError(f"filter {node[1]!r} failed: {exc}") from None
    if kind == "list":
        return [_eval(n, scope) for n in node[1]]
    if kind == "dict":
        return {js_str(_eval(k, scope)): _eval(v, scope) for k, v in node[1]}
    if kind == "cond":
        return _eval(node[2], scope) if _truthy(_eval(node[1], scope)) else _eval(node[3], scope)
    if kind == "or":
        left = _eval(node[1], scope)
        return left if _truthy(left) else _eval(node[2], scope)
    if kind == "and":
        left = _eval(node[1], scope)
        return _eval(node[2], scope) if _truthy(left) else left
    if kind == "not":
        return not _truthy(_eval(node[1], scope))
    if kind == "cmp":
        return _compare(node[1], _eval(node[2], scope), _eval(node[3], scope))
    if kind == "in":
        item, container = _eval(node[1], scope), _eval(node[2], scope)
        if isinstance(container, str):
            return js_str(item) in container
        if isinstance(container, (list, tuple, dict)):
            return item in container
        return False
    if kind == "concat":
        return js_str(_eval(node[1], scope)) + js_str(_eval(node[2], scope))
    if kind == "arith":
        return _arith(node[1], _eval(node[2], scope), _eval(node[3], scope))
    if kind == "neg":
        return _num_out(-_number(_eval(node[1], scope)))
    raise TemplateError(f"cannot evaluate {kind}")  # pragma: no cover - every node kind is handled above


# ------------------------------------------------------------------------------------------------------
# Templates: text, {{ output }}, {% tags %}, {# comments #}
# ------------------------------------------------------------------------------------------------------

_PART = re.compile(r"(\{\{-?|\{%-?|\{#)(.*?)(-?\}\}|-?%\}|#\})", re.DOTALL)
_RAW_END = re.compile(r"\{%-?\s*endraw\s*-?%\}")


def _lex(text: str) -> list[tuple[str, str]]:
    """The template as ``("text", s)``, ``("out", expr)`` and ``("tag", body)`` parts, whitespace control applied."""
    parts: list[tuple[str, str]] = []
    pos = 0
    strip_next = False
    while True:
        m = _PART.search(text, pos)
        chunk = text[pos : m.start()] if m else text[pos:]
        if strip_next:
            chunk = chunk.lstrip()
        if m is None:
            for opener in ("{{", "{%", "{#"):
                if opener in chunk:
                    raise TemplateError(f"{opener} at {chunk[chunk.index(opener):][:30]!r} is never closed")
            if chunk:
                parts.append(("text", chunk))
            break
        opener, body, closer = m.group(1), m.group(2), m.group(3)
        if opener.endswith("-"):
            chunk = chunk.rstrip()
        if chunk:
            parts.append(("text", chunk))
        strip_next = closer.startswith("-")
        pos = m.end()
        if opener == "{#":
            continue
        if opener.startswith("{{"):
            parts.append(("out", body))
            continue
        if body.strip() == "raw":
            end = _RAW_END.search(text, pos)
            if end is None:
                raise TemplateError("{% raw %} without {% endraw %}")
            parts.append(("text", text[pos : end.start()]))
            pos = end.end()
            continue
        parts.append(("tag", body.strip()))
    return parts


Block = list[Any]


def _parse_blocks(parts: list[tuple[str, str]], i: int, ends: tuple[str, ...]) -> tuple[Block, int, str]:
    """Nodes up to one of the tags ``ends`` (returned with where it stopped and the tag that stopped it)."""
    nodes: Block = []
    while i < len(parts):
        kind, body = parts[i]
        if kind == "text":
            nodes.append(("text", body))
            i += 1
            continue
        if kind == "out":
            nodes.append(("out", parse_expr(body)))
            i += 1
            continue
        word = body.split(None, 1)[0] if body else ""
        if word in ends:
            return nodes, i, body
        if word == "if":
            node, i = _parse_if(parts, i)
            nodes.append(node)
        elif word == "for":
            node, i = _parse_for(parts, i)
            nodes.append(node)
        elif word == "set":
            m = re.match(r"set\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*=(.*)$", body, re.DOTALL)
            if m is None:
                raise TemplateError(f"{{% {body} %}}: only '{{% set name = expression %}}' is supported")
            nodes.append(("set", m.group(1), parse_expr(m.group(2))))
            i += 1
        else:
            raise TemplateUnsupported(
                f"the tag {{% {word} %}} is not one evalnb renders (if, for, set, raw)"
            )
    if ends:
        raise TemplateError(f"missing {{% {ends[-1]} %}}")
    return nodes, i, ""


def _parse_if(parts: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    branches: list[tuple[Node | None, Block]] = []
    cond: Node | None = parse_expr(parts[i][1][2:])
    i += 1
    while True:
        body, i, stop = _parse_blocks(parts, i, ("elif", "elseif", "else", "endif"))
        branches.append((cond, body))
        word = stop.split(None, 1)[0]
        i += 1
        if word == "endif":
            return ("if", branches), i
        cond = None if word == "else" else parse_expr(stop[len(word) :])


def _parse_for(parts: list[tuple[str, str]], i: int) -> tuple[Any, int]:
    m = re.match(r"for\s+([A-Za-z_$][\w$]*)(?:\s*,\s*([A-Za-z_$][\w$]*))?\s+in\s+(.*)$", parts[i][1], re.DOTALL)
    if m is None:
        raise TemplateError(f"{{% {parts[i][1]} %}}: expected 'for name in expression'")
    names = (m.group(1), m.group(2))
    seq = parse_expr(m.group(3))
    body, i, stop = _parse_blocks(parts, i + 1, ("else", "endfor"))
    other: Block = []
    if stop.split(None, 1)[0] == "else":
        other, i, _ = _parse_blocks(parts, i + 1, ("endfor",))
    return ("for", names, seq, body, other), i + 1


def _run(nodes: Block, scope: dict[str, Any], out: list[str]) -> None:
    for node in nodes:
        kind = node[0]
        if kind == "text":
            out.append(node[1])
        elif kind == "out":
            out.append(js_str(_eval(node[1], scope)))
        elif kind == "set":
            scope[node[1]] = _eval(node[2], scope)
        elif kind == "if":
            for cond, body in node[1]:
                if cond is None or _truthy(_eval(cond, scope)):
                    _run(body, scope, out)
                    break
        elif kind == "for":
            _loop(node, scope, out)


def _loop(node: Any, scope: dict[str, Any], out: list[str]) -> None:
    _, (name, second), seq_node, body, other = node
    seq = _eval(seq_node, scope)
    pairs: list[tuple[Any, Any]]
    if isinstance(seq, Mapping):
        pairs = list(seq.items())
    elif isinstance(seq, (list, tuple, str)):
        pairs = [(v, None) for v in seq]
    else:
        pairs = []
    if not pairs:
        _run(other, scope, out)
        return
    inner = dict(scope)
    n = len(pairs)
    for k, (a, b) in enumerate(pairs):
        if second is not None:
            inner[name], inner[second] = a, b
        else:
            inner[name] = a if not isinstance(seq, Mapping) else a
        inner["loop"] = {
            "index": k + 1,
            "index0": k,
            "revindex": n - k,
            "revindex0": n - k - 1,
            "first": k == 0,
            "last": k == n - 1,
            "length": n,
        }
        _run(body, inner, out)


def compile_template(text: str) -> Block:
    """The parsed template (raises :class:`TemplateError` for what evalnb cannot render)."""
    nodes, _, _ = _parse_blocks(_lex(text), 0, ())
    return nodes


def render(text: str, variables: Mapping[str, Any]) -> str:
    """Render a promptfoo (Nunjucks) template with ``variables``.

    Raises:
        TemplateError: for a construct evalnb does not render (the message names it).
    """
    if "{" not in text:
        return text
    out: list[str] = []
    _run(compile_template(text), dict(variables), out)
    return "".join(out)


def variables(text: str) -> set[str]:
    """The top-level variable names a template reads (``{{ a.b | f(c) }}`` reads ``a`` and ``c``)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, tuple):
            if node and node[0] == "var":
                found.add(node[1])
                return
            for part in node:
                walk(part)
        elif isinstance(node, list):
            for part in node:
                walk(part)

    if "{" in text:
        walk(compile_template(text))
    return found
