"""The error of a stored run that does not read back (``STORED_RUN_INVALID``), in one place for whatever reads
a run: its suite definition and meta (store/_loading.py), its segments (store/_segments.py)."""

from __future__ import annotations

from typing import Any

from evalnb.errors import StoreError

__all__ = ["invalid"]


def invalid(run: dict[str, Any], what: str, detail: str) -> StoreError:
    """The error of a stored run whose ``what`` (its suite definition, its meta) does not read back."""
    label = f", version {run['version']!r}" if run.get("version") is not None else ""
    return StoreError(
        f"the stored run {run['run_id']} (suite {run['suite']!r}{label}) does not read back: {what} "
        f"{detail}. It was edited, damaged or written by another version of evalnb: restore the store from a "
        f"copy, or delete the run (evalnb delete {run['run_id']})",
        code="STORED_RUN_INVALID",
    )
