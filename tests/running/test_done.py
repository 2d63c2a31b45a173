"""What a run keeps of the case runs that finished: a set of (case id, run) keys, a bit per case run."""

from __future__ import annotations

from evalnb.running._done import Finished


def test_finished_answers_as_a_set_of_keys_does() -> None:
    done = Finished({"a": 0, "b": 1}, [("a", 1)])
    for key in [("b", 0), ("b", 0), ("b", 9), ("zz", 0), ("a", 7)]:
        done.add(key)
    assert len(done) == 5
    assert set(done) == {("a", 1), ("b", 0), ("b", 9), ("zz", 0), ("a", 7)}
    assert ("b", 0) in done and ("a", 0) not in done and ("zz", 1) not in done and "a" not in done


def test_a_suites_own_case_runs_take_a_byte_per_case_not_an_entry_per_key() -> None:
    positions = {f"c{i}": i for i in range(1000)}
    done = Finished(positions, ((f"c{i}", r) for i in range(1000) for r in range(3)))
    assert len(done) == 3000 and not done._other  # every key went to the bits: no tuple is held
    assert len(done._bits) == 1000
