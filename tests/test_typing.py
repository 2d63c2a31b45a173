"""evalnb.typing: the aliases of what users pass (AgentLike, JudgeLike, StoreLike, DataLike) name the classes they
accept, import nothing of evalnb at run time, and are what the public signatures say."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing

import evalnb
import evalnb.typing as et
from evalnb.judges import as_judge


def _names(alias: object) -> set[str]:
    out: set[str] = set()
    for arg in typing.get_args(alias):
        if isinstance(arg, typing.ForwardRef):
            out.add(arg.__forward_arg__)
        elif arg is type(None):
            out.add("None")
        else:
            out.add(getattr(arg, "__name__", None) or str(arg))
            out |= _names(arg)
    return out


def test_the_aliases_name_what_each_option_accepts() -> None:
    assert {"Agent", "Callable", "Mapping"} <= _names(et.AgentLike)
    assert {"Judge", "Callable", "str", "None"} <= _names(et.JudgeLike)
    assert {"Store", "str", "PathLike[str]", "None"} <= _names(et.StoreLike)
    assert {"Source", "str", "PathLike[str]", "Mapping", "None"} <= _names(et.DataLike)
    assert sorted(et.__all__) == ["AgentLike", "DataLike", "JudgeLike", "StoreLike"]


def _loaded(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(sorted(m for m in sys.modules if m.startswith('evalnb')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(eval(out))


def test_importing_the_aliases_imports_nothing_beyond_import_evalnb() -> None:
    # the classes they name are forward references: store, judges, data, running stay unimported
    assert _loaded("import evalnb.typing") == _loaded("import evalnb") | {"evalnb.typing"}


def test_the_public_signatures_use_the_aliases() -> None:
    for fn in (evalnb.run, evalnb.run_async):
        params = inspect.signature(fn).parameters
        assert params["agent"].annotation == "AgentLike"
        assert params["judge"].annotation == "JudgeLike"
        assert params["store"].annotation == "StoreLike"
        assert params["data"].annotation == "DataLike"
    assert inspect.signature(evalnb.rescore).parameters["judge"].annotation == "JudgeLike"
    assert inspect.signature(evalnb.pairwise).parameters["judge"].annotation.startswith("JudgeLike")
    assert inspect.signature(as_judge).return_annotation == "Judge | None"
    assert inspect.signature(as_judge).parameters["judge"].annotation == "JudgeLike"
