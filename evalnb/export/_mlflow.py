"""A Result as an MLflow run (docs/results.md, MLflow): params, metrics, the per-case table, the scorecard.

One evalnb version is one MLflow run: params ``suite``, ``version``, ``agent``, ``model``, ``judge`` (and the
suite's format and content hash), metrics ``{check}.pass_rate`` and ``{check}.mean`` per check as the suite names
it, ``cost`` when the run recorded one and ``latency_p50_ms``, the per-case table as an MLflow table
(``cases.json``) and the HTML scorecard as the artifact ``scorecard.html``. Needs the ``mlflow`` extra.
"""

from __future__ import annotations

import re
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalnb.results import Result

__all__ = ["metrics_of", "store_to_mlflow", "to_mlflow"]

PARAM_LIMIT = 500
"""The longest param value written (MLflow stores params as short text)."""


@contextmanager
def _mlflow() -> Iterator[Any]:
    with warnings.catch_warnings():
        # MLflow's own deprecation and future warnings are not the caller's to act on.
        warnings.simplefilter("ignore")
        try:
            import mlflow
        except ImportError:
            raise ImportError('exporting to MLflow needs mlflow: pip install "evalnb[mlflow]"') from None
        yield mlflow


def metric_key(name: str) -> str:
    """A check id as an MLflow metric key: characters MLflow refuses become ``_`` (``regex#2`` -> ``regex_2``).

    Example::

        metric_key("not-icontains#2")
        # 'not-icontains_2'
    """
    return re.sub(r"[^A-Za-z0-9_\-. /]", "_", name)


def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def metrics_of(result: Result) -> dict[str, float]:
    """The metrics :func:`to_mlflow` logs: ``{check}.pass_rate``, ``{check}.mean``, ``cost``, ``latency_p50_ms``.

    Example::

        metrics_of(result)
        # {'ExactMatch.pass_rate': 1.0, 'ExactMatch.mean': 1.0, 'latency_p50_ms': 812.0}
    """
    out: dict[str, float] = {}
    for row in result.summary().to_dict("records"):
        key = metric_key(str(row["check_id"]))
        for stat in ("pass_rate", "mean"):
            value = _finite(row.get(stat))
            if value is not None:
                out[f"{key}.{stat}"] = value
    runs = result.runs
    if "cost" in runs.columns and runs["cost"].notna().any():
        out["cost"] = float(runs["cost"].sum())
    latency = runs.groupby(["case_id", "run"], sort=False)["latency_ms"].sum(min_count=1).dropna()
    if len(latency):
        out["latency_p50_ms"] = float(latency.median())
    return out


def _params(result: Result, version: str | None) -> dict[str, str]:
    meta = result.meta
    agent = meta.agent
    params = {
        "suite": result.suite.name,
        "version": version or meta.version,
        "agent": agent if isinstance(agent, str) or agent is None else ", ".join(map(str, agent)),
        "model": meta.model or _models(result),
        "judge": meta.judge,
        "format": result.suite.format,
        "content_hash": result.suite.content_hash(),
        "cases": str(len(result.cases)),
    }
    return {k: str(v)[:PARAM_LIMIT] for k, v in params.items() if v not in (None, "")}


def _models(result: Result) -> str | None:
    models = [m for m in dict.fromkeys(result.runs["model"].dropna().tolist()) if m]
    return ", ".join(models) if models else None


def _artifact_location(tracking_uri: str | None) -> str | None:
    # A local SQLite tracking store keeps its artifacts beside the database, not in the working directory.
    if tracking_uri and tracking_uri.startswith("sqlite:///"):
        db = Path(tracking_uri[len("sqlite:///") :])
        return (db.parent / "mlartifacts").resolve().as_uri()
    return None


def _experiment(client: Any, name: str, tracking_uri: str | None) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    return str(client.create_experiment(name, artifact_location=_artifact_location(tracking_uri)))


def to_mlflow(
    result: Result,
    *,
    experiment: str = "evalnb",
    tracking_uri: str | None = None,
    run_name: str | None = None,
) -> str:
    """Log ``result`` as one MLflow run; returns the MLflow run id.

    Args:
        result: the Result (of a run, a stored version, an Inspect log ...).
        experiment: the MLflow experiment's name (created when missing).
        tracking_uri: where MLflow keeps runs (``sqlite:///mlflow.db``, ``http://host:5000``); by default
            MLflow's own (``MLFLOW_TRACKING_URI``).
        run_name: the run's name; by default the result's version label, else the suite's name.

    Raises:
        ImportError: without mlflow (``pip install "evalnb[mlflow]"``).

    Example::

        run_id = evalnb.export.to_mlflow(result, experiment="support-bot", tracking_uri="sqlite:///mlflow.db")
        MlflowClient("sqlite:///mlflow.db").get_run(run_id).data.metrics["ExactMatch.pass_rate"]
    """
    import pandas as pd

    from evalnb.results._frames import records

    version = result.meta.version
    with _mlflow() as mlflow:
        from mlflow.entities import Metric, Param, RunTag

        client = mlflow.MlflowClient(tracking_uri=tracking_uri)
        exp_id = _experiment(client, experiment, tracking_uri)
        tags = {
            "evalnb.suite": result.suite.name,
            "evalnb.source": str(result.meta.source or "evalnb"),
        }
        if result.meta.run_id:
            tags["evalnb.run_id"] = str(result.meta.run_id)
        run = client.create_run(exp_id, run_name=run_name or version or result.suite.name, tags=tags)
        run_id = str(run.info.run_id)
        try:
            now = int(run.info.start_time)
            client.log_batch(
                run_id,
                metrics=[Metric(k, v, now, 0) for k, v in metrics_of(result).items()],
                params=[Param(k, v) for k, v in _params(result, version).items()],
                tags=[RunTag(k, v) for k, v in tags.items()],
            )
            client.log_table(run_id, data=pd.DataFrame(records(result.cases)), artifact_file="cases.json")
            with tempfile.TemporaryDirectory() as tmp:
                page = Path(tmp) / "scorecard.html"
                result.to_html(page)
                client.log_artifact(run_id, str(page))
        except BaseException:
            client.set_terminated(run_id, status="FAILED")
            raise
        client.set_terminated(run_id, status="FINISHED")
    return run_id


def store_to_mlflow(
    store: Any, *, experiment: str = "evalnb", tracking_uri: str | None = None, suite: str | None = None
) -> list[tuple[str, str, str | None]]:
    """Log every complete stored version (of one suite, or all) as an MLflow run, once: a version already
    logged (its ``evalnb.run_id`` tag) is left as it is. Returns ``(version, MLflow run id, note)`` per run.

    Example::

        evalnb.export.store_to_mlflow(evalnb.Store("team.db"), tracking_uri="sqlite:///mlflow.db")
    """
    with _mlflow() as mlflow:
        client = mlflow.MlflowClient(tracking_uri=tracking_uri)
        exp_id = _experiment(client, experiment, tracking_uri)
        logged = {
            r.data.tags.get("evalnb.run_id"): r.info.run_id
            for r in client.search_runs([exp_id], max_results=50000)
            if r.data.tags.get("evalnb.run_id")
        }
    out: list[tuple[str, str, str | None]] = []
    listing = store.history(suite=suite)
    for row in listing.to_dict("records"):
        run_id = str(row["run_id"])
        label = f"{row['suite']} {row.get('version') or run_id}"
        if row.get("status") != "complete":
            continue
        if run_id in logged:
            out.append((str(label), str(logged[run_id]), "already logged"))
            continue
        result = store.load(run_id)
        if result.meta.version is None:
            result.meta = result.meta.replace(version=row.get("version"))
        out.append((str(label), to_mlflow(result, experiment=experiment, tracking_uri=tracking_uri), None))
    return out
