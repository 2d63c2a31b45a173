"""Results out to other tools (docs/results.md): Parquet folders read back equal with their dtypes, a store's
versions as Parquet queried across versions with DuckDB, and MLflow runs in a real local tracking store (SQLite)
read back with MlflowClient; both from the command line too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import evalnb
from evalnb.agents import Response, ToolCall
from evalnb.demo._main import run_demo
from evalnb.errors import StoreError

FRAMES = ("runs", "scores", "cases", "tool_calls", "mismatches")
INSPECT = Path(__file__).parents[1] / "fixtures" / "inspect" / "generated"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    run_demo(out=out, echo=lambda s: None)
    return out / "evalnb.db"


def tool_result() -> evalnb.Result:
    suite = evalnb.from_frame(pd.DataFrame({"prompt": ["approve?"], "expected": ["approved"]}))

    def agent(prompt: str) -> Response:
        return Response(
            text="approved", tool_calls=[ToolCall("claims_get-claim", {"claim": "C-100"}, status="succeeded")]
        )

    return evalnb.run(suite, agent, progress=False)


def assert_same(a: evalnb.Result, b: evalnb.Result) -> None:
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_dtype=True)
    assert a.suite == b.suite and a.summary().equals(b.summary())


def test_parquet_round_trip_keeps_every_frame_and_dtype(demo: Path, tmp_path: Path) -> None:
    store = evalnb.Store(demo)
    for run_id in store.history()["run_id"]:
        result = store.load(run_id)
        folder = result.to_parquet(tmp_path / run_id)
        assert sorted(p.name for p in folder.iterdir()) == [
            "cases.parquet",
            "mismatches.parquet",
            "result.json",
            "runs.parquet",
            "scores.parquet",
            "tool_calls.parquet",
        ]
        again = evalnb.read_results(folder)
        assert_same(result, again)
        assert again.meta["run_id"] == result.meta["run_id"]
    assert len(
        store.load("previous", suite="foodmart-sales-evals").mismatches
    )  # mismatched rows went through too


def test_parquet_round_trip_of_tool_calls_and_an_inspect_log(tmp_path: Path) -> None:
    result = tool_result()
    assert len(result.tool_calls) == 1
    assert_same(result, evalnb.read_results(result.to_parquet(tmp_path / "tools")))
    (log,) = INSPECT.glob("*qa-errors*.eval")
    inspect = evalnb.read_inspect_log(log)
    assert_same(inspect, evalnb.read_results(evalnb.export.write(inspect, tmp_path / "x.parquet")))
    frame = pd.read_parquet(tmp_path / "tools" / "scores.parquet")
    assert str(frame["passed"].dtype) == "boolean" and str(frame["run"].dtype) == "Int64"


def test_a_folder_that_is_not_parquet_results_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_text('{"schema_version": 99}', encoding="utf-8")
    (tmp_path / "scores.parquet").write_bytes(b"")
    with pytest.raises(StoreError) as info:
        evalnb.read_results(tmp_path)
    assert info.value.code == "UNKNOWN_RESULTS" and "schema_version 99" in str(info.value)
    with pytest.raises(StoreError, match="Parquet"):
        evalnb.read_results(tmp_path / "nothing-here")


# The query docs/results.md shows (Parquet), run as written there.
QUERY = """
SELECT v.version, s.check_id, avg(s.passed::INT) AS pass_rate, count(*) AS n
FROM read_parquet('{dir}/*/scores.parquet', hive_partitioning = true, hive_types = {{'run_id': VARCHAR}}) s
JOIN read_parquet('{dir}/versions.parquet') v USING (run_id)
WHERE v.suite = 'knowledge-base'
GROUP BY ALL
ORDER BY ALL
"""


def test_store_export_to_parquet_is_queried_across_versions_with_duckdb(demo: Path, tmp_path: Path) -> None:
    import duckdb

    out = tmp_path / "history"
    cli = subprocess.run(
        [sys.executable, "-m", "evalnb", "history", "export", "--store", str(demo), "--parquet", str(out)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    assert "Wrote 6 version(s)" in cli.stdout
    got = duckdb.sql(QUERY.format(dir=out)).df()
    store = evalnb.Store(demo)
    for version in ("previous", "current"):
        summary = store.load(version, suite="knowledge-base").summary().set_index("check_id")
        rows = got[got["version"] == version].set_index("check_id")
        assert rows["pass_rate"].round(6).to_dict() == summary["pass_rate"].round(6).to_dict()
    docs = (Path(__file__).parents[2] / "docs" / "results.md").read_text(encoding="utf-8")
    assert QUERY.strip().replace("{dir}", "history").replace("{{", "{").replace("}}", "}") in docs


# ------------------------------------------------------------------------------------------------------
# MLflow
# ------------------------------------------------------------------------------------------------------


def test_to_mlflow_writes_one_run_read_back_with_the_client(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    (log,) = INSPECT.glob("*qa-graded*.eval")
    result = evalnb.read_inspect_log(log)
    run_id = evalnb.export.to_mlflow(result, experiment="inspect", tracking_uri=uri, run_name="graded-1")
    client = MlflowClient(uri)
    run = client.get_run(run_id)
    assert run.info.run_name == "graded-1" and run.info.status == "FINISHED"
    assert run.data.params["suite"] == "qa_graded" and run.data.params["model"] == "mockllm/model"
    metrics = run.data.metrics
    assert metrics["model_graded_qa.mean"] == 0.625 and metrics["letter_grade.pass_rate"] == 0.25
    assert "latency_p50_ms" in metrics
    assert sorted(a.path for a in client.list_artifacts(run_id)) == ["cases.json", "scorecard.html"]
    table = json.loads(Path(client.download_artifacts(run_id, "cases.json", str(tmp_path))).read_text())
    assert table["columns"][:2] == ["suite", "case_id"] and len(table["data"]) == 4
    page = Path(client.download_artifacts(run_id, "scorecard.html", str(tmp_path))).read_text(
        encoding="utf-8"
    )
    assert "qa_graded" in page
    assert not (Path.cwd() / "mlruns").exists()


def test_metric_keys_follow_the_suite_names_and_cost(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    suite = evalnb.load(
        "prompts: ['q']\ntests: [{assert: [{type: contains, value: a}, {type: contains, value: b},"
        " {type: llm-rubric, value: ok, metric: tone}]}]"
    )
    result = evalnb.run(suite, lambda p: "a", judge=lambda prompt: "PASS: fine", progress=False)
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    run = MlflowClient(uri).get_run(evalnb.export.to_mlflow(result, tracking_uri=uri))
    assert {k for k in run.data.metrics if k.endswith(".pass_rate")} == {
        "contains.pass_rate",
        "contains_2.pass_rate",
        "tone.pass_rate",
    }
    assert run.data.metrics["contains_2.pass_rate"] == 0.0 and run.data.params["judge"]


def test_runs_export_to_mlflow_logs_each_version_once(demo: Path, tmp_path: Path) -> None:
    from mlflow import MlflowClient

    uri = f"sqlite:///{tmp_path / 'team.db'}"
    args = [sys.executable, "-m", "evalnb", "history", "export", "--store", str(demo), "--mlflow", uri]
    first = subprocess.run([*args, "--experiment", "team"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("MLflow run") == 6
    again = subprocess.run([*args, "--experiment", "team"], capture_output=True, text=True)
    assert again.stdout.count("already logged") == 6
    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("team")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 6
    versions = sorted((r.data.params["suite"], r.data.params["version"]) for r in runs)
    assert ("knowledge-base", "current") in versions and ("foodmart-sales-evals", "previous") in versions
    assert (
        subprocess.run([sys.executable, "-m", "evalnb", "history", "export", "--store", str(demo)]).returncode
        == 2
    )
