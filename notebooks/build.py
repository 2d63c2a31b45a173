"""Write the tutorial notebooks from the cells below (``python notebooks/build.py``).

The notebooks are committed without outputs (tests/test_notebooks.py enforces it and executes each one on a
real kernel). Edit the cells here, run this script, and commit both.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import sys
import tempfile
from pathlib import Path

# The project folder (the repository root or its notebooks/ folder is the working directory): its docs/ images,
# and its evalnb for a plain checkout without `pip install -e .`. The example suites and data ship inside
# evalnb (evalnb.examples), so they are found wherever evalnb is installed.
ROOT = next(p for p in [Path.cwd(), *Path.cwd().parents] if (p / "notebooks" / "build.py").is_file())
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # a plain checkout, without `pip install -e .`
WORK = Path(tempfile.mkdtemp(prefix="evalnb-notebook-"))  # everything this notebook writes goes here

import pandas as pd
import plotly.io as pio

import evalnb

# Figures are kept as plotly JSON, which JupyterLab renders (also after a reload), and as HTML with plotly.js
# embedded once (not loaded from a CDN), so a notebook exported to HTML shows its figures offline.
pio.renderers.default = "plotly_mimetype+notebook"
pd.set_option("display.max_colwidth", 90)
print("evalnb", evalnb.__version__, "| examples:", evalnb.examples.names(), "| writing to a temporary folder")"""


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip("\n"))


def code(text: str) -> nbformat.NotebookNode:
    return new_code_cell(text.strip("\n"))


QUICKSTART = [
    md("""
# 01 · Quickstart: load a suite, run it, read the results

evalnb turns an evaluation suite (a TOML task list, a YAML cube suite or a JSON dataset) into **pandas
DataFrames**: one row per run, per score, per case. This notebook loads one suite of each format, runs them
against the offline demo agents that ship with evalnb (no API key, no network), and reads the results the way
you would in your own work: the failures, the per-category view, and a scorecard.
"""),
    code(SETUP),
    md("""
## Three formats, one model

`evalnb.load` reads any of the three formats (from the extension, then the content) into the same `Suite`
model. Nothing downstream cares which format a suite came from. The three example suites ship inside evalnb:
`evalnb.examples.path(name)` is the file, `evalnb.examples.load(name)` the suite. (A table of your own, a
DataFrame, CSV or JSONL of prompts and expected answers, is a suite too: `evalnb.run(df, agent)`,
docs/tables.md.)
"""),
    code("""
suites = {name: evalnb.examples.load(name) for name in evalnb.examples.names()}
pd.DataFrame(
    [
        {"example": name, "file": evalnb.examples.path(name).name, "suite": s.name, "format": s.format, "cases": len(s.cases)}
        for name, s in suites.items()
    ]
)"""),
    code("""
kb_suite = suites["knowledge-base"]
kb_suite.to_frame()[["case_id", "category", "turns", "checks"]]"""),
    md("""
## Run the JSON dataset

The agent is `KBAssistant`, a small offline assistant that answers from the shipped handbook (`evalnb/examples/kb/handbook.md`) by retrieving
the best-matching sentences and citing the section (`[5]`). The dataset's judged metrics (Relevance,
Coherence, Groundedness) need a judge: here the offline **heuristic judge**, which scores from word
statistics. It is *not* an LLM, and every score it gives says so in the `judge` column. Notebook 04 shows how
far to trust it and how to use a real model instead.

Any Python function is an agent too: `evalnb.run(suite, lambda prompt: "...")`.
"""),
    code("""
from evalnb.demo.kb import KBAssistant

result = evalnb.run(kb_suite, KBAssistant(), judge=evalnb.judges.HeuristicJudge(), progress=False)
result"""),
    md("""
## Three tidy frames

* `result.runs`: one row per case x run x turn: what was asked, what came back, status, latency;
* `result.scores`: one row per case x run x turn x check: value, passed, reason, and the judge;
* `result.cases`: one row per case: status and pass rate over its runs.
"""),
    code("""result.runs[["case_id", "turn", "prompt", "response", "status", "latency_ms"]]"""),
    code("""result.scores[["case_id", "turn", "check_id", "value", "passed", "reason", "judge"]].head(12)"""),
    code("""result.cases"""),
    md("""
## Filter the failures

`passed` is a real (nullable) boolean, so the usual pandas filters work. Each failure carries its reason.
"""),
    code("""
failures = result.scores[result.scores["passed"] == False]  # noqa: E712 (nullable boolean)
failures[["case_id", "turn", "check_id", "value", "reason", "judge"]]"""),
    md("""
`result.failures()` does this for you, with the prompt, the expected answer and the response beside each
reason. `result.explore()` is a browser over them: pick a case (filter by status, check or category) and see
prompt, expected and actual side by side with the difference marked, every check's value and reason, and
mismatched rows marked (`comparison.explore()` shows two versions side by side).
"""),
    code("""result.failures()[["case_id", "check_id", "reason", "expected", "response"]]"""),
    code("""result.explore()"""),
    md("""
## Per check and per category

`summary()` gives one row per check; `by_category()` the pass rate of each check per category. A plot often
says it faster.
"""),
    code("""result.summary()"""),
    code("""result.by_category()"""),
    code("""evalnb.plots.categories(result)"""),
    md("""
## The scorecard

A case x check heatmap of pass rates (hover for the reason), and a self-contained HTML page to share.
"""),
    code("""evalnb.plots.scorecard(result)"""),
    code("""
page = result.to_html(WORK / "knowledge-base.html")
print(page.name, f"{page.stat().st_size / 1e6:.1f} MB, opens offline in any browser")"""),
    md("""
## The other two formats

The cube suite runs against `FoodMartAgent`, a rule-based analytics agent over the FoodMart sample database;
`data=` is the database its `referenceQuery` cases are checked against. The TOML task suite runs a
command-line program per task (`evalnb.agents.Command`); its `llm_judge` task is judged by the heuristic.
`result.report()` is the text report (the same one the CLI prints).
"""),
    code("""
from evalnb.demo import FoodMartAgent, foodmart_db

db = foodmart_db()
cube = evalnb.run(suites["foodmart-sales"], FoodMartAgent(db), data=db, progress=False)
print(cube.report())"""),
    code("""
from evalnb.demo.task_agent import command

tasks = evalnb.run(suites["tasks"], command(), judge="heuristic", workdir=WORK / "tasks", create_workdir=True,
                     progress=False)
print(tasks.report())
tasks.scores[["case_id", "run", "check_id", "passed", "reason", "judge"]]"""),
    md("""
`capital-list` fails only on its `llm_judge` check: the answer (`Paris`, `Rome`, `Madrid`, one per line) is
right, but the heuristic reads the rubric as a bag of keywords and finds few of them. Its passes mean no more
than its failures: `summarize-text` passes its `llm_judge` check although the answer is not a summary (the
prompt's text is only a `[...]` placeholder, and the agent says there is nothing to summarise), because that
answer happens to use the rubric's words. Those are the kind of judge errors notebook 04 measures. Next:
notebook 02 compares versions of an agent.
"""),
]


COMPARE = [
    md("""
# 02 · Compare versions: the store, `compare`, trends, and a scorecard to share

The everyday question: *is the new version better, worse or the same, and where?* Here three versions of the
FoodMart analytics agent run the cube suite and are saved to a store; `evalnb.compare` gives verdicts with
intervals instead of a bare difference, and the store gives the trend over versions.

* `v1`: reads Store Cost when asked for Store Sales (a bug);
* `v2`: the bug fixed;
* `v3`: a new "optimisation" that silently drops member filters ("in CA").
"""),
    code(SETUP),
    code("""
from evalnb.demo import FoodMartAgent, foodmart_db

db = foodmart_db()
suite = evalnb.examples.load("foodmart-sales")
store = evalnb.Store(WORK / "evalnb.db")  # a SQLite file; by default .evals/evalnb.db
versions = {
    "v1": FoodMartAgent(db, flaw="cost-for-sales"),
    "v2": FoodMartAgent(db),
    "v3": FoodMartAgent(db, flaw="ignore-filters"),
}
results = {}
for version, agent in versions.items():
    results[version] = evalnb.run(suite, agent, data=db, progress=False)
    store.save(results[version], version=version)
store.history()[["run_id", "suite", "version", "model", "status"]]"""),
    md("""
## v1 -> v2: did the fix work?

`compare(a, b)` matches cases and checks and answers two questions apart:

* **the gate, per check**: is the candidate worse than the baseline by more than a margin, one-sided at the
  stated confidence? It tests the paired per-case differences (a case's runs and turns are one unit) with an
  exact sign-flip test, Holm across checks. `cmp.checks` holds it, in words too; `cmp.exit_code` is what
  `evalnb run --baseline` and `evalnb compare` exit with;
* **triage, per case x check**: what changed (`regressed`, `improved`, `changed`, `same`, `new`, `gone`) and,
  with two runs or more a side, whether the case's own runs show it is beyond their noise. It never gates.
"""),
    code("""
fix = evalnb.compare(results["v1"], results["v2"], labels=("v1", "v2"))
fix.checks[["check_id", "scale", "paired", "mean_a", "mean_b", "diff", "verdict", "words"]]"""),
    md("""
Per case, `a` and `b` are the check's value in each version; for `rows` it is the share of expected cells
that matched (here 0.5: every Store Sales cell wrong, the other half of the cells right). A `Comparison`
behaves like its per-case frame, so the usual pandas filters work on it directly.
"""),
    code("""fix[fix["change"] != "same"][["case_id", "check_id", "a", "b", "change", "significant"]]"""),
    code("""evalnb.plots.compare(fix)"""),
    code("""fix.explore()  # pick a case: both versions' answers and rows side by side"""),
    md("""
## v2 -> v3: the gate and the triage list

The store compares saved versions by label (`evalnb compare v2 v3` compares every suite the two share).
"""),
    code("""
drift = store.compare("v2", "v3", suite=suite.name)
print(drift.report())
print("gate exit code:", drift.exit_code)"""),
    md("""
Read the two levels apart. **The gate** asks whether `rows` as a whole got worse: one case of eight changed,
and no pattern of signs over eight cases could make one changed case significant, so it says *too few cases
to tell* and passes (exit code 0), adding how big a drop the suite could hide. **The triage list** names
`sales-by-family-in-ca` as `regressed`: that is where to look. Its `significant` column is `<NA>` because
one run per case measures no run-to-run noise; a significant per-case flag needs several runs a side (at
3 runs a side the smallest possible p-value is 0.1; it falls below 0.001 from 7 runs a side).
"""),
    code("""drift.triage[["case_id", "check_id", "a", "b", "change", "significant"]]"""),
    md("""
How big would the suite have to be for the gate to catch a break like this one? `evalnb.power` plans from
the baseline, including how much the drop varies between cases: a drop of 0.1 carried by one case in eight
is much harder to see than the same drop spread over every case.
"""),
    code("""
print(evalnb.power(results["v2"], drop=0.1, affected=1 / 8).report())
print(evalnb.power(results["v2"], drop=0.1).report())"""),
    md("""
## What exactly went wrong: the row mismatches

A failed `rows` check keeps every mismatch (row, column, expected, actual), so the regression is explained,
not just counted.
"""),
    code("""results["v3"].mismatches[["case_id", "row", "key", "expected", "actual", "reason"]].head(10)"""),
    md("""
## The trend over versions

`store.trend(suite)` aggregates every saved version per check (mean and pass rate with intervals);
`evalnb.plots.trend` draws one line per check.
"""),
    code("""
trend = store.trend(suite.name)
trend.pivot(index="version", columns="check_id", values="pass_rate")"""),
    code("""evalnb.plots.trend(store, suite.name, value="pass_rate")"""),
    md("""
## Without reference answers: pairwise judging

Summaries and chat replies often have no expected answer to score. Then a judge compares the two versions'
answers side by side: `evalnb.pairwise(a, b, judge=...)`. Here the demo's knowledge-base assistant, `previous`
(pastes the whole handbook section, cites nothing) against `current`. The judge below is a plain function
`f(prompt, first, second) -> "first" | "second" | "tie"` with a criterion written out; with an endpoint you
would pass a model judge instead, `judge="openai:gpt-4o-mini"` (it gets a pairwise prompt, and its token
probabilities weigh the verdict). Each case is judged in both orders: a verdict that flips with the order
counts as a tie and shows in `position_bias`.
"""),
    code("""
import re

from evalnb.demo.kb import KBAssistant

kb = evalnb.examples.load("knowledge-base")
previous = evalnb.run(kb, KBAssistant(flaw="no-citations"), judge="heuristic", progress=False)
current = evalnb.run(kb, KBAssistant(), judge="heuristic", progress=False)


def cited_and_to_the_point(prompt, first, second):
    \"\"\"Prefer the answer that cites its source; between two that do (or don't), the shorter one.\"\"\"
    cites = [bool(re.search(r"\\[\\d+\\]", x)) for x in (first, second)]
    if cites[0] != cites[1]:
        return ("first" if cites[0] else "second"), "only one answer cites its source"
    if abs(len(first) - len(second)) < 20:
        return "tie", "both cite alike and are about as long"
    return ("first" if len(first) < len(second) else "second"), "both cite alike; this one is shorter"


pw = evalnb.pairwise(previous, current, judge=cited_and_to_the_point, labels=("previous", "current"))
print(pw.headline())
pw.cases[["case_id", "turn", "winner", "verdict_ab", "verdict_ba", "consistent", "reason"]]"""),
    md("""
`win_rate` is current's share of the cases (ties as half) with its interval; `p_value` is the one-sided exact
test of "current is worse", and `exit_code` (what `evalnb pairwise previous current --judge SPEC` exits with) is
1 only when it is. Where every case has an expected answer, the offline judges compare without a model: the
answer closer to the expected one wins, and every reason says it was not an LLM.
"""),
    code("""
offline = evalnb.pairwise(previous, current, judge="heuristic", labels=("previous", "current"))
offline.win_rate, (offline.ci_low, offline.ci_high), offline.p_value, offline.position_bias"""),
    code(
        """pw.explore()  # the pairs, filtered by winner: both answers side by side, the verdict in each order"""
    ),
    md("""
## Share it

A stored version loads back as a full `Result`; export it as one self-contained HTML page, an Excel workbook
or CSV files.
"""),
    code("""
v3 = store.load("v3")
exports = [v3.to_html(WORK / "v3.html"), v3.to_excel(WORK / "v3.xlsx"), v3.to_csv(WORK / "v3-csv")]
[p.name for p in exports], v3.summary()[["check_id", "n", "pass_rate"]]"""),
    md("""
## What each version costs, and the picture that decides

Better is half the question; the other half is what it costs. Every agent and judge call reports its tokens
(prompt, completion, cached, reasoning), and with prices you give (USD per 1M tokens; evalnb ships none, see
`docs/costs.md`) each call gets a cost. The demo agent calls no model, so here a wrapper reports the usage a
model would have (about four characters a token, a 1,500-token system prompt of which the provider caches
most) and which model serves each version: the fixed agent on a small model and on a large one, and the
flawed `v3` on the small one.
"""),
    code("""
PRICES = {
    "gpt-4o-mini": {"input": 0.15, "output": 0.60, "cached_input": 0.075},
    "gpt-4o": {"input": 2.50, "output": 10.00, "cached_input": 1.25},
}


def served_by(agent, model, latency_ms):
    async def respond(request: evalnb.Request) -> evalnb.Response:
        answer = await agent.respond(request)
        prompt = 1500 + len(request.prompt) // 4
        answer.model, answer.latency_ms = model, latency_ms
        answer.usage = {"prompt_tokens": prompt, "completion_tokens": 40 + len(answer.text or "") // 4,
                        "prompt_tokens_details": {"cached_tokens": 1200}}
        return answer
    return respond


priced = evalnb.Store(WORK / "priced.db")
served = {
    "v2-mini": served_by(FoodMartAgent(db), "gpt-4o-mini", 420.0),
    "v2-large": served_by(FoodMartAgent(db), "gpt-4o", 900.0),
    "v3-mini": served_by(FoodMartAgent(db, flaw="ignore-filters"), "gpt-4o-mini", 380.0),
    "v1-large": served_by(FoodMartAgent(db, flaw="cost-for-sales"), "gpt-4o", 950.0),
}
for version, agent in served.items():
    evalnb.run(suite, agent, data=db, prices=PRICES, store=priced, version=version, progress=False)
run = priced.load("v2-large")
run.runs[["case_id", "model", "prompt_tokens", "cached_tokens", "completion_tokens", "cost"]].head()"""),
    md("""
`result.costs()` totals a run per source and model; `store.costs(suite)` gives every version's cost per case
and latency percentiles; and `compare(..., cost_margin=0.10)` adds a `cost` row to the gate that fires when the
cost per case rose by more than 10% (a paired test over cases), here from the small model to the large one.
A budget (`evalnb.Budget(cost=...)`, `--max-cost`) stops a run before it spends more.
"""),
    code("""
print(run.costs()[["source", "model", "calls", "cost", "cost_per_case"]].to_string(index=False))
priced.costs(suite.name)"""),
    code("""
dearer = priced.compare("v2-mini", "v2-large", suite=suite.name, cost_margin=0.10)
dearer.checks.set_index("check_id").loc["cost", ["mean_a", "mean_b", "verdict", "words"]]"""),
    md("""
The picture that decides: quality against cost per case, one point per version, the marker's size its median
latency. The Pareto front joins the versions no other version beats on both: the fixed agent on the small
model passes as many cases as on the large one for a sixteenth of the cost, so `v2-large` is off the front, and
so is `v1-large` (as dear, and worse). `v3-mini` is on it by a hair: its shorter answers make it a little
cheaper than `v2-mini`, and it fails a case in twelve; whether that saving is worth the case is the call the
picture puts in front of you. A version off the front is one you would not ship.
"""),
    code("""evalnb.plots.tradeoff(priced, suite.name)"""),
]


ANALYTICS = [
    md("""
# 03 · Analytics agents: expected rows, `referenceQuery`, mismatches and tolerances

Analytics agents answer with **rows**. The cube suite says what the rows must be, either written out
(`expectedRows`) or as a query run against the data at evaluation time (`referenceQuery`), so the expectation
cannot go stale when the data changes. This notebook uses the FoodMart sample (built on first use, about a
second) and the rule-based `FoodMartAgent`.
"""),
    code(SETUP),
    code("""
from evalnb.demo import FoodMartAgent, foodmart_db

db = foodmart_db()
agent = FoodMartAgent(db)
answer = agent.answer("show me store sales by state")
print(answer.intent, "|", answer.text)
pd.DataFrame(answer.rows)"""),
    md("""
## Two ways to say what is right

`sales-by-state` writes its rows out; `unit-sales-by-product-family` gives a structured `referenceQuery`
(measures and levels of the cube) and `unit-sales-by-quarter-sql` an SQL one. Both end up as a `rows` check.
"""),
    code("""
suite = evalnb.examples.load("foodmart-sales")
rows_checks = []
for case in suite.cases:
    for check in case.turns[-1].checks:
        if check.type == "rows":
            rows_checks.append(
                {
                    "case": case.id,
                    "expected": "expectedRows" if check.expected is not None else "referenceQuery",
                    "order_matters": check.order_matters,
                    "tolerance": check.tolerance.model_dump(),
                }
            )
pd.DataFrame(rows_checks)"""),
    code("""
ref = next(c for c in suite.cases if c.id == "unit-sales-by-product-family").turns[-1].checks
[c.reference_query for c in ref if c.type == "rows"][0]"""),
    md("""
## Run it, then break it

`data=` is the source the reference queries run against (a SQLite/DuckDB file, a SQLAlchemy URL or engine, or
a dict of DataFrames).
"""),
    code("""
good = evalnb.run(suite, agent, data=db, progress=False)
bad = evalnb.run(suite, FoodMartAgent(db, flaw="cost-for-sales"), data=db, progress=False)
pd.DataFrame({"current": good.cases.set_index("case_id")["status"], "flawed": bad.cases.set_index("case_id")["status"]})"""),
    md("""
## Reading the mismatches

`result.mismatches` has one row per wrong cell: which row, which column, what was expected and what came
back. Here the flawed agent's Store Sales are all about 40 % of the truth: it reads the cost column.
"""),
    code("""
mm = bad.mismatches.copy()
mm[["case_id", "row", "key", "expected", "actual", "reason"]]"""),
    code("""
import plotly.express as px

nums = mm.assign(
    expected=pd.to_numeric(mm["expected"], errors="coerce"), actual=pd.to_numeric(mm["actual"], errors="coerce")
).dropna(subset=["expected", "actual"])
nums["label"] = nums["case_id"] + " row " + nums["row"].astype(str)
fig = px.bar(
    nums.melt(id_vars=["label"], value_vars=["expected", "actual"], var_name="side", value_name="Store Sales"),
    x="label", y="Store Sales", color="side", barmode="group",
    title="Flawed agent: expected vs actual Store Sales per mismatched cell",
)
fig.update_layout(xaxis_title="case and row")"""),
    md("""
## Choosing a tolerance

Published figures are often rounded. A tolerance says how close is close enough: `absolute` (units) or
`relative` (a fraction). Below, one case expects California's Store Sales rounded to the dollar
(159,168 against 159,167.84 in the data) under four tolerances.
"""),
    code("""
def tolerance_case(tolerance: str) -> str:
    return f'''
name: tolerance-demo
cube: {{connectionName: foodmart_sample, catalog: FoodMart, schema: FoodMart, cubeName: Sales}}
cases:
  - name: ca-sales-rounded
    question: show me store sales in CA by state
    expectedRows:
      - {{state: "CA", storeSales: 159168}}
    {tolerance}
'''

choices = {
    "none (exact)": "",
    "absolute: 0.01": "tolerance: {absolute: 0.01}",
    "absolute: 1": "tolerance: {absolute: 1}",
    "relative: 0.001": "tolerance: {relative: 0.001}",
}
rows = []
for label, tol in choices.items():
    r = evalnb.run(evalnb.load(tolerance_case(tol), format="cube-yaml"), agent, progress=False)
    s = r.scores[r.scores["check"] == "rows"].iloc[0]
    rows.append({"tolerance": label, "passed": bool(s["passed"]), "reason": s["reason"]})
pd.DataFrame(rows)"""),
    md("""
A relative tolerance of 0.1 % absorbs rounding to the dollar at this scale, while a unit error like the
cost-for-sales bug (60 % off) still fails. Pick the tightest tolerance that your published figures satisfy.
"""),
]


JUDGES = [
    md("""
# 04 · Judges: offline judges, re-scoring, agreement with labels, weighted scores

Some checks cannot be decided by a rule: is the answer *relevant*, *coherent*, *grounded*? They need a judge.
evalnb's judges are:

* `evalnb.judges.HeuristicJudge`: offline word statistics. **Not an LLM**: its scores are labelled
  `heuristic (not an LLM)`. Good for demos, tests and smoke runs; not for decisions;
* `evalnb.judges.EmbeddingJudge`: offline sentence embeddings (wordllama, `pip install "evalnb[offline-judge]"`)
  for Relevance and Similarity (Similarity also reads the expected response's facts: numbers with units,
  names, yes/no, negation), calibrated on labelled pairs; it hands the other checks to the heuristic.
  **Not an LLM** either: `embedding (wordllama, not an LLM)`;
* `evalnb.judges.OpenAIJudge`: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp), with
  probability-weighted scores when the endpoint returns logprobs;
* `evalnb.judges.CallableJudge`, or any function `f(prompt) -> str`: your own.

Before trusting a judge, measure it. This notebook does that twice: with 18 reference labels of the demo
knowledge-base assistant's answers (written by the evalnb maintainers), and with 320 labelled pairs split
into a half that calibrates the embedding judge and a half that only measures it (`evalnb/examples/labels/`; see the
README there for who labelled them and how).
"""),
    code(SETUP),
    code("""
from evalnb.demo.kb import KBAssistant

suite = evalnb.examples.load("knowledge-base")
heuristic = evalnb.judges.HeuristicJudge()
results = {
    "current": evalnb.run(suite, KBAssistant(), judge=heuristic, progress=False),
    "previous": evalnb.run(suite, KBAssistant(flaw="no-citations"), judge=heuristic, progress=False),
}
judged = results["current"].scores[results["current"].scores["judge"].notna()]
judged[["case_id", "turn", "check", "value", "passed", "reason", "judge"]]"""),
    md("""
## The reference labels

Each label keeps the exact answer it was written for; if the assistant changes, the labels no longer apply,
so check first.
"""),
    code("""
labels = pd.read_csv(evalnb.examples.resource("labels/knowledge-base.csv"), dtype={"case_id": "string", "check": "string"})
for version, result in results.items():
    for row in labels[labels["version"] == version].itertuples():
        said = result.response_for(row.case_id, 0, row.turn).text
        assert said == row.answer, f"label for {version}/{row.case_id} is stale: re-label the new answer"
labels[["version", "case_id", "check", "value", "note"]]"""),
    md("""
## Agreement: heuristic vs people

`evalnb.judges.agreement(a, b)` pairs the scores on case, turn and check and reports, per check, the share of
identical scores, Cohen's quadratic-weighted kappa (1 perfect, 0 chance level) and the Spearman rank
correlation. To pool the two versions, make the case key unique per version.
"""),
    code("""
def pooled(scores_by_version):
    frames = [s.assign(case_id=v + "/" + s["case_id"]) for v, s in scores_by_version.items()]
    return pd.concat(frames, ignore_index=True)

people = pooled({v: labels[labels["version"] == v] for v in results})
heuristic_scores = pooled({v: r.scores for v, r in results.items()})
evalnb.judges.agreement(heuristic_scores, people)"""),
    code("""
import plotly.express as px

side = heuristic_scores.merge(people, on=["case_id", "turn", "check"], suffixes=("_heuristic", "_people"))
fig = px.scatter(
    side, x="value_people", y="value_heuristic", color="check", hover_data=["case_id", "note"],
    title="Heuristic judge vs reference labels (1-5)", range_x=[0.5, 5.5], range_y=[0.5, 5.5],
    labels={"value_people": "reference label (people)", "value_heuristic": "heuristic judge score"},
)
fig.add_shape(type="line", x0=1, y0=1, x1=5, y1=5, line={"dash": "dot", "color": "grey"})
fig.update_traces(marker={"size": 12, "opacity": 0.7})"""),
    md("""
Where they disagree is instructive (points on the dotted line agree; several labels share a point, hover
for them). The heuristic's Relevance is the share of the question's words found in the answer, so an
on-topic answer in other words scores low: to "I spent $55 on dinner on a business trip. Is that okay?" the
previous version's answer about the $40 allowance and the manager's approval, which people rated 4, gets 1.
An answer that repeats the question scores high whatever it says. Its Coherence rewards surface structure.
These blind spots are listed in `help(evalnb.judges.HeuristicJudge)`.
"""),
    code(
        """side.assign(gap=side["value_heuristic"] - side["value_people"]).sort_values("gap")[["case_id", "check", "value_people", "value_heuristic", "note"]]"""
    ),
    md("""
## Re-scoring with another judge

`evalnb.rescore(result, judge=...)` scores the judged checks again on the answers already in the result; the
agent is not called. Here the second judge is a plain Python function, a deliberately naive rule that
prefers short answers. It is clearly not a language model (its scores say `callable:concise_judge`); the point
is the workflow: any candidate judge is measured the same way.
"""),
    code("""
import json
import re

def concise_judge(prompt: str) -> str:
    \"\"\"Score 1-5 by length of the response block of the judge prompt: shorter is better.\"\"\"
    m = re.search(r"<<<DATA response id=(\\w+)>>>\\n(.*?)\\n<<<END DATA response id=\\1>>>", prompt, re.S)
    words = len((m.group(2) if m else "").split())
    score = 5 if words <= 25 else 4 if words <= 40 else 3 if words <= 60 else 2
    return json.dumps({"score": score, "reason": f"{words} words"})

concise = {v: evalnb.rescore(r, judge=concise_judge) for v, r in results.items()}
concise["current"].scores[concise["current"].scores["judge"].notna()][["case_id", "check", "value", "reason", "judge"]].head()"""),
    code("""
table = pd.concat(
    {
        "heuristic": evalnb.judges.agreement(heuristic_scores, people).set_index("check"),
        "concise_judge": evalnb.judges.agreement(pooled({v: r.scores for v, r in concise.items()}), people).set_index("check"),
    },
    names=["judge"],
).reset_index()
table"""),
    code("""evalnb.plots.agreement(table)  # share of scores identical to the labels; n pairs on each bar"""),
    md("""
## The labelled pairs: calibrating the embedding judge, measuring it on held-out pairs

`evalnb/examples/labels/pairs.csv` holds 320 judged pairs over 29 questions (handbook questions and general ones), with
answers of deliberately varied quality: exact, paraphrases sharing few words, partial, fluent but wrong,
related, echoes of the question, off-topic, refusals. They were labelled by **one labeller, an AI coding
assistant, not a person**, following rules written down before labelling (`evalnb/examples/labels/RULES.md`), with no
second labeller and no adjudication. Each row is `fit` or `test`, fixed by a rule before any judge ran.
"""),
    code("""
from evalnb.judges.labels import compare_judges, markdown_table, read_pairs

pairs = read_pairs()
pairs.groupby(["check", "split"]).size().unstack()"""),
    md("""
The embedding judge maps one number per pair onto 1-5 by four cut points. For Relevance the number is the
cosine of the answer's and the question's embeddings, and the cuts are fitted on the `fit` rows of these
labels: the placement with the highest quadratic kappa. For Similarity the number is the cosine of the answer
and the expected response with the question's words taken out of both, and its cuts are fitted on people's
grades, not on these labels: the 5,749 pairs of the STS Benchmark train split (`data/public/` of the
repository), each graded 0-5 by several annotators, placed on the rubric's levels. A level is a monotone
function of the cosine, so the judge keeps its model's ranking; the facts of the expected response
(`evalnb.judges.facts`: a number with its unit, a name, the yes or no) only cap the level at 2 when the answer
contradicts one ("$60 a day" for "$40 a day"). The cuts ship as data in `evalnb/judges/offline/calibration.json`
and are not refitted at run time; `python -m evalnb.judges.offline.fitting --check`
confirms the file is a refit. Here are the project's `fit` pairs against the cuts: each dot a pair, the
lines the cuts (Similarity's from people's STS grades, Relevance's from these labels).
"""),
    code("""
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evalnb.judges.offline import load_calibration, read
from evalnb.judges.offline.fitting import fit

calibration = load_calibration()
assert fit(pairs).cuts == calibration.cuts  # the shipped cuts are a refit (STS train; the fit half)
fig = make_subplots(rows=1, cols=2, subplot_titles=("Similarity (cuts from STS train)", "Relevance (cuts from the fit half)"))
for col, check in enumerate(("Similarity", "Relevance"), start=1):
    rows = pairs[(pairs["split"] == "fit") & (pairs["check"] == check)]
    measure = [r.value for r in read(check, list(rows["answer"]), questions=list(rows["question"]),
                                     expecteds=list(rows["expected"]))]
    fig.add_trace(go.Scatter(x=measure, y=rows["value"] + (rows.index % 5 - 2) * 0.04, mode="markers",
                             text=rows["kind"], name=check, marker={"opacity": 0.6}), row=1, col=col)
    for cut in calibration.cuts[check]:
        if cut is not None and cut > -1:
            fig.add_vline(x=cut, line={"dash": "dot", "color": "grey"}, row=1, col=col)
fig.update_xaxes(title_text="Similarity: cosine, the question's words taken out", row=1, col=1)
fig.update_xaxes(title_text="Relevance: cosine of the embeddings", row=1, col=2)
fig.update_yaxes(title_text="label (1-5)", range=[0.5, 5.5])
fig.update_layout(showlegend=False, title="Calibration: labels against the judge's measure, and the fitted cut points")
print({check: cuts for check, cuts in calibration.cuts.items()})
fig"""),
    md("""
The held-out report: both offline judges on the `test` half only, with 95% bootstrap intervals over pairs.
"""),
    code("""
held_out = compare_judges(pairs=pairs)
print(markdown_table(held_out))
held_out[["judge", "check", "n", "exact", "kappa", "kappa_low", "kappa_high", "spearman"]]"""),
    code("""
import plotly.express as px

px.bar(held_out, x="check", y="kappa", color="judge", barmode="group",
       error_y=held_out["kappa_high"] - held_out["kappa"], error_y_minus=held_out["kappa"] - held_out["kappa_low"],
       title="Quadratic kappa with the labels, held-out pairs (95% bootstrap intervals)")"""),
    md("""
On Relevance the embedding judge's kappa is 0.44 against the heuristic's 0.21: it reads meaning where the
heuristic counts the question's words. On Similarity it is 0.41 against 0.30: its cuts come from people's
grades of other sentences, and these labels' paraphrases were written to share few words, which the
wordllama model hears as further apart than people do. Two kappas with their own intervals overlap even when
one judge wins on almost every resample; the paired bootstrap of the gain (both judges resampled on the same
pairs) says by how much one is better:
"""),
    code("""
from evalnb.judges.labels import kappa_gains

kappa_gains(pairs=pairs).query("check in ['Similarity', 'Relevance']").round(2)"""),
    md("""
Relevance gains about 0.2, Similarity about 0.1; neither interval is clear of zero with 57 and 61 pairs.
Where the Similarity judge goes wrong on these pairs is plain in the table below: a wrong fact the rules do not
read ("ahead" for "behind", `--hard` for `--soft`) sits as close as a paraphrase, and a paraphrase in other
words can fall below the pass level.
"""),
    code("""
from evalnb.judges import EmbeddingJudge
from evalnb.judges.labels import judge_pairs, labels_frame

test = pairs[pairs["split"] == "test"]
scored = judge_pairs(test, EmbeddingJudge()).scores
side = scored.merge(labels_frame(test), on=["case_id", "turn", "check"], suffixes=("_judge", "_label"))
side.assign(error=(side["value_judge"] - side["value_label"]).abs()).groupby(["check", "kind"])["error"].mean().unstack(0).round(2)"""),
    md("""
## Against people nobody here asked: the STS Benchmark test split

The project's labels are one labeller's. The STS Benchmark's test split (1,379 sentence pairs, each graded
0-5 by several people; Cer et al., SemEval-2017) took part in no fit and no choice. Run through the public API
as any suite: the first sentence is the expected response, the second the answer, a neutral prompt.
"""),
    code("""
from pathlib import Path

import pandas as pd

# Tab-separated, unquoted (sentences hold quotes); some lines carry two more fields (their sources).
lines = (Path("..") / "data" / "public" / "stsbenchmark" / "sts-test.csv").read_text(encoding="utf-8").splitlines()
sts = pd.DataFrame([line.split("\\t")[4:7] for line in lines], columns=["grade", "expected", "answer"])
sts = sts.astype({"grade": float}).assign(id=[f"sts-{i:04d}" for i in range(len(sts))], prompt="Paraphrase.")
answers = dict(zip(sts["id"], sts["answer"]))
sts_suite = evalnb.from_frame(sts, checks=["Similarity"], name="sts-test")
sts_result = evalnb.run(sts_suite, lambda request: answers[request.case], judge="embedding", progress=False)
judged = sts_result.scores.set_index("case_id").loc[sts["id"]]
sts = sts.assign(level=judged["value"].to_numpy(), weighted=judged["weighted"].to_numpy())
print("Spearman with people, 1-5 levels:", round(sts["grade"].corr(sts["level"], method="spearman"), 3))
print("Spearman with people, continuous:", round(sts["grade"].corr(sts["weighted"], method="spearman"), 3))
sts["people"] = pd.cut(sts["grade"], [-0.1, 0.5, 2.5, 3.5, 4.5, 5.0], right=False,
                       labels=["0-0.5", "0.5-2.5", "2.5-3.5", "3.5-4.5", "4.5-5"]).astype(str)
sts.loc[sts["grade"] == 5.0, "people"] = "4.5-5"
fig = px.box(sts.sort_values("grade"), x="people", y="weighted", points="outliers",
             labels={"people": "people's grade (0-5)", "weighted": "embedding judge, continuous score (1-5)"},
             title="STS Benchmark test: the offline judge's score per band of people's grades")
fig.add_hline(y=3, line={"dash": "dot", "color": "grey"}, annotation_text="passes at 3")
fig"""),
    md("""
The judge's score climbs with people's grades (Spearman about 0.76 on the levels, as the plain cosine of the
same model), but the boxes overlap: between "roughly equivalent" (2.5-3.5) and "mostly equivalent"
(3.5-4.5) a pair's score says little, and a wrong detail that is not a fact the rules read goes unnoticed.
The README's table "How far the offline judges agree" has the same figures for STS dev, SICK and WikiQA.
Neither offline judge is good enough to gate a release on its own; they are cheap smoke tests. For decisions,
use a model judge and measure it the same way (`evalnb.judges.labels.measure(judge)`).

## Probability-weighted scores

A model judge that writes one integer flips between neighbouring scores from run to run. When the endpoint
returns token probabilities, `OpenAIJudge` reads the whole distribution of the score token: `weighted` is
`sum p(k) * k` over 1-5 (as G-Eval does) and `spread` its SD, both in `result.scores`; `value` keeps the
written score and the pass decision uses the weighted one. Any judge can supply them: here a function plays a
judge that is torn between 2 and 3.
"""),
    code("""
import math
from evalnb.judges import CallableJudge, JudgeReply

def torn_judge(prompt: str) -> JudgeReply:
    probs = {2: 0.45, 3: 0.55}
    tokens = [{"token": '{"score": ', "logprob": 0.0, "top_logprobs": []},
              {"token": "3", "logprob": math.log(0.55),
               "top_logprobs": [{"token": str(k), "logprob": math.log(p)} for k, p in probs.items()]},
              {"token": ', "reason": "torn"}', "logprob": 0.0, "top_logprobs": []}]
    return JudgeReply(text="".join(t["token"] for t in tokens), logprobs=tokens)

torn = evalnb.rescore(results["current"], judge=CallableJudge(torn_judge))
torn.scores[torn.scores["judge"].notna()][["case_id", "check", "value", "weighted", "spread", "passed", "reason"]].head(4)"""),
    md("""
The written 3 passes the threshold of 3; the weighted 2.55 does not. Against the local test server playing an
unsteady judge (each answer judged 20 times; `benchmarks/judge_stability.py` makes this figure), the run-to-run
SD of the score falls from 0.62 to 0.10 on average.
"""),
    code("""
from IPython.display import Image

Image(filename=str(ROOT / "docs" / "images" / "judge-stability.png"))"""),
    md("""

## A real model as the judge

Point `OpenAIJudge` at any OpenAI-compatible endpoint: a local Ollama (`http://127.0.0.1:11434/v1`), vLLM or
llama.cpp server, or OpenAI itself. The next cell runs only when `EVALNB_JUDGE_BASE_URL` is set (and
`EVALNB_JUDGE_MODEL`, plus `OPENAI_API_KEY` if the server needs one); otherwise it says so and does nothing.
Answers are cached in `.evals/cache/` under the notebook's working folder, so re-running costs nothing.
"""),
    code("""
import os

base_url = os.environ.get("EVALNB_JUDGE_BASE_URL")
if base_url:
    model_judge = evalnb.judges.OpenAIJudge(os.environ.get("EVALNB_JUDGE_MODEL", "llama3.1"), base_url=base_url)
    by_model = {v: evalnb.rescore(r, judge=model_judge) for v, r in results.items()}
    display(evalnb.judges.agreement(pooled({v: r.scores for v, r in by_model.items()}), people))
else:
    print("EVALNB_JUDGE_BASE_URL is not set: no model judge in this run (nothing was sent anywhere).")"""),
]

NOTEBOOKS = {
    "01-quickstart.ipynb": QUICKSTART,
    "02-compare-versions.ipynb": COMPARE,
    "03-analytics-agent.ipynb": ANALYTICS,
    "04-llm-judges.ipynb": JUDGES,
}


def build(folder: Path = HERE) -> list[Path]:
    """Write every notebook (without outputs) into ``folder``; returns the paths."""
    out = []
    for name, cells in NOTEBOOKS.items():
        nb = new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nb.metadata["language_info"] = {"name": "python"}
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"{name[:2]}-{i:02d}"  # stable ids: rebuilding changes nothing
        path = folder / name
        nbformat.validate(nb)
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
        out.append(path)
    return out


if __name__ == "__main__":
    for p in build():
        print("wrote", p.relative_to(HERE.parent))
