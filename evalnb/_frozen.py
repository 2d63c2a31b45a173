"""A dict and a list that refuse to change: what equal cases of a large suite share.

A dataset's items that give the same ``tags`` get one ``meta`` of a case, one object for all of them
(docs/dataset-json.md, evaluators): a million items of a few tag sets held a million equal
dicts and lists, ~250 MB. Shared, they must not change under one case and so under all; changing one says how
to give that case a meta of its own. They are a ``dict`` and a ``list`` for everything else (equality, JSON,
``model_dump``, ``isinstance``); a copy (``dict(meta)``, ``copy.copy``, ``copy.deepcopy``) is an ordinary
dict or list, the caller's to change; a pickled one comes back shared and frozen as it went.

Example::

    meta = FrozenDict({"tags": FrozenList(["smoke"])})
    meta == {"tags": ["smoke"]}
    # True
    meta["reviewed"] = True
    # TypeError: this meta is shared by every case with the same tags ...
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList"]

_HOW = (
    "this {what} is shared by every case with the same tags (a large suite holds equal things once); give the "
    "case one of its own instead, e.g. {example}"
)


_META = "case.meta = {**case.meta, 'reviewed': True}"
_TAGS = "case.meta = {**case.meta, 'tags': [*case.meta['tags'], 'new']}"


def _refuse(what: str, example: str) -> Any:
    def refused(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(_HOW.format(what=what, example=example))

    return refused


class FrozenDict(dict[Any, Any]):
    """A ``dict`` that refuses to change (see the module docstring)."""

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _refuse("meta", _META)
    clear = pop = popitem = setdefault = update = _refuse("meta", _META)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}


class FrozenList(list[Any]):
    """A ``list`` that refuses to change (see the module docstring)."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse("list of tags", _TAGS)
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse("list of tags", _TAGS)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(v, memo) for v in self]
