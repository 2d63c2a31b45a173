"""The FoodMart sample: where its build script, cube model and example suite live, and the database built
from them on first use.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from evalnb._files import atomic_write
from evalnb.errors import ConfigError

__all__ = ["foodmart_db", "sample_dir", "suite_path"]

_ROOT = Path(__file__).resolve().parents[2]


def sample_dir() -> Path:
    """The folder holding the sample's build script and cube model (``data/foodmart`` of the project).

    Raises:
        ConfigError: when evalnb runs from an installation without the project's ``data`` folder.
    """
    folder = _ROOT / "data" / "foodmart"
    if not (folder / "build.py").is_file():
        raise ConfigError(
            "the FoodMart sample ships with the evalnb source tree (data/foodmart); run from a checkout"
        )
    return folder


def suite_path() -> Path:
    """The example cube suite that runs against the sample (``data/suites/foodmart-sales.eval.yaml``)."""
    return _ROOT / "data" / "suites" / "foodmart-sales.eval.yaml"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evalnb" / "foodmart"


def foodmart_db(*, rebuild: bool = False) -> Path:
    """The path of the FoodMart sample database, built on first use (a second or so).

    It is built into ``data/foodmart/foodmart.db`` when that folder is writable, otherwise into the user
    cache folder (with ``cube.yaml`` copied beside it, so structured reference queries find the cube model).

    Example::

        db = foodmart_db()
        db.name
        # 'foodmart.db'
    """
    folder = sample_dir()
    target = folder / "foodmart.db"
    if not os.access(folder, os.W_OK):
        target = _cache_dir() / "foodmart.db"
    if target.is_file() and not rebuild:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    spec = importlib.util.spec_from_file_location("_evalnb_foodmart_build", folder / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build(target)
    if target.parent != folder:
        atomic_write(target.parent / "cube.yaml", (folder / "cube.yaml").read_bytes())
    return target
