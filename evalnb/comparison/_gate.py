"""Several comparisons gated as one: :func:`gate` and the :class:`Comparisons` it returns (``evalnb compare A B``,
``Store.compare_all``): one family of tests over every suite's checks (docs/comparison.md, the gate).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from evalnb._deprecation import deprecated_method, text_summary
from evalnb.comparison._core import Comparison, _family_size
from evalnb.comparison._verdicts import adjust, family_words, unknown_margins

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Comparisons", "gate"]


@dataclass
class Comparisons:
    """Several comparisons (one per suite) gated as one: made by :func:`gate`.

    Attributes:
        comparisons: ``{suite: Comparison}``, each re-decided within the whole family of checks.
        missing_suites: ``{suite: "baseline only" | "candidate only"}`` for suites compared on one side only.
        fail_on_missing: whether a suite, check or case the candidate lost gates.
    """

    comparisons: dict[str, Comparison]
    missing_suites: dict[str, str] = field(default_factory=dict)
    fail_on_missing: bool = False

    @property
    def regressed(self) -> bool:
        """Whether the gate fires for any suite (or, with ``fail_on_missing``, a suite is gone)."""
        gone = self.fail_on_missing and any(v == "baseline only" for v in self.missing_suites.values())
        return gone or any(c.regressed for c in self.comparisons.values())

    @property
    def exit_code(self) -> int:
        """1 when the gate fires for any suite compared, else 0."""
        return 1 if self.regressed else 0

    @property
    def checks(self) -> pd.DataFrame:
        """Every suite's per-check table, with a leading ``suite`` column."""
        return self._concat("checks")

    @property
    def cases(self) -> pd.DataFrame:
        """Every suite's per-case table, with a leading ``suite`` column."""
        return self._concat("cases")

    def _concat(self, what: str) -> pd.DataFrame:
        import pandas as pd

        frames = [getattr(c, what).assign(suite=name) for name, c in self.comparisons.items()]
        if not frames:
            return pd.DataFrame()
        out = pd.concat(frames, ignore_index=True)
        out["suite"] = out["suite"].astype("string")
        return out[["suite", *[c for c in out.columns if c != "suite"]]]

    def __getitem__(self, suite: str) -> Comparison:
        return self.comparisons[suite]

    def __iter__(self) -> Iterator[str]:
        return iter(self.comparisons)

    def __len__(self) -> int:
        return len(self.comparisons)

    summary = text_summary("Comparisons")

    def headline(self) -> str:
        """One line for the whole gate, then each suite's gate line."""
        n = len(self.comparisons)
        head = f"Gate over {n} suite{'s' * (n != 1)}: {'FAIL' if self.regressed else 'pass'}"
        lines = [head]
        for name, c in self.comparisons.items():
            lines.append(f"  {name}: {c._short()}")
        for name, side in self.missing_suites.items():
            rule = " (gates: fail on missing)" if self.fail_on_missing and side == "baseline only" else ""
            lines.append(f"  {name}: compared on one side only ({side}){rule}")
        return "\n".join(lines)

    def report(self) -> str:
        """The combined gate first, then one section per suite.

        Example::

            print(evalnb.comparison.gate([cmp_a, cmp_b]).report())
        """
        parts = [self.headline()]
        for name, c in self.comparisons.items():
            parts.append(f"\n=== {name} ===\n{c.report()}")
        return "\n".join(parts)

    write_html = deprecated_method(
        "to_html", "write_html", owner="Comparisons", note="to_X(path) writes a file"
    )

    def to_html(self, path: str | Path, *, plotlyjs: str = "inline") -> Path:
        """One HTML page in the scorecard's style: the gate as a table (verdict and words per check), then
        each suite's changed cases and comparison plot; written atomically. ``plotlyjs`` as for
        ``evalnb.export.to_html`` (``"inline"``: the page works offline and alone).

        Example::

            store.compare_all("v1", "v2").to_html("compare.html")
        """
        from evalnb.results.outputs import writer

        # the page is written by evalnb.export, which registers itself there (a comparison never imports it)
        return Path(writer("comparison-html")(self, path, plotlyjs=plotlyjs))

    def _repr_html_(self) -> str:
        parts = [f"<pre>{html.escape(self.headline())}</pre>"]
        parts += [f"<h4>{html.escape(n)}</h4>{c._repr_html_()}" for n, c in self.comparisons.items()]
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Comparisons({list(self.comparisons)}, gate {'FAIL' if self.regressed else 'pass'})"


def _check_margin_names(items: list[tuple[str, Comparison]]) -> None:
    """A margin mapping's key that names no check of any suite gated is a typo: refused, naming the checks."""
    from evalnb.errors import ConfigError

    checks = {str(v) for _, c in items for col in ("check_id", "check") for v in c.checks[col].dropna()}
    for _, c in items:
        unknown = unknown_margins(c.margin, checks)
        if unknown:
            raise ConfigError(
                f"--margin names no check compared: {', '.join(map(repr, unknown))}; the checks are "
                f"{', '.join(sorted(checks)) or 'none'}",
                code="INVALID_VALUE",
            )


def gate(
    comparisons: Iterable[Comparison] | Mapping[str, Comparison],
    *,
    missing_suites: Mapping[str, str] | None = None,
) -> Comparisons:
    """Gate several comparisons (one per suite) as one, with one family-wise false-alarm rate.

    Holm's procedure runs over every check of every suite, so two suites of six checks each fire no more
    often than one check would on identical agents. All comparisons must share one confidence.

    Args:
        comparisons: Comparison objects (named by their suite) or a mapping ``{name: Comparison}``.
        missing_suites: suites compared on one side only, ``{suite: "baseline only" | "candidate only"}``.

    Example::

        g = evalnb.comparison.gate([evalnb.compare(a1, b1), evalnb.compare(a2, b2)])
        g.exit_code, print(g.report())
    """
    if isinstance(comparisons, Mapping):
        named = dict(comparisons)
    else:
        named = {}
        for i, c in enumerate(comparisons):
            name = c.suite or f"comparison {i + 1}"
            named[name if name not in named else f"{name} ({i + 1})"] = c
    confidences = {c.confidence for c in named.values()}
    if len(confidences) > 1:
        raise ValueError(f"comparisons gated together need one confidence, got {sorted(confidences)}")
    items = list(named.items())
    _check_margin_names(items)
    adjusted = adjust([c._raw for _, c in items], [c._states for _, c in items])
    tested, compared = _family_size([c._states for _, c in items])
    family = family_words(tested, len(items), compared)
    fail = any(c.fail_on_missing for _, c in items)
    return Comparisons(
        comparisons={
            name: c._in_family(pw, pb, family) for (name, c), (pw, pb) in zip(items, adjusted, strict=True)
        },
        missing_suites=dict(missing_suites or {}),
        fail_on_missing=fail,
    )
