"""evalnb as a user gets it: the wheel, installed into a fresh virtual environment, used from an empty folder.

The wheel is built from the source tree (offline: ``pip wheel --no-build-isolation`` with the setuptools of
this environment) and installed with ``--no-deps``; the new environment finds its dependencies through a
``.pth`` line naming this environment's site-packages (the ``.pth`` files there, this checkout's editable
install among them, are not run), so the evalnb it imports is the wheel's, which the tests assert. From an
empty folder, ``evalnb demo`` and the README's Quickstart then run as written, and every file they write is
under ``--out`` or the cache folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.test_readme import blocks

ROOT = Path(__file__).resolve().parents[1]
BIN = "Scripts" if os.name == "nt" else "bin"


def _sources(dest: Path) -> None:
    """The files a fresh clone has (tracked, or new and not ignored), copied to ``dest``."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:  # not a git checkout (an unpacked sdist): everything but build leftovers
        shutil.copytree(
            ROOT,
            dest,
            ignore=shutil.ignore_patterns(
                ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".evals"
            ),
        )
        return
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)


def _run(argv: list[str | Path], *, cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    proc = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"{argv} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-6000:]
    return proc.stdout


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel, and a fresh virtual environment with it installed: ``{"wheel", "venv", "python", "evalnb"}``."""
    base = tmp_path_factory.mktemp("wheel")
    src, dist, venv = base / "src", base / "dist", base / "venv"
    src.mkdir()
    _sources(src)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env["PIP_NO_INPUT"] = "1"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
         "-w", dist, src],
        cwd=base,
        env=env,
    )  # fmt: skip
    (wheel,) = dist.glob("evalnb-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=base, env=env)
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel],
        cwd=base,
        env=env,
    )
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                        cwd=base, env=env).strip())  # fmt: skip
    # The dependencies: this environment's site-packages, added as a plain path (its .pth files do not run).
    deps = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (purelib / "_evalnb_test_dependencies.pth").write_text("\n".join(deps) + "\n", encoding="utf-8")
    return {"wheel": wheel, "venv": venv, "python": python, "evalnb": venv / BIN / "evalnb", "src": src}


def _user(base: Path) -> dict[str, str]:
    """The environment of a user of the installed package: no PYTHONPATH, a home and a cache of their own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "EVALNB_"))}
    env.update(HOME=str(base / "home"), XDG_CACHE_HOME=str(base / "cache"), MPLCONFIGDIR=str(base / "mpl"))
    (base / "home").mkdir()
    return env


def test_the_wheel_holds_every_file_of_the_package(installed: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    src = installed["src"]
    shipped = {
        p.relative_to(src).as_posix()
        for p in (src / "evalnb").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped - names == set(), "files of evalnb/ missing from the wheel (pyproject.toml package-data)"
    for name in ("evalnb/examples/suites/knowledge-base.json", "evalnb/examples/labels/pairs.csv",
                 "evalnb/examples/kb/handbook.md", "evalnb/examples/foodmart/cube.yaml",
                 "evalnb/examples/foodmart/build.py", "evalnb/judges/offline/calibration.json"):  # fmt: skip
        assert name in names
    assert not [n for n in names if n.endswith(".db")], (
        "the sample database is built on first use, not shipped"
    )


def test_the_installed_package_is_the_wheel_s_and_finds_its_data(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = _user(tmp_path)
    code = """
import json, evalnb
from evalnb.demo.kb import KBAssistant
from evalnb.judges.labels import compare_judges, read_pairs
kb = KBAssistant()
table = compare_judges()
print(json.dumps({
    "evalnb": evalnb.__file__,
    "examples": {n: str(evalnb.examples.path(n)) for n in evalnb.examples.names()},
    "cases": {n: len(evalnb.examples.load(n).cases) for n in evalnb.examples.names()},
    "handbook": str(kb.path), "sections": len(kb.sections),
    "pairs": len(read_pairs()), "judged": sorted(set(table["judge"])), "checks": int(table["n"].sum()),
    "db": str(evalnb.examples.foodmart_db()),
}))
"""
    out = json.loads(_run([installed["python"], "-c", code], cwd=work, env=env))
    venv = installed["venv"].resolve()
    assert Path(out["evalnb"]).resolve().is_relative_to(venv), out["evalnb"]  # not this checkout's evalnb
    for path in (*out["examples"].values(), out["handbook"]):
        assert Path(path).resolve().is_relative_to(venv) and Path(path).is_file()
    assert out["cases"] == {"knowledge-base": 9, "foodmart-sales": 12, "tasks": 3}
    assert out["sections"] > 5 and out["pairs"] == 320
    assert "heuristic" in out["judged"] and out["checks"] > 0  # compare_judges measured the shipped labels
    assert Path(out["db"]).resolve().is_relative_to((tmp_path / "cache" / "evalnb").resolve())
    assert _files(work) == set()  # nothing written where it ran
    proc = subprocess.run(
        [installed["python"], "-m", "evalnb.examples", "kb"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "'knowledge-base', 'foodmart-sales', 'tasks'" in proc.stderr


def test_evalnb_demo_runs_from_an_empty_folder_and_writes_only_under_out(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = _user(tmp_path)
    out = _run([installed["evalnb"], "demo"], cwd=work, env=env, timeout=600)
    assert "Comparison previous -> current" in out and "Scorecard:" in out
    written = _files(work)
    assert written and all(name.startswith(".evals/") for name in written), sorted(written)[:20]
    assert {".evals/evalnb.db", ".evals/scorecard.html"} <= written
    cached = _files(tmp_path / "cache")
    assert cached and all(name.startswith("evalnb/foodmart/") for name in cached), sorted(cached)
    assert _files(tmp_path / "home") == set()
    # the next steps it printed name the store the demo wrote, from this folder
    assert "evalnb compare previous current --suite foodmart-sales-evals" in out
    assert "notebooks/ folder of evalnb's source repository" in out  # not a folder the user lacks
    runs = _run([installed["evalnb"], "runs"], cwd=work, env=env)
    assert "previous" in runs and "current" in runs
    # with --out elsewhere, nothing at all lands in the folder it runs from
    elsewhere, empty = tmp_path / "elsewhere", tmp_path / "empty"
    empty.mkdir()
    _run([installed["evalnb"], "demo", "--out", elsewhere], cwd=empty, env=env, timeout=600)
    assert _files(empty) == set() and (elsewhere / "scorecard.html").is_file()


def test_the_readme_quickstart_runs_as_written_from_an_empty_folder(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    quickstart = [b for b in blocks() if b.lang in ("python", "py") and b.section == "Quickstart"]
    assert len(quickstart) >= 2 and "evalnb.run(cases" in quickstart[0].code  # the DataFrame way first
    work = tmp_path / "work"
    work.mkdir()
    script = "\n\n".join(b.code for b in quickstart) + "\nprint('QUICKSTART-DONE', evalnb.__file__)\n"
    (tmp_path / "quickstart.py").write_text(script, encoding="utf-8")
    out = _run([installed["python"], tmp_path / "quickstart.py"], cwd=work, env=_user(tmp_path))
    where = out.split("QUICKSTART-DONE", 1)[1].strip()
    assert Path(where).resolve().is_relative_to(installed["venv"].resolve())
    assert (work / ".evals" / "evalnb.db").is_file() and (work / "cases.csv").is_file()
