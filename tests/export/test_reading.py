"""Reading results back (evalnb/export/_reading.py): a file that is not a result is a StoreError saying what
it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalnb
from evalnb.errors import StoreError


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '[{"prompt": "a", "expected_response": "b"}]',
            "a JSON list, not a result written by Result.to_json",
        ),
        ("{bad", "not valid JSON"),
        ('{"schema_version": 1}', "no suite 'definition'"),
        ('{"schema_version": 1, "definition": {"name": 3}}', "suite 'definition' is not valid"),
    ],
)
def test_reading_a_file_that_is_not_a_result_is_a_store_error(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(StoreError, match=r"results\.json") as info:
        evalnb.read_results(path)
    assert message in str(info.value)
