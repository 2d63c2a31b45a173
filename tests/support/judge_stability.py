"""A seeded simulation of an unsteady model judge: the same answers judged 20 times against the local server.

Each case's answer has a "true" score distribution (what the judge model believes, e.g. 50 % a 2, 50 % a 3).
On every call the server perturbs its log probabilities a little (Gaussian noise on the logits, as a real
model's probabilities move between calls), samples the score it writes from them, and returns them as the
answer's ``logprobs``. The plain score is that sample; the weighted score is ``sum p(k) * k``. Used by
``tests/judges/test_weighted.py`` (the standard deviation halves, at least) and by
``benchmarks/judge_stability.py`` (the figure in the README).
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tests.support.openai_server import OpenAIServer, Recorded, Reply, score_reply

if TYPE_CHECKING:
    import pandas as pd

    from evalnb.results import Result

__all__ = ["DISTRIBUTIONS", "install", "simulate", "stability", "stability_figure", "suite_document"]

# The judge's belief about each answer's Relevance (score -> probability): near the pass threshold (3) and
# away from it.
DISTRIBUTIONS: dict[str, dict[int, float]] = {
    "even-2-3": {2: 0.5, 3: 0.5},
    "mostly-3": {2: 0.25, 3: 0.5, 4: 0.25},
    "leaning-4": {3: 0.35, 4: 0.5, 5: 0.15},
    "confident-5": {4: 0.2, 5: 0.8},
    "leaning-2": {1: 0.15, 2: 0.55, 3: 0.3},
    "split-4-5": {4: 0.5, 5: 0.5},
}
_MARK = re.compile(r"answer-for:([\w-]+)")


def suite_document() -> dict[str, Any]:
    """A dataset with one item per distribution, each judged for Relevance (threshold 3)."""
    return {
        "schemaVersion": "1.6.0",
        "default_evaluators": {"Relevance": {"threshold": 3}},
        "items": [{"testId": name, "prompt": f"Question {name}?"} for name in DISTRIBUTIONS],
    }


def agent(prompt: str) -> str:
    """Answers carry a marker naming their case, so the server knows which distribution to sample."""
    name = prompt.removeprefix("Question ").removesuffix("?")
    return f"An answer. answer-for:{name}"


def install(
    server: OpenAIServer,
    *,
    seed: int = 17,
    jitter: float = 0.3,
    logprobs: bool = True,
    distributions: Mapping[str, Mapping[int, float]] = DISTRIBUTIONS,
) -> None:
    """Make ``server`` answer judge prompts from the distributions, seeded per case and call number.

    The n-th call for a case always draws with the seed ``(seed, case, n)``, whatever order concurrent calls
    arrive in, so a run of the simulation gives the same set of answers every time.
    """
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(request: Recorded) -> Reply:
        m = _MARK.search(request.last_user)
        name = m.group(1) if m else next(iter(distributions))
        with lock:
            n = seen[name]
            seen[name] += 1
        rng = random.Random(f"{seed}:{name}:{n}")
        reply = score_reply(distributions[name], rng, jitter=jitter, reason=f"simulated judge, call {n}")
        return reply if logprobs else Reply(content=reply.content)

    server.default = answer


def simulate(base_url: str, *, runs: int = 20) -> Result:
    """Judge the simulation's suite ``runs`` times with an ``OpenAIJudge`` on ``base_url`` (no cache)."""
    import evalnb
    from evalnb.judges import OpenAIJudge

    suite = evalnb.load(json.dumps(suite_document()), format="dataset-json")
    judge = OpenAIJudge("simulated-judge", base_url=base_url, cache=False, retries=0)
    result = evalnb.run(suite, agent, judge=judge, runs=runs, progress=False, concurrency=8)
    return result


def stability(result: Result) -> pd.DataFrame:
    """Per case: the run-to-run SD of the plain and the weighted score, their ratio, and pass-decision flips."""
    import pandas as pd

    sc = result.scores[result.scores["check"] == "Relevance"]
    rows = []
    for case_id, group in sc.groupby("case_id", sort=False):
        plain, weighted = group["value"].astype(float), group["weighted"].astype(float)
        threshold = 3.0
        rows.append(
            {
                "case_id": str(case_id),
                "runs": len(group),
                "mean_plain": plain.mean(),
                "mean_weighted": weighted.mean(),
                "sd_plain": plain.std(ddof=1),
                "sd_weighted": weighted.std(ddof=1),
                "pass_share_plain": float((plain >= threshold).mean()),
                "pass_share_weighted": float((weighted >= threshold).mean()),
            }
        )
    frame = pd.DataFrame(rows)
    frame["sd_ratio"] = frame["sd_weighted"] / frame["sd_plain"]
    return frame


def stability_figure(result: Result) -> Any:
    """The figure of the README: every run's plain and weighted score per case, and each case's SDs."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    sc = result.scores[result.scores["check"] == "Relevance"]
    table = stability(result)
    cases = table["case_id"].tolist()
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.62, 0.38],
        subplot_titles=(
            f"{int(table['runs'].iloc[0])} runs of each case: the score the judge wrote vs its weighted score",
            "run-to-run standard deviation",
        ),
    )
    rng = random.Random(0)  # horizontal jitter of the dots, so equal scores do not hide each other
    for kind, column, colour, offset in (
        ("plain score", "value", "#d62728", -0.18),
        ("weighted score", "weighted", "#1f77b4", 0.18),
    ):
        xs, ys = [], []
        for i, case in enumerate(cases):
            values = sc.loc[sc["case_id"] == case, column].astype(float).tolist()
            xs += [i + offset + rng.uniform(-0.08, 0.08) for _ in values]
            ys += values
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name=kind,
                marker={"color": colour, "size": 7, "opacity": 0.6},
                legendgroup=kind,
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Bar(
                x=cases,
                y=table["sd_plain" if column == "value" else "sd_weighted"],
                name=f"SD of the {kind}",
                marker_color=colour,
                showlegend=False,
                legendgroup=kind,
            ),
            row=1,
            col=2,
        )
    fig.add_hline(y=3, line={"dash": "dot", "color": "grey"}, annotation_text="threshold 3", row=1, col=1)
    fig.update_xaxes(tickvals=list(range(len(cases))), ticktext=cases, row=1, col=1)
    fig.update_yaxes(title_text="Relevance (1-5)", range=[0.5, 5.5], row=1, col=1)
    fig.update_yaxes(title_text="SD over runs", row=1, col=2)
    ratio = table["sd_weighted"].mean() / table["sd_plain"].mean()
    fig.update_layout(
        title=(
            "Probability-weighted judge scores are steadier: mean SD "
            f"{table['sd_plain'].mean():.2f} (plain) vs {table['sd_weighted'].mean():.2f} (weighted), "
            f"ratio {ratio:.2f}"
        ),
        barmode="group",
        template="plotly_white",
        legend={"orientation": "h", "y": -0.18},
        width=1200,
        height=520,
    )
    return fig
