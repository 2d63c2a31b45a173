"""Property tests: whatever the input, ``load`` returns a Suite or raises a SuiteError with a stable code.

Random bytes, random text, and valid documents of each format mutated structurally (keys dropped, renamed,
added; values replaced by values of any type) and textually (characters flipped, cut, inserted).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalnb
from evalnb.formats._common import CODES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FORMATS = ("tasks-toml", "cube-yaml", "dataset-json")
SEEDS = {
    "tasks-toml": ["spec-tasks.toml", "tasks-valid.toml"],
    "cube-yaml": ["spec-cube.yaml", "cube-valid.yaml"],
    "dataset-json": ["spec-dataset.json", "dataset-valid.json", "dataset-legacy.json"],
}
PROFILE = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def check(source: Any, fmt: str | None) -> None:
    try:
        suite = evalnb.load(source, format=fmt)
    except evalnb.SuiteError as exc:
        # a stable code from the documented list: an unexpected crash would surface as INTERNAL_ERROR
        assert exc.code in CODES, (exc.code, exc.message)
        assert isinstance(exc.location, str)
        # every error of the document, the raised one first, each with a stable code
        assert exc.errors[0] is exc
        assert all(isinstance(e, evalnb.SuiteError) and e.code in CODES for e in exc.errors)
        assert len({e.location for e in exc.errors}) == len(exc.errors)
        return
    assert isinstance(suite, evalnb.Suite)
    suite.to_frame()  # a loaded suite is usable


# ------------------------------------------------------------------------------------------------------
# Serialising parsed documents back to each format
# ------------------------------------------------------------------------------------------------------


def _toml_value(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\\/", "/")
    if isinstance(value, list):
        parts = [_toml_value(v) for v in value]
        return "[" + ", ".join(p for p in parts if p is not None) + "]"
    if isinstance(value, dict):
        parts = [(json.dumps(str(k), ensure_ascii=False), _toml_value(v)) for k, v in value.items()]
        return "{" + ", ".join(f"{k} = {v}" for k, v in parts if v is not None) + "}"
    return json.dumps(str(value))


def to_toml(data: Any) -> str:
    if not isinstance(data, dict):
        return f"value = {_toml_value(data)}\n"
    lines = []
    for key, value in data.items():
        rendered = _toml_value(value)
        if rendered is not None:
            lines.append(f"{json.dumps(str(key), ensure_ascii=False)} = {rendered}")
    return "\n".join(lines) + "\n"


def dump(data: Any, fmt: str) -> str:
    if fmt == "tasks-toml":
        return to_toml(data)
    if fmt == "cube-yaml":
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    return json.dumps(data, ensure_ascii=False, allow_nan=True)


def parse_seed(name: str, fmt: str) -> Any:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    if fmt == "tasks-toml":
        import sys

        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        return tomllib.loads(text)
    if fmt == "cube-yaml":
        return yaml.safe_load(text)
    return json.loads(text)


# ------------------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------------------

KEYS = st.sampled_from(
    ["name", "id", "prompt", "runs", "type", "equals", "on", "pattern", "cases", "question", "tolerance",
     "expectedRows", "referenceQuery", "items", "turns", "evaluators", "evaluators_mode", "schemaVersion",
     "threshold", "x", "", "tasks", "assertions", "cube"]
)  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["1.7.0", "2.0.0", "regex", "exit_code", "llm_judge", "QUERY", "replace", "(", "  "]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def mutated(draw: st.DrawFn, fmt: str) -> Any:
    data = parse_seed(draw(st.sampled_from(SEEDS[fmt])), fmt)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        data = _mutate(draw, data)
    return data


def _containers(node: Any, out: list[Any]) -> list[Any]:
    if isinstance(node, (dict, list)):
        out.append(node)
        for child in node.values() if isinstance(node, dict) else node:
            _containers(child, out)
    return out


def _mutate(draw: st.DrawFn, data: Any) -> Any:
    targets = _containers(data, [])
    if not targets:
        return draw(VALUES)
    node = draw(st.sampled_from(targets))
    op = draw(st.sampled_from(["drop", "rename", "replace", "add", "dup"]))
    if isinstance(node, dict) and node:
        key = draw(st.sampled_from(list(node)))
        if op == "drop":
            del node[key]
        elif op == "rename":
            node[key + draw(st.sampled_from(["s", "_", "x"]))] = node.pop(key)
        elif op == "replace":
            node[key] = draw(VALUES)
        else:
            node[draw(KEYS)] = draw(VALUES)
    elif isinstance(node, list):
        if node and op == "drop":
            node.pop(draw(st.integers(min_value=0, max_value=len(node) - 1)))
        elif node and op == "dup":
            node.append(node[0])
        elif node and op == "replace":
            node[draw(st.integers(min_value=0, max_value=len(node) - 1))] = draw(VALUES)
        else:
            node.append(draw(VALUES))
    return data


@st.composite
def text_mutated(draw: st.DrawFn, fmt: str) -> str:
    text = (FIXTURES / draw(st.sampled_from(SEEDS[fmt]))).read_text(encoding="utf-8")
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        if not text:
            break
        i = draw(st.integers(min_value=0, max_value=len(text) - 1))
        op = draw(st.sampled_from(["flip", "cut", "insert"]))
        piece = draw(
            st.sampled_from(["{", "}", "[", "]", '"', "'", ":", "=", ",", "\n", " ", "-", "\\", "\x00", "é"])
        )
        if op == "flip":
            text = text[:i] + piece + text[i + 1 :]
        elif op == "cut":
            text = text[:i] + text[i + draw(st.integers(min_value=1, max_value=20)) :]
        else:
            text = text[:i] + piece + text[i:]
    return text


# ------------------------------------------------------------------------------------------------------
# Properties
# ------------------------------------------------------------------------------------------------------


@PROFILE
@given(raw=st.binary(max_size=300), fmt=st.sampled_from([None, *FORMATS]))
def test_random_bytes(raw, fmt):
    check(raw, fmt)


@PROFILE
@given(text=st.text(max_size=300), fmt=st.sampled_from([None, *FORMATS]))
def test_random_text(text, fmt):
    check(text, fmt)


@PROFILE
@given(data=st.data(), fmt=st.sampled_from(FORMATS))
def test_structurally_mutated_documents(data, fmt):
    doc = data.draw(mutated(fmt))
    text = dump(doc, fmt)
    check(text, fmt)
    check(text, None)


@PROFILE
@given(data=st.data(), fmt=st.sampled_from(FORMATS))
def test_textually_mutated_documents(data, fmt):
    check(data.draw(text_mutated(fmt)), fmt)


@PROFILE
@given(doc=VALUES, fmt=st.sampled_from(FORMATS))
def test_arbitrary_values(doc, fmt):
    check(dump(doc, fmt), fmt)


def test_pathological_inputs():
    deep_json = "[" * 20_000 + "]" * 20_000
    deep_yaml = "a: " + "[" * 1500 + "]" * 1500
    deep_toml = "a = " + "[" * 5000 + "]" * 5000
    huge_int = (
        '{"schemaVersion": "1.7.0", "items": [{"prompt": "p", "evaluators": {"Citations": {"threshold": '
        + "9" * 5000
        + "}}}]}"
    )
    for text, fmt in [
        (deep_json, "dataset-json"),
        (deep_yaml, "cube-yaml"),
        (deep_toml, "tasks-toml"),
        (huge_int, "dataset-json"),
        ("runs = " + "9" * 5000, "tasks-toml"),
        ("name: x\nn: " + "9" * 5000, "cube-yaml"),
        ('{"items": [{"prompt": "p", "x": Infinity}]}', "dataset-json"),
        ("name: s\ncases: [{name: a, question: q, tolerance: {absolute: .inf}}]", "cube-yaml"),
        ("\ud800", None),
        ("\ud800", "dataset-json"),
    ]:
        check(text, fmt)
        check(text.encode("utf-8", "surrogatepass"), fmt)
