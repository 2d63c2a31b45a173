"""The demo job (``evalnb demo``): the three example suites, two versions of offline agents, one comparison.

Everything runs offline, with no API key and no server:

* ``foodmart-sales`` (cube YAML) against :class:`~evalnb.demo.FoodMartAgent` over the FoodMart sample
  database (built on first use into the user cache folder, :func:`evalnb.examples.foodmart_db`);
* ``tasks`` (TOML tasks) against the command-line task agent (``python -m evalnb.demo.task_agent``, through
  :class:`evalnb.agents.Command`);
* ``knowledge-base`` (JSON dataset) against the knowledge-base assistant (:class:`~evalnb.demo.kb.KBAssistant`).

The suites are the shipped examples (:mod:`evalnb.examples`), so the demo runs from any folder once evalnb is
installed; it writes only under ``out`` (the store, the scorecard, the working directories) and, the first
time, the sample database into the cache folder.

Judged checks are scored by the best offline judge installed, named for what it is: with wordllama (the
``offline-judge`` extra, which ``python3 dev.py demo`` installs) :class:`evalnb.judges.EmbeddingJudge` scores
Relevance and Similarity from sentence embeddings (``embedding (wordllama, not an LLM)``) and hands the TOML
``llm_judge`` task, Coherence and Groundedness to the word-statistics :class:`evalnb.judges.HeuristicJudge`
(``heuristic (not an LLM)``); without wordllama the heuristic scores everything and the demo says so, with
the command that installs the embedding judge.

The flawed agents run first and are saved as version ``previous``; the current agents are saved as
``current``; the comparison ``previous -> current`` is printed and ``<out>/scorecard.html`` is written.

Example::

    from evalnb.demo._main import run_demo
    outcome = run_demo(out=".evals")
    outcome.comparisons["foodmart-sales-evals"].checks[["check_id", "verdict"]]
"""

from __future__ import annotations

import html
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalnb._files import atomic_write

if TYPE_CHECKING:
    from evalnb.comparison import Comparison, Comparisons
    from evalnb.results import Result
    from evalnb.store import Store

__all__ = ["VERSIONS", "DemoOutcome", "data_dir", "run_demo"]

VERSIONS = ("previous", "current")

# What each flawed agent gets wrong: printed beside the previous version's failures, which are expected.
FLAWS = {
    "cube-yaml": "FoodMartAgent(flaw='cost-for-sales') reads the Store Cost column when asked for Store Sales",
    "tasks-toml": (
        "the task agent's --flaw build writes summary.txt instead of output/summary.txt, answers the word "
        "count in a sentence, and lists the capitals alphabetically on one line"
    ),
    "dataset-json": (
        "KBAssistant(flaw='no-citations') pastes the whole handbook section and cites nothing "
        "(Citations fails, PartialMatch drops)"
    ),
}


def data_dir() -> Path:
    """The folder of the shipped examples (``suites/``, ``kb/``, ``labels/``, ``foodmart/``), on disk.

    Example::

        (data_dir() / "suites" / "tasks.toml").is_file()
        # True
    """
    from evalnb.examples import resource

    return resource("suites/tasks.toml").parents[1]


# The demo's suites, by the file name each agent is picked for (the shipped examples' names).
SUITES = {
    "foodmart-sales.eval.yaml": "foodmart-sales",
    "tasks.toml": "tasks",
    "knowledge-base.json": "knowledge-base",
}


def notebooks_dir() -> Path | None:
    """The tutorial notebooks, when evalnb runs from a checkout that has them (they are not in the wheel)."""
    folder = Path(__file__).resolve().parents[2] / "notebooks"
    return folder if (folder / "build.py").is_file() else None


@dataclass
class DemoOutcome:
    """What :func:`run_demo` produced.

    Attributes:
        results: ``{version: {suite name: Result}}``.
        comparisons: ``{suite name: Comparison}`` of ``previous -> current`` (decided as one family).
        gate: the three comparisons gated as one (what ``evalnb compare previous current`` exits with).
        run_ids: ``{version: {suite name: run id}}`` in the store.
        store: the store both versions were saved to.
        scorecard: the path of the HTML scorecard.
        elapsed_s: wall time of the whole demo.
    """

    results: dict[str, dict[str, Result]] = field(default_factory=dict)
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    gate: Comparisons | None = None
    run_ids: dict[str, dict[str, str]] = field(default_factory=dict)
    store: Store | None = None
    scorecard: Path | None = None
    elapsed_s: float = 0.0


def _agents(version: str) -> dict[str, Any]:
    """The agent for each suite file of ``version`` (the flawed ones for ``previous``)."""
    from evalnb.demo._sample import foodmart_db
    from evalnb.demo.analytics import FoodMartAgent
    from evalnb.demo.kb import KBAssistant
    from evalnb.demo.task_agent import command

    flawed = version == "previous"
    return {
        "foodmart-sales.eval.yaml": FoodMartAgent(foodmart_db(), flaw="cost-for-sales" if flawed else None),
        "tasks.toml": command(flaw=flawed),
        "knowledge-base.json": KBAssistant(flaw="no-citations" if flawed else None),
    }


def run_demo(
    *,
    out: str | Path = ".evals",
    store: str | Path | Store | None = None,
    echo: Callable[[str], Any] = print,
    progress: bool = False,
    plotlyjs: str = "inline",
) -> DemoOutcome:
    """Run the demo: both versions of the three suites, saved, compared, and a scorecard written.

    Args:
        out: the folder the demo writes into (scorecard, working directories, and the default store).
        store: the store to save into (a path, URL or ``evalnb.Store``); default ``<out>/evalnb.db``.
        echo: where the printed report goes (``print`` by default; ``lambda s: None`` for silence).
        progress: show progress bars.
        plotlyjs: how the scorecard gets plotly's JavaScript: ``"inline"`` (once, the page works alone and
            offline), ``"file"`` (``plotly-VERSION.min.js`` beside it), ``"cdn"`` or a script URL.

    Returns:
        A :class:`DemoOutcome` with the results, comparisons, run ids, store and scorecard path.

    Example::

        outcome = run_demo(out="/tmp/evalnb-demo", echo=lambda s: None)
        outcome.results["current"]["foodmart-sales-evals"].passed
        # True
    """
    import evalnb
    from evalnb import examples
    from evalnb.errors import ConfigError
    from evalnb.store._store import as_store

    started = time.perf_counter()
    if not plotlyjs.strip():
        raise ConfigError("plotlyjs: give inline, file, cdn or a script URL")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, or no permission: the CLI's exit 2 with a message
        raise ConfigError(f"the demo cannot write into {out}: {exc.strerror or exc}") from exc
    the_store = as_store(store if store is not None else out / "evalnb.db")
    judge, judge_note = offline_judge()
    from evalnb.demo._sample import foodmart_db

    db = foodmart_db()
    outcome = DemoOutcome(store=the_store)

    echo(
        "evalnb demo: the three example suites of evalnb.examples against offline demo agents "
        "(no API key, no server, no network)."
    )
    for line in judge_note:
        echo(line)
    for version in VERSIONS:
        agents = _agents(version)
        outcome.results[version] = {}
        outcome.run_ids[version] = {}
        title = (
            "the flawed agents; their failures are expected" if version == "previous" else "today's agents"
        )
        echo("")
        echo("=" * 100)
        echo(f'Version "{version}" ({title})')
        echo("=" * 100)
        for filename, agent in agents.items():
            suite = examples.load(SUITES[filename])
            # One working directory per version under <out>: the task agent writes files there, and nothing
            # lands in temporary folders that outlive the demo.
            workdir = out / "demo-work" / version / suite.name
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            result = evalnb.run(
                suite,
                agent,
                judge=judge,
                data=db if suite.format == "cube-yaml" else None,
                workdir=workdir,
                progress=progress,
            )
            # Running the demo again replaces its own versions (a label names one run of a suite).
            run_id = the_store.save(result, version=version, replace=True)
            outcome.results[version][suite.name] = result
            outcome.run_ids[version][suite.name] = run_id
            echo("")
            echo(f"--- {suite.name} ({suite.format}) with {agent!r}")
            if version == "previous":
                echo(f"    flaw: {FLAWS[suite.format]}")
            echo(result.report().rstrip())

    echo("")
    echo("=" * 100)
    echo("Comparison previous -> current")
    echo("  the gate, per check: is current worse than previous? one-sided 95%, paired over cases, all three")
    echo("  suites as one family; the triage list, per case: what changed, apart (it never gates)")
    echo("=" * 100)
    from evalnb.comparison import gate

    outcome.gate = gate(
        {
            name: evalnb.compare(outcome.results["previous"][name], current, labels=("previous", "current"))
            for name, current in outcome.results["current"].items()
        }
    )
    outcome.comparisons = dict(outcome.gate.comparisons)
    echo(outcome.gate.report().rstrip())

    notes = _judge_notes(outcome.results["current"])
    if notes:
        echo("")
        echo("Note on the current version's remaining failures:")
        for line in notes:
            echo(f"  {line}")

    outcome.scorecard = write_scorecard(outcome, out / "scorecard.html", plotlyjs=plotlyjs)
    outcome.elapsed_s = time.perf_counter() - started
    echo("")
    echo(
        f"Saved versions {', '.join(VERSIONS)} of {len(outcome.results['current'])} suites to {the_store.url}"
    )
    echo(f"Scorecard: {outcome.scorecard}")
    echo(f"Done in {outcome.elapsed_s:.1f} s.")
    echo("")
    for line in next_steps(the_store, notebooks_dir()):
        echo(line)
    return outcome


def next_steps(store: Store, notebooks: Path | None, *, cwd: Path | None = None) -> list[str]:
    """What to type next, written so that each command works as printed from ``cwd``.

    The versions ``previous`` and ``current`` are shared by the three suites, so a command naming them needs
    ``--suite`` (without it the store answers AMBIGUOUS_VERSION); ``--store`` is added when the demo did not
    save to the CLI's default store; commands are spelt with their virtualenv's folder when that folder is
    not on PATH (``python3 dev.py demo`` does not activate ``.venv``); and the notebooks need the
    ``notebooks`` extra, which ``dev.py demo`` does not install. ``notebooks`` is None when evalnb is installed
    without a checkout (the notebooks are not in the wheel): then the last line says where they are.

    Example::

        next_steps(evalnb.Store(".evals/evalnb.db"), Path("notebooks"))[1]
        # '  evalnb compare previous current --suite foodmart-sales-evals'
    """
    import importlib.util
    import os
    import shlex
    import shutil
    import sys

    from evalnb.store._store import DEFAULT_PATH

    here = (cwd or Path.cwd()).resolve()

    def shown(path: Path) -> str:
        path = path.resolve() if path.is_absolute() else (here / path).resolve()
        return shlex.quote(path.relative_to(here).as_posix() if path.is_relative_to(here) else str(path))

    bin_dir = Path(sys.executable).parent  # not resolved: a virtualenv's python is a symlink out of it

    def tool(name: str) -> str:
        found = shutil.which(name)
        if found and os.path.normcase(os.path.abspath(os.path.dirname(found))) == os.path.normcase(
            os.path.abspath(bin_dir)
        ):
            return name
        return shown(Path(os.path.abspath(bin_dir)) / name)

    option = ""
    database = store.url.database if store.is_sqlite else None
    if not (database and (here / Path(database)).resolve() == (here / DEFAULT_PATH).resolve()):
        where = (
            shown(Path(database)) if database else shlex.quote(store.url.render_as_string(hide_password=True))
        )
        option = f" --store {where}"
    evalnb = tool("evalnb")
    lines = [
        "Next, from this folder:",
        f"  {evalnb} compare previous current --suite foodmart-sales-evals{option}",
        f"  {evalnb} trend knowledge-base{option}",
        f"  {evalnb} report current --suite my-validation-suite{option}",
    ]
    if notebooks is None:
        lines.append(
            "  The four tutorial notebooks are in the notebooks/ folder of evalnb's source repository."
        )
        return lines
    if importlib.util.find_spec("jupyterlab") is None:
        project = shlex.quote(shown(notebooks.parent).strip("'") + "[notebooks,excel]")
        lines.append(f"  {tool('python')} -m pip install -e {project}   # once: JupyterLab for the notebooks")
    lines.append(f"  {tool('jupyter')} lab {shown(notebooks)}   # the four tutorial notebooks")
    return lines


def offline_judge() -> tuple[Any, list[str]]:
    """The best offline judge installed, and the lines that say which one it is (never a silent fallback).

    Example::

        judge, lines = offline_judge()
        judge.label
        # 'embedding (wordllama, not an LLM)'
    """
    from evalnb.judges import EmbeddingJudge, HeuristicJudge
    from evalnb.judges.offline._embedding import INSTALL_HINT, available

    if available():
        judge: Any = EmbeddingJudge()
        return judge, [
            f"Judged checks are scored offline: Relevance and Similarity by '{judge.label}' (sentence "
            f"embeddings calibrated on labelled pairs), llm_judge, Coherence and Groundedness by "
            f"'{judge.fallback.label}' (word statistics). Neither is an LLM; notebooks/04-llm-judges.ipynb "
            f"measures both against labels."
        ]
    judge = HeuristicJudge()
    return judge, [
        f"Judged checks are scored by '{judge.label}': word statistics, offline. It is not an LLM.",
        "NOTE: the embedding judge is not installed, so Relevance and Similarity are scored by word statistics "
        f"too, and an on-topic answer in other words scores low. Install it: {INSTALL_HINT}",
    ]


def _judge_notes(results: dict[str, Result]) -> list[str]:
    """Explain failures of the current version that come only from an offline judge."""
    lines = []
    for name, result in results.items():
        sc = result.scores
        bad = sc[(sc["passed"] == False) & sc["judge"].notna()]  # noqa: E712 - boolean NA-aware
        for row in bad.drop_duplicates(["case_id", "check_id"]).itertuples(index=False):
            lines.append(f"{name} / {row.case_id} / {row.check_id}: {row.reason} [judge: {row.judge}]")
    if lines:
        lines.append(
            "These come from an offline judge, not from a model: the heuristic reads words, not meaning (a "
            "correct one-line-per-capital answer mentions few of the rubric's words), and embeddings miss "
            "negation and numbers. Notebook 04 measures both against labelled pairs; use a model judge for "
            "decisions (evalnb run ... --judge openai:MODEL)."
        )
    return lines


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem;max-width:1200px;color:#1f2328}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left}
th{background:#f6f8fa}.passed{color:#1a7f37}.failed{color:#cf222e}.regressed{color:#cf222e}.improved{color:#1a7f37}
.note{color:#57606a}
"""


def write_scorecard(outcome: DemoOutcome, path: str | Path, *, plotlyjs: str = "inline") -> Path:
    """One self-contained HTML page: per suite, the counts of both versions, the comparison and the plots.

    plotly's JavaScript is inlined once, so the page works offline; ``plotlyjs="file"`` writes it beside the
    page once and links it, ``"cdn"`` links plotly's CDN (see ``evalnb.export._html``). Every string from
    agents or suites is escaped. A full per-suite scorecard (sortable case table) is ``result.to_html(path)``.

    Example::

        write_scorecard(outcome, ".evals/scorecard.html")
        write_scorecard(outcome, ".evals/scorecard.html", plotlyjs="file")   # a page of ~0.1 MB
    """
    from evalnb import plots
    from evalnb.export._html import figure_div, page

    esc = html.escape
    parts = [
        "<h1>evalnb demo scorecard</h1>",
        '<p class="note">Versions <b>previous</b> (flawed demo agents) and <b>current</b>; judged checks scored '
        "offline, each score row naming its judge (embeddings or word statistics, neither an LLM).</p>",
        "<table><tr><th>suite</th><th>format</th><th>version</th><th>passed</th><th>failed</th>"
        "<th>degraded</th><th>skipped</th><th>run id</th></tr>",
    ]
    for version, by_suite in outcome.results.items():
        for name, result in by_suite.items():
            c = result.counts()
            parts.append(
                f"<tr><td>{esc(name)}</td><td>{esc(result.suite.format)}</td><td>{esc(version)}</td>"
                f'<td class="passed">{c["passed"]}</td><td class="failed">{c["failed"]}</td>'
                f"<td>{c['degraded']}</td><td>{c['skipped']}</td>"
                f"<td>{esc(outcome.run_ids.get(version, {}).get(name, ''))}</td></tr>"
            )
    parts.append("</table>")
    for name, cmp in outcome.comparisons.items():
        current = outcome.results["current"][name]
        parts.append(
            f"<h2>{esc(name)}</h2><h3>The gate, per check: previous &rarr; current</h3>"
            f'<p class="note">{esc(cmp.headline())}</p>'
        )
        cols = ["check_id", "scale", "paired", "mean_a", "mean_b", "diff", "verdict", "words"]
        parts.append(
            cmp.checks[cols]
            .rename(columns={"mean_a": "mean previous", "mean_b": "mean current"})
            .to_html(index=False, escape=True, float_format=lambda v: f"{v:.3f}", na_rep="")
        )
        changed = cmp.triage
        if len(changed):
            parts.append("<h3>Triage, per case (does not gate; surest first)</h3>")
            parts.append(
                changed[["case_id", "check_id", "a", "b", "change", "significant"]]
                .rename(columns={"a": "previous", "b": "current"})
                .to_html(index=False, escape=True, float_format=lambda v: f"{v:.3f}", na_rep="untested")
            )
        for fig in (plots.compare(cmp), plots.scorecard(current)):
            parts.append(figure_div(fig))
    body = "".join(parts)
    return atomic_write(
        path, page("evalnb demo scorecard", body, css=_CSS, sortable=False, plotlyjs=plotlyjs, beside=path)
    )
