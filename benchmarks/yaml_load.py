"""Benchmark: parsing YAML cube suites with evalnb's strict loader against a bare libyaml ``CSafeLoader`` load.

    python benchmarks/yaml_load.py [--mb 10] [--repeat 3]

Two documents, generated: a cube suite of about ``--mb`` MB (cases with history, expected rows and insights,
one anchored tolerance that every case refers to), and a "fuzzed" one of the same size (deep and wide nesting, many
short keys and scalars). For each it prints the best of ``--repeat`` wall times of

* a bare ``yaml.load(text, Loader=yaml.CSafeLoader)`` (the baseline: libyaml's parser, no guards),
* ``evalnb.formats._cube_yaml.parse``: the same parser with evalnb's guards (duplicate keys, the alias bounds in
  nodes and characters, the python-tag refusal of the safe constructor),
* ``evalnb.load`` of the text: parsing plus validation into the model,
* the pure-Python ``yaml.SafeLoader`` (what evalnb used before), on the first 1 MB only, scaled per MB,

and the ratio of the strict parse to the bare CSafeLoader load (the target: under 2).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import time
from collections.abc import Callable
from typing import Any

import yaml

import evalnb
from evalnb.formats import _cube_yaml as cube_yaml

HEAD = "name: bench\ncube: {connectionName: c, catalog: foodmart, schema: public, cubeName: Sales}\n"


def suite_text(mb: float) -> str:
    """A realistic cube suite of about ``mb`` MB."""
    parts = [HEAD, "cases:\n"]
    size = sum(map(len, parts))
    i = 0
    while size < mb * 1_000_000:
        case = (
            f"  - name: case-{i}\n"
            f"    question: What were the store sales in state {i % 50} for product family {i % 7}?\n"
            "    history:\n"
            "      - {role: user, content: Show me the sales cube}\n"
            "      - {role: assistant, content: Here it is}\n"
            "    expectedIntent: QUERY\n"
            "    expectedInsightContains: [sales, state]\n"
            "    expectedRows:\n"
            + "".join(
                f"      - {{state: S{i % 50}, family: F{k}, storeSales: {i * 1.5 + k:.2f}}}\n"
                for k in range(5)
            )
            + "    orderMatters: false\n"
            # one anchored tolerance, referred to by every later case (aliases, as real suites use them)
            + (
                "    tolerance: &tol {absolute: 0.01, relative: 0.001}\n"
                if i == 0
                else "    tolerance: *tol\n"
            )
        )
        parts.append(case)
        size += len(case)
        i += 1
    return "".join(parts)


def fuzzed_text(mb: float, seed: int = 13) -> str:
    """A generated document of about ``mb`` MB: nested mappings and lists of short keys and scalars."""
    rng = random.Random(seed)
    out: list[str] = [HEAD, "cases:\n"]
    size = 0
    n = 0
    while size < mb * 1_000_000:
        lines = [f"  - name: f{n}\n", "    question: q\n", "    extra:\n"]
        depth = rng.randint(1, 6)
        for d in range(depth):
            pad = "      " + "  " * d
            for k in range(rng.randint(1, 8)):
                value = rng.choice(
                    ["1", "-2.5", "true", "null", "'text'", '"quoted \\t"', "[1, 2, 3]", "{a: 1}"]
                )
                lines.append(f"{pad}k{d}_{k}: {value}\n")
            lines.append(f"{pad}items:\n")
            lines.extend(
                f"{pad}  - {rng.choice(['x', '2', '{b: 3}', '[4]'])}\n" for _ in range(rng.randint(0, 4))
            )
            lines.append(f"{pad}nest{d}:\n")
        lines.append("      " + "  " * depth + "leaf: 0\n")
        block = "".join(lines)
        out.append(block)
        size += len(block)
        n += 1
    return "".join(out)


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        with contextlib.suppress(evalnb.SuiteError):  # the fuzzed document is no valid suite: load ends so
            fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(label: str, text: str, repeat: int) -> None:
    mb = len(text.encode()) / 1e6
    print(f"\n{label}: {mb:.1f} MB", flush=True)
    bare = best(lambda: yaml.load(text, Loader=yaml.CSafeLoader), repeat)
    print(f"  bare CSafeLoader load      {bare:7.2f} s  ({bare / mb:.3f} s/MB)", flush=True)
    strict = best(lambda: cube_yaml.parse(text), repeat)
    print(
        f"  evalnb strict parse        {strict:7.2f} s  ({strict / mb:.3f} s/MB)  ratio {strict / bare:.2f}x"
    )
    full = best(lambda: evalnb.load(text, format="cube-yaml"), 1)
    print(f"  evalnb.load (parse+model)  {full:7.2f} s", flush=True)
    head = text[: text.index("\n  - ", min(len(text) - 1, 1_000_000)) + 1]  # whole cases, about 1 MB
    slow = best(lambda: yaml.load(head, Loader=yaml.SafeLoader), 1) / (len(head.encode()) / 1e6)
    print(f"  pure-Python SafeLoader     {slow * mb:7.2f} s  ({slow:.3f} s/MB, measured on 1 MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if getattr(yaml, "CSafeLoader", None) is None:
        raise SystemExit("PyYAML has no libyaml here (yaml.CSafeLoader): nothing to compare against")
    print(f"PyYAML {yaml.__version__}, libyaml: {yaml.__with_libyaml__}")
    measure("cube suite", suite_text(args.mb), args.repeat)
    measure("fuzzed", fuzzed_text(args.mb), args.repeat)


if __name__ == "__main__":
    main()
