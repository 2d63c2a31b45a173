"""The command line runs every suite the API can, and CI reads its results natively: the shipped cube suite with
``--data``, a suite written for a repository with ``--workdir``, ``--retries``, JUnit XML (read with junitparser,
validated against the JUnit XSD in tests/support/junit) and the Markdown summary with the gate's verdicts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import junitparser
import pytest
import xmlschema

from tests.support.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[1]
CUBE_SUITE = EXAMPLES / "suites" / "foodmart-sales.eval.yaml"
XSD = ROOT / "tests" / "support" / "junit" / "junit.xsd"

AGENTS = '''
import os
from pathlib import Path

from evalnb.demo import FoodMartAgent

analyst = FoodMartAgent()
tries = Path(os.environ["TRIES_FILE"]) if "TRIES_FILE" in os.environ else None


def builder(request):
    """Builds in the directory it runs in: what a task of a repository suite asks for."""
    where = Path(request.workdir)
    (where / "dist").mkdir(exist_ok=True)
    (where / "dist" / "app.whl").write_text("wheel")
    return {"text": "built dist/app.whl from " + ", ".join(sorted(p.name for p in where.iterdir())), "exit_code": 0}


def flaky(prompt):
    """Fails with a transient error the first two times, then answers."""
    import evalnb

    n = int(tries.read_text()) if tries.exists() else 0
    tries.write_text(str(n + 1))
    if n < 2:
        raise evalnb.errors.TransientError("busy, try again")
    return "Paris"
'''


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "evalnb", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "agents.py"
    path.write_text(AGENTS)
    return path


def junit_checked(path: Path) -> junitparser.JUnitXml:
    """The report validated against the JUnit XSD, then read as CI tooling reads it."""
    schema = xmlschema.XMLSchema(str(XSD))
    schema.validate(str(path))
    xml = junitparser.JUnitXml.fromfile(str(path))
    return xml


def test_the_shipped_cube_suite_runs_from_the_cli_with_data(
    tmp_path: Path, agents: Path, foodmart_db: Path
) -> None:
    report, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    args = [
        str(CUBE_SUITE),
        "--agent",
        f"{agents}:analyst",
        "--junit",
        str(report),
        "--summary",
        str(summary),
    ]
    out = cli(*args, "--data", str(foodmart_db), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "12/12 passed" in out.stdout
    xml = junit_checked(report)
    suites = list(xml)
    assert [s.name for s in suites] == ["foodmart-sales-evals"]
    cases = list(suites[0])
    assert len(cases) == 12 and all(c.is_passed for c in cases)
    assert {c.classname for c in cases} == {"foodmart-sales-evals"} and cases[0].name == "sales-by-state"
    assert suites[0].tests == 12 and suites[0].failures == 0 and suites[0].errors == 0
    text = summary.read_text()
    assert text.startswith("## evalnb: ✅ passed (12/12 cases passed)")
    assert "| foodmart-sales-evals | 12 | 12 | 0 | 0 | 0 | 100% |" in text

    # without --data the run cannot start, and the error says which option gives the data
    missing = cli(str(CUBE_SUITE), "--agent", f"{agents}:analyst", cwd=tmp_path)
    assert missing.returncode == 2
    assert "needs a data source for referenceQuery" in missing.stderr and "--data SOURCE" in missing.stderr
    # a SQLAlchemy URL is a data source too
    url = cli(
        str(CUBE_SUITE), "--agent", f"{agents}:analyst", "--data", f"sqlite:///{foodmart_db}", cwd=tmp_path
    )
    assert url.returncode == 2 and "no cube model" in url.stderr  # a URL has no cube.yaml beside it: said so
    # ... and reference queries written as SQL run on it
    sql_only = tmp_path / "sql.eval.yaml"
    sql_only.write_text(
        textwrap.dedent(
            """\
            name: sql-only
            cube: {connectionName: c, catalog: FoodMart, schema: FoodMart, cubeName: Sales}
            cases:
              - name: unit-sales-by-quarter
                question: unit sales by quarter
                expectedIntent: QUERY
                referenceQuery:
                  sql: SELECT t.quarter AS quarter, SUM(f.unit_sales) AS unit_sales FROM sales_fact_1997 f
                       JOIN time_by_day t ON t.time_id = f.time_id GROUP BY t.quarter ORDER BY t.quarter
            """
        )
    )
    ran = cli(
        str(sql_only), "--agent", f"{agents}:analyst", "--data", f"sqlite:///{foodmart_db}", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


REPO_SUITE = """\
name = "repo-tasks"

[[tasks]]
id = "build"
prompt = "Build the wheel"
runs = 2
assertions = [
  {{ type = "exit_code", equals = 0 }},
  {{ type = "file_exists", path = "dist/app.whl" }},
  {{ type = "file_exists", path = "pyproject.toml" }},
  {{ type = "file_exists", path = "{root}/pyproject.toml" }},
  {{ type = "regex", on = "result", pattern = "\\\\bpyproject\\\\.toml\\\\b" }},
]
"""


def test_a_repository_suite_runs_from_its_root_with_workdir(tmp_path: Path, agents: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    suite = tmp_path / "repo-tasks.toml"
    suite.write_text(REPO_SUITE.format(root=repo.as_posix()))
    report = tmp_path / "junit.xml"

    # a fresh directory per run: the repository's files are not there
    fresh = cli(str(suite), "--agent", f"{agents}:builder", "--junit", str(report), cwd=repo)
    assert fresh.returncode == 1
    assert "file_exists#2: pyproject.toml does not exist in the working directory" in fresh.stdout
    assert "regex: pattern '\\bpyproject\\.toml\\b' not found" in fresh.stdout  # as the suite wrote it
    failed = next(iter(next(iter(junit_checked(report)))))
    assert failed.name == "build" and not failed.is_passed
    (outcome,) = failed.result
    assert isinstance(outcome, junitparser.Failure)
    assert outcome.message.startswith("[runs 1, 2] file_exists#2: pyproject.toml does not exist")
    assert "regex: pattern" in (outcome.text or "")

    # every run in the repository's root, as the API's workdir= does: everything passes
    rooted = cli(
        str(suite),
        "--agent",
        f"{agents}:builder",
        "--workdir",
        str(repo),
        "--junit",
        str(report),
        cwd=tmp_path,
    )
    assert rooted.returncode == 0, rooted.stdout + rooted.stderr
    assert "1/1 passed" in rooted.stdout and (repo / "dist" / "app.whl").exists()
    assert all(c.is_passed for c in next(iter(junit_checked(report))))


def test_retries_reach_the_run(tmp_path: Path, agents: Path) -> None:
    suite = tmp_path / "one.json"
    suite.write_text(
        '{"schemaVersion": "1.11.0", "items": [{"prompt": "Capital of France?", "expected_response": "Paris", "evaluators": {"ExactMatch": {}}, "evaluators_mode": "replace"}]}'
    )
    env = {"TRIES_FILE": str(tmp_path / "tries")}
    once = cli(str(suite), "--agent", f"{agents}:flaky", "--retries", "1", cwd=tmp_path, env=env)
    assert once.returncode == 1 and "busy, try again (after 2 attempts)" in once.stdout
    (tmp_path / "tries").unlink()
    twice = cli(str(suite), "--agent", f"{agents}:flaky", "--retries", "2", cwd=tmp_path, env=env)
    assert twice.returncode == 0, twice.stdout + twice.stderr


def test_junit_and_summary_of_failures_and_the_gate(tmp_path: Path, agents: Path) -> None:
    import json

    items = [{"prompt": f"{n} + {n}?", "expected_response": str(2 * n)} for n in range(1, 9)]
    items.append({"prompt": "Boom <&>", "expected_response": "x"})
    suite = tmp_path / "kb.json"
    suite.write_text(
        json.dumps({"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items})
    )
    (tmp_path / "gate_agents.py").write_text(
        textwrap.dedent(
            """\
            def good(prompt):
                return "x" if prompt.startswith("Boom") else str(2 * int(prompt.split(" + ")[0]))

            def worse(prompt):
                if prompt.startswith("Boom"):
                    raise RuntimeError("the agent <crashed> & burned")
                return "2" if prompt.startswith("1 +") else "no idea"
            """
        )
    )
    store = str(tmp_path / "runs.db")
    base = cli(
        str(suite), "--agent", "gate_agents.py:good", "--store", store, "--version", "main", cwd=tmp_path
    )
    assert base.returncode == 0, base.stderr
    report, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    out = cli(
        str(suite),
        *("--agent", "gate_agents.py:worse", "--store", store, "--baseline", "main"),
        *("--junit", str(report), "--summary", str(summary)),
        cwd=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    (xml_suite,) = list(junit_checked(report))
    assert (xml_suite.tests, xml_suite.failures, xml_suite.errors) == (9, 7, 1)
    by_name = {c.name: c for c in xml_suite}
    assert by_name["item-001"].is_passed
    (fail,) = by_name["item-002"].result
    assert isinstance(fail, junitparser.Failure) and fail.type == "failed"
    assert fail.message == "ExactMatch: response does not contain the expected text '4' (case-insensitive)"
    (error,) = by_name["item-009"].result
    assert isinstance(error, junitparser.Error) and error.type == "degraded"
    assert (
        error.message == "error: RuntimeError: the agent <crashed> & burned"
    )  # escaped in the XML, read back whole
    text = summary.read_text()
    assert text.startswith("## evalnb: ❌ failed (1/9 cases passed)")
    assert "### Gate: **FAIL**: a check got worse than the baseline" in text
    assert "| kb | ExactMatch | 1 | 0.111 | ❌ worse | worse by 0.89" in text
    assert (
        "- ❌ **kb / item-002** (failed)\n  - ExactMatch: response does not contain the expected text '4'"
        in text
    )
    # HTML in a reason is escaped: it renders as the text, never as an element
    assert (
        "- ⚠️ **kb / item-009** (degraded)\n  - error: RuntimeError: the agent \\<crashed\\> \\& burned"
        in text
    )
