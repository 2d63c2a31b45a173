"""``store.pairwise`` and ``evalnb pairwise V1 V2 --judge SPEC``, as users run them (a real subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalnb
from evalnb.errors import ConfigError, StoreError
from tests.preference.conftest import versions
from tests.preference.test_model_judge import prefers_b
from tests.support.cli import evalnb_cli
from tests.support.openai_server import OpenAIServer

JUDGES = """
def prefer_b(prompt, first, second):
    return "second" if second.startswith("b") else "first"

def prefer_a(prompt, first, second):
    return "first" if first.startswith("a") else "second"
"""


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    a, b = versions(12)
    store = evalnb.Store(tmp_path / "evalnb.db")
    store.save(a, version="v1")
    store.save(b, version="v2")
    (tmp_path / "judges.py").write_text(JUDGES, encoding="utf-8")
    return tmp_path


def test_store_pairwise_loads_both_versions_and_names_them(stored: Path) -> None:
    store = evalnb.Store(stored / "evalnb.db")
    pw = store.pairwise(
        "v1", "v2", judge=lambda p, first, second: "second" if second.startswith("b") else "first"
    )
    assert (pw.a_label, pw.b_label) == ("v1", "v2") and pw.better and pw.exit_code == 0
    assert len(pw.cases) == 12
    assert store.pairwise("v2", "v1", judge="judges:prefer_b", orderings=1).exit_code == 1
    with pytest.raises(StoreError):
        store.pairwise("v1", "nope", judge="judges:prefer_b")


def test_the_cli_reports_and_exits_1_when_b_is_worse(stored: Path) -> None:
    ok = evalnb_cli("pairwise", "v1", "v2", "--judge", "judges:prefer_b", "--store", "evalnb.db", cwd=stored)
    assert ok.returncode == 0, ok.stderr
    assert "v2 against v1: v2 wins 100.0% of 12 cases" in ok.stdout and "v2 is better" in ok.stdout
    worse = evalnb_cli(
        "pairwise", "v1", "v2", "--judge", "judges:prefer_a", "--store", "evalnb.db", cwd=stored
    )
    assert worse.returncode == 1 and "v2 is worse" in worse.stdout and "Won by v1:" in worse.stdout


def test_the_cli_json_holds_the_figures_and_the_pairs(stored: Path) -> None:
    out = evalnb_cli(
        "pairwise", "v1", "v2", "--judge", "judges:prefer_b", "--orderings", "1", "-f", "json", "--store",
        "evalnb.db", cwd=stored,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["win_rate"] == 1.0 and doc["position_bias"] is None and doc["exit_code"] == 0
    assert doc["counts"] == {"a": 0, "b": 12, "tie": 0, "degraded": 0}
    assert len(doc["cases"]) == 12 and {c["winner"] for c in doc["cases"]} == {"b"}
    assert all((c["verdict_ab"] is None) != (c["verdict_ba"] is None) for c in doc["cases"])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--judge", "heuristic"], "compares each answer with the expected answer"),
        (["--judge", "judges:nothing"], "nothing"),
        ([], "give --judge SPEC"),
        (["--judge", "judges:prefer_b", "--orderings", "3"], "orderings must be 1 or 2"),
        (["--judge", "openai:m", "--judge-base-url", "http://127.0.0.1:9/v1"], "not reachable"),
    ],
)
def test_what_cannot_start_is_exit_2_with_one_line(stored: Path, args: list[str], words: str) -> None:
    out = evalnb_cli("pairwise", "v1", "v2", *args, "--store", "evalnb.db", cwd=stored)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stderr.startswith("error: ") and words in out.stderr
    assert "Traceback" not in out.stderr


def test_the_cli_with_a_model_judge_on_the_loopback_server(stored: Path, openai_server: OpenAIServer) -> None:
    openai_server.default = prefers_b
    out = evalnb_cli(
        "pairwise", "v1", "v2", "--judge", "openai:judge-model", "--judge-base-url", openai_server.base_url,
        "--store", "evalnb.db", cwd=stored,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "judged by openai:judge-model in both orders" in out.stdout
    assert len(openai_server.requests) == 24
    assert list((stored / ".evals" / "cache").rglob("*.json"))  # model answers cached by default
    again = evalnb_cli(
        "pairwise", "v1", "v2", "--judge", "openai:judge-model", "--judge-base-url", openai_server.base_url,
        "--store", "evalnb.db", cwd=stored,
    )  # fmt: skip
    assert again.returncode == 0 and len(openai_server.requests) == 24  # every answer from the cache


def test_a_preflight_failure_in_python_is_a_config_error() -> None:
    a, b = versions(2)
    with pytest.raises(ConfigError, match="not reachable"):
        evalnb.pairwise(
            a, b, judge=evalnb.judges.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", cache=False)
        )
