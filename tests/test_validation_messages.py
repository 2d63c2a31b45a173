"""One translator of pydantic's validation errors (evalnb/_validation.py): every place that reads validated
input says a problem with the same location and sentence, and keeps its own error code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import evalnb
from evalnb._validation import describe, format_loc, problem, problems
from evalnb.config import Config
from evalnb.errors import ConfigError, StoreError, SuiteError
from evalnb.formats._common import NonBlank


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    prompt: NonBlank
    runs: Annotated[int, Field(ge=1)] = 1
    mode: Literal["a", "b"] = "a"


class Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    items: list[Turn]


def _exc(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Doc.model_validate(data)
    return info.value


def test_each_kind_of_problem_has_its_code_location_and_sentence() -> None:
    exc = _exc({"items": [{"prompt": 3}, {"prompt": " ", "runs": 0, "mode": "c", "extra": 1}, {}], "x": 1})
    said = {(p.location, p.code, p.said()) for p in problems(exc)}
    assert said == {
        ("items[0].prompt", "TYPE_MISMATCH", "items[0].prompt must be a string, got integer"),
        ("items[1].prompt", "BLANK_FIELD", "items[1].prompt must not be empty or only whitespace"),
        ("items[1].runs", "INVALID_VALUE", "items[1].runs must be greater than or equal to 1, got 0"),
        ("items[1].mode", "INVALID_VALUE", "items[1].mode must be 'a' or 'b', got 'c'"),
        ("items[1].extra", "UNKNOWN_FIELD", "items[1].extra is not a key defined here"),
        ("items[2].prompt", "MISSING_FIELD", "items[2].prompt is missing (a required key)"),
        ("x", "UNKNOWN_FIELD", "x is not a key defined here"),
    }


def test_describe_names_the_first_problems_and_counts_the_rest() -> None:
    exc = _exc({"items": [{"prompt": 3, "runs": "2"}, {"prompt": 4}]})
    assert describe(exc, limit=2) == (
        "items[0].prompt: must be a string, got integer; items[0].runs: must be an integer, got string (and 1 more)"
    )
    assert describe(exc, limit=1, values=False) == "items[0].prompt: must be a string (and 2 more)"
    top = _exc([1])
    assert describe(top, whole="the whole document") == "the whole document: must be a mapping, got list"


def test_a_message_of_pydantics_own_reads_after_a_colon() -> None:
    said = problem(
        {"type": "date_from_datetime_parsing", "loc": ("when",), "msg": "Input should be a valid date"}
    )
    assert (said.code, said.said()) == ("TYPE_MISMATCH", "when: Input should be a valid date")
    assert format_loc(("evaluators", "my key", 0)) == "evaluators['my key'][0]"


def test_the_suite_formats_say_it(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "s"\n[[tasks]]\nid = "a"\nprompt = "p"\nruns = "two"\n', encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        evalnb.load(path)
    assert info.value.code == "TYPE_MISMATCH" and info.value.location.endswith("runs")
    assert "'runs' must be an integer, got string" in str(info.value)


def test_evalnb_toml_says_it() -> None:
    with pytest.raises(ConfigError, match=r"agents\.x\.timeout: must be greater than 0, got -1") as info:
        Config.from_dict({"agents": {"x": {"type": "openai", "model": "m", "timeout": -1}}})
    assert info.value.code == "INVALID_VALUE"


def test_a_saved_result_says_it_without_pydantics_dump() -> None:
    import pandas as pd

    from evalnb.results import Result

    result = evalnb.run(
        evalnb.from_frame(pd.DataFrame({"prompt": ["hi"], "expected": ["hi"]})), agent=lambda p: p
    )
    data = json.loads(result.to_json())
    data["definition"]["cases"][0]["runs"] = "many"
    with pytest.raises(StoreError) as info:
        Result.from_dict(data, where="r.json")
    message = str(info.value)
    assert info.value.code == "UNKNOWN_RESULTS"
    assert "r.json: the result's suite 'definition' is not valid: cases[0].runs: " in message
    assert "errors.pydantic.dev" not in message and "validation error for" not in message
