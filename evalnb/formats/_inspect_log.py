"""``"inspect-log"``: the format name of suites made from Inspect AI logs by :func:`evalnb.read_inspect_log`.

A log is a record of a run, read into a :class:`~evalnb.results.Result` whose suite holds the log's samples; it
is not a suite file to load, so :func:`evalnb.load` never takes one (no suffix, no sniffing) and says where to go.
"""

from __future__ import annotations

from typing import Any

from evalnb.errors import SuiteError
from evalnb.formats._registry import Format, Sniff, register

__all__ = ["NAME"]

NAME = "inspect-log"


def _parse(_: str) -> Any:
    raise SuiteError(
        "INVALID_VALUE",
        "an Inspect AI log is a record of a run: read it with evalnb.read_inspect_log(path), which gives a Result",
    )


def _never(_: Any) -> bool:
    return False


register(
    Format(
        name=NAME,
        suffixes=(),
        malformed="INVALID_VALUE",
        parse=_parse,
        build=lambda data, path: _parse(""),
        schema=lambda: {
            "title": "InspectLog",
            "description": "An Inspect AI log (read with read_inspect_log).",
        },
        sniff=Sniff(order=95, tries=_never),
        what="Inspect AI logs",
    )
)
