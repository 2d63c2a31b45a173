"""The demo job (``evalnb demo``) end to end in a subprocess, and its two offline agents."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import evalnb
from evalnb.demo._main import next_steps, run_demo
from evalnb.demo.kb import KBAssistant
from evalnb.demo.task_agent import main as task_main
from evalnb.demo.task_agent import solve
from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    # The subprocess must import this checkout's evalnb whether or not it is installed in the environment.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_demo_runs_in_an_empty_folder_and_writes_store_and_scorecard(tmp_path: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "evalnb", "demo"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert elapsed < 60, f"the demo took {elapsed:.1f} s"
    # The reports of both versions of the three suites, in the cube spec's text format.
    for version in ("previous", "current"):
        assert f'Version "{version}"' in out
    for suite in ("foodmart-sales-evals", "my-validation-suite", "knowledge-base"):
        assert out.count(f"Suite: {suite}") == 2
    assert "12/12 passed" in out  # the current FoodMart agent passes the cube suite
    # the flawed one reads Store Cost; cube spec line format, with the tolerance applied
    assert "rows[0].storeSales: expected 263793.22 ± (abs 0, rel 0.001), got 105658.6" in out
    assert "FAIL: summarize-text" in out and "PASS: summarize-text (" in out
    # The comparison, and the judge named for what it is.
    assert out.count("Comparison previous -> current") >= 3
    assert "rows (0-1): mean per case 0.688 -> 1.000 over 8 paired cases; better by 0.31" in out
    assert "heuristic (not an LLM)" in out and "embedding (wordllama, not an LLM)" in out
    assert "not installed" not in out  # the embedding judge is there: no fallback, and no fallback notice
    # The store holds both versions of every suite; the scorecard is a page with the plots.
    db = tmp_path / ".evals" / "evalnb.db"
    assert db.is_file()
    runs = evalnb.Store(db).history()
    assert sorted(runs["version"].tolist()) == ["current"] * 3 + ["previous"] * 3
    assert set(runs["suite"]) == {"foodmart-sales-evals", "my-validation-suite", "knowledge-base"}
    page = (tmp_path / ".evals" / "scorecard.html").read_text(encoding="utf-8")
    assert "evalnb demo scorecard" in page and "plotly" in page.lower()
    assert page.count('class="plotly-graph-div"') == 6  # compare + scorecard figure per suite
    # Nothing is written outside the output folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".evals"]


def test_demo_options_out_and_store(tmp_path: Path) -> None:
    from evalnb.demo._main import run_demo

    lines: list[str] = []
    outcome = run_demo(out=tmp_path / "o", store=tmp_path / "team.db", echo=lines.append)
    assert outcome.scorecard == tmp_path / "o" / "scorecard.html" and outcome.scorecard.is_file()
    assert (tmp_path / "team.db").is_file() and not (tmp_path / "o" / "evalnb.db").exists()
    assert outcome.results["current"]["foodmart-sales-evals"].passed
    assert not outcome.results["previous"]["foodmart-sales-evals"].passed
    cmp = outcome.comparisons["knowledge-base"]
    checks = cmp.checks.set_index("check_id")
    # four cases a check: no sign pattern of four cases reaches 5%, so the gate says so instead of guessing
    assert checks.loc["PartialMatch", "words"] == "too few cases to tell (4 paired cases)"
    assert checks.loc["Citations", "verdict"] == "too few cases to tell"
    # the triage list still shows what changed
    assert cmp.cases.set_index(["case_id", "check_id"]).loc[("EXP-001", "Citations"), "change"] == "improved"
    assert not cmp.regressed
    # the fixed cube agent: rows better, gated as one family with the other suites
    assert outcome.gate is not None and outcome.gate.exit_code == 0
    rows = outcome.comparisons["foodmart-sales-evals"].checks.set_index("check_id").loc["rows"]
    assert rows["verdict"] == "better" and rows["words"].startswith("better by 0.31 (95% one-sided bound")
    assert any(line.startswith("Gate over 3 suites: pass") for line in lines)
    assert any("(triage, does not gate)" in line for line in lines)
    # Judged checks name their judge honestly: embeddings for Relevance, word statistics for the others.
    kb = outcome.results["current"]["knowledge-base"].scores
    judged = kb[kb["judge"].notna()]
    assert set(judged["judge"]) == {"embedding (wordllama, not an LLM)", "heuristic (not an LLM)"}
    assert set(judged.loc[judged["check"] == "Relevance", "judge"]) == {"embedding (wordllama, not an LLM)"}
    assert set(judged.loc[judged["check"] != "Relevance", "judge"]) == {"heuristic (not an LLM)"}
    # The current knowledge-base assistant passes every judged check offline (EXP-003's on-topic answer too,
    # which the word-statistics judge gave Relevance 1/5).
    assert judged["passed"].all(), judged.loc[~judged["passed"], ["case_id", "check", "reason"]]
    exp3 = judged.set_index(["case_id", "check"]).loc[("EXP-003", "Relevance")]
    assert exp3["value"] >= 3 and "embedding: cosine" in exp3["reason"]
    assert any("embedding (wordllama, not an LLM)" in line for line in lines)


def test_demo_without_wordllama_says_so_and_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalnb.demo._main import run_demo

    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if the offline-judge extra were not installed
    lines: list[str] = []
    outcome = run_demo(out=tmp_path / "o", echo=lines.append)
    text = "\n".join(lines)
    assert 'pip install "evalnb[offline-judge]"' in text and "not installed" in text
    judges = set(outcome.results["current"]["knowledge-base"].scores["judge"].dropna())
    assert judges == {"heuristic (not an LLM)"}
    assert any("heuristic" in line for line in lines)
    # Run again into the same store: the demo replaces its own two versions (a label names one run).
    first = dict(outcome.run_ids["current"])
    again = run_demo(out=tmp_path / "o", store=tmp_path / "team.db", echo=lambda s: None)
    runs = evalnb.Store(tmp_path / "team.db").history()
    assert sorted(runs["version"].tolist()) == ["current"] * 3 + ["previous"] * 3
    assert set(runs["run_id"]) == {i for v in again.run_ids.values() for i in v.values()}
    assert not set(first.values()) & set(runs["run_id"])


def test_kb_assistant_answers_with_bracket_citations() -> None:
    kb = KBAssistant()
    r = kb.answer("What is the daily meal allowance when travelling for work?")
    assert r.text == "The daily meal allowance when travelling for work is $40 [5]."
    assert r.context and "$40" in r.context
    assert kb.answer("How long do I have to submit an expense claim?").text.startswith("Expense claims")
    follow = kb.answer(
        "What should I do about the extra $15?",
        [{"role": "user", "content": "I spent $55 on dinner on a business trip. Is that okay?"}],
    )
    assert "approve the overage" in (follow.text or "")
    assert "could not find" in (kb.answer("Who won the 1966 World Cup?").text or "")
    flawed = KBAssistant(flaw="no-citations").answer("What is the daily meal allowance?")
    assert "[" not in (flawed.text or "") and "Expense claims" in (flawed.text or "")


def test_kb_assistant_passes_most_of_the_dataset() -> None:
    result = evalnb.run(
        EXAMPLES / "suites" / "knowledge-base.json", KBAssistant(), judge="heuristic", progress=False
    )
    assert result.counts()["passed"] >= 8


def test_task_agent_tasks_and_flaws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert solve("How many words are in the sentence 'the quick brown fox'?", workdir=tmp_path) == "4"
    assert solve("List the capitals of France, Italy and Spain, one per line.", workdir=tmp_path) == (
        "Paris\nRome\nMadrid"
    )
    text = "Cats sleep a lot. Cats eat fish. Dogs bark at night. Cats purr when happy. Birds sing."
    out = solve(f"Summarize this text in three sentences: {text}", workdir=tmp_path)
    assert out.startswith("Summary (written to output/summary.txt):")
    assert (tmp_path / "output" / "summary.txt").read_text().count(".") == 3
    assert (
        solve("How many words are in the sentence 'a b c'?", workdir=tmp_path, flaw=True)
        == "There are 3 words."
    )
    solve("Summarize this text in three sentences: [...]", workdir=tmp_path / "f", flaw=True)
    assert (tmp_path / "f" / "summary.txt").is_file() and not (tmp_path / "f" / "output").exists()
    assert task_main(["Write", "a", "poem"]) == 1
    assert "task agent:" in capsys.readouterr().err


def test_scorecard_write_failing_midway_leaves_the_old_page(tmp_path: Path) -> None:
    from evalnb.demo._main import DemoOutcome, write_scorecard
    from evalnb.suite import Case, RegexCheck, Suite, Turn
    from tests.support.disk import assert_write_fails

    suite = Suite(
        name="s",
        format="tasks-toml",
        cases=[
            Case(id="c", name="c", turns=[Turn(prompt="q", checks=[RegexCheck(on="result", pattern="a")])])
        ],
    )
    outcome = DemoOutcome(results={"current": {"s": evalnb.run(suite, lambda p: "a", progress=False)}})
    target = tmp_path / "scorecard.html"
    target.write_text("yesterday's page")
    with assert_write_fails(100_000):  # plotly's JavaScript alone is megabytes
        write_scorecard(outcome, target)
    assert target.read_text() == "yesterday's page"
    assert [p.name for p in tmp_path.iterdir()] == ["scorecard.html"]
    page = write_scorecard(outcome, target).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<title>evalnb demo scorecard</title>" in page


def test_the_demo_ends_with_commands_that_work_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The demo saves "previous" and "current" for three suites, so `evalnb compare previous current` alone is
    # ambiguous (exit 2); the printed commands must name the suite, and the store when it is not the default.
    monkeypatch.chdir(tmp_path)
    lines: list[str] = []
    run_demo(out="o", store=tmp_path / "team" / "runs.db", echo=lines.append)
    commands = [
        shlex.split(line) for line in lines if re.match(r"^\s+\S*evalnb (compare|trend|report) ", line)
    ]
    assert [c[1] for c in commands] == ["compare", "trend", "report"], lines[-8:]
    for argv in commands:
        assert Path(argv[0]).name == "evalnb"
        assert argv[argv.index("--store") + 1] == "team/runs.db"
        proc = subprocess.run(
            [sys.executable, "-m", "evalnb", *argv[1:]],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        # `report` exits 1 for a run with failures (capital-list's heuristic verdict); 2 would be an error.
        assert proc.returncode == (1 if argv[1] == "report" else 0), (argv, proc.stdout[-500:], proc.stderr)
        assert proc.stdout.strip() and not proc.stderr
    notebooks = next(line for line in lines if " lab " in line)
    assert str(ROOT / "notebooks") in notebooks  # run from elsewhere: the notebooks' real folder


def test_next_steps_with_the_default_store_need_no_store_option(tmp_path: Path) -> None:
    store = evalnb.Store(tmp_path / ".evals" / "evalnb.db")
    lines = next_steps(store, tmp_path / "notebooks", cwd=tmp_path)
    assert not any("--store" in line for line in lines)
    assert any(line.endswith("compare previous current --suite foodmart-sales-evals") for line in lines)
    assert any(" lab notebooks " in line for line in lines)


def test_next_steps_of_an_install_without_the_notebooks_point_to_the_repository(tmp_path: Path) -> None:
    # The notebooks are not in the wheel: no `jupyter lab` of a folder the user does not have.
    from evalnb.demo._main import notebooks_dir

    lines = next_steps(evalnb.Store(tmp_path / ".evals" / "evalnb.db"), None, cwd=tmp_path)
    assert not any(" lab " in line or "pip install" in line for line in lines)
    assert lines[-1].strip().startswith("The four tutorial notebooks are in the notebooks/ folder")
    assert notebooks_dir() == ROOT / "notebooks"  # a checkout has them


def test_next_steps_say_how_to_install_jupyterlab_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `python3 dev.py demo` installs evalnb without its notebooks extra: `jupyter lab` alone would not exist.
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return None if name == "jupyterlab" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    lines = next_steps(evalnb.Store(tmp_path / "x.db"), tmp_path / "notebooks", cwd=tmp_path)
    install = [line for line in lines if "pip install" in line]
    assert install and install[0].split("pip install -e ", 1)[1].split()[0] == "'.[notebooks,excel]'"


def test_demo_out_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    # It was a FileExistsError traceback with exit 1.
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "evalnb", "demo", "--out", "taken"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: the demo cannot write into taken: File exists"
