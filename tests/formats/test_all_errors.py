"""Every error of a file in one pass: document order, the first raised, all of them in ``.errors``."""

from __future__ import annotations

import json
import pickle
import time

import pytest

import evalnb
from evalnb.formats import _cube_yaml as cube_yaml

CUBE = "cube: {connectionName: c, catalog: FoodMart, schema: FoodMart, cubeName: Sales}\n"


def errors_of(text: str, fmt: str) -> evalnb.SuiteError:
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(text, format=fmt)
    return info.value


def lines(exc: evalnb.SuiteError) -> list[tuple[str, str]]:
    return [(e.location, e.code) for e in exc.errors]


# ------------------------------------------------------------------------------------------------------
# tasks-toml
# ------------------------------------------------------------------------------------------------------


def test_toml_reports_a_string_runs_and_a_misspelt_key_together():
    text = (
        'name = "s"\n'
        "[[tasks]]\n"
        'id = "t"\n'
        'prompt = "p"\n'
        'runs = "3"\n'
        "[[tasks.assertions]]\n"
        'type = "exit_code"\n'
        "equal = 0\n"
    )
    exc = errors_of(text, "tasks-toml")
    assert lines(exc) == [
        ("tasks[0].runs", "TYPE_MISMATCH"),
        ("tasks[0].assertions[0].equal", "UNKNOWN_FIELD"),
    ]
    # `.code` and `.location` keep their meaning: those of the first error
    assert (exc.code, exc.location) == ("TYPE_MISMATCH", "tasks[0].runs")
    assert exc.errors[0] is exc
    # the near miss `equal` stands for the missing `equals`: reported once, as the unknown key
    assert exc.errors[1].suggestion == "equals"
    assert not any(e.code == "MISSING_FIELD" for e in exc.errors)


def test_toml_custom_checks_join_validation_errors_in_document_order():
    text = (
        'name = ""\n'
        "[[tasks]]\n"
        'id = "a"\n'
        'prompt = "p"\n'
        "[[tasks.assertions]]\n"
        'type = "regex"\n'
        'on = "stdout"\n'
        'pattern = "("\n'
        "[[tasks]]\n"
        'id = "a"\n'
        'promt = "q"\n'
        "runs = -1\n"
        "[[tasks]]\n"
        'id = "b"\n'
        'prompt = "r"\n'
        "[[tasks.assertions]]\n"
        'type = "regexp"\n'
    )
    exc = errors_of(text, "tasks-toml")
    assert lines(exc) == [
        ("name", "BLANK_FIELD"),
        ("tasks[0].assertions[0].pattern", "INVALID_VALUE"),
        ("tasks[1].id", "INVALID_VALUE"),
        ("tasks[1].promt", "UNKNOWN_FIELD"),
        ("tasks[1].runs", "INVALID_VALUE"),
        ("tasks[2].assertions[0].type", "INVALID_VALUE"),
    ]
    assert "duplicate task id 'a'" in exc.errors[2].message
    assert exc.errors[5].suggestion == "regex"


def test_a_single_error_file_has_a_list_of_one():
    exc = errors_of('name = "s"\n[[tasks]]\nid = "t"\n', "tasks-toml")
    assert exc.errors == [exc]
    assert (exc.code, exc.location) == ("MISSING_FIELD", "tasks[0].prompt")


@pytest.mark.parametrize(
    ("text", "fmt", "code"),
    [
        ('name = "s"\nruns = = 3\nid = ', "tasks-toml", "MALFORMED_TOML"),
        ("name: [unclosed\ncases: {", "cube-yaml", "MALFORMED_YAML"),
        ('{"items": [1, 2,, 3], "itms": 0}', "dataset-json", "MALFORMED_JSON"),
    ],
)
def test_parser_failures_stay_single(text, fmt, code):
    exc = errors_of(text, fmt)
    assert exc.code == code
    assert exc.errors == [exc]


# ------------------------------------------------------------------------------------------------------
# cube-yaml
# ------------------------------------------------------------------------------------------------------


def test_yaml_reports_a_misspelt_expectation_and_a_negative_tolerance():
    text = (
        "name: s\n"
        + CUBE
        + "cases:\n"
        + "  - name: a\n"
        + "    question: q\n"
        + "    expectedRow: [{country: USA}]\n"
        + "    tolerance: {absolute: -1}\n"
    )
    exc = errors_of(text, "cube-yaml")
    assert lines(exc) == [
        ("cases[0].expectedRow", "UNKNOWN_FIELD"),
        ("cases[0].tolerance.absolute", "INVALID_TOLERANCE"),
    ]
    assert exc.code == "UNKNOWN_FIELD" and exc.suggestion == "expectedRows"


def test_yaml_near_miss_of_a_required_key_wins_over_missing_and_is_not_reported_twice():
    text = "name: s\ncube: {connectionName: c, catalog: F, schem: F, cubeName: S}\ncases:\n  - nam: a\n    question: q\n"
    exc = errors_of(text, "cube-yaml")
    assert lines(exc) == [("cube.schem", "UNKNOWN_FIELD"), ("cases[0].nam", "UNKNOWN_FIELD")]
    assert [e.suggestion for e in exc.errors] == ["schema", "name"]


def test_yaml_cross_key_rules_join_the_others():
    text = (
        "name: s\n"
        + CUBE
        + "cases:\n"
        + "  - name: a\n    question: q\n    expectedIntent: nope\n"
        + "  - name: a\n    question: ''\n"
        + "    expectedRows: [{x: 1}]\n    referenceQuery: {sql: select 1}\n"
        + "  - name: b\n    question: q\n    referenceQuery: {rows: [{dimension: Store}]}\n"
    )
    exc = errors_of(text, "cube-yaml")
    assert lines(exc) == [
        ("cases[0].expectedIntent", "INVALID_VALUE"),
        ("cases[1].name", "INVALID_VALUE"),
        ("cases[1].question", "BLANK_FIELD"),
        ("cases[1].referenceQuery", "INVALID_VALUE"),
        ("cases[2].referenceQuery.sql", "MISSING_FIELD"),
    ]
    assert "duplicate case name 'a'" in exc.errors[1].message


def test_missing_keys_sort_after_the_keys_present_beside_them():
    exc = errors_of("description: 5\nname: ''\n", "cube-yaml")
    assert lines(exc) == [
        ("description", "TYPE_MISMATCH"),
        ("name", "BLANK_FIELD"),
        ("cube", "MISSING_FIELD"),
        ("cases", "MISSING_FIELD"),
    ]


# ------------------------------------------------------------------------------------------------------
# YAML alias bombs
# ------------------------------------------------------------------------------------------------------


def _bomb(levels: int, where: str) -> str:
    anchors = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels + 1):
        anchors.append(f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 9) + "]")
    body = "".join(f"  {a}\n" for a in anchors)
    return f"defs:\n{body}name: s\n{CUBE}cases:\n  - name: a\n    question: q\n    {where}: *a{levels}\n"


@pytest.mark.parametrize("where", ["expectedRows", "history", "expectedInsightContains"])
def test_a_billion_laughs_document_fails_fast(where):
    text = _bomb(9, where)  # 9**10 strings once expanded; a few hundred bytes on disk
    assert len(text) < 1000
    started = time.perf_counter()
    exc = errors_of(text, "cube-yaml")
    assert time.perf_counter() - started < 1.0
    assert exc.code == "MALFORMED_YAML"
    assert "aliases expand" in exc.message
    assert exc.errors == [exc]


def test_a_recursive_alias_is_malformed():
    exc = errors_of("name: &x [*x]\n" + CUBE + "cases: [{name: a, question: q}]\n", "cube-yaml")
    assert exc.code == "MALFORMED_YAML" and "contains it" in exc.message


def test_ordinary_anchor_reuse_stays_below_the_limit():
    cases = "".join(f"  - <<: *base\n    name: c{i}\n" for i in range(200))
    text = "name: s\n" + CUBE + "defaults: &base {question: q, tolerance: {absolute: 0.5}}\n"
    # `defaults` is not a key of the format: the anchor is reused, then the key itself is reported
    exc = errors_of(text + "cases:\n" + cases, "cube-yaml")
    assert lines(exc) == [("defaults", "UNKNOWN_FIELD")]
    assert cube_yaml.MAX_ALIAS_NODES >= 100_000


# ------------------------------------------------------------------------------------------------------
# dataset-json
# ------------------------------------------------------------------------------------------------------


def test_json_reports_gates_evaluators_duplicates_and_validation_together():
    doc = {
        "schemaVersion": "1.0.0",
        "items": [
            {"prompt": "a", "testId": "T", "evaluators": {"Relevance": {"threshold": 9}, "Nope": {}}},
            {"prompt": "", "testId": "T", "expected_respons": "x"},
            {"turns": [{"prompt": "p"}], "expected_response": "y"},
            {"promt": "q"},
            5,
        ],
    }
    exc = errors_of(json.dumps(doc), "dataset-json")
    assert lines(exc) == [
        ("items[0].evaluators", "UNSUPPORTED_VERSION"),
        ("items[0].evaluators.Relevance.threshold", "INVALID_VALUE"),
        ("items[0].evaluators.Nope", "UNKNOWN_FIELD"),
        ("items[1].prompt", "BLANK_FIELD"),
        ("items[1].testId", "INVALID_VALUE"),
        ("items[1].expected_respons", "UNKNOWN_FIELD"),
        ("items[2].turns", "UNSUPPORTED_VERSION"),
        ("items[2].expected_response", "INVALID_VALUE"),
        ("items[3].promt", "UNKNOWN_FIELD"),
        ("items[4]", "TYPE_MISMATCH"),
    ]
    assert "needs schemaVersion 1.1.0" in exc.message
    assert "duplicate case id 'T'" in exc.errors[4].message


def test_json_root_errors_and_a_near_miss_of_items():
    exc = errors_of('{"descripton": "x", "itms": [], "metadata": {"name": 3}}', "dataset-json")
    assert lines(exc) == [
        ("descripton", "UNKNOWN_FIELD"),
        ("itms", "UNKNOWN_FIELD"),
        ("metadata.name", "TYPE_MISMATCH"),
    ]
    assert [e.suggestion for e in exc.errors[:2]] == ["description", "items"]
    missing = errors_of('{"schemaVersion": "1.7.0", "description": 1}', "dataset-json")
    assert lines(missing) == [("description", "TYPE_MISMATCH"), ("items", "MISSING_FIELD")]
    assert "the list of test items" in missing.errors[1].message


def test_json_custom_check_options_are_all_reported():
    from evalnb.checks import _registry as registry

    def tone(turn, response, *, polite: bool = True, strict: bool = False):  # pragma: no cover - not run
        return 1.0

    registry.register("ToneCheckAll", tone)
    try:
        doc = {
            "schemaVersion": "1.7.0",
            "items": [{"prompt": "p", "evaluators": {"ToneCheckAll": {"polit": True, "loud": 1}}}],
        }
        exc = errors_of(json.dumps(doc), "dataset-json")
    finally:
        registry.unregister("ToneCheckAll")
    assert lines(exc) == [
        ("items[0].evaluators.ToneCheckAll.polit", "UNKNOWN_FIELD"),
        ("items[0].evaluators.ToneCheckAll.loud", "UNKNOWN_FIELD"),
    ]
    assert exc.suggestion == "polite"


def test_json_legacy_pairs_report_all_their_errors():
    exc = errors_of('{"prompts": ["a", ""], "expected_responses": ["x"]}', "dataset-json")
    assert lines(exc) == [("prompts[1]", "BLANK_FIELD"), ("expected_responses", "INVALID_VALUE")]


def test_an_unsupported_version_is_reported_alone():
    exc = errors_of('{"schemaVersion": "2.0.0", "items": [{"promt": 1}], "x": 1}', "dataset-json")
    assert exc.errors == [exc] and exc.code == "UNSUPPORTED_VERSION"


# ------------------------------------------------------------------------------------------------------
# SuiteError with its list
# ------------------------------------------------------------------------------------------------------


def test_every_error_carries_the_path_and_the_list_survives_pickling(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('name = ""\n[[tasks]]\nid = "t"\nprompt = "p"\nrunz = 1\n', encoding="utf-8")
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(path)
    exc = info.value
    assert [e.path for e in exc.errors] == [str(path), str(path)]
    assert (
        str(exc.errors[1])
        == f"{path}:tasks[0].runz: UNKNOWN_FIELD unknown key 'runz' in tasks[0]; did you mean 'runs'?"
    )
    back = pickle.loads(pickle.dumps(exc))
    assert (back.code, back.location, back.path) == (exc.code, exc.location, exc.path)
    assert back.errors[0] is back
    assert [str(e) for e in back.errors] == [str(e) for e in exc.errors]
    single = pickle.loads(pickle.dumps(evalnb.SuiteError("MISSING_FIELD", "m", location="x")))
    assert single.errors == [single]
