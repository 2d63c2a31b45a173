"""Which parsed documents a format takes from other formats' files, tested without importing that format.

A ``.json`` or ``.yaml`` file is read by its own format unless another format takes the parsed document
(``Sniff.takes_from``). The tests here are each taking format's ``Sniff.accepts``; the registry's table of
built-ins names them too, so that a JSON dataset or a cube suite is loaded without importing promptfoo's
module (its YAML parser, its assert table) only to hear that the document is not a promptfoo config.
"""

from __future__ import annotations

from typing import Any


def is_promptfoo_config(data: Any) -> bool:
    """Whether a parsed document is a promptfoo config: top-level ``prompts`` with ``tests`` or ``providers``.

    Example::

        is_promptfoo_config({"prompts": ["Hi {{name}}"], "tests": [{"vars": {"name": "Ada"}}]})
        # True
    """
    return isinstance(data, dict) and "prompts" in data and ("tests" in data or "providers" in data)


def is_promptfoo_asserts(data: Any) -> bool:
    """Whether a parsed document is a bare list of promptfoo asserts (each a mapping with a ``type``)."""
    return isinstance(data, list) and bool(data) and all(isinstance(a, dict) and "type" in a for a in data)


def takes_promptfoo(data: Any) -> bool:
    """What promptfoo's format takes from YAML and JSON files: a config, or a list of asserts (to say what to
    do with it)."""
    return is_promptfoo_config(data) or is_promptfoo_asserts(data)
