"""Type aliases for what ``evalnb.run``, ``rescore`` and ``pairwise`` accept, for your own annotations.

* :data:`AgentLike`: an agent: an object with ``async respond(request) -> Response`` (``evalnb.agents``),
  a callable (sync or async, taking the prompt or a ``Request``), or a mapping ``{agent_id: agent}`` routing
  the cases that name their agent;
* :data:`JudgeLike`: a judge: an ``evalnb.judges`` object (``Judge``), a callable ``f(prompt) -> str``, a
  judge string (``"openai:gpt-4o-mini"``, ``"heuristic"``, ``"module:function"``), or ``None``;
* :data:`StoreLike`: a store: an ``evalnb.Store``, the path of a SQLite file or a SQLAlchemy URL, or ``None``;
* :data:`DataLike`: the data of cube reference queries: a source as ``evalnb.data.connect`` returns it, a SQLite or DuckDB file,
  a SQLAlchemy URL or Engine, a mapping of table name to DataFrame, an open ``sqlite3.Connection``, or ``None``.

The classes are named by forward reference, so importing this module imports nothing else of evalnb.

Example::

    from evalnb.typing import AgentLike

    def nightly(agent: AgentLike) -> evalnb.Result:
        return evalnb.run("evals/kb.yaml", agent, runs=3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeAlias, Union

if TYPE_CHECKING:
    from evalnb.agents import Agent
    from evalnb.data._sources import Source
    from evalnb.judges import Judge
    from evalnb.store import Store

__all__ = ["AgentLike", "DataLike", "JudgeLike", "StoreLike"]

# Union[...] with forward references (not `X | Y`): the aliases are real typing objects at run time, and the
# classes they name are imported only by a type checker (docs/architecture.md, layers).
AgentLike: TypeAlias = Union["Agent", Callable[..., Any], Mapping[str, Union["Agent", Callable[..., Any]]]]
"""An agent object, a callable, or a mapping ``{agent_id: agent}`` (``evalnb.run``'s ``agent``)."""

JudgeLike: TypeAlias = Union["Judge", Callable[..., Any], str, None]
"""A Judge, a callable ``f(prompt) -> str``, a judge string, or ``None`` (``evalnb.run``'s ``judge``)."""

StoreLike: TypeAlias = Union["Store", str, "PathLike[str]", None]
"""A Store, a SQLite path or SQLAlchemy URL, or ``None`` (``evalnb.run``'s ``store``)."""

DataLike: TypeAlias = Union["Source", str, "PathLike[str]", Mapping[str, Any], Any, None]
"""A data source or what opens one (``evalnb.run``'s ``data``; see ``evalnb.data.connect``): an Engine or a
``sqlite3.Connection`` are accepted too, hence ``Any``."""
