"""The FoodMart sample of the demo: its example suite, the folder of its build script and cube model, and the
database built from them on first use (all from :mod:`evalnb.examples`, the package data).
"""

from __future__ import annotations

from pathlib import Path

from evalnb.examples import foodmart_db, path, resource

__all__ = ["foodmart_db", "sample_dir", "suite_path"]


def sample_dir() -> Path:
    """The folder holding the sample's build script and cube model (``evalnb/examples/foodmart``).

    Example::

        (sample_dir() / "cube.yaml").is_file()
        # True
    """
    return resource("foodmart/build.py").parent


def suite_path() -> Path:
    """The example cube suite that runs against the sample (``evalnb.examples.path("foodmart-sales")``)."""
    return path("foodmart-sales")
