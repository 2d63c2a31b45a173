"""promptfoo's YAML: version 1.2, as its parser reads it (docs/promptfoo.md, YAML).

``Yes``, ``no``, ``on`` and ``off`` are text there (YAML 1.1 made them booleans: a var ``body: Yes`` would become
``true``), ``010`` is ten and ``1:20`` is text. Otherwise this is the cube suites' strict safe loader: a key given
twice is an error and aliases may not expand without bound.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from evalnb.formats import _cube_yaml as cube_yaml

__all__ = ["parse"]

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_CORE = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}


def _int(loader: Any, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith("0x"):
        return sign * int(digits[2:], 16)
    if digits.startswith("0o"):
        return sign * int(digits[2:], 8)
    return sign * int(digits, 10)


def _bool(loader: Any, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


def _core(base: Any) -> Any:
    resolvers = {
        first: [(tag, rx) for tag, rx in entries if tag not in _CORE]
        for first, entries in base.yaml_implicit_resolvers.items()
    }
    cls: Any = type(f"_Promptfoo{base.__name__}", (base,), {"yaml_implicit_resolvers": resolvers})
    cls.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
    cls.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
    cls.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
    cls.add_constructor("tag:yaml.org,2002:int", _int)
    cls.add_constructor("tag:yaml.org,2002:bool", _bool)
    return cls


_LOADER = _core(cube_yaml._StrictLoader)
_FAST_LOADER = _core(cube_yaml._StrictFastLoader) if cube_yaml._StrictFastLoader is not None else None


def parse(text: str) -> Any:
    """Parse a promptfoo config's YAML (1.2); a parser failure is ``MALFORMED_YAML`` with line and column."""
    return cube_yaml.parse(text, loaders=(_FAST_LOADER, _LOADER))
