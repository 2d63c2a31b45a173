"""Runs one case whose answer (or judge answer) is 200 MB and prints the peak RSS and what was kept, as JSON.

    python big_answer.py callable STORE          # a callable agent answers 200 MB; the run is saved and exported
    python big_answer.py judge BASE_URL          # the judge at BASE_URL answers 200 MB (a streaming test server)

The peak is the ``ru_maxrss`` of a child this script starts from a lean parent (a process that has imported
nothing but the standard library): Linux carries a process's high-water mark across ``exec``, so a process
started straight from a large one (a pytest session of 600 MB) would report its parent's peak, not its own.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

SIZE = 200_000_000


def measured() -> None:
    import evalnb
    from evalnb.judges import OpenAIJudge
    from evalnb.suite import Case, JudgedMetricCheck, RegexCheck, Suite, Turn

    mode, where = sys.argv[1], sys.argv[2]
    if mode == "callable":
        check = RegexCheck(on="result", pattern="^x+")
        suite = Suite(
            name="big",
            format="tasks-toml",
            cases=[Case(id="c", name="c", turns=[Turn(prompt="p", checks=[check])])],
        )
        result = evalnb.run(suite, lambda prompt: "x" * SIZE, progress=False, store=where, version="v1")
        result.report()
        result.to_json(where + ".json")
        evalnb.Store(where).load("v1")
    else:
        check = JudgedMetricCheck(type="Relevance")
        suite = Suite(
            name="big",
            format="dataset-json",
            cases=[Case(id="c", name="c", turns=[Turn(prompt="p", checks=[check])])],
        )
        judge = OpenAIJudge("m", base_url=where, cache=False, retries=0, timeout=120)
        result = evalnb.run(suite, lambda prompt: "a short answer", judge=judge, progress=False)
    out = {
        "response": result.runs["response"].iloc[0][-120:],
        "response_chars": len(result.runs["response"].iloc[0]),
        "status": result.cases["status"].iloc[0],
        "reason": result.scores["reason"].iloc[0][:300],
    }
    print(json.dumps(out))


def main() -> None:
    if os.environ.get("EVALNB_BIG_ANSWER_CHILD") == "1":
        measured()
        return
    env = dict(os.environ, EVALNB_BIG_ANSWER_CHILD="1")
    child = subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env, capture_output=True, text=True)
    if child.returncode:
        sys.stderr.write(child.stderr)
        sys.exit(child.returncode)
    out = json.loads(child.stdout.strip().splitlines()[-1])
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # kilobytes on Linux
    out["lean_parent_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


if __name__ == "__main__":
    main()
