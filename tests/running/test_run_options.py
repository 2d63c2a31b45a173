"""RunOptions is the one home of the run options: `run` and `run_async` take exactly its fields as keywords (same
defaults), or one `options=` object; the CLI's flags set its fields; the meta records its recorded fields.
PairwiseOptions is the same for `pairwise`, `pairwise_async`, `rank` and `rank_async`."""

from __future__ import annotations

import dataclasses
import inspect
import json
from pathlib import Path

import pytest

import evalnb
from evalnb.cli._run import RUN_FLAGS, run_command
from evalnb.formats._dataset_json import inline_suite
from evalnb.preference import PairwiseOptions
from evalnb.running import RunOptions
from tests.support.cli import evalnb_cli

SUITE = inline_suite([f"say {i}" for i in range(3)], [str(i) for i in range(3)])


def _answer(prompt: str) -> str:
    return prompt.split()[-1]


def _keywords(fn: object) -> dict[str, inspect.Parameter]:
    params = inspect.signature(fn).parameters  # type: ignore[arg-type]
    return {n: p for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "options"}


@pytest.mark.parametrize("fn", [evalnb.run, evalnb.run_async], ids=["run", "run_async"])
def test_every_run_keyword_is_a_run_options_field_with_its_default(fn: object) -> None:
    fields = {f.name: f for f in dataclasses.fields(RunOptions)}
    keywords = _keywords(fn)
    # a field added to RunOptions and not to run's keywords (or the other way round) fails here
    assert list(keywords) == list(fields)
    for name, param in keywords.items():
        assert param.default == fields[name].default, name
        assert param.annotation == fields[name].type, name
    assert inspect.signature(fn).parameters["options"].default is None  # type: ignore[arg-type]


def test_run_takes_the_options_as_one_object_and_the_meta_records_them() -> None:
    options = RunOptions(runs=2, concurrency=3, timeout=9.0, retries=0, progress=False)
    result = evalnb.run(SUITE, _answer, options=options)
    assert result.passed and len(result.runs) == 6
    assert result.meta.options == {"runs": 2, "concurrency": 3, "timeout": 9.0, "retries": 0, "workdir": None}
    same = evalnb.run(SUITE, _answer, runs=2, concurrency=3, timeout=9.0, retries=0, progress=False)
    assert same.meta.options == result.meta.options
    assert options.recorded() == result.meta.options


def test_options_beside_keywords_that_set_options_is_refused() -> None:
    with pytest.raises(TypeError, match="runs given beside options="):
        evalnb.run(SUITE, _answer, runs=1, options=RunOptions(progress=False))
    with pytest.raises(TypeError, match="takes an evalnb RunOptions"):
        evalnb.run(SUITE, _answer, options={"runs": 1})  # type: ignore[arg-type]
    # a keyword left at its default is no conflict
    assert evalnb.run(SUITE, _answer, concurrency=8, options=RunOptions(runs=1, progress=False)).passed


async def test_run_async_takes_the_same_object() -> None:
    result = await evalnb.run_async(SUITE, _answer, options=RunOptions(runs=1, progress=False))
    assert result.passed and result.meta.options["runs"] == 1


def test_run_options_are_frozen_and_keyword_only() -> None:
    options = RunOptions(runs=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.runs = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        RunOptions(1)  # type: ignore[misc]
    assert dataclasses.replace(options, runs=2).runs == 2 and options.runs == 1


def test_the_cli_flags_set_run_options_fields() -> None:
    fields = {f.name for f in dataclasses.fields(RunOptions)}
    assert set(RUN_FLAGS.values()) <= fields
    flags = {opt for p in inspect.signature(run_command).parameters.values() for opt in _flags(p.default)}
    assert set(RUN_FLAGS) <= flags, set(RUN_FLAGS) - flags
    # every option the meta records can be set from the command line
    recorded = {f.name for f in dataclasses.fields(RunOptions) if f.metadata.get("recorded")}
    assert recorded <= set(RUN_FLAGS.values())


def _flags(default: object) -> list[str]:
    return [d for d in getattr(default, "param_decls", None) or () if d.startswith("--")]


def test_the_cli_run_records_its_flags_as_run_options(tmp_path: Path) -> None:
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps({"items": [{"prompt": "say 1", "expected_response": "1"}]}))
    agents = Path(__file__).resolve().parents[1] / "agents_for_cli.py"
    out = evalnb_cli(
        "run", str(suite), "--agent", f"{agents}:wrong", "--runs", "2", "--concurrency", "3", "--timeout", "7",
        "--retries", "1", "--format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr
    assert json.loads(out.stdout)["meta"]["options"] == {
        "runs": 2, "concurrency": 3, "timeout": 7.0, "retries": 1, "workdir": None,
    }  # fmt: skip


@pytest.mark.parametrize(
    "fn",
    [evalnb.pairwise, evalnb.preference.pairwise_async, evalnb.rank, evalnb.preference.rank_async],
    ids=["pairwise", "pairwise_async", "rank", "rank_async"],
)
def test_every_pairwise_option_is_a_keyword_with_its_default(fn: object) -> None:
    keywords = _keywords(fn)
    for f in dataclasses.fields(PairwiseOptions):
        assert f.name in keywords, f.name
        assert keywords[f.name].default == f.default, f.name
    assert inspect.signature(fn).parameters["options"].default is None  # type: ignore[arg-type]


def test_pairwise_and_rank_take_the_options_as_one_object() -> None:
    a = evalnb.run(SUITE, _answer, runs=1, progress=False)
    b = evalnb.run(SUITE, lambda prompt: "no", runs=1, progress=False)
    options = PairwiseOptions(judge=lambda prompt, first, second: "first", orderings=1, seed=3)
    one = evalnb.pairwise(a, b, options=options)
    kw = evalnb.pairwise(a, b, judge=options.judge, orderings=1, seed=3)
    assert one.orderings == kw.orderings == 1
    assert one.cases["winner"].tolist() == kw.cases["winner"].tolist()
    with pytest.raises(TypeError, match="orderings given beside options="):
        evalnb.pairwise(a, b, orderings=1, options=options)
    ranking = evalnb.rank([a, b], options=options, bootstrap=0)
    assert ranking.judge == one.judge and list(ranking["version"]) and len(ranking.pairs) == 1
