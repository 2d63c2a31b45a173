"""Reading names in structured reference queries, matched as the rows check matches row keys
(docs/cube-yaml.md, structured reference queries)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from evalnb.errors import ReferenceQueryError

__all__ = ["as_list", "axis_name", "bare", "item_name", "lookup", "norm"]


def norm(name: str) -> str:
    # docs/cube-yaml.md, row comparison: keys case-insensitive, spaces, "_" and "-" removed
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def bare(name: str) -> str:
    """``[Product].[Product Family]`` -> ``Product Family`` (MDX-style unique names are accepted)."""
    parts = re.findall(r"\[([^\]]*)\]", name)
    return parts[-1] if parts else name


def lookup(table: Mapping[str, Any], name: str) -> Any:
    """The entry of ``table`` whose name or one of whose ``aliases`` normalises like ``name``, else None."""
    key = norm(name)
    for real, item in table.items():
        if norm(real) == key or key in {norm(a) for a in getattr(item, "aliases", ())}:
            return item
    return None


def item_name(item: Any, keys: Iterable[str]) -> str:
    """The name an item gives under the first of ``keys`` it has (or the item itself, a plain string)."""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        for k in keys:
            if item.get(k):
                return str(item[k])
    raise ReferenceQueryError(f"cannot read a name from {item!r}: write {{name: ...}} or a plain string")


def axis_name(item: Any) -> str:
    # cube YAML row axes are {dimension, hierarchy?, level?}: the most specific name given wins.
    return item_name(item, ("level", "name", "uniqueName", "hierarchy", "dimension"))


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]
