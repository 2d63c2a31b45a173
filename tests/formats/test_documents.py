"""Dataset documents evalnb writes itself: inline suites, saved prompts, legacy files upgraded on load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import evalnb
from evalnb.formats import load_upgrading
from evalnb.formats._dataset_json import inline_suite, save_items
from tests.support.examples import EXAMPLES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_inline_suite_pairs_prompts_with_answers_and_names_its_arguments() -> None:
    suite = inline_suite(["What is 2+2?", "Capital of France?"], ["4", "Paris"])
    assert [c.id for c in suite.cases] == ["inline-1", "inline-2"] and suite.name == "inline"
    assert [spec.name for spec in suite.cases[0].turns[0].checks] == ["ExactMatch", "PartialMatch"]
    assert [s.name for s in inline_suite(["q"]).cases[0].turns[0].checks] == ["Relevance", "Coherence"]
    assert inline_suite(["q"], judged=False).cases[0].turns[0].checks == []
    with pytest.raises(evalnb.SuiteError) as blank:
        inline_suite(["fine", "  "])
    assert (blank.value.code, blank.value.location) == ("BLANK_FIELD", "prompts[1]")
    with pytest.raises(evalnb.SuiteError, match="got 2 prompts and 1 expected answers") as unpaired:
        inline_suite(["a", "b"], ["x"])
    assert unpaired.value.code == "INVALID_VALUE"


def test_saved_items_load_back_and_never_overwrite(tmp_path: Path) -> None:
    items = [{"prompt": "What is 2+2?", "expected_response": "4"}, {"prompt": "Say hi"}]
    path = save_items(items, tmp_path / "evals" / "tried.json", description="tried")
    doc = json.loads(path.read_text())
    assert doc["items"] == items and doc["default_evaluators"] == {"ExactMatch": {}, "PartialMatch": {}}
    assert [c.turns[0].prompt for c in evalnb.load(path).cases] == ["What is 2+2?", "Say hi"]
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        save_items([{"prompt": "other"}], path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["tried.json"]  # no temporary left behind
    with pytest.raises(evalnb.SuiteError):
        save_items([{"prompt": ""}], tmp_path / "blank.json")  # never saves what would not load
    assert not (tmp_path / "blank.json").exists()


def test_load_upgrading_upgrades_a_legacy_dataset_once(tmp_path: Path) -> None:
    path = tmp_path / "legacy.json"
    shutil.copy(FIXTURES / "dataset-legacy.json", path)
    original = path.read_bytes()
    suite, backup = load_upgrading(path)
    assert backup is not None and backup.read_bytes() == original
    assert "schemaVersion" in json.loads(path.read_text()) and suite.cases
    again, none = load_upgrading(path)
    assert none is None and [c.id for c in again.cases] == [c.id for c in suite.cases]
    toml, no_backup = load_upgrading(EXAMPLES / "suites" / "tasks.toml")
    assert no_backup is None and toml.format == "tasks-toml"
