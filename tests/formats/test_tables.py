"""Tables of cases (docs/tables.md): a DataFrame, a CSV file and a JSONL file, one case per row; the columns,
the default checks, cells as text, and every error with its code and location."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb.errors import SuiteError, SuiteWarning
from evalnb.formats._common import EXPECTED_CHECKS
from evalnb.suite import RegexCheck

QA = {"prompt": ["What is 2+2?", "Capital of France?"], "expected": ["4", "Paris"]}


def checks_of(suite: evalnb.Suite) -> list[list[str]]:
    return [[c.name for c in case.turns[0].checks] for case in suite.cases]


def error(call, *args, **kwargs) -> SuiteError:  # type: ignore[no-untyped-def]
    with pytest.raises(SuiteError) as info:
        call(*args, **kwargs)
    return info.value


# -- DataFrames ------------------------------------------------------------------------------------------


def test_a_frame_is_one_case_per_row_checked_by_the_matchers() -> None:
    suite = evalnb.from_frame(pd.DataFrame(QA))
    assert suite.format == "table-frame" and suite.name == "table" and suite.warnings == []
    assert [(c.turns[0].prompt, c.turns[0].expected, c.runs) for c in suite.cases] == [
        ("What is 2+2?", "4", 1),
        ("Capital of France?", "Paris", 1),
    ]
    assert checks_of(suite) == [["ExactMatch", "PartialMatch"]] * 2
    assert [c.name for c in suite.cases] == ["What is 2+2?", "Capital of France?"]
    assert suite.meta["columns"] == {"prompt": "prompt", "expected": "expected"}


def test_run_takes_a_frame_with_the_same_defaults() -> None:
    df = pd.DataFrame(QA)
    result = evalnb.run(df, lambda prompt: "4" if "2+2" in prompt else "Lyon", progress=False)
    assert result.suite.content_hash() == evalnb.from_frame(df).content_hash()
    by_case = result.cases.set_index("case_name")["status"].to_dict()
    assert by_case == {"What is 2+2?": "passed", "Capital of France?": "failed"}
    assert set(result.scores["check"]) == {"ExactMatch", "PartialMatch"}


def test_the_usual_column_names_and_the_named_ones() -> None:
    df = pd.DataFrame(
        {
            "testId": ["a", "b"],
            "prompt": ["p1", "p2"],
            "expected_response": ["x", "y"],
            "category": ["k", None],
        }
    )
    suite = evalnb.from_frame(df)
    assert [(c.id, c.name, c.category, c.turns[0].expected) for c in suite.cases] == [
        ("a", "a", "k", "x"),
        ("b", "b", None, "y"),
    ]
    own = pd.DataFrame({"q": ["p1"], "answer": ["x"], "key": ["k1"], "topic": ["t"], "notes": ["ignored"]})
    suite = evalnb.from_frame(own, prompt="q", expected="answer", id="key", category="topic", name="mine")
    case = suite.cases[0]
    assert (suite.name, case.id, case.category, case.turns[0].expected) == ("mine", "k1", "t", "x")
    assert (
        evalnb.from_frame(pd.DataFrame(QA).assign(id=["a", "b"]), expected=None).cases[0].turns[0].expected
        is None
    )


def test_generated_ids_follow_the_prompt_wherever_the_row_moves() -> None:
    df = pd.DataFrame({"prompt": ["a", "b", "a"], "expected": ["1", "2", "3"]})
    ids = [c.id for c in evalnb.from_frame(df).cases]
    assert ids[0].startswith("row-") and ids[2] == ids[0] + "-2" and len(set(ids)) == 3
    moved = [c.id for c in evalnb.from_frame(df.iloc[[1, 0, 2]].reset_index(drop=True)).cases]
    assert moved == [ids[1], ids[0], ids[2]]


def test_checks_by_name_by_mapping_and_as_objects() -> None:
    df = pd.DataFrame(QA)
    assert checks_of(evalnb.from_frame(df, checks="ExactMatch")) == [["ExactMatch"]] * 2
    suite = evalnb.from_frame(df, checks={"PartialMatch": {"threshold": 0.8}, "Similarity": {"threshold": 4}})
    partial, similarity = suite.cases[0].turns[0].checks
    assert partial.threshold == 0.8 and similarity.threshold == 4  # type: ignore[union-attr]
    suite = evalnb.from_frame(df, checks={"regex": {"on": "result", "pattern": r"\d"}, "Citations": {}})
    assert checks_of(suite)[0] == ["regex", "Citations"]
    spec = RegexCheck(on="result", pattern="P")
    assert evalnb.from_frame(df, checks=[spec]).cases[1].turns[0].checks == [spec]
    assert checks_of(evalnb.from_frame(df, checks=())) == [[], []]


def test_bad_checks_name_the_check_and_option() -> None:
    df = pd.DataFrame(QA)
    err = error(evalnb.from_frame, df, checks={"PartialMatch": {"threshold": 2}, "ExactMatc": {}})
    found = {e.location: e for e in err.errors}
    assert {loc: e.code for loc, e in found.items()} == {
        "checks.PartialMatch.threshold": "INVALID_VALUE",
        "checks.ExactMatc": "UNKNOWN_FIELD",
    }
    assert found["checks.ExactMatc"].suggestion == "ExactMatch"
    assert error(evalnb.from_frame, df, checks={"regex": {"on": "result"}}).location == "checks.regex.pattern"
    assert error(evalnb.from_frame, df, checks=42).code == "TYPE_MISMATCH"


def test_rows_without_an_expected_answer_skip_the_checks_that_need_one() -> None:
    df = pd.DataFrame(
        {"prompt": ["a", "b", "c", "d"], "expected": ["1", None, math.nan, "  "]},
        index=["q1", "q2", "q3", "q4"],
    )
    with pytest.warns(
        SuiteWarning, match=r"3 of 4 rows have no expected answer in column 'expected'"
    ) as caught:
        suite = evalnb.from_frame(df, checks=("ExactMatch", "Citations", "Similarity"))
    assert checks_of(suite) == [
        ["ExactMatch", "Citations", "Similarity"],
        ["Citations"],
        ["Citations"],
        ["Citations"],
    ]
    (line,) = suite.warnings
    assert str(caught[0].message) == line
    assert "the row at index 'q2'" in line and "ExactMatch, Similarity compare with one" in line
    with pytest.warns(SuiteWarning, match="the table has no expected column"):
        suite = evalnb.from_frame(pd.DataFrame({"prompt": ["a"]}))
    assert checks_of(suite) == [[]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evalnb.from_frame(pd.DataFrame(QA))  # every row answered: no warning


def test_cells_become_text_and_a_float_column_of_whole_numbers_is_named() -> None:
    df = pd.DataFrame({"prompt": ["2+2?", "3+3?", "x"], "expected": [4, 6, None], "id": [1, 2, 3]})
    with pytest.warns(SuiteWarning) as caught:
        suite = evalnb.from_frame(df)
    assert [c.turns[0].expected for c in suite.cases] == ["4.0", "6.0", None]
    assert [c.id for c in suite.cases] == ["1", "2", "3"]
    assert any("column 'expected' holds numbers (float64)" in str(w.message) for w in caught)
    ints = evalnb.from_frame(pd.DataFrame({"prompt": ["2+2?"], "expected": [4]}))
    assert ints.cases[0].turns[0].expected == "4" and ints.warnings == []


@pytest.mark.parametrize(
    ("frame", "kwargs", "code", "location"),
    [
        (pd.DataFrame({"question": ["a"], "expected": ["1"]}), {}, "MISSING_FIELD", "columns.prompt"),
        (pd.DataFrame({"Prompt": ["a"]}), {}, "UNKNOWN_FIELD", "columns.Prompt"),
        (pd.DataFrame({"prompt": ["a"], "expectd": ["1"]}), {}, "UNKNOWN_FIELD", "columns.expectd"),
        (pd.DataFrame({"prompt": [], "expected": []}), {}, "INVALID_VALUE", "rows"),
        (pd.DataFrame({"prompt": ["a", "b"], "id": ["x", "x"]}), {}, "INVALID_VALUE", "rows[1].id"),
        (pd.DataFrame({"prompt": ["a", None]}), {}, "BLANK_FIELD", "rows[1].prompt"),
        (pd.DataFrame({"prompt": ["a", "  "]}), {}, "BLANK_FIELD", "rows[1].prompt"),
        (pd.DataFrame({"prompt": ["a"], "id": [math.nan]}), {}, "BLANK_FIELD", "rows[0].id"),
        (pd.DataFrame({"prompt": ["a"], "expected": ["1"], "expected_response": ["1"]}), {}, "INVALID_VALUE",
         "columns.expected_response"),
        (pd.DataFrame({"prompt": ["a"]}), {"expected": "answer"}, "MISSING_FIELD", "columns.answer"),
        (pd.DataFrame({"prompt": ["a"]}), {"id": "key"}, "MISSING_FIELD", "columns.key"),
    ],
)  # fmt: skip
def test_frame_errors_name_the_column_and_row(
    frame: pd.DataFrame, kwargs: dict[str, str], code: str, location: str
) -> None:
    err = error(evalnb.from_frame, frame, **kwargs)
    assert (err.code, err.location) == (code, location), str(err)


def test_every_error_of_a_frame_at_once_and_the_row_named_by_its_index() -> None:
    df = pd.DataFrame({"prompt": ["", "b", None], "id": ["x", "x", "y"]}, index=[10, 11, 12])
    err = error(evalnb.from_frame, df)
    assert [(e.code, e.location) for e in err.errors] == [
        ("BLANK_FIELD", "rows[0].prompt"),
        ("INVALID_VALUE", "rows[1].id"),
        ("BLANK_FIELD", "rows[2].prompt"),
    ]
    assert "the row at index 10" in err.errors[0].message
    assert "first used by the row at index 10" in err.errors[1].message  # found beside the blank prompt


def test_only_a_dataframe_and_no_column_twice() -> None:
    err = error(evalnb.from_frame, [{"prompt": "a"}])  # type: ignore[arg-type]
    assert err.code == "TYPE_MISMATCH" and "pandas.DataFrame(rows)" in err.message
    twice = pd.DataFrame([["a", "b"]], columns=["prompt", "prompt"])
    assert error(evalnb.from_frame, twice).code == "INVALID_VALUE"


def test_the_default_checks_have_one_home() -> None:
    from evalnb.formats._dataset_json import STARTER, inline_suite

    assert EXPECTED_CHECKS == ("ExactMatch", "PartialMatch")
    assert tuple(STARTER["default_evaluators"]) == EXPECTED_CHECKS  # evalnb init
    inline = inline_suite(["What is 2+2?"], ["4"])  # evalnb run --prompts ... --expected ...
    assert tuple(c.name for c in inline.cases[0].turns[0].checks) == EXPECTED_CHECKS
    assert tuple(checks_of(evalnb.from_frame(pd.DataFrame(QA)))[0]) == EXPECTED_CHECKS


# -- CSV -------------------------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_a_csv_file_is_read_as_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.csv",
        '\ufeffprompt,expected,category\n"Say ""hi"", twice",007,greet\n\n"Two\nlines",1e3,\nWhat is 2+2?,4,math,,\n',
    )
    suite = evalnb.load(path)
    assert (suite.format, suite.name, suite.path) == ("table-csv", "cases", str(path))
    assert [(c.turns[0].prompt, c.turns[0].expected, c.category) for c in suite.cases] == [
        ('Say "hi", twice', "007", "greet"),
        ("Two\nlines", "1e3", None),
        ("What is 2+2?", "4", "math"),
    ]
    assert checks_of(suite) == [["ExactMatch", "PartialMatch"]] * 3
    # the same rows as a DataFrame make the same cases (the ids come from the prompts)
    frame = pd.DataFrame(
        {"prompt": [c.turns[0].prompt for c in suite.cases], "expected": ["007", "1e3", "4"]}
    )
    assert [c.id for c in evalnb.from_frame(frame).cases] == [c.id for c in suite.cases]


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolons_and_tabs_separate_cells_too(tmp_path: Path, sep: str) -> None:
    path = write(
        tmp_path, "cases.tsv" if sep == "\t" else "cases.csv", f"prompt{sep}expected\na, b{sep}1,5\n"
    )
    assert [(c.turns[0].prompt, c.turns[0].expected) for c in evalnb.load(path).cases] == [("a, b", "1,5")]


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        ("question,expected\nhi,4\n", "MISSING_FIELD", "columns.prompt"),
        ("prompt,expected\n", "INVALID_VALUE", "rows"),
        ("", "INVALID_VALUE", ""),
        ("prompt,expected\nok,1\n,4\n", "BLANK_FIELD", "rows[1].prompt"),
        ("prompt,id\na,1\nb,1\n", "INVALID_VALUE", "rows[1].id"),
        ('prompt,expected\nok,1\n"open,4\n', "MALFORMED_CSV", "line 3"),
        ("prompt,expected\nok,1\na,b,c\n", "MALFORMED_CSV", "line 3"),
        ("prompt,expected,category\nok\n", "MALFORMED_CSV", "line 2"),
        ("prompt,prompt\na,b\n", "MALFORMED_CSV", "line 1"),
    ],
)
def test_csv_errors_name_the_line(tmp_path: Path, text: str, code: str, location: str) -> None:
    path = write(tmp_path, "bad.csv", text)
    err = error(evalnb.load, path)
    assert (err.code, err.location, err.path) == (code, location, str(path)), str(err)
    if err.location.startswith("rows["):
        assert "line " in err.message  # the row's line in the file, beside its place in the table


def test_a_csv_row_without_an_answer_is_named_by_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.csv", "prompt,expected\na,1\nb,\n")
    with pytest.warns(SuiteWarning, match=r"cases\.csv: 1 of 2 rows .*\(line 3\)"):
        suite = evalnb.load(path)
    assert checks_of(suite) == [["ExactMatch", "PartialMatch"], []]


def test_a_csv_text_loads_with_format_and_is_not_sniffed() -> None:
    suite = evalnb.load("prompt,expected\na,1\n", format="table-csv")
    assert suite.format == "table-csv" and suite.name == "table"
    assert "table-csv" in evalnb.formats.names() and evalnb.formats.for_path("x.TSV").name == "table-csv"
    assert evalnb.formats.json_schema("table-jsonl")["required"] == ["prompt"]
    err = error(evalnb.load, "x", format="table-frame")
    assert err.code == "INVALID_VALUE" and "from_frame" in err.message


# -- JSONL -----------------------------------------------------------------------------------------------


def test_a_jsonl_file_keeps_numbers_as_written(tmp_path: Path) -> None:
    lines = [
        {"prompt": "2+2?", "expected": 4, "id": 1},
        {"prompt": "pi?", "expected": 3.140, "id": "two", "extra": {"kept": "out"}},
        {"prompt": "true?", "expected": True, "category": None, "id": "3"},
    ]
    text = "\n".join(json.dumps(x) for x in lines).replace("3.14", "3.140") + "\n\n"
    suite = evalnb.load(write(tmp_path, "cases.jsonl", text))
    assert suite.format == "table-jsonl" and suite.name == "cases"
    assert [(c.id, c.turns[0].expected, c.category) for c in suite.cases] == [
        ("1", "4", None),
        ("two", "3.140", None),
        ("3", "true", None),
    ]


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        ('{"prompt": "a"}\n{"prompt": "b",\n', "MALFORMED_JSONL", "line 2, column 16"),
        ('{"prompt": "a", "prompt": "b"}\n', "MALFORMED_JSONL", "line 1"),
        ('{"prompt": "a"}\n["b"]\n', "TYPE_MISMATCH", "rows[1]"),
        ('{"prompt": {"text": "a"}}\n', "TYPE_MISMATCH", "rows[0].prompt"),
        ('{"prompt": "a", "expected": [1]}\n', "TYPE_MISMATCH", "rows[0].expected"),
        ('{"prompt": ""}\n', "BLANK_FIELD", "rows[0].prompt"),
        ('{"prompt": null}\n', "BLANK_FIELD", "rows[0].prompt"),
        ('{"question": "a"}\n', "MISSING_FIELD", "columns.prompt"),
        ("\n\n", "INVALID_VALUE", ""),
        ('{"prompt": NaN}\n', "MALFORMED_JSONL", "line 1"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, text: str, code: str, location: str) -> None:
    err = error(evalnb.load, write(tmp_path, "bad.jsonl", text))
    assert (err.code, err.location) == (code, location), str(err)


def test_a_file_that_is_not_utf8_is_malformed(tmp_path: Path) -> None:
    for name, code in (("x.csv", "MALFORMED_CSV"), ("x.jsonl", "MALFORMED_JSONL")):
        (tmp_path / name).write_bytes(b"prompt\n\xff\xfe\n")
        assert error(evalnb.load, tmp_path / name).code == code


# -- the legacy array says which checks it defaulted to --------------------------------------------------


def test_a_legacy_array_warns_which_checks_it_got(tmp_path: Path) -> None:
    path = write(tmp_path, "legacy.json", '[{"prompt": "What is 2+2?", "expected_response": "4"}]')
    with pytest.warns(SuiteWarning, match="dataset defaults Relevance and Coherence only") as caught:
        suite = evalnb.load(path)
    (line,) = suite.warnings
    assert "1 of them with an expected_response that nothing compares with" in line
    assert '"default_evaluators": {"ExactMatch": {}, "PartialMatch": {}}' in line and str(path) in str(
        caught[0].message
    )
    quiet = [  # a versioned document's defaults are what its author chose
        '{"schemaVersion": "1.11.0", "items": [{"prompt": "a", "expected_response": "4"}]}',
        '{"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": [{"prompt": "a"}]}',
    ]
    for n, text in enumerate(quiet):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert evalnb.load(write(tmp_path, f"quiet{n}.json", text)).warnings == []


def test_running_a_legacy_array_upgrades_it_and_still_says_so(tmp_path: Path) -> None:
    from evalnb.formats import load_upgrading

    path = write(tmp_path, "legacy.json", '[{"prompt": "What is 2+2?", "expected_response": "4"}]')
    with pytest.warns(SuiteWarning, match="a legacy dataset"):
        suite, backup = load_upgrading(path)
    assert backup is not None and len(suite.warnings) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again, none = load_upgrading(path)  # versioned now: its defaults are what the file says
    assert none is None and again.warnings == []


def test_the_command_line_prints_the_warnings(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalnb.cli import app

    write(tmp_path, "cases.csv", "prompt,expected\nWhat is 2+2?,4\nHello,\n")
    runner = CliRunner()
    validated = runner.invoke(app, ["validate", str(tmp_path / "cases.csv")])
    assert validated.exit_code == 0
    lines = validated.output.splitlines()
    assert lines[0] == f"{tmp_path / 'cases.csv'}: OK (table-csv, 2 cases)"
    assert lines[1].startswith(f"{tmp_path / 'cases.csv'}: warning: 1 of 2 rows have no expected answer")
    ran = runner.invoke(
        app, ["run", str(tmp_path / "cases.csv"), "--agent", "tests.formats.test_tables:four"]
    )
    assert ran.exit_code == 0, ran.output
    assert "warning: 1 of 2 rows have no expected answer" in ran.output
    assert "2/2 passed" in ran.output


def four(prompt: str) -> str:
    """An agent for the command line test: answers 4."""
    return "4"
