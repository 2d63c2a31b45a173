"""Benchmark: the ``rows`` comparison on 1,000,000 rows against datacompy on the same frames.

    python benchmarks/rows.py [--rows 1000000] [--repeat 5] [--text-numbers] [--no-datacompy]

Two key columns and two numeric measures with a 0.1% relative tolerance; a few hundred cells are perturbed
beyond the tolerance (and as many within it). ``orderMatters: true`` compares row i with row i (datacompy
joins on the index); ``orderMatters: false`` shuffles the answer and sorts both sides (datacompy joins on
the two keys). datacompy is installed with the ``bench`` extra: ``pip install "evalnb[bench]"``;
``--no-datacompy`` times evalnb alone. ``--text-numbers`` writes the expected ``storeSales`` as text the way
a report formats money (``"$1,234.56"``), so every cell of it goes through the number rule of
docs/cube-yaml.md (datacompy is then left out: it does not read such text as numbers).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from evalnb.checks._rows import compare_rows

REL = 0.001


def make_frames(n: int, perturbed: int, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    side = int(np.ceil(np.sqrt(n)))
    i = np.arange(n)
    expected = pd.DataFrame(
        {
            "store": pd.Series([f"Store {k}" for k in range(side)], dtype="str").to_numpy()[i // side],
            "product": pd.Series([f"Product {k}" for k in range(side)], dtype="str").to_numpy()[i % side],
            "storeSales": np.round(rng.uniform(1, 10_000, n), 2),
            "unitSales": rng.integers(1, 500, n).astype("float64"),
        }
    )
    actual = expected.copy()
    bad = rng.choice(n, perturbed, replace=False)
    col = rng.integers(2, 4, perturbed)
    for c in (2, 3):
        rows = bad[col == c]
        actual.iloc[rows, c] = actual.iloc[rows, c] * 1.01  # beyond 0.1%
    near = rng.choice(n, perturbed, replace=False)
    actual.iloc[near, 2] = actual.iloc[near, 2] * (1 + REL / 2)  # within tolerance
    return expected, actual


def best_of_each(repeat: int, *fns: Callable[[], Any]) -> list[tuple[float, Any]]:
    """Best wall time (and last result) of each function, run in turns so that both see the same load."""
    times: list[list[float]] = [[] for _ in fns]
    outs: list[Any] = [None] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            outs[i] = fn()
            times[i].append(time.perf_counter() - t0)
    return [(min(t), out) for t, out in zip(times, outs, strict=True)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--perturbed", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--text-numbers", action="store_true", help='expected storeSales as text ("$1,234.56")')
    ap.add_argument("--no-datacompy", action="store_true", help="time evalnb alone")
    args = ap.parse_args()
    expected, actual = make_frames(args.rows, args.perturbed)
    if args.text_numbers:
        expected["storeSales"] = pd.Series([f"${v:,.2f}" for v in expected["storeSales"]], dtype="str")
    shuffled = actual.sample(frac=1.0, random_state=3).reset_index(drop=True)
    storage = getattr(expected["store"].dtype, "storage", "object")
    what = " (expected storeSales as text)" if args.text_numbers else ""
    if args.no_datacompy or args.text_numbers:
        print(
            f"{args.rows:,} rows x 4 columns{what}, {args.perturbed} cells perturbed beyond rel {REL}; "
            f"pandas {pd.__version__} ({storage} strings); best of {args.repeat}"
        )
        for order_matters, answer in ((True, actual), (False, shuffled)):
            ((t_ev, diff),) = best_of_each(
                args.repeat,
                lambda a=answer, o=order_matters: compare_rows(expected, a, relative=REL, order_matters=o),
            )
            print(
                f"orderMatters={str(order_matters).lower():5}  evalnb {t_ev:6.3f}s "
                f"({diff.mismatches} mismatching cells)"
            )
        return
    try:
        from datacompy import PandasCompare
    except ImportError:  # older datacompy
        from datacompy import Compare as PandasCompare  # type: ignore[attr-defined,no-redef]
    import datacompy

    print(
        f"{args.rows:,} rows x 4 columns, {args.perturbed} cells perturbed beyond rel {REL}; "
        f"pandas {pd.__version__} ({storage} strings), datacompy {datacompy.__version__}; "
        f"best of {args.repeat}, the two tools in turns"
    )
    ratios = []
    for order_matters, answer in ((True, actual), (False, shuffled)):

        def ours(a: pd.DataFrame = answer, o: bool = order_matters) -> Any:
            return compare_rows(expected, a, relative=REL, order_matters=o)

        if order_matters:

            def dc(a: pd.DataFrame = answer) -> Any:
                cmp = PandasCompare(expected, a, on_index=True, rel_tol=REL)
                return cmp.matches(), cmp.all_mismatch()

        else:

            def dc(a: pd.DataFrame = answer) -> Any:
                cmp = PandasCompare(expected, a, join_columns=["store", "product"], rel_tol=REL)
                return cmp.matches(), cmp.all_mismatch()

        (t_ev, diff), (t_dc, (_, dc_mism)) = best_of_each(args.repeat, ours, dc)
        ratios.append(t_dc / t_ev)
        print(
            f"orderMatters={str(order_matters).lower():5}  evalnb {t_ev:6.3f}s ({diff.mismatches} mismatching cells)"
            f"  datacompy {t_dc:6.3f}s ({len(dc_mism)} mismatching rows)  evalnb is {t_dc / t_ev:4.1f}x faster"
        )
    print(f"slowest ratio {min(ratios):.1f}x (aim: >= 2x in both orders)")


if __name__ == "__main__":
    main()
