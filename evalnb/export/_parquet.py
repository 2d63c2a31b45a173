"""A Result as a folder of Parquet files, and back (docs/results.md, Parquet).

``FOLDER/runs.parquet``, ``scores.parquet``, ``cases.parquet``, ``tool_calls.parquet`` and ``mismatches.parquet``
keep the frames' columns and dtypes (``string``, ``Int64``, ``boolean``, ``float64``); ``result.json`` holds what
the frames do not: the schema version, the suite's definition and the meta. :func:`read_folder` rebuilds the
Result, equal frame for frame. :func:`store_to_parquet` writes a store's versions, one folder ``run_id=<id>`` each and
a ``versions.parquet`` index, so DuckDB or polars query a team's history across versions.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write
from evalnb.errors import ConfigError, StoreError
from evalnb.results import Result
from evalnb.results.outputs import register_writer

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PARQUET_FILES", "PARQUET_SCHEMA_VERSION", "read_folder", "store_to_parquet", "to_parquet"]

PARQUET_SCHEMA_VERSION = 1
"""The version of the folder's layout (``result.json``'s ``schema_version``); reading another is an error."""

PARQUET_FILES = (
    "runs.parquet",
    "scores.parquet",
    "cases.parquet",
    "tool_calls.parquet",
    "mismatches.parquet",
)
MANIFEST = "result.json"


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ConfigError(
            'writing and reading Parquet needs pyarrow: pip install "evalnb[parquet]"',
            code="MISSING_DEPENDENCY",
        ) from None
    return pyarrow


def _write_frame(frame: pd.DataFrame, path: Path) -> None:
    atomic_write(path, lambda fh: frame.to_parquet(fh, engine="pyarrow", index=False))


# A folder is what it writes (`--output results.parquet` names the folder).
@register_writer("parquet", suffixes=(".parquet",))
def to_parquet(result: Result, folder: str | Path) -> Path:
    """Write ``result`` as Parquet files in ``folder`` (created if needed); :func:`evalnb.read_results` reads it back.

    Each file is written atomically (the folder as a whole is not one transaction). Needs pyarrow
    (``pip install "evalnb[parquet]"``).

    Example::

        result.to_parquet("results/v1")
        evalnb.read_results("results/v1").summary()
    """
    _pyarrow()
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    frames = {
        "runs.parquet": result.runs,
        "scores.parquet": result.scores,
        "cases.parquet": result.cases,
        "tool_calls.parquet": result.tool_calls,
        "mismatches.parquet": result.mismatches,
    }
    for name in PARQUET_FILES:
        _write_frame(frames[name], out / name)
    manifest = {
        "schema_version": PARQUET_SCHEMA_VERSION,
        "files": list(PARQUET_FILES),
        "suite": result.suite.name,
        "definition": result.suite.model_dump(mode="json"),
        "meta": json.loads(json.dumps(result.meta.to_dict(), default=str)),
    }
    atomic_write(out / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return out


def is_parquet_folder(path: Path) -> bool:
    """Whether ``path`` is a folder :func:`to_parquet` wrote."""
    return path.is_dir() and (path / MANIFEST).is_file() and (path / "scores.parquet").is_file()


def read_folder(folder: str | Path) -> Result:
    """The Result a :func:`to_parquet` folder holds (its frames with their dtypes).

    Raises:
        StoreError: ``UNKNOWN_RESULTS`` when the folder is not one :func:`to_parquet` wrote, or of another
            ``schema_version``.
        ImportError: without pyarrow (the message has the pip command).
    """
    import pandas as pd

    from evalnb.suite import Suite

    _pyarrow()
    p = Path(folder)
    try:
        manifest = json.loads((p / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise StoreError(
            f"{p}: not a folder of Parquet results ({MANIFEST}: {exc})", code="UNKNOWN_RESULTS"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("schema_version") != PARQUET_SCHEMA_VERSION:
        version = manifest.get("schema_version") if isinstance(manifest, dict) else None
        raise StoreError(
            f"{p}: Parquet results schema_version {version!r} is not supported (expected {PARQUET_SCHEMA_VERSION})",
            code="UNKNOWN_RESULTS",
        )
    frames: dict[str, pd.DataFrame] = {}
    for name in PARQUET_FILES:
        target = p / name
        if target.is_file():
            frames[name.removesuffix(".parquet")] = pd.read_parquet(target, engine="pyarrow")
    if "runs" not in frames or "scores" not in frames:
        raise StoreError(f"{p}: runs.parquet and scores.parquet are both needed", code="UNKNOWN_RESULTS")
    return Result.from_frames(
        suite=Suite.model_validate(manifest["definition"]),
        runs=frames["runs"],
        scores=frames["scores"],
        mismatches=frames.get("mismatches"),
        tool_calls=frames.get("tool_calls"),
        meta=manifest.get("meta") or {},
        copy=False,
    )


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "_"


def store_to_parquet(store: Any, folder: str | Path, *, suite: str | None = None) -> list[Path]:
    """Write every saved version of a store (of one suite, or all) as Parquet: ``FOLDER/run_id=<id>/`` each
    (what :func:`to_parquet` writes) and ``FOLDER/versions.parquet``, one row per version (``run_id``, ``suite``,
    ``version``, ``created_at`` ...). Returns the folders written.

    Query them across versions with DuckDB (docs/results.md, Parquet)::

        SELECT v.version, s.check_id, avg(s.passed::INT) AS pass_rate
        FROM read_parquet('FOLDER/*/scores.parquet', hive_partitioning = true) s
        JOIN read_parquet('FOLDER/versions.parquet') v USING (run_id)
        GROUP BY ALL ORDER BY ALL
    """
    _pyarrow()
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    listing = store.history(suite=suite)
    written: list[Path] = []
    for run_id in listing["run_id"].tolist():
        written.append(to_parquet(store.load(run_id), out / f"run_id={_safe(str(run_id))}"))
    index = listing.copy()
    for col in index.columns:
        if str(index[col].dtype) == "object":
            index[col] = index[col].map(
                lambda v: v if v is None or isinstance(v, str) else json.dumps(v, default=str)
            )
    _write_frame(index.reset_index(drop=True), out / "versions.parquet")
    return written
