"""The call core's confirmations, turn by turn: "Are you asking about …?" answered yes, no, unclearly, or with the
question said again. No models, no sockets."""

from agent.call.commands import Action, Clarified, Confirm, Interrupt, Phrase, Say, SpeakReply, TurnOutcome
from tests.call.test_core import ENDED, STARTED, answered, heard


def test_a_confirmed_topic_is_answered_with_the_reply_prepared_before_the_yes():
    call = answered()
    assert heard(call, "Do you do power flashes?", Action.CONFIRM, chunks=["c7"], reply="power flush reply") == \
        (TurnOutcome.CONFIRMING, [Confirm("power flush reply")])
    assert call.clarified == Clarified(confirmed=True)
    assert heard(call, "Yes, that's right.", Action.ANSWER, abstained=True, reply="the yes's own reply") == \
        (TurnOutcome.CONFIRMED, [SpeakReply("power flush reply", confirmed=True)])
    assert call.clarified == Clarified()


def test_a_yes_or_no_is_awaited_only_between_a_confirmation_and_its_answer():
    call = answered()
    assert not call.yes_or_no_asked
    heard(call, "Do you do power flashes?", Action.CONFIRM, chunks=["c7"])
    assert call.yes_or_no_asked
    heard(call, "Yes.")
    assert not call.yes_or_no_asked


def test_a_refused_topic_is_asked_again_and_not_offered_again():
    call = answered()
    heard(call, "Do you fit air conditioning?", Action.CONFIRM, chunks=["c7"])
    assert heard(call, "No.", Action.ANSWER, abstained=True) == (TurnOutcome.NOT_CONFIRMED, [Say(Phrase.NOT_THAT)])
    assert call.clarified == Clarified(asked_again=True, confirmed=True, rejected=frozenset({"c7"}))


def test_the_topic_offered_after_a_no_is_the_last_one_offered():
    call = answered()
    heard(call, "Do you fit air conditioning?", Action.CONFIRM, chunks=["c7"])
    heard(call, "No.", Action.ANSWER, abstained=True)
    assert heard(call, "Do you fit air conditioning?", Action.CONFIRM, chunks=["c8"])[0] is TurnOutcome.CONFIRMING
    assert call.clarified.reoffered and not call.clarified.may_confirm
    heard(call, "No.", Action.ANSWER, abstained=True)
    assert call.clarified.rejected == frozenset({"c7", "c8"})


def test_a_cough_does_not_answer_a_confirmation_and_the_question_said_again_is_a_question():
    call = answered()
    heard(call, "Do you do power flashes?", Action.CONFIRM, chunks=["c7"], reply="power flush reply")
    assert heard(call, "", None) == (TurnOutcome.IGNORED, [])
    assert heard(call, "Yes.") == (TurnOutcome.CONFIRMED, [SpeakReply("power flush reply", confirmed=True)])
    heard(call, "Do you do power flashes?", Action.CONFIRM, chunks=["c7"])
    assert heard(call, "Do you do power flushes?") == (TurnOutcome.ANSWERED, [SpeakReply()])


def test_a_bare_word_that_is_neither_yes_nor_no_is_asked_again_with_the_confirmation_kept_open():
    call = answered()
    heard(call, "Who is the chief executive of the company?", Action.CONFIRM, chunks=["c7"])
    # "No." heard as "Nel,": answered from the call's context it would be a guess.
    assert heard(call, "Nel,") == (TurnOutcome.ASKED_AGAIN, [Say(Phrase.ASK_AGAIN)])
    assert call.yes_or_no_asked
    assert heard(call, "No.", abstained=True) == (TurnOutcome.NOT_CONFIRMED, [Say(Phrase.NOT_THAT)])


def test_the_question_said_again_in_the_same_words_has_its_confirmation_named_once_more_then_declined():
    call = answered()
    heard(call, "How much does it cost?", Action.CONFIRM, chunks=["c7"], reply="certificate reply")
    # Said again, it would need a second confirmation: understood, it is declined (the shell's reply says so).
    assert heard(call, "How much does it cost", Action.ANSWER, abstained=True, reply="decline") == \
        (TurnOutcome.CONFIRMING, [Confirm("certificate reply")])
    assert heard(call, "Yes.") == (TurnOutcome.CONFIRMED, [SpeakReply("certificate reply", confirmed=True)])


def test_the_question_said_again_a_second_time_is_declined():
    call = answered()
    heard(call, "How much does it cost?", Action.CONFIRM, chunks=["c7"], reply="certificate reply")
    heard(call, "How much does it cost?", Action.ANSWER, abstained=True)
    assert heard(call, "How much does it cost?", Action.ANSWER, abstained=True, reply="decline") == \
        (TurnOutcome.ANSWERED, [SpeakReply("decline")])


def test_a_second_unclear_reply_to_one_confirmation_asks_for_the_question():
    call = answered()
    heard(call, "Do you do power flashes?", Action.CONFIRM, chunks=["c7"])
    heard(call, "Nel,")
    assert heard(call, "Hmm.") == (TurnOutcome.NOT_CONFIRMED, [Say(Phrase.NOT_THAT)])
    assert not call.yes_or_no_asked and call.clarified.asked_again
    assert call.clarified.rejected == frozenset()  # never heard as a no


def test_a_yes_the_caller_goes_on_with_is_heard_whole_as_the_answer_to_the_same_confirmation():
    call = answered()
    heard(call, "Will you pick me up from college?", Action.CONFIRM, chunks=["c4"], reply="pick-up reply")
    call.turn(ENDED, agent_speaking=False)
    assert heard(call, "Yes,") == (TurnOutcome.CONFIRMED, [SpeakReply("pick-up reply", confirmed=True)])
    # "... that's right." came so soon after "Yes," that the answer begun is cut off and the two are heard as one.
    assert call.turn(STARTED, agent_speaking=True, cut_off=True) == [Interrupt(cut_off=True)]
    assert call.yes_or_no_asked and call.clarified == Clarified(confirmed=True)
    call.turn(ENDED, agent_speaking=False)
    assert heard(call, "Yes, that's right.") == (TurnOutcome.CONFIRMED, [SpeakReply("pick-up reply", confirmed=True)])
