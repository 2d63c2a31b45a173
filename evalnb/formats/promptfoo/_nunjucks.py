"""The part of Nunjucks that promptfoo templates use, rendered as promptfoo renders it (docs/promptfoo.md, templates).

Supported: ``{{ expr }}`` with variables, attribute and index access (``user.name``, ``items[0]``,
``row['key']``), string / number / boolean literals, lists, ``~`` (concatenation), arithmetic, comparisons,
``and`` / ``or`` / ``not`` / ``in``, the conditional expression ``a if cond else b``, and filters with
arguments; ``{% if %}`` / ``{% elif %}`` / ``{% else %}``, ``{% for x in xs %}`` (with ``loop.index``,
``loop.first``, ``loop.last``, ``{% else %}``), ``{% set %}``, ``{% raw %}``, comments ``{# #}`` and the
whitespace controls ``{%-`` / ``-%}``. As promptfoo configures Nunjucks: no HTML escaping, an undefined variable
renders as nothing, an object prints as ``[object Object]`` and a list as its items joined by commas.

Anything else (an unknown filter, a macro, an include) is a :class:`_TemplateError` naming it: a prompt is never
sent half-rendered.

Example::

    render("Hello {{ name | upper }}!", {"name": "ada"})
    # 'Hello ADA!'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from evalnb.formats.promptfoo._values import (
    FILTERS,
    UNDEFINED,
    _TemplateError,
    _TemplateUnsupported,
    get,
    js_str,
    num_out,
    number,
    truthy,
)

__all__ = ["FILTERS", "_TemplateError", "_TemplateUnsupported", "render", "variables"]


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
            raise _TemplateError(
                f"cannot read the expression {text.strip()!r} at {text[pos:].strip()[:20]!r}"
            )
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
            raise _TemplateError(f"in {self.text.strip()!r}: expected {value or kind}, got {got!r}")
        return self.take()[1]

    def done(self) -> None:
        if not self.peek("end"):
            raise _TemplateError(f"in {self.text.strip()!r}: unexpected {self.toks[self.i][1]!r}")

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
                raise _TemplateUnsupported(f"in {self.text.strip()!r}: calling functions is not supported")
            else:
                return node

    def atom(self) -> Node:
        kind, value = self.take()
        if kind == "num":
            return ("lit", num_out(value))
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
        raise _TemplateError(f"in {self.text.strip()!r}: unexpected {value!r}")


def parse_expr(text: str) -> Node:
    p = _Parser(text)
    node = p.expr()
    p.done()
    return node


def _arith(op: str, a: Any, b: Any) -> Any:
    if op == "+" and (isinstance(a, str) or isinstance(b, str)):
        return js_str(a) + js_str(b)  # JavaScript's + joins text
    x, y = number(a), number(b)
    if op == "+":
        return num_out(x + y)
    if op == "-":
        return num_out(x - y)
    if op == "*":
        return num_out(x * y)
    if op == "**":
        return num_out(x**y)
    if y == 0:
        return math.nan if x == 0 or op != "/" else math.copysign(math.inf, x)
    if op == "/":
        return num_out(x / y)
    if op == "//":
        return math.floor(x / y)
    return num_out(math.fmod(x, y))


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
        x, y = number(a), number(b)
    return bool({"<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op])


def _eval(node: Node, scope: Mapping[str, Any]) -> Any:
    how = _EVAL.get(node[0])
    if how is None:  # pragma: no cover - every node kind the parser makes has its entry
        raise _TemplateError(f"cannot evaluate {node[0]}")
    return how(node, scope)


def _filtered(node: Node, scope: Mapping[str, Any]) -> Any:
    fn = FILTERS.get(node[1])
    if fn is None:
        raise _TemplateUnsupported(
            f"the filter {node[1]!r} is not one evalnb renders ({', '.join(sorted(FILTERS))})"
        )
    args = [_eval(a, scope) for a in node[3]]
    try:
        return fn(_eval(node[2], scope), *args)
    except _TemplateError:
        raise
    except (TypeError, ValueError, AttributeError) as exc:
        raise _TemplateError(f"filter {node[1]!r} failed: {exc}") from None


def _contains(node: Node, scope: Mapping[str, Any]) -> Any:
    item, container = _eval(node[1], scope), _eval(node[2], scope)
    if isinstance(container, str):
        return js_str(item) in container
    if isinstance(container, (list, tuple, dict)):
        return item in container
    return False


def _or(node: Node, scope: Mapping[str, Any]) -> Any:
    left = _eval(node[1], scope)
    return left if truthy(left) else _eval(node[2], scope)


def _and(node: Node, scope: Mapping[str, Any]) -> Any:
    left = _eval(node[1], scope)
    return _eval(node[2], scope) if truthy(left) else left


#: How each kind of expression node evaluates, by the node's first element.
_EVAL: dict[str, Callable[[Node, Mapping[str, Any]], Any]] = {
    "lit": lambda node, scope: node[1],
    "var": lambda node, scope: scope.get(node[1], UNDEFINED),
    "get": lambda node, scope: get(_eval(node[1], scope), _eval(node[2], scope)),
    "filter": _filtered,
    "list": lambda node, scope: [_eval(n, scope) for n in node[1]],
    "dict": lambda node, scope: {js_str(_eval(k, scope)): _eval(v, scope) for k, v in node[1]},
    "cond": lambda node, scope: (
        _eval(node[2], scope) if truthy(_eval(node[1], scope)) else _eval(node[3], scope)
    ),
    "or": _or,
    "and": _and,
    "not": lambda node, scope: not truthy(_eval(node[1], scope)),
    "cmp": lambda node, scope: _compare(node[1], _eval(node[2], scope), _eval(node[3], scope)),
    "in": _contains,
    "concat": lambda node, scope: js_str(_eval(node[1], scope)) + js_str(_eval(node[2], scope)),
    "arith": lambda node, scope: _arith(node[1], _eval(node[2], scope), _eval(node[3], scope)),
    "neg": lambda node, scope: num_out(-number(_eval(node[1], scope))),
}


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
                    raise _TemplateError(f"{opener} at {chunk[chunk.index(opener) :][:30]!r} is never closed")
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
                raise _TemplateError("{% raw %} without {% endraw %}")
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
                raise _TemplateError(f"{{% {body} %}}: only '{{% set name = expression %}}' is supported")
            nodes.append(("set", m.group(1), parse_expr(m.group(2))))
            i += 1
        else:
            raise _TemplateUnsupported(
                f"the tag {{% {word} %}} is not one evalnb renders (if, for, set, raw)"
            )
    if ends:
        raise _TemplateError(f"missing {{% {ends[-1]} %}}")
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
    m = re.match(
        r"for\s+([A-Za-z_$][\w$]*)(?:\s*,\s*([A-Za-z_$][\w$]*))?\s+in\s+(.*)$", parts[i][1], re.DOTALL
    )
    if m is None:
        raise _TemplateError(f"{{% {parts[i][1]} %}}: expected 'for name in expression'")
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
                if cond is None or truthy(_eval(cond, scope)):
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
            inner[name] = a
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
    """The parsed template (raises :class:`_TemplateError` for what evalnb cannot render)."""
    nodes, _, _ = _parse_blocks(_lex(text), 0, ())
    return nodes


def render(text: str, variables: Mapping[str, Any]) -> str:
    """Render a promptfoo (Nunjucks) template with ``variables``.

    Raises:
        _TemplateError: for a construct evalnb does not render (the message names it).
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
