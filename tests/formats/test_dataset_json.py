"""dataset spec: the JSON dataset in its three shapes, evaluator resolution and the version gates."""

from __future__ import annotations

import json
from typing import Any

import pytest

import evalnb
from evalnb.suite import (
    CitationsCheck,
    CustomCheck,
    ExactMatchCheck,
    JudgedMetricCheck,
    PartialMatchCheck,
    RetrievalQueryCheck,
    RetrievalResultCheck,
)
from tests.support.examples import EXAMPLES


def doc(items: list[Any], version: str | None = "1.7.0", **root: Any) -> str:
    body: dict[str, Any] = {"schemaVersion": version} if version is not None else {}
    body.update(root)
    body["items"] = items
    return json.dumps(body)


def checks_of(text: str) -> list[list[list[str]]]:
    suite = evalnb.load(text, format="dataset-json")
    return [[[c.name for c in t.checks] for t in case.turns] for case in suite.cases]


def test_spec_example_loads_as_the_spec_says(fixtures):
    suite = evalnb.load(fixtures / "spec-dataset.json")
    assert suite.format == "dataset-json"
    assert suite.name == "spec-dataset"  # no metadata.name: the file's stem
    first, second = suite.cases
    (turn,) = first.turns
    assert turn.prompt == "What is Microsoft Graph?"
    assert turn.expected == "A unified API endpoint for Microsoft services."
    # Item 1: the defaults Relevance and Coherence, plus Citations (mixed).
    assert turn.checks == [
        JudgedMetricCheck(type="Relevance", threshold=3),
        JudgedMetricCheck(type="Coherence", threshold=3),
        CitationsCheck(threshold=1, citation_format="mixed"),
    ]
    # Item 2: one conversation of two turns; turn 1 inherits the defaults, turn 2 runs ExactMatch only.
    assert second.id == "Expense policy flow" and second.name == "Expense policy flow"
    assert [t.prompt for t in second.turns] == [
        "I spent $250 on dinner. Is that okay?",
        "What should I do about the overage?",
    ]
    assert [c.name for c in second.turns[0].checks] == ["Relevance", "Coherence"]
    assert second.turns[1].checks == [ExactMatchCheck(case_sensitive=False)]
    assert second.turns[1].expected == "Request manager approval."


def test_legacy_array_and_generated_ids_are_stable(fixtures):
    a = evalnb.load(fixtures / "dataset-legacy.json")
    b = evalnb.load(fixtures / "dataset-legacy.json")
    assert [c.id for c in a.cases] == ["item-001", "item-002"] == [c.id for c in b.cases]
    assert a.cases[1].turns[0].expected is None  # expected_response is optional
    assert a.name == "dataset-legacy"
    assert a.meta["legacy"] is True
    assert checks_of((fixtures / "dataset-legacy.json").read_text()) == [
        [["Relevance", "Coherence"]],
        [["Relevance", "Coherence"]],
    ]


def test_legacy_prompt_pairs(fixtures):
    suite = evalnb.load(fixtures / "dataset-legacy-pairs.json")
    assert [(c.turns[0].prompt, c.turns[0].expected) for c in suite.cases] == [
        ("What is Teams?", "A collaboration app."),
        ("What is SharePoint?", "A document platform."),
    ]


def test_name_id_category_notes_context():
    text = doc(
        [
            {
                "testId": "REG-001",
                "name": "Graph",
                "category": "knowledge",
                "notes": "bug 12",
                "prompt": "p",
                "context": "ctx",
            },
            {"name": "Named only", "prompt": "q"},
            {"prompt": "r"},
        ],
        metadata={"name": "From metadata"},
    )
    suite = evalnb.load(text, format="dataset-json")
    assert suite.name == "From metadata"
    assert [(c.id, c.name) for c in suite.cases] == [
        ("REG-001", "Graph"),
        ("Named only", "Named only"),
        ("item-003", "item-003"),
    ]
    first = suite.cases[0]
    assert (first.category, first.notes, first.turns[0].context) == ("knowledge", "bug 12", "ctx")
    assert evalnb.load(doc([{"prompt": "p"}]), format="dataset-json").name == "dataset"


@pytest.mark.parametrize("version", ["1.0.0", "1.6.0", "1.7.0", "1.42.3"])
def test_any_1_x_y_loads(version):
    assert len(evalnb.load(doc([{"prompt": "p"}], version), format="dataset-json").cases) == 1


@pytest.mark.parametrize("version", ["2.0.0", "0.9.0", "1.0", "v1.2.0", "1.2.0-beta", "latest"])
def test_unsupported_versions(load_error, version):
    err = load_error(doc([{"prompt": "p"}], version), "dataset-json")
    assert (err.code, err.location) == ("UNSUPPORTED_VERSION", "schemaVersion")


def test_version_gates_name_the_version_needed(load_error):
    err = load_error(doc([{"prompt": "p", "evaluators": {"ExactMatch": {}}}], "1.0.0"), "dataset-json")
    assert (err.code, err.location) == ("UNSUPPORTED_VERSION", "items[0].evaluators")
    assert "1.1.0" in err.message
    err = load_error(doc([{"prompt": "p"}], "1.0.0", default_evaluators={"Relevance": {}}), "dataset-json")
    assert (err.code, err.location) == ("UNSUPPORTED_VERSION", "default_evaluators")
    err = load_error(doc([{"turns": [{"prompt": "p"}]}], "1.1.0"), "dataset-json")
    assert (err.code, err.location) == ("UNSUPPORTED_VERSION", "items[0].turns")
    assert "1.2.0" in err.message
    # a legacy array counts as 1.0.0
    err = load_error(json.dumps([{"prompt": "p", "evaluators_mode": "replace"}]), "dataset-json")
    assert (err.code, err.location) == ("UNSUPPORTED_VERSION", "items[0].evaluators_mode")
    assert checks_of(doc([{"prompt": "p", "evaluators": {"ExactMatch": {}}}], "1.1.0")) == [
        [["Relevance", "Coherence", "ExactMatch"]]
    ]


def test_evaluator_resolution_file_item_turn():
    text = doc(
        [
            {"prompt": "a"},
            {"prompt": "b", "evaluators": {"Relevance": {"threshold": 5}, "ExactMatch": {}}},
            {"prompt": "c", "evaluators": {"PartialMatch": {}}, "evaluators_mode": "replace"},
            {
                "turns": [
                    {"prompt": "t1"},
                    {"prompt": "t2", "evaluators": {"Citations": {}}},
                    {"prompt": "t3", "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"},
                ],
                "evaluators": {"Coherence": {}},
            },
        ],
        default_evaluators={"Relevance": {}, "Groundedness": {"threshold": 4}},
    )
    suite = evalnb.load(text, format="dataset-json")
    a, b, c, d = suite.cases
    assert a.turns[0].checks == [
        JudgedMetricCheck(type="Relevance"),
        JudgedMetricCheck(type="Groundedness", threshold=4),
    ]
    # extend: the item's options for a default evaluator replace the default's, in place
    assert b.turns[0].checks == [
        JudgedMetricCheck(type="Relevance", threshold=5),
        JudgedMetricCheck(type="Groundedness", threshold=4),
        ExactMatchCheck(),
    ]
    assert c.turns[0].checks == [PartialMatchCheck()]
    assert [[x.name for x in t.checks] for t in d.turns] == [
        ["Relevance", "Groundedness", "Coherence"],
        ["Relevance", "Groundedness", "Coherence", "Citations"],
        ["ExactMatch"],
    ]


def test_empty_defaults_and_empty_replace_mean_no_checks():
    assert checks_of(doc([{"prompt": "p"}], default_evaluators={})) == [[[]]]
    assert checks_of(doc([{"prompt": "p", "evaluators": {}, "evaluators_mode": "replace"}])) == [[[]]]


def test_builtin_evaluator_options_and_defaults():
    text = doc(
        [
            {
                "prompt": "p",
                "evaluators": {
                    "Similarity": {"threshold": 4},
                    "Citations": {"threshold": 2, "citation_format": "markdown"},
                    "ExactMatch": {"case_sensitive": True},
                    "PartialMatch": {"threshold": 0.75, "case_sensitive": True},
                    "RetrievalQuery": {"capability": "Email", "selector": "budget", "includes": ["2026"]},
                    "RetrievalResult": {
                        "capability": "Email",
                        "expected_items": [{"retrievalExtract_contains": "Q1"}],
                    },
                },
                "evaluators_mode": "replace",
            },
            {
                "prompt": "q",
                "evaluators": {"Citations": {}, "PartialMatch": {}},
                "evaluators_mode": "replace",
            },
        ]
    )
    first, second = evalnb.load(text, format="dataset-json").cases
    assert first.turns[0].checks == [
        JudgedMetricCheck(type="Similarity", threshold=4),
        CitationsCheck(threshold=2, citation_format="markdown"),
        ExactMatchCheck(case_sensitive=True),
        PartialMatchCheck(threshold=0.75, case_sensitive=True),
        RetrievalQueryCheck(settings={"capability": "Email", "selector": "budget", "includes": ["2026"]}),
        RetrievalResultCheck(
            settings={
                "capability": "Email",
                "max_rank": 10,
                "expected_items": [{"retrievalExtract_contains": "Q1"}],
            }
        ),
    ]
    assert second.turns[0].checks == [
        CitationsCheck(threshold=1, citation_format="oai_unicode"),
        PartialMatchCheck(threshold=0.5),
    ]


def _ev(name: str, options: Any) -> str:
    return doc([{"prompt": "p", "evaluators": {name: options}}])


@pytest.mark.parametrize(
    ("name", "options", "code", "location"),
    [
        ("Relevance", {"threshold": 0}, "INVALID_VALUE", "items[0].evaluators.Relevance.threshold"),
        ("Relevance", {"threshold": 6}, "INVALID_VALUE", "items[0].evaluators.Relevance.threshold"),
        ("Relevance", {"threshold": "3"}, "TYPE_MISMATCH", "items[0].evaluators.Relevance.threshold"),
        ("Coherence", {"treshold": 3}, "UNKNOWN_FIELD", "items[0].evaluators.Coherence.treshold"),
        ("Citations", {"threshold": 0}, "INVALID_VALUE", "items[0].evaluators.Citations.threshold"),
        ("Citations", {"threshold": 1.5}, "TYPE_MISMATCH", "items[0].evaluators.Citations.threshold"),
        (
            "Citations",
            {"citation_format": " "},  # an open string (published schema), but not a blank one
            "BLANK_FIELD",
            "items[0].evaluators.Citations.citation_format",
        ),
        (
            "ExactMatch",
            {"case_sensitive": "yes"},
            "TYPE_MISMATCH",
            "items[0].evaluators.ExactMatch.case_sensitive",
        ),
        ("PartialMatch", {"threshold": 1.2}, "INVALID_VALUE", "items[0].evaluators.PartialMatch.threshold"),
        ("PartialMatch", {"threshold": -0.1}, "INVALID_VALUE", "items[0].evaluators.PartialMatch.threshold"),
        ("PartialMatch", True, "TYPE_MISMATCH", "items[0].evaluators.PartialMatch"),
        (
            "RetrievalQuery",
            {"capability": "Email"},
            "MISSING_FIELD",
            "items[0].evaluators.RetrievalQuery.selector",
        ),
        (
            "RetrievalResult",
            {"capability": "Email"},
            "MISSING_FIELD",
            "items[0].evaluators.RetrievalResult.expected_items",
        ),
        (
            "RetrievalResult",
            {"capability": "Email", "max_rank": 0, "min_expected_count": 1},
            "INVALID_VALUE",
            "items[0].evaluators.RetrievalResult.max_rank",
        ),
        ("relevance", {}, "UNKNOWN_FIELD", "items[0].evaluators.relevance"),
        ("NoSuchCheck", {}, "UNKNOWN_FIELD", "items[0].evaluators.NoSuchCheck"),
        ("not-an-identifier", {}, "INVALID_VALUE", "items[0].evaluators.not-an-identifier"),
    ],
)
def test_evaluator_option_errors(load_error, name, options, code, location):
    err = load_error(_ev(name, options), "dataset-json")
    assert (err.code, err.location) == (code, location), err


def test_unknown_evaluator_suggests_and_lists_known(load_error):
    err = load_error(_ev("relevance", {}), "dataset-json")
    assert err.suggestion == "Relevance"
    assert "did you mean 'Relevance'?" in err.message
    assert "ExactMatch" in err.message and "PartialMatch" in err.message


@pytest.fixture
def user_check():
    def no_apology(turn, response, *, words=("sorry",), strict=False):
        return (1.0, True, "ok")

    evalnb.checks.register("NoApology", no_apology)
    yield "NoApology"
    evalnb.checks._registry.unregister("NoApology")


def test_custom_evaluator_resolves_against_registered_checks(user_check, load_error):
    suite = evalnb.load(_ev(user_check, {"words": ["oops"]}), format="dataset-json")
    assert suite.cases[0].turns[0].checks[-1] == CustomCheck(check="NoApology", settings={"words": ["oops"]})
    assert suite.cases[0].turns[0].checks[-1].name == "NoApology"
    err = load_error(_ev(user_check, {"wrds": []}), "dataset-json")
    assert (err.code, err.location, err.suggestion) == (
        "UNKNOWN_FIELD",
        "items[0].evaluators.NoApology.wrds",
        "words",
    )
    err = load_error(_ev("NoApologee", {}), "dataset-json")
    assert err.code == "UNKNOWN_FIELD" and "NoApology" in err.message  # lists the known user checks


def test_output_documents_load():
    item = {
        "prompt": "p",
        "expected_response": "e",
        "response": "r",
        "context": "c",
        "citations": [{"index": 1, "text": "t", "source": "s", "extra": True}],
        "scores": {"relevance": {"score": 4, "result": "pass", "threshold": 3}},
        "diagnostics": {"retrieval_executions": []},
        "status": "pass",
        "error": {"code": "agentRequestFailed", "message": "boom"},
        "extensions": {"com.example.x": 1},
    }
    thread = {
        "name": "t",
        "description": "d",
        "conversation_id": "c-1",
        "turns": [{"prompt": "x", "response": "y", "status": "fail"}],
        "summary": {
            "turns_total": 1,
            "turns_passed": 0,
            "turns_failed": 1,
            "turns_partial": 0,
            "turns_errored": 0,
            "overall_status": "fail",
        },
        "extensions": {},
    }
    text = doc(
        [item, thread],
        **{
            "$schema": "https://example.invalid/eval-document.schema.json",
            "description": "root",
            "metadata": {
                "name": "out",
                "description": "d",
                "createdAt": "2026-01-01T00:00:00Z",
                "createdBy": "me",
                "evaluatedAt": "2026-01-02T00:00:00Z",
                "tags": ["a"],
                "agentId": "A",
                "agentName": "Agent",
                "cliVersion": "1.0",
                "extensions": {"k": "v"},
            },
            "default_evaluators": {"ExactMatch": {}},
        },
    )
    suite = evalnb.load(text, format="dataset-json")
    assert suite.name == "out" and suite.description == "root"
    assert suite.cases[0].turns[0].meta["response"] == "r"
    assert suite.cases[0].turns[0].meta["status"] == "pass"
    assert suite.cases[1].meta["conversation_id"] == "c-1"


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        ("[]", "MISSING_FIELD", ""),
        (doc([]), "MISSING_FIELD", "items"),
        (json.dumps({"schemaVersion": "1.0.0"}), "MISSING_FIELD", "items"),
        (json.dumps({"itms": []}), "UNKNOWN_FIELD", "itms"),
        (
            json.dumps({"schemaVersion": "1.0.0", "items": [{"prompt": "p"}], "extra": 1}),
            "UNKNOWN_FIELD",
            "extra",
        ),
        (json.dumps({"schemaVersion": 1, "items": [{"prompt": "p"}]}), "TYPE_MISMATCH", "schemaVersion"),
        (doc([{"promt": "p"}]), "UNKNOWN_FIELD", "items[0].promt"),
        (doc([{"prompt": "p", "expected": "x"}]), "UNKNOWN_FIELD", "items[0].expected"),
        (doc([{"turns": [{"prompt": "p", "foo": 1}]}]), "UNKNOWN_FIELD", "items[0].turns[0].foo"),
        (doc([{"prompt": "p", "turns": [{"prompt": "q"}]}]), "INVALID_VALUE", "items[0].turns"),
        (doc([{"expected_response": "p"}]), "MISSING_FIELD", "items[0].prompt"),
        (doc([{"turns": []}]), "MISSING_FIELD", "items[0].turns"),
        (doc([{"turns": [{"prompt": "p"}] * 21}]), "INVALID_VALUE", "items[0].turns"),
        (doc([{"prompt": " "}]), "BLANK_FIELD", "items[0].prompt"),
        (doc([{"prompt": 5}]), "TYPE_MISMATCH", "items[0].prompt"),
        (doc(["just a prompt"]), "TYPE_MISMATCH", "items[0]"),
        (doc([{"prompt": "p", "evaluators_mode": "merge"}]), "INVALID_VALUE", "items[0].evaluators_mode"),
        (doc([{"prompt": "p", "status": "ok"}]), "INVALID_VALUE", "items[0].status"),
        (
            doc([{"prompt": "p", "testId": "A"}, {"prompt": "q", "testId": "A"}]),
            "INVALID_VALUE",
            "items[1].testId",
        ),
        (
            json.dumps({"schemaVersion": "1.0.0", "metadata": {"nmae": "x"}, "items": [{"prompt": "p"}]}),
            "UNKNOWN_FIELD",
            "metadata.nmae",
        ),
        (
            json.dumps({"prompts": ["a", "b"], "expected_responses": ["x"]}),
            "INVALID_VALUE",
            "expected_responses",
        ),
        (json.dumps({"prompts": []}), "MISSING_FIELD", "prompts"),
        ("42", "TYPE_MISMATCH", ""),
        ('{"items": [1,]}', "MALFORMED_JSON", "line 1, column 14"),
        ('{"a": 1, "a": 2}', "MALFORMED_JSON", "line 1, column 10"),  # the second "a", as YAML and TOML say
        ('{"schemaVersion": "1.0.0", "items": [{"prompt": "p", "x": NaN}]}', "MALFORMED_JSON", ""),
    ],
)
def test_error_codes_with_locations(load_error, text, code, location):
    err = load_error(text, "dataset-json")
    assert (err.code, err.location) == (code, location), err


def test_twenty_turns_is_the_maximum():
    suite = evalnb.load(doc([{"turns": [{"prompt": f"p{i}"} for i in range(20)]}]), format="dataset-json")
    assert len(suite.cases[0].turns) == 20


def test_fixture_files(fixtures):
    suite = evalnb.load(fixtures / "dataset-valid.json")
    assert suite.name == "fixture-dataset"
    assert [[[c.name for c in t.checks] for t in case.turns] for case in suite.cases] == [
        [["ExactMatch"]],
        [["ExactMatch"], ["ExactMatch", "PartialMatch"]],
    ]
    for name, code in [
        ("dataset-invalid-version.json", "UNSUPPORTED_VERSION"),
        ("dataset-invalid-gate.json", "UNSUPPORTED_VERSION"),
    ]:
        with pytest.raises(evalnb.SuiteError) as info:
            evalnb.load(fixtures / name)
        assert info.value.code == code


def test_example_knowledge_base_suite():

    path = EXAMPLES / "suites" / "knowledge-base.json"
    suite = evalnb.load(path)
    assert suite.name == "knowledge-base"
    assert suite.meta["schemaVersion"] == "1.6.0"
    assert len(suite.cases) >= 8
    assert len({c.category for c in suite.cases}) >= 3
    assert any(len(c.turns) > 1 for c in suite.cases)
    names = {ch.name for c in suite.cases for t in c.turns for ch in t.checks}
    assert {"ExactMatch", "PartialMatch", "Citations", "Relevance", "Coherence"} <= names


def test_custom_evaluator_in_the_published_shape_threshold_and_options() -> None:
    """published schema: a custom evaluator takes `threshold` (score >= threshold passes) and `options`."""
    import json

    import evalnb
    from evalnb.checks import _registry as registry

    def short(turn, response, *, max_words=50):  # type: ignore[no-untyped-def]
        words = len((response.text or "").split())
        return (max(0.0, 1 - words / max_words), True, f"{words} words")

    registry.register("Short", short)
    try:
        doc = {
            "schemaVersion": "1.7.0",
            "items": [
                {
                    "prompt": "p",
                    "evaluators": {"Short": {"threshold": 0.7, "options": {"max_words": 10}}},
                    "evaluators_mode": "replace",
                }
            ],
        }
        suite = evalnb.load(json.dumps(doc), format="dataset-json")
        spec = suite.cases[0].turns[0].checks[0]
        assert (spec.check, spec.threshold, spec.settings) == ("Short", 0.7, {"max_words": 10})
        four_words = evalnb.run(suite, lambda p: "one two three four", progress=False).scores.iloc[0]
        assert four_words["value"] == 0.6 and not four_words["passed"]  # the threshold decides, not the check
        assert "threshold 0.7" in four_words["reason"]
        two_words = evalnb.run(suite, lambda p: "one two", progress=False).scores.iloc[0]
        assert two_words["passed"]
        doc["items"][0]["evaluators"]["Short"] = {"options": {"max_word": 10}}
        with pytest.raises(evalnb.SuiteError) as err:
            evalnb.load(json.dumps(doc), format="dataset-json")
        assert err.value.code == "UNKNOWN_FIELD" and err.value.suggestion == "max_words"
        assert err.value.location == "items[0].evaluators.Short.options.max_word"
    finally:
        registry.unregister("Short")
