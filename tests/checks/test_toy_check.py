"""A check of one's own, in this one module: registered with the built-ins' signature, it sees what they see
(the request, the working directory) and is named by a dataset file's custom evaluator; nothing else changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import evalnb
from evalnb.checks import check, unregister


def test_a_check_in_one_module_runs_from_a_dataset(tmp_path: Path) -> None:
    @check("MentionsItsFile", needs={"workdir"}, options=("suffix",))
    def mentions_its_file(spec: Any, ctx: Any) -> tuple[float, bool, str]:
        # it sees the run's working directory and the request, as file_exists does
        names = sorted(p.name for p in ctx.workdir.iterdir() if p.name.endswith(spec.settings["suffix"]))
        hit = [n for n in names if n in (ctx.response.text or "")]
        return float(len(hit)), bool(hit), f"mentions {hit} of {names} (case {ctx.request.case})"

    dataset = {
        "schemaVersion": "1.2.0",
        "items": [
            {
                "name": "good",
                "prompt": "write notes",
                "evaluators": {"MentionsItsFile": {"options": {"suffix": ".md"}}},
            },
            {
                "name": "bad",
                "prompt": "write notes",
                "evaluators": {"MentionsItsFile": {"options": {"suffix": ".md"}}},
            },
        ],
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(dataset))

    def agent(request: evalnb.Request) -> str:
        (request.workdir / "notes.md").write_text("# notes")
        return "I wrote notes.md" if request.case == "good" else "I wrote something"

    try:
        result = evalnb.run(path, agent, progress=False)
    finally:
        unregister("MentionsItsFile")
    scores = result.scores[result.scores["check"] == "MentionsItsFile"].set_index("case_id")
    assert scores.loc["good", "passed"] and not scores.loc["bad", "passed"]
    assert scores.loc["good", "reason"] == "mentions ['notes.md'] of ['notes.md'] (case good)"
    assert json.loads(scores.loc["good", "options"])["settings"] == {"suffix": ".md"}
