"""promptfoo configs as suites (docs/promptfoo.md): promptfoo's own example configs, recognition, prompts x tests,
defaultTest, CSV tests, templates, each assert's check run on real answers, and what evalnb cannot run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import SuiteError
from evalnb.formats.promptfoo._nunjucks import _TemplateUnsupported, render

EXAMPLES = Path(__file__).parents[1] / "fixtures" / "promptfoo" / "examples"

# file -> (cases, first case's checks) when loaded; None: it needs unsupported="skip"
EXPECTED = {
    "config-multiple-translations/promptfooconfig.yaml": (50, ["llm-rubric"]),
    "csv-metadata/promptfooconfig.yaml": (3, ["contains", "llm-rubric"]),
    "eval-customer-support-rubric/promptfooconfig.yaml": (
        8,
        ["correct", "resolved", "honest", "handoff", "language_fit"],
    ),
    "gpt-3.5-vs-4/promptfooconfig.yaml": (15, ["cost", "latency", "contains", "llm-rubric"]),
    "simple-csv/promptfooconfig.yaml": (8, ["icontains"]),
}
# file -> (the feature named, its location, cases with unsupported="skip")
UNSUPPORTED = {
    "eval-self-grading/promptfooconfig.yaml": ("javascript", "defaultTest.assert[1].type", 4),
    "json-output/promptfooconfig.yaml": ("javascript", "tests[0].assert[1].type", 2),
    "python-assert/promptfooconfig-external.yaml": ("python", "tests[0].assert[0].type", 5),
    "python-assert/promptfooconfig-inline.yaml": ("python", "tests[0].assert[0].type", 2),
    "simple-test/promptfooconfig.yaml": ("javascript", "tests[3].assert[0].type", 10),
}


def error(call, *args, **kwargs) -> SuiteError:  # type: ignore[no-untyped-def]
    with pytest.raises(SuiteError) as info:
        call(*args, **kwargs)
    return info.value


def names(case: evalnb.Case) -> list[str]:
    return [c.name for c in case.turns[0].checks]


def write(tmp_path: Path, text: str, name: str = "promptfooconfig.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def scores(suite: evalnb.Suite, answer: str | dict) -> dict[str, tuple[bool, float | None]]:
    result = evalnb.run(suite, lambda prompt: answer, judge="heuristic")
    return {
        row["check_id"]: (bool(row["passed"]), None if row["value"] != row["value"] else row["value"])
        for _, row in result.scores.iterrows()
    }


# ------------------------------------------------------------------------------------------------------
# promptfoo's own examples
# ------------------------------------------------------------------------------------------------------


def test_every_example_config_is_covered_here() -> None:
    found = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.glob("*/*.yaml")}
    known = (
        set(EXPECTED)
        | set(UNSUPPORTED)
        | {
            "nunjucks-custom-filters/promptfooconfig.yaml",
            "standalone-assertions/asserts.yaml",
        }
    )
    assert found == known


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_configs_load(name: str) -> None:
    suite = evalnb.load(EXAMPLES / name)
    n, checks = EXPECTED[name]
    assert suite.format == "promptfoo"
    assert len(suite.cases) == n
    assert names(suite.cases[0]) == checks
    assert len({c.id for c in suite.cases}) == n
    # the providers are reported, not an error: the agent is the caller's
    assert suite.meta["promptfoo"]["providers"]
    assert "promptfoo's" in suite.warnings[0]
    assert all("{{" not in c.turns[0].prompt for c in suite.cases)


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_example_configs_with_code_asserts_name_them_or_skip_them(name: str) -> None:
    feature, location, n = UNSUPPORTED[name]
    err = error(evalnb.load, EXAMPLES / name)
    assert err.code == "UNSUPPORTED_FEATURE"
    assert err.location == location
    assert repr(feature) in str(err) and err.path == str(EXAMPLES / name)
    suite = evalnb.load(EXAMPLES / name, unsupported="skip")
    assert len(suite.cases) == n
    assert any(f"left out {feature!r}" in w and location in w for w in suite.warnings)
    assert all(c.type not in ("javascript", "python") for case in suite.cases for c in case.turns[0].checks)


def test_simple_test_renders_a_prompt_file_of_two_prompts_and_maps_its_asserts() -> None:
    suite = evalnb.load(EXAMPLES / "simple-test/promptfooconfig.yaml", unsupported="skip")
    first, second = suite.cases[0], suite.cases[1]
    assert first.turns[0].prompt == "Rephrase this from English to Pirate: Yes"
    assert second.turns[0].prompt == "Pretend you're a pirate and speak these words: Yes"
    assert first.name == "Check for exact match · prompt 1"
    by_desc = {c.name: names(c) for c in suite.cases}
    assert by_desc["Use LLM to evaluate output · prompt 1"] == ["llm-rubric", "icontains"]  # $ref resolved
    assert by_desc["Check for semantic similarity · prompt 1"] == ["similar"]
    assert any("wordllama" in w for w in suite.warnings)


def test_simple_csv_renders_the_load_filter_and_prints_objects_as_json_text() -> None:
    suite = evalnb.load(EXAMPLES / "simple-csv/promptfooconfig.yaml")
    first = suite.cases[0].turns[0].prompt
    assert "- Tone: formal\n- Length: brief" in first and '"Hello world"' in first
    second = suite.cases[1].turns[0].prompt
    assert 'Follow the style configuration: {"tone":"formal","length":"brief"}.' in second
    check = suite.cases[0].turns[0].checks[0]
    assert (check.how, check.values, check.case_sensitive) == ("contains", ["bonjour"], False)


def test_csv_metadata_gives_categories_lists_and_trimmed_values() -> None:
    suite = evalnb.load(EXAMPLES / "csv-metadata/promptfooconfig.yaml")
    case = suite.cases[1]
    assert case.category == "science"
    assert case.meta["metadata"]["tags"] == ["physics", "advanced,theory", "quantum"]
    contains, rubric = case.turns[0].checks
    assert contains.values == ["quantum"]  # "contains: quantum": the value is trimmed
    assert rubric.rubric == "Does this describe quantum physics accurately"  # rendered with the row's vars


def test_customer_support_rubric_names_checks_by_metric_and_ignores_csv_threshold_zero() -> None:
    suite = evalnb.load(EXAMPLES / "eval-customer-support-rubric/promptfooconfig.yaml")
    case = suite.cases[3]  # `__threshold` 0: promptfoo drops it
    assert case.name == "ES tariff reply mixing languages"
    assert case.turns[0].prompt.startswith("Hola! Su tarifa es 25 EUR")
    assert "(es)" in case.turns[0].checks[4].rubric
    assert suite.meta["promptfoo"]["graders"] == ["openai:gpt-4.1-mini"]


def test_array_vars_make_every_combination() -> None:
    suite = evalnb.load(EXAMPLES / "config-multiple-translations/promptfooconfig.yaml")
    prompts = {c.turns[0].prompt for c in suite.cases}
    assert "You're a translator.  Translate this into German: Good morning" in prompts
    assert "Speak in Portuguese: See you later" in prompts
    assert len(prompts) == 50


def test_custom_nunjucks_filters_are_an_error_in_both_modes() -> None:
    for mode in ("error", "skip"):
        err = error(evalnb.load, EXAMPLES / "nunjucks-custom-filters/promptfooconfig.yaml", unsupported=mode)
        assert err.code == "UNSUPPORTED_FEATURE"
        assert "'allcaps'" in str(err) and err.location.startswith("prompts[0] (prompts.txt)")


def test_a_bare_list_of_asserts_says_what_it_is_and_reads_as_checks() -> None:
    path = EXAMPLES / "standalone-assertions/asserts.yaml"
    err = error(evalnb.load, path)
    assert err.code == "INVALID_VALUE" and "read_asserts" in str(err)
    with pytest.raises(SuiteError) as info:
        evalnb.formats.promptfoo.read_asserts(path)
    assert info.value.code == "UNSUPPORTED_FEATURE" and info.value.location == "[1].type"
    checks = evalnb.formats.promptfoo.read_asserts(path, unsupported="skip")
    assert [c.name for c in checks] == ["icontains", "model-graded-closedqa"]


# ------------------------------------------------------------------------------------------------------
# Recognition
# ------------------------------------------------------------------------------------------------------

SMALL = """
prompts: ['Say {{word}}']
tests:
  - vars: {word: hello}
    assert: [{type: icontains, value: HELLO}]
"""


def test_recognised_by_file_name_by_content_and_as_text(tmp_path: Path) -> None:
    assert evalnb.load(write(tmp_path, SMALL)).format == "promptfoo"
    assert evalnb.load(write(tmp_path, SMALL, "my.promptfooconfig.yml")).format == "promptfoo"
    assert evalnb.load(write(tmp_path, SMALL, "evals.yaml")).format == "promptfoo"  # a .yaml by content
    assert evalnb.load(SMALL).format == "promptfoo"
    as_json = json.dumps(
        {"prompts": ["Say {{word}}"], "providers": ["echo"], "tests": [{"vars": {"word": "x"}}]}
    )
    assert evalnb.load(write(tmp_path, as_json, "config.json")).format == "promptfoo"
    assert evalnb.load(as_json).format == "promptfoo"
    assert evalnb.load(SMALL, format="promptfoo").cases[0].turns[0].prompt == "Say hello"
    # a cube suite stays a cube suite
    cube = evalnb.load(evalnb.examples.path("foodmart-sales"))
    assert cube.format == "cube-yaml"


def test_bad_unsupported_option_is_a_suite_error() -> None:
    assert error(evalnb.load, SMALL, unsupported="ignore").code == "INVALID_VALUE"


# ------------------------------------------------------------------------------------------------------
# Prompts, tests, defaultTest
# ------------------------------------------------------------------------------------------------------


def test_prompt_files_globs_chat_json_and_labels(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "a.txt").write_text("A: {{q}}\n", encoding="utf-8")
    (tmp_path / "prompts" / "b.txt").write_text("B: {{q}}\n---\nC: {{q}}", encoding="utf-8")
    chat = [{"role": "system", "content": "You answer in {{lang}}."}, {"role": "user", "content": "{{q}}"}]
    (tmp_path / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
    config = write(
        tmp_path,
        """
prompts:
  - file://prompts/*.txt
  - file://chat.json
  - id: file://prompts/a.txt
    label: labelled
  - raw: 'Raw {{q}}'
tests:
  - vars: {q: why, lang: French}
""",
    )
    suite = evalnb.load(config)
    sent = [c.turns[0].prompt for c in suite.cases]
    assert sent == ["A: why", "B: why", "C: why", "why", "A: why", "Raw why"]
    chat_turn = suite.cases[3].turns[0]
    assert [m.model_dump() for m in chat_turn.history] == [
        {"role": "system", "content": "You answer in French."}
    ]
    assert suite.cases[4].meta["prompt"] == "labelled"


def test_no_prompts_means_the_prompt_var_and_missing_files_are_errors(tmp_path: Path) -> None:
    suite = evalnb.load(
        write(tmp_path, "providers: [echo]\nprompts: ['{{prompt}}']\ntests: [{vars: {prompt: hi}}]")
    )
    assert suite.cases[0].turns[0].prompt == "hi"
    err = error(evalnb.load, write(tmp_path, "prompts: [file://nope.txt]\ntests: [{vars: {a: 1}}]"))
    assert (err.code, err.location) == ("FILE_NOT_FOUND", "prompts[0]")


def test_default_test_merges_as_promptfoo_merges_it(tmp_path: Path) -> None:
    suite = evalnb.load(
        write(
            tmp_path,
            """
prompts: ['{{greeting}} {{name}}']
defaultTest:
  vars: {greeting: Hello, name: nobody}
  options: {prefix: '>> '}
  assert: [{type: contains, value: '{{name}}'}]
tests:
  - vars: {name: Ada}
    assert: [{type: not-contains, value: sorry}]
  - vars: {greeting: Hi, name: Bob}
    options: {suffix: ' <<'}
""",
        )
    )
    first, second = suite.cases
    assert first.turns[0].prompt == ">> Hello Ada"
    assert second.turns[0].prompt == ">> Hi Bob <<"
    assert names(first) == ["contains", "not-contains"]  # defaultTest's asserts first
    assert first.turns[0].checks[0].values == ["Ada"]
    assert names(second) == ["contains"]


def test_csv_expected_forms(tmp_path: Path) -> None:
    (tmp_path / "tests.csv").write_text(
        "q,__expected1,__expected2,__expected3\n"
        'a,"contains-any:x, y",not-icontains:sorry,starts-with:Yes\n'
        "b,similar(0.6):close to this,levenshtein(3):kitten,regex:\\d{4}\n"
        "c,plain text,is-json,\n",
        encoding="utf-8",
    )
    suite = evalnb.load(write(tmp_path, "prompts: ['{{q}}']\ntests: file://tests.csv"))
    a, b, c = (case.turns[0].checks for case in suite.cases)
    assert [x.name for x in a] == ["contains-any", "not-icontains", "starts-with"]
    assert a[0].values == ["x", "y"] and a[1].negate and not a[1].case_sensitive
    assert (b[0].threshold, b[0].value, b[1].threshold, b[2].values) == (
        0.6,
        "close to this",
        3.0,
        ["\\d{4}"],
    )
    assert [x.name for x in c] == ["equals", "is-json"] and c[0].values == ["plain text"]


def test_case_ids_are_stable_when_tests_move(tmp_path: Path) -> None:
    one = evalnb.load("prompts: ['{{x}}']\ntests: [{vars: {x: a}}, {vars: {x: b}, description: Bee}]")
    two = evalnb.load("prompts: ['{{x}}']\ntests: [{vars: {x: b}, description: Bee}, {vars: {x: a}}]")
    assert {c.turns[0].prompt: c.id for c in one.cases} == {c.turns[0].prompt: c.id for c in two.cases}
    assert one.cases[1].id.startswith("bee-")
    twice = evalnb.load("prompts: ['{{x}}']\ntests: [{vars: {x: a}}, {vars: {x: a}}]")
    assert twice.cases[1].id == twice.cases[0].id + "#2"


def test_repeat_sets_the_runs() -> None:
    suite = evalnb.load("prompts: ['{{x}}']\nevaluateOptions: {repeat: 3}\ntests: [{vars: {x: a}}]")
    assert suite.cases[0].runs == 3


# ------------------------------------------------------------------------------------------------------
# Errors and unsupported parts
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "location"),
    [
        ("prompts: ['x']\ntests: [{vars: {a: 1}, asert: []}]", "UNKNOWN_FIELD", "tests[0].asert"),
        (
            "prompts: ['x']\ntests: [{assert: [{type: contians, value: a}]}]",
            "INVALID_VALUE",
            "tests[0].assert[0].type",
        ),
        ("prompts: ['x']\ntests: [{assert: [{value: a}]}]", "MISSING_FIELD", "tests[0].assert[0].type"),
        (
            "prompts: ['x']\ntests: [{assert: [{type: contains}]}]",
            "MISSING_FIELD",
            "tests[0].assert[0].value",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: regex, value: '(a'}]}]",
            "INVALID_VALUE",
            "tests[0].assert[0].value",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: latency}]}]",
            "MISSING_FIELD",
            "tests[0].assert[0].threshold",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: webhook, value: 'http://x'}]}]",
            "UNSUPPORTED_FEATURE",
            "tests[0].assert[0].type",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: factuality, value: a}]}]",
            "UNSUPPORTED_FEATURE",
            "tests[0].assert[0].type",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: not-llm-rubric, value: a}]}]",
            "UNSUPPORTED_FEATURE",
            "tests[0].assert[0].type",
        ),
        (
            "prompts: ['x']\ntests: [{threshold: 0.5, assert: [{type: contains, value: a}]}]",
            "UNSUPPORTED_FEATURE",
            "tests[0].threshold",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: contains, value: a, transform: output.trim()}]}]",
            "UNSUPPORTED_FEATURE",
            "tests[0].assert[0].transform",
        ),
        (
            "prompts: ['x']\ntests: [{assert: [{type: equals, value: a, weight: 0}]}]",
            "UNSUPPORTED_FEATURE",
            "tests[0].assert[0].weight",
        ),
        (
            "prompts: ['{{ x | nosuch }}']\ntests: [{vars: {x: 1}}]",
            "UNSUPPORTED_FEATURE",
            "prompts[0] with the vars of tests[0]",
        ),
        (
            "prompts: ['{% macro m() %}{% endmacro %}']\ntests: [{vars: {x: 1}}]",
            "UNSUPPORTED_FEATURE",
            "prompts[0] with the vars of tests[0]",
        ),
        (
            "prompts: ['{{ x ']\ntests: [{vars: {x: 1}}]",
            "INVALID_VALUE",
            "prompts[0] with the vars of tests[0]",
        ),
        (
            "prompts: ['x']\nscenarios: [{config: []}]\ntests: [{vars: {a: 1}}]",
            "UNSUPPORTED_FEATURE",
            "scenarios",
        ),
        ("promts: ['x']\ntests: [{vars: {a: 1}}]", "UNKNOWN_FIELD", "promts"),
    ],
)
def test_errors_have_a_code_and_a_location(text: str, code: str, location: str) -> None:
    err = error(evalnb.load, text, format="promptfoo")
    assert (err.code, err.location) == (code, location), str(err)


def test_skip_leaves_out_what_cannot_run_and_says_so() -> None:
    text = """
prompts: ['x']
tests:
  - threshold: 0.5
    assert: [{type: javascript, value: 'output.length > 1'}, {type: contains, value: x}]
"""
    suite = evalnb.load(text, unsupported="skip")
    assert names(suite.cases[0]) == ["contains"]
    joined = " ".join(suite.warnings)
    assert "left out 'javascript'" in joined and "left out 'threshold'" in joined


def test_several_errors_are_reported_together() -> None:
    err = error(
        evalnb.load,
        "prompts: ['x']\ntests: [{assert: [{type: javascript, value: a}]}, {assert: [{type: python, value: b}]}]",
    )
    assert [e.location for e in err.errors] == ["tests[0].assert[0].type", "tests[1].assert[0].type"]


# ------------------------------------------------------------------------------------------------------
# Each assert on real answers
# ------------------------------------------------------------------------------------------------------

ASSERTS = """
prompts: ['q']
tests:
  - assert:
      - {type: equals, value: 'Hello World'}
      - {type: not-equals, value: 'hello world'}
      - {type: contains, value: World}
      - {type: contains, value: world}
      - {type: icontains, value: WORLD}
      - {type: not-icontains, value: sorry}
      - {type: contains-any, value: [planet, World]}
      - {type: contains-all, value: [Hello, planet]}
      - {type: icontains-all, value: 'hello, world'}
      - {type: icontains-any, value: [nope]}
      - {type: starts-with, value: Hello}
      - {type: not-starts-with, value: World}
      - {type: regex, value: '^H\\w+ W'}
      - {type: not-regex, value: '\\d'}
      - {type: is-json}
      - {type: not-is-json}
      - {type: contains-json}
      - {type: levenshtein, value: 'Hallo World', threshold: 1}
      - {type: not-levenshtein, value: 'Hallo World'}
      - {type: latency, threshold: 60000}
      - {type: cost, threshold: 0.01}
"""


def test_each_string_assert_means_what_it_means_in_promptfoo() -> None:
    got = scores(evalnb.load(ASSERTS), "Hello World")
    assert {k: v[0] for k, v in got.items()} == {
        "equals": True,
        "not-equals": True,
        "contains": True,
        "contains#2": False,  # case-sensitive
        "icontains": True,
        "not-icontains": True,
        "contains-any": True,
        "contains-all": False,
        "icontains-all": True,
        "icontains-any": False,
        "starts-with": True,
        "not-starts-with": True,
        "regex": True,
        "not-regex": True,
        "is-json": False,
        "not-is-json": True,
        "contains-json": False,
        "levenshtein": True,
        "not-levenshtein": False,
        "latency": True,
        "cost": False,  # a callable reports no cost: not evaluated, never a pass
    }
    assert got["levenshtein"][1] == 1.0


def test_json_asserts_with_schema_and_equals_objects() -> None:
    text = """
prompts: ['q']
tests:
  - assert:
      - type: is-json
        value: {type: object, required: [color], properties: {color: {type: string}}}
      - type: contains-json
        value: {type: object, required: [size]}
      - {type: equals, value: {color: yellow, n: 2}}
"""
    suite = evalnb.load(text)
    whole = scores(suite, '{"n": 2, "color": "yellow"}')
    assert {k: v[0] for k, v in whole.items()} == {"is-json": True, "contains-json": False, "equals": True}
    inside = scores(suite, 'Here: {"size": 3} done')
    assert {k: v[0] for k, v in inside.items()} == {"is-json": False, "contains-json": True, "equals": False}


def test_cost_and_latency_read_the_response() -> None:
    suite = evalnb.load("prompts: ['q']\ntests: [{assert: [{type: cost, threshold: 0.002}]}]")
    assert scores(suite, {"text": "a", "usage": {"cost": 0.001}})["cost"] == (True, 0.001)
    assert scores(suite, {"text": "a", "usage": {"cost": 0.01}})["cost"] == (False, 0.01)
    result = evalnb.run(suite, lambda p: "a")
    assert "cost not evaluated" in result.scores["reason"].iloc[0]
    slow = evalnb.load("prompts: ['q']\ntests: [{assert: [{type: latency, threshold: 5}]}]")
    got = scores(slow, {"text": "a", "latency_ms": 50.0})
    assert got["latency"] == (False, 50.0)


def test_similar_runs_the_offline_embedding_check() -> None:
    suite = evalnb.load(
        "prompts: ['q']\ntests: [{assert: [{type: similar, value: 'The cat sat on the mat', threshold: 0.5},"
        " {type: not-similar, value: 'Quarterly revenue grew', threshold: 0.5}]}]"
    )
    got = scores(suite, "A cat was sitting on the mat")
    assert got["similar"][0] is True and got["not-similar"][0] is True
    assert got["similar"][1] > got["not-similar"][1]


def test_llm_rubric_goes_to_the_judge() -> None:
    suite = evalnb.load(
        "prompts: ['q']\ntests: [{assert: [{type: llm-rubric, value: 'mentions Paris', metric: geo}]}]"
    )
    spec = suite.cases[0].turns[0].checks[0]
    assert (spec.type, spec.name, spec.judged) == ("llm_judge", "geo", True)
    result = evalnb.run(suite, lambda p: "Paris")  # no judge: fails, as every judged check without one
    assert result.scores["reason"].iloc[0] == "llm judge not evaluated: this runner has no judge router"
    judged = evalnb.run(suite, lambda p: "Paris", judge=lambda prompt: "PASS: it does")
    assert judged.scores["passed"].iloc[0]


# ------------------------------------------------------------------------------------------------------
# Templates
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "variables", "out"),
    [
        ("{{ name }}", {"name": "Ada"}, "Ada"),
        ("[{{ missing }}]", {}, "[]"),
        ("{{ user.name }} {{ user['age'] }}", {"user": {"name": "Ada", "age": 36}}, "Ada 36"),
        ("{{ obj }}", {"obj": {"a": 1}}, "[object Object]"),
        ("{{ xs }}|{{ xs | join(', ') }}|{{ xs | length }}", {"xs": ["a", "b"]}, "a,b|a, b|2"),
        ("{{ n }} {{ f }} {{ t }}", {"n": 3, "f": 2.0, "t": True}, "3 2 true"),
        ("{{ x | dump }}", {"x": {"a": [1, "b"]}}, '{"a":[1,"b"]}'),
        ("{{ (s | load).k }}", {"s": '{"k": "v"}'}, "v"),
        ("{{ s | upper }}{{ s | lower | capitalize }}{{ ' x ' | trim }}", {"s": "aB"}, "ABAbx"),
        ("{{ s | replace('a', 'o') | title }}", {"s": "banana split"}, "Bonono Split"),
        ("{{ m | default('none') }}", {}, "none"),
        ("{% if n > 2 %}big{% elif n > 0 %}small{% else %}none{% endif %}", {"n": 1}, "small"),
        (
            "{% for x in xs %}{{ loop.index }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}",
            {"xs": "ab"},
            "1a,2b",
        ),
        ("{% for x in [] %}x{% else %}empty{% endfor %}", {}, "empty"),
        ("{% set y = x ~ '!' %}{{ y }}", {"x": "hi"}, "hi!"),
        ("a {{- ' b ' -}} c|x {%- if 1 %} y {% endif -%} z", {}, "a b c|x y z"),
        ("{# note #}{% raw %}{{ kept }}{% endraw %}", {}, "{{ kept }}"),
        ("{{ 'yes' if ok else 'no' }}", {"ok": False}, "no"),
        ("{{ a + b }} {{ a ~ b }}", {"a": 1, "b": 2}, "3 12"),
        ("{{ env.GREETING }}", {"env": {"GREETING": "hi"}}, "hi"),
    ],
)
def test_templates_render_as_nunjucks_does(template: str, variables: dict, out: str) -> None:
    assert render(template, variables) == out


def test_templates_evalnb_cannot_render_name_the_construct() -> None:
    with pytest.raises(_TemplateUnsupported, match="allcaps"):
        render("{{ x | allcaps }}", {"x": "a"})
    with pytest.raises(_TemplateUnsupported, match="include"):
        render("{% include 'a.njk' %}", {})


def test_validate_and_run_on_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    config = EXAMPLES / "simple-test/promptfooconfig.yaml"
    strict = subprocess.run(
        [sys.executable, "-m", "evalnb", "validate", str(config)], capture_output=True, text=True
    )
    assert strict.returncode == 2
    assert f"{config}:tests[3].assert[0].type: UNSUPPORTED_FEATURE" in strict.stdout
    lenient = subprocess.run(
        [sys.executable, "-m", "evalnb", "validate", str(config), "--unsupported", "skip"],
        capture_output=True,
        text=True,
    )
    assert lenient.returncode == 0 and "OK (promptfoo, 10 cases)" in lenient.stdout
    assert "warning: left out 'javascript'" in lenient.stdout
    (tmp_path / "agent.py").write_text(
        "def answer(prompt):\n    return 'Ahoy! arrr, grub'\n", encoding="utf-8"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalnb",
            "run",
            str(EXAMPLES / "simple-csv/promptfooconfig.yaml"),
            "--agent",
            f"{tmp_path / 'agent.py'}:answer",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 1, run.stderr  # bonjour and faim are not in a pirate's answer
    data = json.loads(run.stdout)
    passed = {s["case_id"]: s["passed"] for s in data["scores"]}
    assert sum(passed.values()) == 4 and len(passed) == 8
