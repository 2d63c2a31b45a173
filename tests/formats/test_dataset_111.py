"""The dataset schema as published now (1.11): allowlists, tags, the tool-call evaluators, diagnostics and the
categorised error codes load and resolve; what the schema does not allow is an error with its location."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import evalnb
from evalnb.checks._text import citation_count
from evalnb.suite import CitationsCheck, ToolCallExecutionCheck, ToolCallSelectionCheck

SELECT = {"calls": [{"tool": {"plugin_name": "p", "function_name": "f"}}]}


def doc(items: list[Any], **root: Any) -> str:
    return json.dumps({"schemaVersion": "1.11.0", **root, "items": items})


def test_allowlist_modes_and_defaults() -> None:
    suite = evalnb.load(
        doc(
            [
                {"prompt": "a"},
                {"prompt": "b", "allowed_tools": [" p_g ", "p_h"]},
                {"prompt": "c", "allowed_tools": ["p_h"], "allowed_tools_mode": "replace"},
                {"prompt": "d", "allowed_tools_mode": "replace"},
                {"turns": [{"prompt": "e"}, {"prompt": "f", "allowed_tools": ["p_x"]}]},
            ],
            default_allowed_tools=["p_f", "p_g"],
        ),
        format="dataset-json",
    )
    assert [t.allowed_tools for c in suite.cases for t in c.turns] == [
        ["p_f", "p_g"],
        ["p_f", "p_g", "p_h"],  # extend: the union, entries trimmed, no repeats
        ["p_h"],
        [],  # replace with nothing: no tool is allowed
        ["p_f", "p_g"],
        ["p_f", "p_g", "p_x"],
    ]
    # an allowlist anywhere makes the document declare one: absent lists resolve to empty (fail closed)
    only_item = evalnb.load(
        doc([{"prompt": "a"}, {"prompt": "b", "allowed_tools": ["p_g"]}]), format="dataset-json"
    )
    assert [c.turns[0].allowed_tools for c in only_item.cases] == [[], ["p_g"]]
    assert evalnb.load(doc([{"prompt": "a"}]), format="dataset-json").cases[0].turns[0].allowed_tools is None


def test_the_tool_call_evaluators_and_their_options() -> None:
    suite = evalnb.load(
        doc(
            [
                {
                    "prompt": "a",
                    "evaluators": {
                        "ToolCallSelection": {**SELECT, "allow_additional_calls": False},
                        "ToolCallExecution": {"calls": SELECT["calls"] * 2},
                    },
                }
            ]
        ),
        format="dataset-json",
    )
    sel, exe = suite.cases[0].turns[0].checks[2:]
    assert isinstance(sel, ToolCallSelectionCheck) and sel.allow_additional_calls is False
    assert isinstance(exe, ToolCallExecutionCheck) and len(exe.calls) == 2
    assert sel.options() == {
        "calls": [{"tool": {"plugin_name": "p", "function_name": "f"}}],
        "allow_additional_calls": False,
    }


def test_tags_diagnostics_and_error_codes_are_kept() -> None:
    item = {
        "prompt": "a",
        "tags": ["t"],
        "response": "r",
        "status": "error",
        "error": {"code": "toolCallNotAllowed", "message": "refused"},
        "scores": {"relevance": {"result": "error", "code": "judgeTimeout", "error": "slow"}},
        "diagnostics": {"tool_calls": {"selected_functions": None, "executions": []}, "other": {"x": 1}},
    }
    suite = evalnb.load(doc([item]), format="dataset-json")
    case = suite.cases[0]
    assert case.meta["tags"] == ["t"]
    assert case.turns[0].meta["diagnostics"]["tool_calls"] == {"selected_functions": None, "executions": []}
    assert case.turns[0].meta["error"]["code"] == "toolCallNotAllowed"


def test_citation_format_is_an_open_string() -> None:
    suite = evalnb.load(
        doc([{"prompt": "a", "evaluators": {"Citations": {"citation_format": "inline"}}}]),
        format="dataset-json",
    )
    spec = suite.cases[0].turns[0].checks[-1]
    assert isinstance(spec, CitationsCheck) and spec.citation_format == "inline"
    text = "See [1], [docs](https://x.org) and 【3:0†source】."
    assert citation_count(text, "inline") == citation_count(text, "mixed") == 3
    assert citation_count(text, "bracket") == 1  # a known format keeps its detection
    result = evalnb.run(suite, lambda p: text, progress=False)
    reason = result.scores.set_index("check")["reason"]["Citations"]
    assert reason.startswith("3 citation(s): 3 in the text (format 'inline' is not one evalnb detects")


@pytest.mark.parametrize(
    "items, root, code, location",
    [
        ([{"prompt": "a", "allowed_tools": ["  "]}], {}, "BLANK_FIELD", "items[0].allowed_tools"),
        ([{"prompt": "a", "allowed_tools": "p_f"}], {}, "TYPE_MISMATCH", "items[0].allowed_tools"),
        (
            [{"prompt": "a", "allowed_tools_mode": "union"}],
            {},
            "INVALID_VALUE",
            "items[0].allowed_tools_mode",
        ),
        ([{"prompt": "a"}], {"default_allowed_tools": [1]}, "TYPE_MISMATCH", "default_allowed_tools[0]"),
        ([{"turns": [{"prompt": "a", "tags": "x"}]}], {}, "TYPE_MISMATCH", "items[0].turns[0].tags"),
        (
            [{"prompt": "a", "evaluators": {"ToolCallSelection": {}}}],
            {},
            "MISSING_FIELD",
            "items[0].evaluators.ToolCallSelection.calls",
        ),
        (
            [{"prompt": "a", "evaluators": {"ToolCallExecution": {"calls": []}}}],
            {},
            "INVALID_VALUE",
            "items[0].evaluators.ToolCallExecution.calls",
        ),
        (
            [
                {
                    "prompt": "a",
                    "evaluators": {"ToolCallSelection": {"calls": [{"tool": {"plugin_name": "p"}}]}},
                }
            ],
            {},
            "MISSING_FIELD",
            "items[0].evaluators.ToolCallSelection.calls[0].tool.function_name",
        ),
        (
            [{"prompt": "a", "error": {"code": "oops", "message": "m"}}],
            {},
            "INVALID_VALUE",
            "items[0].error.code",
        ),
        (
            [
                {
                    "prompt": "a",
                    "scores": {"relevance": {"result": "error", "code": "judgeBored", "error": "e"}},
                }
            ],
            {},
            "INVALID_VALUE",
            "items[0].scores",
        ),
        (
            [{"prompt": "a", "diagnostics": {"tool_calls": {"selected_functions": []}}}],
            {},
            "MISSING_FIELD",
            "items[0].diagnostics.tool_calls.executions",
        ),
    ],
)
def test_what_the_schema_does_not_allow(
    load_error: Callable[..., evalnb.SuiteError],
    items: list[Any],
    root: dict[str, Any],
    code: str,
    location: str,
) -> None:
    err = load_error(doc(items, **root), "dataset-json")
    assert (err.code, err.location) == (code, location), err.describe()
