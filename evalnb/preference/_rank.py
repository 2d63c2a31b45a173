"""``rank([r1, r2, r3, ...], judge=...)``: several versions ranked from pairwise verdicts (Bradley-Terry-Davidson).

docs/comparison.md, ranking: every pair of versions (or the pairs given) is judged as :func:`pairwise` judges
two; each case contributes its pairs' verdicts with weight one per pair of versions (its runs and turns
share it); the strengths are fitted with Davidson's ties and their intervals come from a bootstrap over cases
(a case is resampled with all its verdicts, in every pair of versions).
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalnb.errors import ConfigError
from evalnb.preference._core import judged_pairs
from evalnb.preference._options import PairwiseOptions, field_names
from evalnb.preference._result import Pairwise
from evalnb.preference._stats import bootstrap_strengths, davidson
from evalnb.running._options import one_of

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result
    from evalnb.typing import JudgeLike

__all__ = ["Ranking", "rank", "rank_async"]

RANK_COLUMNS: dict[str, str] = {
    "version": "string",
    "strength": "float64",
    "low": "float64",
    "high": "float64",
    "rank": "Int64",
    "wins": "float64",
    "ties": "float64",
    "losses": "float64",
    "win_rate": "float64",
    "cases": "Int64",
}


@dataclass
class Ranking:
    """The outcome of :func:`rank`: one row per version, strongest first; it behaves like that frame.

    Attributes:
        table: ``version, strength`` (the log-strength, centred on 0: ``P(i beats j)`` grows with
            ``strength_i - strength_j``), ``low, high`` (its bootstrap interval at ``confidence``), ``rank`` (1 is
            the strongest), ``wins, ties, losses`` (judged comparisons, a case counting once per pair of
            versions), ``win_rate`` (ties as half) and ``cases``.
        pairs: the :class:`Pairwise` of each pair of versions judged, by ``(a, b)`` labels.
        tie_parameter: Davidson's ``nu`` (0: the judge never ties; 1: a tie is as likely as a win between equals).
        confidence: the confidence of the intervals.
        draws: bootstrap resamples of the cases.
        judge: the judge's label.

    Example::

        ranking = evalnb.rank([r1, r2, r3], judge="openai:gpt-4o-mini")
        ranking[["version", "strength", "low", "high", "rank"]]
        evalnb.plots.ranking(ranking)
    """

    table: pd.DataFrame
    pairs: dict[tuple[str, str], Pairwise] = field(default_factory=dict)
    tie_parameter: float = float("nan")
    confidence: float = 0.95
    draws: int = 0
    judge: str = ""

    def to_frame(self) -> pd.DataFrame:
        """A copy of the table."""
        return self.table.copy()

    def __getitem__(self, key: Any) -> Any:
        return self.table[key]

    def __len__(self) -> int:
        return len(self.table)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.table)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in ("table", "pairs"):
            raise AttributeError(name)
        return getattr(self.table, name)  # columns, head(), loc ... of the table

    def report(self) -> str:
        """The ranking, one line per version, and each pair's win rate."""
        conf = f"{self.confidence:.0%}"
        lines = [f"Ranking by {self.judge} (Bradley-Terry with ties; {conf} bootstrap intervals over cases):"]
        for r in self.table.itertuples(index=False):
            lines.append(
                f"  {r.rank}. {r.version}: strength {r.strength:+.2f} [{r.low:+.2f}, {r.high:+.2f}], "
                f"won {r.wins:g}, tied {r.ties:g}, lost {r.losses:g}"
            )
        for (a, b), pw in self.pairs.items():
            lines.append(f"  {b} against {a}: win rate {pw.win_rate:.1%} ({pw.verdict})")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        table = self.table.to_html(index=False, escape=True, na_rep="", float_format="{:.3f}".format)
        return f"<b>Ranking</b> by {html.escape(self.judge)}{table}"

    def __repr__(self) -> str:
        order = " > ".join(str(v) for v in self.table["version"])
        return f"Ranking({order})"


def _labels(results: Sequence[Any], labels: Sequence[str] | None) -> list[str]:
    if labels is not None:
        names = [str(x) for x in labels]
        if len(names) != len(results):
            raise ConfigError(f"labels names {len(names)} versions for {len(results)} Results")
    else:
        # docs/comparison.md: a Result without a version label is named by its position
        names = [str(getattr(r, "meta", {}).get("version") or i) for i, r in enumerate(results)]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ConfigError(f"two Results are both named {twice[0]!r}: give labels=[...] naming each once")
    return names


def _design(pairs: Sequence[tuple[Any, Any]] | None, names: list[str]) -> list[tuple[int, int]]:
    k = len(names)
    if pairs is None:
        return list(itertools.combinations(range(k), 2))

    def index(x: Any) -> int:
        if isinstance(x, int) and not isinstance(x, bool) and 0 <= x < k:
            return x
        if str(x) in names:
            return names.index(str(x))
        raise ConfigError(f"pairs names {x!r}, which is not one of the versions ({', '.join(names)})")

    design = [(index(i), index(j)) for i, j in pairs]
    if any(i == j for i, j in design):
        raise ConfigError("pairs compares a version with itself")
    reach, todo = {0}, [0]
    while todo:
        v = todo.pop()
        for i, j in design:
            for x, y in ((i, j), (j, i)):
                if x == v and y not in reach:
                    reach.add(y)
                    todo.append(y)
    if len(reach) < k:
        alone = ", ".join(names[i] for i in range(k) if i not in reach)
        raise ConfigError(
            f"the pairs do not connect every version ({alone} cannot be compared with {names[0]}): "
            "strengths of unconnected versions are not on one scale"
        )
    return design


def _counts(judged: dict[tuple[int, int], Pairwise], k: int) -> tuple[list[str], Any, Any]:
    """Per case: win and tie counts of every pair of versions (``C x k x k``), each case once per pair."""
    import numpy as np

    cases: dict[str, int] = {}
    entries: list[tuple[int, int, int, float, float, float]] = []
    for (i, j), pw in judged.items():
        c = pw.cases[pw.cases["status"] == "judged"]
        for case_id, rows in c.groupby("case_id", sort=False):
            n = len(rows)
            win_j = float((rows["winner"] == "b").sum()) / n
            win_i = float((rows["winner"] == "a").sum()) / n
            tie = float((rows["winner"] == "tie").sum()) / n
            entries.append((cases.setdefault(str(case_id), len(cases)), i, j, win_i, win_j, tie))
    wins = np.zeros((len(cases), k, k))
    ties = np.zeros((len(cases), k, k))
    for c, i, j, wi, wj, t in entries:
        wins[c, i, j] += wi
        wins[c, j, i] += wj
        ties[c, i, j] += t
        ties[c, j, i] += t
    return list(cases), wins, ties


async def rank_async(
    results: Sequence[Result],
    *,
    judge: JudgeLike | Callable[[str, str, str], str] = None,
    pairs: Sequence[tuple[Any, Any]] | None = None,
    rubric: str | None = None,
    orderings: int = 2,
    confidence: float = 0.95,
    seed: int = 0,
    bootstrap: int = 1000,
    concurrency: int = 8,
    cache: Any = None,
    base_url: str | None = None,
    labels: Sequence[str] | None = None,
    options: PairwiseOptions | None = None,
) -> Ranking:
    """:func:`rank` on the running event loop (same arguments)."""
    return await _ranked(
        results, one_of(PairwiseOptions, options, _keywords(locals())), pairs, bootstrap, labels
    )


def _keywords(given: dict[str, Any]) -> dict[str, Any]:
    return {name: given[name] for name in field_names()}


async def _ranked(
    results: Sequence[Any], o: PairwiseOptions, pairs: Sequence[tuple[Any, Any]] | None, bootstrap: int,
    labels: Sequence[str] | None,
) -> Ranking:  # fmt: skip
    """:func:`rank_async` with the pairwise options as one object."""
    import numpy as np
    import pandas as pd

    results = list(results)
    if len(results) < 2:
        raise ConfigError(f"rank needs two Results or more, got {len(results)}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise ConfigError(f"bootstrap must be a whole number of resamples (1000), not {bootstrap!r}")
    names = _labels(results, labels)
    design = _design(pairs, names)
    judged: dict[tuple[int, int], Pairwise] = {}
    for i, j in design:
        judged[(i, j)] = await judged_pairs(results[i], results[j], o, (names[i], names[j]))
    k = len(names)
    case_ids, wins, ties = _counts(judged, k)
    if not case_ids:
        raise ConfigError("nothing was judged: every comparison's judge failed (see each pair's cases)")
    theta, nu = davidson(wins.sum(axis=0), ties.sum(axis=0))
    confidence, seed = o.confidence, o.seed
    alpha = 1.0 - confidence
    if bootstrap:
        draws = bootstrap_strengths(wins, ties, draws=bootstrap, seed=seed)
        low, high = np.quantile(draws, alpha / 2, axis=0), np.quantile(draws, 1 - alpha / 2, axis=0)
    else:
        low = high = np.full(k, np.nan)
    total_w, total_t = wins.sum(axis=0), ties.sum(axis=0)
    won, tied, lost = total_w.sum(axis=1), total_t.sum(axis=1), total_w.sum(axis=0)
    played = won + tied + lost
    seen = ((wins + ties + wins.transpose(0, 2, 1)).sum(axis=2) > 0).sum(axis=0)
    rows = [
        {
            "version": names[v],
            "strength": float(theta[v]),
            "low": float(low[v]),
            "high": float(high[v]),
            "wins": float(won[v]),
            "ties": float(tied[v]),
            "losses": float(lost[v]),
            "win_rate": float((won[v] + tied[v] / 2) / played[v]) if played[v] else float("nan"),
            "cases": int(seen[v]),
        }
        for v in range(k)
    ]
    table = pd.DataFrame(rows).sort_values("strength", ascending=False, kind="stable").reset_index(drop=True)
    table["rank"] = range(1, k + 1)
    table = table[list(RANK_COLUMNS)].astype(RANK_COLUMNS)
    label = next(iter(judged.values())).judge
    return Ranking(
        table=table,
        pairs={(names[i], names[j]): pw for (i, j), pw in judged.items()},
        tie_parameter=nu,
        confidence=float(confidence),
        draws=int(bootstrap),
        judge=label,
    )


def rank(
    results: Sequence[Result],
    *,
    judge: JudgeLike | Callable[[str, str, str], str] = None,
    pairs: Sequence[tuple[Any, Any]] | None = None,
    rubric: str | None = None,
    orderings: int = 2,
    confidence: float = 0.95,
    seed: int = 0,
    bootstrap: int = 1000,
    concurrency: int = 8,
    cache: Any = None,
    base_url: str | None = None,
    labels: Sequence[str] | None = None,
    options: PairwiseOptions | None = None,
) -> Ranking:
    """Rank several versions from a judge's pairwise verdicts: Bradley-Terry strengths with Davidson's ties.

    Args:
        results: two Results or more of one suite.
        judge: as :func:`pairwise` takes it.
        pairs: the pairs of versions to judge (indices or labels), e.g. ``[(0, 1), (1, 2)]``; default every
            pair. They must connect every version.
        rubric: the criterion of a model judge.
        orderings: 2 (both orders) or 1, as in :func:`pairwise`.
        confidence: the confidence of the bootstrap intervals.
        seed: the seed of the orders and of the bootstrap.
        bootstrap: resamples of the cases for the intervals (0: no intervals).
        concurrency: judge calls at a time.
        cache: the judge cache option.
        base_url: the endpoint of an ``"openai:MODEL"`` string.
        labels: names of the versions (default: each Result's version label, else its position ``"0"``, ``"1"``).
        options: ``judge`` to ``base_url`` but ``pairs`` and ``bootstrap`` as one
            :class:`~evalnb.preference.PairwiseOptions` (then give none of them as keywords).

    Returns:
        A :class:`Ranking`: ``version, strength, low, high, rank`` (and counts), strongest first.

    Example::

        ranking = evalnb.rank([r1, r2, r3], judge=lambda prompt, first, second: "tie")
        ranking["version"].tolist()
    """
    from evalnb.running._loops import run_blocking

    the = one_of(PairwiseOptions, options, _keywords(locals()))
    out: Ranking = run_blocking(lambda: _ranked(results, the, pairs, bootstrap, labels))
    return out
