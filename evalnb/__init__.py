"""evalnb: evaluate LLM agents from Jupyter notebooks and CI.

Load TOML task suites, YAML cube suites and JSON datasets into one model, run them against any agent,
and get pandas DataFrames back::

    import evalnb
    suite = evalnb.load(evalnb.examples.path("foodmart-sales"))   # or evalnb.from_frame(df), a CSV, a JSONL
    result = evalnb.run(suite, my_agent)
    result.scores          # one row per case x run x turn x check

Names are resolved lazily so that ``import evalnb`` stays light (no plotly, SQLAlchemy or aiohttp).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalnb._gc import paused as _paused

# What these imports make (pydantic and the suite's models, asyncio) lives as long as the process: the cyclic
# collector does not examine it as it comes (7 ms of the import, evalnb/_gc.py).
with _paused():
    from evalnb import _hooks
    from evalnb._lazy import homes, submodule
    from evalnb._version import __version__
    from evalnb.agents._base import Request, Response, ToolCall
    from evalnb.errors import ConfigError, EvalnbError, SuiteError, TransientError
    from evalnb.suite import Case, Suite, Turn

if TYPE_CHECKING:
    from evalnb import agents, checks, examples, executors, judges, plots
    from evalnb.comparison import compare, power
    from evalnb.export import read_inspect_log, read_results
    from evalnb.formats import discover, from_frame, load, upgrade
    from evalnb.preference import pairwise, rank
    from evalnb.results import Result
    from evalnb.running import Budget, RunOptions
    from evalnb.running._api import run, run_async
    from evalnb.running._rescore import rescore
    from evalnb.store import Store


__all__ = [
    "Budget",
    "Case",
    "ConfigError",
    "EvalnbError",
    "Request",
    "Response",
    "Result",
    "RunOptions",
    "Store",
    "Suite",
    "SuiteError",
    "ToolCall",
    "TransientError",
    "Turn",
    "__version__",
    "agents",
    "checks",
    "compare",
    "discover",
    "errors",
    "examples",
    "executors",
    "from_frame",
    "judges",
    "load",
    "pairwise",
    "plots",
    "power",
    "rank",
    "read_inspect_log",
    "read_results",
    "rescore",
    "run",
    "run_async",
    "upgrade",
]

# What the lower layers carry out through a higher package (docs/architecture.md, layers): each slot of
# evalnb._hooks named here, above every layer, as a dotted name imported on first use.
_hooks.provide("result.explore", "evalnb.browser:explore_result")
_hooks.provide("comparison.explore", "evalnb.browser:explore_comparison")
_hooks.provide("writers", "evalnb.export")  # its import registers the writers of evalnb.results.outputs
_hooks.provide("formats", "evalnb.formats._registry")  # Suite.format is a registered format's name
_hooks.provide("run", "evalnb.running:run")  # evalnb.judges.offline measures a judge through the runner
_hooks.provide("rescore", "evalnb.running:rescore")  # the deprecated evalnb.judges.rescore
_hooks.provide("rescore_async", "evalnb.running:rescore_async")
_hooks.provide("store.pairwise", "evalnb.preference:pairwise")  # Store.pairwise: the store sits below it
# Pairwise.explore: the browser sits above evalnb.preference
_hooks.provide("pairwise.explore", "evalnb.browser:explore_pairwise")

# public name -> module that defines it (None: the name is a submodule)
_LAZY: dict[str, str | None] = {
    "load": "evalnb.formats",
    "discover": "evalnb.formats",
    "upgrade": "evalnb.formats",
    "from_frame": "evalnb.formats",
    "run": "evalnb.running",
    "Budget": "evalnb.running",
    "RunOptions": "evalnb.running",
    "run_async": "evalnb.running",
    "Result": "evalnb.results",
    "read_results": "evalnb.export",
    "read_inspect_log": "evalnb.export",
    "Store": "evalnb.store",
    "compare": "evalnb.comparison",
    "power": "evalnb.comparison",
    "pairwise": "evalnb.preference",
    "rank": "evalnb.preference",
    "rescore": "evalnb.running",
    "agents": None,
    "checks": None,
    "comparison": None,
    "judges": None,
    "plots": None,
    "errors": None,
    "examples": None,
    "executors": None,
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        # any other public submodule (evalnb.export, evalnb.demo ...): documented dotted names resolve
        return submodule(__name__, name)
    module = _LAZY[name]
    value: Any = (
        importlib.import_module(f"evalnb.{name}")
        if module is None
        else getattr(importlib.import_module(module), name)
    )
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


homes(__name__, globals(), __all__)  # reprs and docs name the public path
