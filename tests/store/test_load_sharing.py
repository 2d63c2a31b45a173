"""A stored run loads back without a copy of every repeated object: frames equal, objects shared."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import evalnb
from evalnb.suite import Case, ExactMatchCheck, PartialMatchCheck, RegexCheck, Suite, Turn


def test_a_loaded_run_shares_its_suite_s_objects_and_equals_the_run(tmp_path: Path) -> None:
    defaults = [ExactMatchCheck(), PartialMatchCheck(threshold=0.4)]
    suite = Suite(
        name="shared",
        format="dataset-json",
        cases=[
            Case(
                id=f"q{i}",
                name=f"question {i}",
                turns=[
                    Turn(
                        prompt=f"what is {i}?",
                        expected=f"answer {i}",
                        checks=[*defaults, RegexCheck(on="result", pattern=rf"\b{i}\b")],
                    )
                ],
            )
            for i in range(300)
        ],
    )

    async def agent(prompt: str) -> str:
        n = prompt.split()[-1].rstrip("?")
        return f"answer {n}" if int(n) % 7 else "no idea"

    result = evalnb.run(suite, agent, store=tmp_path / "runs.db", version="v1", progress=False)
    loaded = evalnb.Store(tmp_path / "runs.db").load("v1")
    for name in ("runs", "scores", "mismatches", "tool_calls"):
        pd.testing.assert_frame_equal(getattr(loaded, name), getattr(result, name), check_like=False)
    cases = loaded.suite.cases
    # equal check objects are one object again; different ones stay apart
    assert cases[0].turns[0].checks[0] is cases[299].turns[0].checks[0]
    assert cases[0].turns[0].checks[2] is not cases[1].turns[0].checks[2]
    assert loaded.suite.content_hash() == suite.content_hash()
    if loaded.runs["case_id"].dtype.storage != "python":
        # With pyarrow installed, pandas keeps text in Arrow buffers: there are no per-row objects to share.
        assert loaded.runs["case_id"].tolist() == result.runs["case_id"].tolist()
        return
    # the rows' ids and prompts are the suite's own strings
    by_id = {c.id: c for c in cases}
    row = loaded.runs.iloc[5]
    assert row["case_id"] is by_id[row["case_id"]].id
    assert row["prompt"] is by_id[row["case_id"]].turns[0].prompt
    score = loaded.scores.iloc[10]
    assert score["case_name"] is by_id[score["case_id"]].name
    # repeated text is one object per distinct value
    statuses = loaded.scores["status"].tolist()
    assert len({id(s) for s in statuses}) == len(set(statuses))
