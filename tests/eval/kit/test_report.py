"""Replay summaries on exact rows: asking again is counted apart from a wrong answer."""

from eval.kit.report import summarize


def row(case_id: str, correct: bool, expect_abstain: bool = False, outcome: str = "answered", **more) -> dict:
    return {"id": case_id, "correct": correct, "expect_abstain": expect_abstain, "agent_outcome": outcome, **more}


def test_what_callers_got_is_split_into_right_asked_again_and_wrong():
    rows = [row("a", True), row("b", False, outcome="asked again"), row("c", False),
            row("d", True, expect_abstain=True, outcome="declined"),
            row("e", False, expect_abstain=True, outcome="asked again")]
    summary = summarize(rows)
    assert summary["in_kb"] == {"right": 1, "asked_again": 1, "declined": 0, "wrong": 1}
    assert summary["out_of_kb"] == {"right": 1, "asked_again": 1, "declined": 0, "wrong": 0}
    assert summary["asked_again"] == 2 and summary["accuracy"] == round(1 / 3, 4)


def test_with_a_caller_who_repeats_and_confirms_the_first_try_and_the_outcome_are_told_apart():
    rows = [row("a", True, exchanges=["question"], agent_outcomes=["answered"]),
            row("b", True, exchanges=["question", "yes"], agent_outcomes=["confirming", "confirmed"]),
            row("c", False, abstained=True, exchanges=["question", "repeat"],
                agent_outcomes=["asked again", "answered"]),
            row("d", False, exchanges=["question"], agent_outcomes=["answered"], cause="answer"),
            row("e", True, expect_abstain=True, abstained=True, exchanges=["question", "no", "question"],
                agent_outcomes=["confirming", "not confirmed", "answered"])]
    summary = summarize(rows)
    assert summary["accuracy"] == 0.5 and summary["first_try_accuracy"] == 0.25
    assert summary["wrong_answers"] == 1  # d; c was declined, not answered wrongly
    assert summary["confirmations"] == 2 and summary["asked_again"] == 2
    assert summary["in_kb"] == {"right": 2, "asked_again": 0, "declined": 1, "wrong": 1}


def test_the_latency_split_is_summarised_over_the_cases_that_have_it():
    rows = [row("a", True, way_in_ms=60, agent_ms=450, way_out_ms=90),
            row("b", True, way_in_ms=80, agent_ms=512, way_out_ms=110), row("c", True)]
    summary = summarize(rows)
    assert (summary["way_in_p50_ms"], summary["agent_p50_ms"], summary["way_out_p50_ms"]) == (70.0, 481.0, 100.0)
    assert "way_in_p50_ms" not in summarize([row("c", True)])


def test_a_question_right_by_the_end_is_right_even_when_its_last_turn_was_a_confirmation():
    summary = summarize([row("a", True, outcome="confirming"), row("b", False, outcome="confirming")])
    assert summary["in_kb"] == {"right": 1, "asked_again": 1, "declined": 0, "wrong": 0}
