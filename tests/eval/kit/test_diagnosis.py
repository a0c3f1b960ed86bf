"""The agent's record joined to the caller's steps: a turn the agent took back goes with the question's whole turn."""

from eval.kit.diagnosis import join_agent_record


def turn(outcome: str, transcript: str, answer: str) -> dict:
    return {"outcome": outcome, "transcript": transcript, "answer": answer, "started": 0.0, "hearing": {}}


def test_a_cut_off_half_question_and_its_whole_turn_are_one_step():
    turns = [turn("cut off", "Is there a charge?", "Parts are charged separately."),
             turn("answered", "Is there a charge if I cancel on the same day?", "A late cancellation costs $40."),
             turn("answered", "And by card?", "We take cards.")]
    rows = [{"steps": [0], "correct": True}, {"steps": [1], "correct": True}]
    join_agent_record(rows, turns)
    assert rows[0]["agent_outcomes"] == ["cut off", "answered"]
    assert rows[0]["agent_heard"] == "Is there a charge if I cancel on the same day?"
    assert rows[0]["agent_answer"] == "A late cancellation costs $40."
    assert rows[1]["agent_answer"] == "We take cards."


def test_a_call_that_ended_on_a_cut_off_turn_keeps_it():
    rows = [{"steps": [0], "correct": True}]
    join_agent_record(rows, [turn("cut off", "Can I pay", "We take cards.")])
    assert rows[0]["agent_outcomes"] == ["cut off"] and rows[0]["agent_heard"] == "Can I pay"


def test_every_exchange_of_a_case_is_kept_with_what_was_heard_and_said():
    rows = [{"steps": [0, 1, 2], "correct": True}]
    join_agent_record(rows, [turn("confirming", "I can smell grass", "Are you asking about gas?"),
                             turn("not confirmed", "No.", "Sorry, please say it again."),
                             turn("answered", "I can smell gas", "Leave the building.")])
    assert [(e["outcome"], e["heard"], e["said"]) for e in rows[0]["agent_exchanges"]] == [
        ("confirming", "I can smell grass", "Are you asking about gas?"),
        ("not confirmed", "No.", "Sorry, please say it again."),
        ("answered", "I can smell gas", "Leave the building.")]


def test_the_latency_is_split_by_the_agents_record_of_the_turn_that_heard_the_whole_question():
    # The first half was answered and taken back (its turn ended 1.2 s before the question did); the whole
    # question's turn is the one whose reply the latency measures.
    cut = {**turn("cut off", "Is there a charge?", "Parts are charged separately."), "started": 99.3,
           "latencies_ms": {"endpointing_ms": 224.0, "response_ms": 300.0}}
    whole = {**turn("answered", "Is there a charge if I cancel?", "$40."), "started": 100.6,
             "latencies_ms": {"endpointing_ms": 512.0, "response_ms": 540.0}}
    rows = [{"steps": [0], "correct": True, "latency_ms": 700, "question_end_at": 100.0}]
    join_agent_record(rows, [cut, whole])
    assert (rows[0]["way_in_ms"], rows[0]["agent_ms"], rows[0]["way_out_ms"]) == (88, 540, 72)


def test_a_reply_to_part_of_the_question_is_not_split():
    part = {**turn("asked again", "How many days does fitting?", ""), "started": 99.3,
            "latencies_ms": {"endpointing_ms": 512.0, "response_ms": 520.0}}
    rows = [{"steps": [0], "correct": True, "latency_ms": 800, "question_end_at": 100.0}]
    join_agent_record(rows, [part])
    assert "way_in_ms" not in rows[0]


def test_without_the_callers_clock_the_latency_is_not_split():
    first = {**turn("answered", "Can I pay by card?", "We take cards."),
             "latencies_ms": {"endpointing_ms": 224.0, "response_ms": 300.0}}
    rows = [{"steps": [0], "correct": True, "latency_ms": 500}]
    join_agent_record(rows, [first])
    assert "way_in_ms" not in rows[0]
