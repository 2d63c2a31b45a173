"""The shipped example suites and sample data: package data, found from any folder once evalnb is installed.

Three example suites, one of each format, and what the demo agents answer from::

    path = evalnb.examples.path("knowledge-base")      # a file on disk you can open, copy or edit a copy of
    suite = evalnb.examples.load("tasks")              # the same, loaded
    evalnb.examples.names()                            # ('knowledge-base', 'foodmart-sales', 'tasks')
    db = evalnb.examples.foodmart_db()                 # the FoodMart sample, built on first use (cache folder)

Everything here is read with :mod:`importlib.resources`, never through a path relative to a source tree, so it
works the same in a checkout, an installed wheel or a zipped package (a file inside a zip is copied once into
the cache folder, so the path stays valid). The sample database is the one thing written, and only into the
user cache folder (:func:`cache_dir`). ``python -m evalnb.examples [NAME]`` prints the paths for a shell.

The shipped files: ``suites/`` (the example suites), ``kb/handbook.md`` (the handbook the demo assistant
answers from), ``labels/`` (the labelled judged pairs the offline judges are calibrated and measured on) and
``foodmart/`` (the sample's build script and cube model).

In the layers of the package (docs/architecture.md) this sits just above ``formats``, which it uses to load a
suite. The files themselves are read through ``evalnb._resources`` (below every layer), so that the judges, the
data sources and the demo find them without importing this package.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._lazy import homes
from evalnb._resources import CACHE_ENV, cache_dir, resource, writable
from evalnb.errors import ConfigError

if TYPE_CHECKING:
    from evalnb.suite import Suite

__all__ = ["CACHE_ENV", "cache_dir", "foodmart_db", "load", "names", "path", "resource"]

# name -> the suite file, relative to this package
_SUITES = {
    "knowledge-base": "suites/knowledge-base.json",
    "foodmart-sales": "suites/foodmart-sales.eval.yaml",
    "tasks": "suites/tasks.toml",
}


def names() -> tuple[str, ...]:
    """The names of the shipped example suites.

    Example::

        evalnb.examples.names()
        # ('knowledge-base', 'foodmart-sales', 'tasks')
    """
    return tuple(_SUITES)


def path(name: str) -> Path:
    """The file of a shipped example suite, on disk, from any folder.

    Args:
        name: ``"knowledge-base"`` (JSON dataset), ``"foodmart-sales"`` (cube YAML) or ``"tasks"`` (TOML tasks).

    Raises:
        ConfigError: ``INVALID_VALUE`` for another name (the message lists the names).

    Example::

        evalnb.examples.path("tasks").name
        # 'tasks.toml'
        result = evalnb.run(evalnb.examples.path("knowledge-base"), my_agent, judge="heuristic")
    """
    if not isinstance(name, str) or name not in _SUITES:
        raise ConfigError(
            f"no example suite named {name!r}; the shipped examples are {', '.join(map(repr, _SUITES))}",
            code="INVALID_VALUE",
        )
    return resource(_SUITES[name])


def load(name: str) -> Suite:
    """A shipped example suite, loaded (``evalnb.load(evalnb.examples.path(name))``).

    Raises:
        ConfigError: ``INVALID_VALUE`` for a name that is not one of :func:`names`.

    Example::

        suite = evalnb.examples.load("foodmart-sales")
        suite.format, len(suite.cases)
        # ('cube-yaml', 12)
    """
    from evalnb.formats import load as load_suite

    return load_suite(path(name))


def foodmart_db(*, rebuild: bool = False) -> Path:
    """The FoodMart sample database (SQLite), built on first use (about a second) into the cache folder.

    It is built from the shipped ``foodmart/build.py`` into ``<cache>/foodmart/<digest>/foodmart.db``, with the
    shipped ``cube.yaml`` beside it (so structured reference queries find the cube model); the digest is of the
    build script and the cube model, so an evalnb whose sample changed builds its own. Each build writes a
    temporary file of its own and renames it into place: processes building at once each finish with the
    complete file, and nothing else is ever written.

    Raises:
        ConfigError: when the cache folder cannot be created (set ``$EVALNB_CACHE_DIR``).

    Example::

        db = evalnb.examples.foodmart_db()
        db.name
        # 'foodmart.db'
    """
    import importlib

    from evalnb._files import atomic_write

    script = resources.files(__name__).joinpath("foodmart/build.py").read_bytes()
    cube = resources.files(__name__).joinpath("foodmart/cube.yaml").read_bytes()
    digest = hashlib.sha256(script + b"\0" + cube).hexdigest()[:12]
    folder = cache_dir() / "foodmart" / digest
    target = folder / "foodmart.db"
    if not rebuild and target.is_file() and (folder / "cube.yaml").is_file():
        return target
    writable(folder)
    if not (folder / "cube.yaml").is_file() or (folder / "cube.yaml").read_bytes() != cube:
        atomic_write(folder / "cube.yaml", cube)
    build = importlib.import_module("evalnb.examples.foodmart.build")
    build.build(target)
    return target


homes(__name__, globals(), __all__)  # reprs and docs name the public path
