"""The offline demo: a FoodMart-style sample database and a rule-based analytics agent that queries it.

Nothing here needs an API key or a server::

    from evalnb.demo import FoodMartAgent, foodmart_db
    result = evalnb.run(evalnb.examples.path("foodmart-sales"), FoodMartAgent(), data=foodmart_db())

``FoodMartAgent(flaw="cost-for-sales")`` is the same agent with a realistic bug (it reads Store Cost when
asked for Store Sales); it plays "the previous model version" in comparisons.

The other demo agents: :mod:`evalnb.demo.kb` (an offline knowledge-base assistant for the JSON dataset) and
:mod:`evalnb.demo.task_agent` (a command-line task agent for the TOML suite). :mod:`evalnb.demo._main` is the
``evalnb demo`` job that runs all three suites in two versions and compares them.
"""

from __future__ import annotations

from evalnb._lazy import homes, submodule
from evalnb.demo._sample import foodmart_db
from evalnb.demo.analytics import FoodMartAgent

__all__ = ["FoodMartAgent", "foodmart_db"]


def __getattr__(name: str) -> object:
    return submodule(__name__, name)  # evalnb.demo.kb, evalnb.demo.task_agent after `import evalnb` alone


homes(__name__, globals(), __all__)  # reprs and docs name the public path
