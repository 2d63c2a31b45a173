"""evalnb.examples: the shipped suites and sample data, found through importlib.resources from any folder; the
FoodMart sample built once into the cache folder, safely when processes build it at once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

import pytest

import evalnb
from evalnb import _resources, examples
from evalnb.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_the_three_suites_load_by_name_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert examples.names() == ("knowledge-base", "foodmart-sales", "tasks")
    formats = {n: examples.load(n).format for n in examples.names()}
    assert formats == {"knowledge-base": "dataset-json", "foodmart-sales": "cube-yaml", "tasks": "tasks-toml"}
    for name in examples.names():
        path = examples.path(name)
        assert path.is_absolute() and path.is_file()
        assert evalnb.load(path).name == examples.load(name).name
    assert evalnb.examples is examples  # reachable after `import evalnb` alone
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_unknown_name_lists_the_names() -> None:
    with pytest.raises(ConfigError) as info:
        examples.path("kb")
    assert info.value.code == "INVALID_VALUE"
    assert "'knowledge-base', 'foodmart-sales', 'tasks'" in info.value.message
    with pytest.raises(ConfigError, match=r"no example suite named 'suites/tasks\.toml'"):
        examples.load("suites/tasks.toml")


def test_shipped_files_are_read_as_package_data_not_beside_the_source_tree() -> None:
    handbook = examples.resource("kb/handbook.md")
    assert handbook == Path(str(resources.files("evalnb.examples").joinpath("kb", "handbook.md")))
    assert handbook.is_relative_to(Path(evalnb.__file__).parent)
    with pytest.raises(ConfigError, match=r"lacks kb/nothing\.md"):
        examples.resource("kb/nothing.md")
    # The one exception: the reader of the public human-labelled sets, which their licences keep out of the
    # package; only developer tools in a checkout read them (the calibration fit, the agreement benchmark).
    checkout_only = {"evalnb/judges/offline/_public.py"}
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "evalnb").rglob("*.py")
        if '/ "data" /' in p.read_text(encoding="utf-8") or "data/suites" in p.read_text(encoding="utf-8")
    ]
    assert sorted(set(offenders) - checkout_only) == []


def test_a_file_of_a_zipped_package_is_copied_once_into_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("zpkg/__init__.py", "")
        z.writestr("zpkg/suites/s.toml", 'name = "zipped"\n')
    monkeypatch.syspath_prepend(str(archive))
    monkeypatch.setenv(examples.CACHE_ENV, str(tmp_path / "cache"))
    found = resources.files("zpkg").joinpath("suites", "s.toml")
    assert not isinstance(found, Path)  # a file inside the zip
    path = _resources.on_disk(found, "suites/s.toml")
    assert path.is_relative_to(tmp_path / "cache" / "examples") and path.read_text() == 'name = "zipped"\n'
    assert _resources.on_disk(found, "suites/s.toml") == path  # the same copy the second time
    assert evalnb.load(path).name == "zipped"
    sys.modules.pop("zpkg", None)


def test_the_cache_folder_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(examples.CACHE_ENV, str(tmp_path / "mine"))
    assert examples.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(examples.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert examples.cache_dir() == tmp_path / "xdg" / "evalnb"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert examples.cache_dir() == tmp_path / "home" / ".cache" / "evalnb"


def test_the_sample_is_built_once_into_the_cache_with_its_cube_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(examples.CACHE_ENV, str(tmp_path / "cache"))
    db = examples.foodmart_db()
    assert db.is_relative_to(tmp_path / "cache" / "foodmart") and db.name == "foodmart.db"
    assert (db.parent / "cube.yaml").read_bytes() == examples.resource("foodmart/cube.yaml").read_bytes()
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM store").fetchone() == (13,)
    stamp = db.stat().st_mtime_ns
    assert examples.foodmart_db() == db and db.stat().st_mtime_ns == stamp  # not built again
    assert sorted(p.name for p in db.parent.iterdir()) == ["cube.yaml", "foodmart.db"]  # no temporary left
    assert examples.foodmart_db(rebuild=True) == db


def test_two_processes_building_the_sample_at_once_both_get_the_whole_database(tmp_path: Path) -> None:
    env = {**os.environ, examples.CACHE_ENV: str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    code = (
        "import sqlite3, evalnb.examples as e; db = e.foodmart_db(); "
        "print(db, sqlite3.connect(db).execute('SELECT SUM(unit_sales) FROM sales_fact_1997').fetchone()[0])"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1] and outs[0][1] == "266773"  # the published total: each saw the complete file
    folder = Path(outs[0][0]).parent
    assert sorted(p.name for p in folder.iterdir()) == ["cube.yaml", "foodmart.db"]


def test_an_unwritable_cache_folder_is_a_config_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(examples.CACHE_ENV, str(blocker / "cache"))
    with pytest.raises(ConfigError, match=r"cannot create the cache folder .*\$EVALNB_CACHE_DIR"):
        examples.foodmart_db()


def test_the_shell_entry_prints_paths(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "evalnb.examples", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    listing = run()
    assert listing.returncode == 0
    names = [line.split("\t")[0] for line in listing.stdout.splitlines()]
    assert names == [*examples.names(), "foodmart-db"]
    assert run("tasks").stdout.strip() == str(examples.path("tasks"))
    assert Path(run("foodmart-db").stdout.strip()) == examples.foodmart_db()
    unknown = run("kb")
    assert unknown.returncode == 2 and "'foodmart-db'" in unknown.stderr and unknown.stdout == ""
