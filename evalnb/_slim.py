"""What the suite model's cases and turns share: slotted pydantic dataclasses that answer like models."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import TypeAdapter

__all__ = ["_Slim"]


class _Slim:
    """What cases and turns share: they are slotted pydantic dataclasses, not models, because a suite holds one
    of each per case. A BaseModel instance carries a ``__dict__`` and a set of the fields given; at a million
    cases those took ~1.7 KB a case, the slotted ones ~0.75 KB (measured), and they build twice as fast.

    The model methods users call on them still work: :meth:`model_dump`, :meth:`model_dump_json`,
    :meth:`model_copy` and :meth:`model_validate`. ``model_fields_set`` is not offered: a slotted instance does
    not record which fields its caller gave, and a set of every field would say what is not so.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]

    @classmethod
    def _adapter(cls) -> TypeAdapter[Any]:
        adapter = cls.__dict__.get("_type_adapter")
        if adapter is None:
            adapter = TypeAdapter(cls)
            type.__setattr__(cls, "_type_adapter", adapter)
        return adapter

    @classmethod
    def _trusted(cls, **fields: Any) -> Any:
        """An instance of values validated already (a loader's, from its own validated document), built
        without validating them again: at a million cases the second validation was a third of the load.
        Fields not given take their defaults (a new list or dict each)."""
        return cls._trusted_maker()(**fields)

    @classmethod
    def _trusted_maker(cls) -> Any:
        """The function :meth:`_trusted` calls (a loader building a million cases calls it directly)."""
        make = cls.__dict__.get("_make_trusted")
        if make is None:
            make = _trusted_maker(cls)
            type.__setattr__(cls, "_make_trusted", make)
        return make

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """Validate ``data`` (a mapping or an instance) into an instance, as a model's ``model_validate``."""
        return cls._adapter().validate_python(data)

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """The fields as plain data (the options of ``BaseModel.model_dump``: ``mode``, ``exclude`` ...)."""
        out: dict[str, Any] = self._adapter().dump_python(self, **options)
        return out

    def model_dump_json(self, **options: Any) -> str:
        return self._adapter().dump_json(self, **options).decode()

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy with ``update`` applied (not validated, as ``BaseModel.model_copy``)."""
        import copy

        out = copy.deepcopy(self) if deep else copy.copy(self)
        for name, value in (update or {}).items():
            object.__setattr__(out, name, value)
        return out


def _trusted_maker(cls: type[Any]) -> Any:
    """A function of the class's fields (keyword-only, defaults as declared) that sets them on a new instance,
    generated once per class as the standard library's dataclasses generate ``__init__`` (a Python loop over
    the fields per instance cost as much as the validation it replaces)."""
    scope: dict[str, Any] = {"_new": object.__new__, "_put": object.__setattr__, "_cls": cls}
    params, body = [], ["    o = _new(_cls)"]
    for i, (name, info) in enumerate(cls.__pydantic_fields__.items()):
        if info.default_factory is not None:
            scope[f"_f{i}"] = info.default_factory
            params.append(f"{name}=_cls")  # the class itself: a sentinel no field's value can be
            body.append(f"    _put(o, {name!r}, _f{i}() if {name} is _cls else {name})")
            continue
        if info.is_required():
            params.append(name)
        else:
            scope[f"_d{i}"] = info.default
            params.append(f"{name}=_d{i}")
        body.append(f"    _put(o, {name!r}, {name})")
    source = f"def make(*, {', '.join(params)}):\n" + "\n".join(body) + "\n    return o\n"
    exec(source, scope)  # the source is built above from the class's own field names
    return scope["make"]
