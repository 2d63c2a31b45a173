"""tasks spec: every rule of the TOML task suite, each error code with its location."""

from __future__ import annotations

import pytest

import evalnb
from evalnb.suite import ExitCodeCheck, FileExistsCheck, LLMJudgeCheck, RegexCheck

HEAD = 'name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\n'


def test_spec_example_loads_as_the_spec_says(fixtures):
    suite = evalnb.load(fixtures / "spec-tasks.toml")
    assert suite.name == "my-validation-suite"
    assert suite.format == "tasks-toml"
    (case,) = suite.cases
    assert (case.id, case.name, case.runs, case.agent) == ("summarize-text", "summarize-text", 3, None)
    (turn,) = case.turns
    assert turn.prompt == "Summarize this text in three sentences: [...]"
    assert turn.checks == [
        ExitCodeCheck(equals=0),
        FileExistsCheck(path="output/summary.txt"),
        RegexCheck(on="stdout", pattern=r"\b(summary|synthesis)\b"),
        LLMJudgeCheck(rubric="The answer must be a coherent three-sentence summary of the source text."),
    ]


def test_runs_defaults_to_three_and_agent_is_kept():
    suite = evalnb.load(HEAD + 'agent = "coder"\n', format="tasks-toml")
    assert suite.cases[0].runs == 3
    assert suite.cases[0].agent == "coder"


def test_no_tasks_is_an_empty_suite():
    assert evalnb.load('name = "empty"', format="tasks-toml").cases == []


def test_inline_array_assertions_load_like_tables():
    tables = HEAD + '[[tasks.assertions]]\ntype = "regex"\non = "result"\npattern = "a+"\n'
    tables += '[[tasks.assertions]]\ntype = "exit_code"\nequals = 2\n'
    inline = (
        HEAD
        + 'assertions = [ {type = "regex", on = "result", pattern = "a+"}, {type = "exit_code", equals = 2} ]\n'
    )
    a = evalnb.load(tables, format="tasks-toml")
    b = evalnb.load(inline, format="tasks-toml")
    assert a.cases[0].turns[0].checks == b.cases[0].turns[0].checks
    assert [c.name for c in a.cases[0].turns[0].checks] == ["regex", "exit_code"]


def test_multiline_strings_load():
    text = 'name = "s"\n[[tasks]]\nid = "t"\nprompt = """\nline one\nline two\n"""\n'
    assert evalnb.load(text, format="tasks-toml").cases[0].turns[0].prompt == "line one\nline two\n"


def test_max_runs_fits_u32():
    suite = evalnb.load(HEAD + "runs = 4294967295\n", format="tasks-toml")
    assert suite.cases[0].runs == 2**32 - 1
    assert evalnb.load(HEAD + "runs = 0\n", format="tasks-toml").cases[0].runs == 0


@pytest.mark.parametrize(
    ("extra", "code", "location", "suggestion"),
    [
        # tasks spec rule 1: unknown keys anywhere, with the nearest valid key
        ('promtp = "x"\n', "UNKNOWN_FIELD", "tasks[0].promtp", "prompt"),
        (
            '[[tasks.assertions]]\ntype = "exit_code"\nequal = 0\n',
            "UNKNOWN_FIELD",
            "tasks[0].assertions[0].equal",
            "equals",
        ),
        (
            '[[tasks.assertions]]\ntyp = "exit_code"\nequals = 0\n',
            "UNKNOWN_FIELD",
            "tasks[0].assertions[0].typ",
            "type",
        ),
        (
            '[[tasks.assertions]]\ntype = "exit_code"\nequals = 0\npath = "x"\n',
            "UNKNOWN_FIELD",
            "tasks[0].assertions[0].path",
            None,
        ),
        # wrong types
        ('runs = "3"\n', "TYPE_MISMATCH", "tasks[0].runs", None),
        ("runs = true\n", "TYPE_MISMATCH", "tasks[0].runs", None),
        ("runs = 3.0\n", "TYPE_MISMATCH", "tasks[0].runs", None),
        (
            '[[tasks.assertions]]\ntype = "exit_code"\nequals = "0"\n',
            "TYPE_MISMATCH",
            "tasks[0].assertions[0].equals",
            None,
        ),
        ("[[tasks.assertions]]\ntype = 3\n", "TYPE_MISMATCH", "tasks[0].assertions[0].type", None),
        # right type, value not allowed
        ("runs = -1\n", "INVALID_VALUE", "tasks[0].runs", None),
        ("runs = 4294967296\n", "INVALID_VALUE", "tasks[0].runs", None),
        (
            '[[tasks.assertions]]\ntype = "regexp"\non = "stdout"\npattern = "x"\n',
            "INVALID_VALUE",
            "tasks[0].assertions[0].type",
            "regex",
        ),
        (
            '[[tasks.assertions]]\ntype = "regex"\non = "stderr"\npattern = "x"\n',
            "INVALID_VALUE",
            "tasks[0].assertions[0].on",
            None,
        ),
        (
            '[[tasks.assertions]]\ntype = "regex"\non = "stdout"\npattern = "(unclosed"\n',
            "INVALID_VALUE",
            "tasks[0].assertions[0].pattern",
            None,
        ),
        # missing and blank
        (
            '[[tasks.assertions]]\ntype = "regex"\npattern = "x"\n',
            "MISSING_FIELD",
            "tasks[0].assertions[0].on",
            None,
        ),
        ("[[tasks.assertions]]\nequals = 0\n", "MISSING_FIELD", "tasks[0].assertions[0].type", None),
        (
            '[[tasks.assertions]]\ntype = "llm_judge"\nrubric = "   "\n',
            "BLANK_FIELD",
            "tasks[0].assertions[0].rubric",
            None,
        ),
        ('agent = ""\n', "BLANK_FIELD", "tasks[0].agent", None),
    ],
)
def test_task_errors(load_error, extra, code, location, suggestion):
    err = load_error(HEAD + extra, "tasks-toml")
    assert (err.code, err.location) == (code, location), err
    assert err.suggestion == suggestion
    if suggestion:
        assert f"did you mean '{suggestion}'" in err.message
    # the message names the offending key
    assert location.rsplit(".", 1)[-1].split("[")[0] in err.message


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        ('nme = "s"\n', "UNKNOWN_FIELD", "nme"),  # near miss of the missing `name`: the typo is reported
        ("tasks = []\n", "MISSING_FIELD", "name"),
        ('name = "  "\n', "BLANK_FIELD", "name"),
        ("name = 1\n", "TYPE_MISMATCH", "name"),
        ('name = "s"\ntasks = "x"\n', "TYPE_MISMATCH", "tasks"),
        ('name = "s"\n[[tasks]]\nprompt = "p"\n', "MISSING_FIELD", "tasks[0].id"),
        ('name = "s"\n[[tasks]]\nid = "t"\n', "MISSING_FIELD", "tasks[0].prompt"),
    ],
)
def test_suite_errors(load_error, text, code, location):
    err = load_error(text, "tasks-toml")
    assert (err.code, err.location) == (code, location), err


def test_unknown_key_near_missing_required_key_is_reported_as_unknown(load_error):
    # api contract: `equal` beside a missing `equals` is UNKNOWN_FIELD with the suggestion.
    err = load_error(HEAD + '[[tasks.assertions]]\ntype = "exit_code"\nequal = 0\n', "tasks-toml")
    assert err.code == "UNKNOWN_FIELD"
    assert err.suggestion == "equals"


def test_malformed_toml_gives_line_and_column(load_error):
    err = load_error('name = "s"\nruns = = 3\n', "tasks-toml")
    assert err.code == "MALFORMED_TOML"
    assert err.location == "line 2, column 8"


def test_duplicate_task_ids_are_an_error(load_error):
    err = load_error(HEAD + '[[tasks]]\nid = "t"\nprompt = "q"\n', "tasks-toml")
    assert (err.code, err.location) == ("INVALID_VALUE", "tasks[1].id")
    assert "duplicate" in err.message


def test_error_path_is_the_file(fixtures):
    with pytest.raises(evalnb.SuiteError) as info:
        evalnb.load(fixtures / "tasks-invalid-typo.toml")
    err = info.value
    assert err.path == str(fixtures / "tasks-invalid-typo.toml")
    assert str(err).startswith(f"{err.path}:tasks[0].assertions[0].equal: UNKNOWN_FIELD")


def test_fixture_loads(fixtures):
    suite = evalnb.load(fixtures / "tasks-valid.toml")
    assert [c.id for c in suite.cases] == ["echo", "judge-only"]
    assert [c.runs for c in suite.cases] == [2, 3]
    assert suite.cases[1].turns[0].prompt == "Two lines\nof prompt.\n"


def test_a_pattern_the_run_accepts_loads_and_matches() -> None:
    """The load compiles patterns with the engine the run searches with (`\\p{L}` is a Unicode letter)."""
    import evalnb

    text = 'name = "s"\n[[tasks]]\nid = "t"\nprompt = "p"\nruns = 1\nassertions = [{type = "regex", on = "result", pattern = \'^\\p{L}+$\'}]\n'
    suite = evalnb.load(text, format="tasks-toml")
    assert evalnb.run(suite, lambda p: "Málaga", progress=False).passed
    assert not evalnb.run(suite, lambda p: "Málaga 2", progress=False).passed
