"""Replay summaries on exact rows: asking again is counted apart from a wrong answer."""

from eval.report import summarize


def row(case_id: str, correct: bool, expect_abstain: bool = False, outcome: str = "answered") -> dict:
    return {"id": case_id, "correct": correct, "expect_abstain": expect_abstain, "agent_outcome": outcome}


def test_what_callers_got_is_split_into_right_asked_again_and_wrong():
    rows = [row("a", True), row("b", False, outcome="asked again"), row("c", False),
            row("d", True, expect_abstain=True, outcome="declined"),
            row("e", False, expect_abstain=True, outcome="asked again")]
    summary = summarize(rows)
    assert summary["in_kb"] == {"right": 1, "asked_again": 1, "wrong": 1}
    assert summary["out_of_kb"] == {"right": 1, "asked_again": 1, "wrong": 0}
    assert summary["asked_again"] == 2 and summary["accuracy"] == round(1 / 3, 4)
