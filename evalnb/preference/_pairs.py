"""What two Results have in common to be judged side by side: one :class:`Pair` per case x turn x run.

docs/comparison.md, pairwise: a pair is a case, a turn and a run that both versions answered (runs are paired by
their number); a turn whose prompt differs between the versions, or that one side did not answer (an agent
error, a skipped turn), is left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Pair", "Pairs", "pairs_of"]


@dataclass(frozen=True)
class Pair:
    """One turn both versions answered.

    Attributes:
        case_id: the case.
        turn: the turn (0-based).
        run: the run (0-based; run ``i`` of one version is paired with run ``i`` of the other).
        prompt: what the agents were asked.
        a: version a's answer.
        b: version b's answer.
        expected: the expected answer, when the suite has one.
        history: the messages the suite writes before this prompt (``{role, content}``).
        earlier: the earlier turns of the conversation: ``(prompt, a's answer, b's answer)`` each.
        case_name: the case's name.
        category: the case's category.
    """

    case_id: str
    turn: int
    run: int
    prompt: str
    a: str
    b: str
    expected: str | None = None
    history: tuple[Mapping[str, str], ...] = ()
    earlier: tuple[tuple[str, str, str], ...] = ()
    case_name: str | None = None
    category: str | None = None


@dataclass
class Pairs:
    """The pairs of two Results, and what was left out (``case_id, turn, run, why``)."""

    items: list[Pair]
    left_out: list[dict[str, Any]] = field(default_factory=list)
    suite: str | None = None


def _text(v: Any) -> str | None:
    import pandas as pd

    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return None
    return str(v)


def _answers(result: Any) -> dict[tuple[str, int, int], dict[str, Any]]:
    """``(case_id, turn, run)`` -> the row's prompt, expected answer, answer (None when none was obtained)."""
    runs = getattr(result, "runs", None)
    if runs is None:
        raise TypeError(
            f"pairwise compares two evalnb Results, not {type(result).__name__}; for two stored versions use "
            "store.pairwise('v1', 'v2', judge=...)"
        )
    out: dict[tuple[str, int, int], dict[str, Any]] = {}
    cols = [
        c
        for c in (
            "case_id",
            "turn",
            "run",
            "prompt",
            "expected",
            "response",
            "stdout",
            "error",
            "status",
            "case_name",
            "category",
        )
        if c in runs.columns
    ]
    for row in runs[cols].itertuples(index=False):
        r = dict(zip(cols, row, strict=True))
        answer = _text(r.get("response"))
        if not answer:
            # Command agents may print their answer instead of returning a result text (as the judged checks
            # read it).
            answer = _text(r.get("stdout")) or answer
        status = _text(r.get("status"))
        if _text(r.get("error")) is not None or status == "skipped":
            answer = None
        key = (str(r["case_id"]), int(r["turn"]), int(r["run"]))
        out[key] = {
            "prompt": _text(r.get("prompt")) or "",
            "expected": _text(r.get("expected")),
            "answer": answer,
            "case_name": _text(r.get("case_name")),
            "category": _text(r.get("category")),
        }
    return out


def _file_history(result: Any, case_id: str, turn: int) -> tuple[Mapping[str, str], ...]:
    suite = getattr(result, "suite", None)
    for case in getattr(suite, "cases", None) or ():
        if str(case.id) == case_id and turn < len(case.turns):
            return tuple({"role": m.role, "content": m.content} for m in case.turns[turn].history)
    return ()


def pairs_of(a: Any, b: Any) -> Pairs:
    """Every case x turn x run both Results answered, in a's order, with what each side answered before."""
    ra, rb = _answers(a), _answers(b)
    items: list[Pair] = []
    left: list[dict[str, Any]] = []
    for key, x in ra.items():
        case_id, turn, run = key
        y = rb.get(key)
        why = None
        if y is None:
            why = "b did not run it"
        elif x["prompt"] != y["prompt"]:
            why = "the prompt differs between the versions"
        elif x["answer"] is None or y["answer"] is None:
            why = "no answer from " + (
                "a and b"
                if x["answer"] is None and y["answer"] is None
                else "a"
                if x["answer"] is None
                else "b"
            )
        if why is not None:
            left.append({"case_id": case_id, "turn": turn, "run": run, "why": why})
            continue
        assert y is not None
        earlier = []
        for t in range(turn):
            pa, pb = ra.get((case_id, t, run)), rb.get((case_id, t, run))
            if pa is not None and pb is not None:
                earlier.append((pa["prompt"], pa["answer"] or "", pb["answer"] or ""))
        items.append(
            Pair(
                case_id=case_id,
                turn=turn,
                run=run,
                prompt=x["prompt"],
                a=x["answer"],
                b=y["answer"],
                expected=x["expected"] if x["expected"] is not None else y["expected"],
                history=_file_history(a, case_id, turn),
                earlier=tuple(earlier),
                case_name=x["case_name"],
                category=x["category"],
            )
        )
    for key in rb:
        if key not in ra:
            left.append({"case_id": key[0], "turn": key[1], "run": key[2], "why": "a did not run it"})
    suite = getattr(getattr(a, "suite", None), "name", None) or getattr(
        getattr(b, "suite", None), "name", None
    )
    return Pairs(items=items, left_out=left, suite=suite)
