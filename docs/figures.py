"""Make the pictures of docs/results.md ("Figures"): every public figure of ``evalnb.plots``, drawn from two small
suites run offline (scripted agents, the heuristic and embedding judges), saved as PNG under docs/images/.

    python docs/figures.py            # needs kaleido and a Chromium (BROWSER_PATH, or chromium on the PATH)

The runs are deterministic, so the pictures change only when the figures do. Each PNG is reduced to a palette
of colours to stay small.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evalnb  # noqa: E402
from evalnb import plots  # noqa: E402
from evalnb.suite import (  # noqa: E402
    Case,
    CitationsCheck,
    ExactMatchCheck,
    JudgedMetricCheck,
    PartialMatchCheck,
    RegexCheck,
    Suite,
    Turn,
)

IMAGES = ROOT / "docs" / "images"
WIDTH = 900

QUESTIONS = [
    (
        "billing",
        "How do I get a refund?",
        "To get a refund, ask support: it goes back to the card within 5 days.",
    ),
    ("billing", "Can I pay by invoice?", "You can pay by invoice with a business account."),
    (
        "billing",
        "Why was I charged twice?",
        "Charged twice? The second charge is a hold that drops within 3 days.",
    ),
    ("shipping", "How long does delivery take?", "Delivery takes 2 to 4 working days, not long."),
    ("shipping", "Do you ship abroad?", "We ship abroad to the EU and the UK."),
    (
        "shipping",
        "Where is my parcel?",
        "Your parcel is where the tracking link in the confirmation email says.",
    ),
    ("account", "How do I reset my password?", "Reset your password with the link on the sign-in page."),
    ("account", "Can I change my email?", "Change your email under Settings, then confirm it."),
    ("account", "How do I close my account?", "To close your account, write to support."),
]


def support_suite() -> Suite:
    """A support bot's answers: an exact and a partial match, a judged 1-5 relevance, a cited source."""
    checks = [
        ExactMatchCheck(),
        PartialMatchCheck(),
        JudgedMetricCheck(type="Relevance"),
        CitationsCheck(citation_format="bracket"),
    ]
    cases = [
        Case(id=f"q{i}", name=q, category=cat, turns=[Turn(prompt=q, expected=a, checks=checks)])
        for i, (cat, q, a) in enumerate(QUESTIONS)
    ]
    return Suite(name="support-bot", format="dataset-json", cases=cases)


def tool_suite() -> Suite:
    """A second suite of the same versions: answers that must name the tool they used."""
    cases = [
        Case(id=f"t{i}", name=f"lookup {i}", category="tools",
             turns=[Turn(prompt=f"look up order {i}", checks=[RegexCheck(on="result", pattern=r"order \d+"),
                                                              RegexCheck(on="result", pattern="status")])])
        for i in range(6)
    ]  # fmt: skip
    return Suite(name="order-lookup", format="tasks-toml", cases=cases)


def support_agent(version: int) -> Callable[[str], str]:
    answers = {q: a for _cat, q, a in QUESTIONS}

    def answer(prompt: str) -> str:
        expected = answers[prompt]
        i = [q for _c, q, _a in QUESTIONS].index(prompt)
        if version == 1 and i >= 3:  # v2 breaks shipping and account questions
            return "Please contact our team for help with that."
        if version == 2 and i == 4:  # v3 fixes most of it
            return "We ship to most countries."
        if i % 3 == 1:
            return f"{expected.split(' ', 2)[-1]} [1]"  # a partial answer, cited
        return f"{expected} [1]" if i % 3 == 0 else expected

    return answer


#: (version label, model, support_agent version, prompt tokens per word of the answer) of the trade-off figure;
#: version -1 answers every question as expected, with its source
PRICED = [
    ("small-v1", "small", 1, 40),
    ("small-v2", "small", 2, 40),
    ("medium-v1", "medium", 0, 60),
    ("large-v1", "large", -1, 120),
]
PRICES = {
    "small": {"input": 0.15, "output": 0.60},
    "medium": {"input": 1.0, "output": 4.0},
    "large": {"input": 5.0, "output": 15.0, "cached_input": 0.5},
}


def priced_agent(version: int, model: str, words: int) -> Callable[[str], evalnb.Response]:
    """support_agent's answers with the usage a model call would report (tokens grow with the answer)."""
    plain = support_agent(max(version, 0))
    answers = {q: a for _cat, q, a in QUESTIONS}

    def answer(prompt: str) -> evalnb.Response:
        text = f"{answers[prompt]} [1]" if version < 0 else plain(prompt)
        n = len(text.split())
        usage = {"prompt_tokens": 300 + words * n, "completion_tokens": 20 * n}
        return evalnb.Response(text=text, model=model, usage=usage)

    return answer


def tool_agent(version: int) -> Callable[[str], str]:
    def answer(prompt: str) -> str:
        n = int(prompt.split()[-1])
        return f"order {n}: shipped" if version == 1 and n < 3 else f"order {n} status: shipped"

    return answer


def save(fig: object, name: str, height: int | None = None) -> Path:
    from PIL import Image

    path = IMAGES / f"{name}.png"
    h = height or fig.layout.height or 500  # type: ignore[attr-defined]
    for attempt in range(3):
        try:
            fig.write_image(path, format="png", width=WIDTH, height=h, scale=1)  # type: ignore[attr-defined]
            break
        except Exception as exc:  # kaleido's page not loaded yet on a busy machine: try again
            if "kaleido_scopes is not defined" not in str(exc) or attempt == 2:
                raise
    # a palette of 128 colours: the figures use few, and the file is a fraction of the size
    Image.open(path).convert("RGB").quantize(colors=128, dither=Image.Dither.NONE).save(path, optimize=True)
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KB")
    return path


def main() -> None:
    if "BROWSER_PATH" not in os.environ:
        found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if found:
            os.environ["BROWSER_PATH"] = found
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = evalnb.Store(Path(tmp) / "figures.db")
        results = {}
        for v in range(3):
            for suite, agent in ((support_suite(), support_agent(v)), (tool_suite(), tool_agent(v))):
                r = evalnb.run(
                    suite, agent, judge="heuristic", store=store, version=f"v{v + 1}", progress=False
                )
                results[(suite.name, v)] = r
        current = results[("support-bot", 1)]
        save(plots.scorecard(current), "plots-scorecard")
        save(plots.categories(current, value="mean"), "plots-categories")
        save(plots.compare(store.compare_all("v1", "v2")), "plots-compare")
        save(plots.trend(store, "support-bot"), "plots-trend")
        # a judge's scores beside people's: the heuristic judge and the embedding judge, on the same answers
        scores = current.scores[current.scores["check"] == "Relevance"]
        people = scores.assign(value=[5, 4, 5, 2, 1, 2, 5, 4, 4])
        embedded = evalnb.rescore(current, judge="embedding").scores
        # a check on which judge and people always say 4: agreement beyond chance is undefined there
        constant = people.assign(check="Groundedness", check_id="Groundedness", value=4.0)
        table = pd.concat(
            {
                "heuristic": evalnb.judges.agreement(pd.concat([scores, constant]),
                                                     pd.concat([people, constant])),
                "embedding": evalnb.judges.agreement(embedded[embedded["check"] == "Relevance"], people),
            },
            names=["judge"],
        ).reset_index()  # fmt: skip
        save(plots.agreement(table, value="kappa"), "plots-agreement")
        # the three versions of the support bot ranked by pairwise verdicts; offline: closer to the expected answer
        versions = [results[("support-bot", v)] for v in range(3)]
        save(plots.ranking(evalnb.rank(versions, judge="heuristic", labels=["v1", "v2", "v3"])), "plots-ranking")
        # four models of the support bot, priced: what each version's quality costs per case
        priced = evalnb.Store(Path(tmp) / "priced.db")
        for label, model, version, words in PRICED:
            evalnb.run(support_suite(), priced_agent(version, model, words), judge="heuristic", store=priced,
                       version=label, prices=PRICES, progress=False)  # fmt: skip
        save(plots.tradeoff(priced, "support-bot"), "plots-tradeoff")


if __name__ == "__main__":
    main()
