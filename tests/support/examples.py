"""Where the shipped examples are (the package data of ``evalnb.examples``): tests name files by it."""

from __future__ import annotations

from evalnb.examples import resource

EXAMPLES = resource("suites/tasks.toml").parents[1]
"""The folder of the shipped examples: ``suites/``, ``kb/``, ``labels/``, ``foodmart/``."""
