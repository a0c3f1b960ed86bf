"""Asking for a person, and what a transfer's progress reports mean (pure)."""

import pytest

from agent.call.understanding.transfer import TransferResult, asks_for_person, transfer_result


@pytest.mark.parametrize("text", ["Can I speak to someone?", "I want to talk to a real person.", "Operator.",
                                  "Could you put me through to the office?", "Can I speak with a human being?",
                                  "Transfer me please", "Let me talk to a member of the team",
                                  "Is there a human I can talk to?", "Connect me to a representative"])
def test_asking_for_a_person_is_recognised(text):
    assert asks_for_person(text)


@pytest.mark.parametrize("text", ["Does someone need to be home for the service?", "What are your opening hours?",
                                  "Who is the chief executive of the company?", "Is your engineer registered?"])
def test_questions_that_mention_people_are_questions(text):
    assert not asks_for_person(text)


@pytest.mark.parametrize(("status", "final", "result"), [
    (100, False, TransferResult.PENDING), (202, False, TransferResult.PENDING), (180, False, TransferResult.PENDING),
    (200, True, TransferResult.ANSWERED), (486, True, TransferResult.FAILED), (603, False, TransferResult.FAILED),
    (180, True, TransferResult.FAILED)])
def test_progress_reports_decide_the_transfer(status, final, result):
    assert transfer_result(status, final) is result
