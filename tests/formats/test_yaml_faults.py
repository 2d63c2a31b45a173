"""The YAML loader on libyaml: an alias bomb of one large anchored string, the guards kept on the fast parser,
and the same meaning with and without libyaml."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import evalnb
from evalnb.formats import _cube_yaml as cube_yaml

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
HEAD = "name: s\ncube: {connectionName: c, catalog: FoodMart, schema: FoodMart, cubeName: Sales}\ncases:\n"
LIMIT = 1536 * 1024 * 1024  # 1.5 GB of address space for the whole process


def _bomb_text(chars: int, aliases: int) -> str:
    # One anchored string referred to many times: few nodes, but the expanded text is chars x aliases.
    refs = ", ".join(["*big"] * aliases)
    return (
        f"description: &big {'x' * chars}\n"
        + HEAD
        + f"  - name: a\n    question: q\n    expectedInsightContains: [{refs}]\n"
    )


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def test_one_large_anchored_string_referred_to_90000_times_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "bomb.eval.yaml"
    path.write_text(_bomb_text(1_000_000, 90_000))
    assert path.stat().st_size < 1_600_000  # a 1.5 MB file that would expand to 90 GB
    (tmp_path / "agents.py").write_text("def agent(prompt):\n    return 'ok'\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for argv in (["validate", str(path)], ["run", str(path), "--agent", "agents.py:agent"]):
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "evalnb", *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            preexec_fn=_capped,
        )
        assert time.perf_counter() - started < 30, argv
        assert out.returncode == 2, out.stdout + out.stderr
        assert "MemoryError" not in out.stderr
        said = out.stdout + out.stderr
        assert "MALFORMED_YAML aliases expand the document by 90,000,000,000 characters of text" in said


def test_the_text_bound_leaves_ordinary_reuse_alone() -> None:
    # 2,000 references to a 1,000-character string: 2 MB once expanded, within the bound; it loads and
    # hashes (the hash and the saved options walk the expanded data, which the bound keeps small).
    suite = evalnb.load(_bomb_text(1_000, 2_000), format="cube-yaml")
    assert len(suite.cases[0].turns[0].checks[0].options()["contains"]) == 2_000
    assert len(suite.content_hash()) == 16
    with pytest.raises(evalnb.SuiteError, match="characters of text"):
        evalnb.load(_bomb_text(1_000, cube_yaml.MAX_ALIAS_CHARS // 1_000 + 2), format="cube-yaml")


def test_libyaml_is_used_with_every_guard() -> None:
    assert yaml.__with_libyaml__ and cube_yaml._StrictFastLoader is not None  # the fast parser is there
    assert issubclass(cube_yaml._StrictFastLoader, yaml.CSafeLoader)
    with pytest.raises(evalnb.SuiteError) as dup:
        evalnb.load(HEAD + "  - name: a\n    question: q\n    question: r\n", format="cube-yaml")
    assert (dup.value.code, dup.value.location) == ("MALFORMED_YAML", "line 6, column 5")
    assert "duplicate key 'question'" in dup.value.message
    with pytest.raises(evalnb.SuiteError) as tag:
        evalnb.load(
            HEAD + "  - name: !!python/object/apply:os.system ['true']\n    question: q\n", format="cube-yaml"
        )
    assert tag.value.code == "MALFORMED_YAML" and "python/object/apply" in tag.value.message


DOCUMENTS = [
    *(p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.yaml"))),
    HEAD + "  - &base {name: a, question: q}\n  - <<: *base\n    name: b\n",
    HEAD + '  - name: "tab\\there \\u00e9 \\U0001F600"\n    question: |\n      multi\n      line\n',
    HEAD + "  - name: a\n    question: q\n    expectedRows:\n      - {1997: 1, on: yes, ~: null}\n",
    "name: [unclosed\n",
    "a: b: c\n",
]


@pytest.mark.parametrize("text", DOCUMENTS)
def test_libyaml_and_the_pure_python_parser_agree(text: str) -> None:
    def outcome(loader: type) -> object:
        try:
            return yaml.load(text, Loader=loader)
        except yaml.YAMLError as exc:
            return type(exc).__name__

    fast, slow = outcome(cube_yaml._StrictFastLoader), outcome(cube_yaml._StrictLoader)
    assert fast == slow or (isinstance(fast, str) and isinstance(slow, str))  # the same data, or both refuse


def test_a_surrogate_escape_libyaml_refuses_is_read_by_the_pure_python_parser() -> None:
    text = 'a: "\\ud83d\\ude00 and \\ud800"\n'
    with pytest.raises(yaml.YAMLError, match="invalid Unicode character escape"):
        yaml.load(text, Loader=cube_yaml._StrictFastLoader)
    assert cube_yaml.parse(text) == {"a": "\ud83d\ude00 and \ud800"}  # evalnb.load then cleans it
