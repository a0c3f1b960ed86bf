"""The end of a turn by what was said (pure): the verdict on a speculative transcript, and the hangover a call's
policy gives it."""

import pytest

from agent.call.listening.endpointing import EndpointConfig, Endpointer, Verdict, judge

CONFIG = EndpointConfig(default_ms=512, short_ms=224, long_ms=1216)


@pytest.mark.parametrize("text", ["How much is the annual service?", "Do you take cheques?",
                                  "I think I can smell gas in my kitchen."])
def test_a_closed_question_the_kb_answers_firmly_is_complete(text):
    assert judge(text, firm=True) is Verdict.COMPLETE


def test_a_closed_question_the_kb_does_not_answer_firmly_keeps_the_default():
    assert judge("Do you fix washing machines?", firm=False) is Verdict.UNSURE


@pytest.mark.parametrize("text", ["How much does the", "Can I pay by", "Can I pay by...", "What about my,",
                                  "I was wondering, um", "Is it open on Saturdays and"])
def test_a_question_that_stops_mid_phrase_is_unfinished_however_the_kb_matches_it(text):
    assert judge(text, firm=True) is Verdict.UNFINISHED


@pytest.mark.parametrize("text", ["And if it takes longer than that?", "Is there a discount for people over 65?",
                                  "How long are repairs covered for?", "Who do I speak to?"])
def test_a_closed_question_ending_on_a_pronoun_a_number_or_a_stranded_preposition_is_complete(text):
    assert judge(text, firm=True) is Verdict.COMPLETE


@pytest.mark.parametrize("text", ["Can I pay by?", "Can I book that", "Is there a discount for people over",
                                  "How long are repairs covered for"])
def test_without_a_closing_mark_or_a_wh_word_those_endings_still_leave_it_open(text):
    assert judge(text, firm=True) is Verdict.UNFINISHED


def test_a_closed_question_ending_on_a_demonstrative_the_kb_does_not_answer_firmly_is_left_open():
    assert judge("How much does that?", firm=False) is Verdict.UNFINISHED  # Whisper's close of "How much does the"


@pytest.mark.parametrize("text", ["Yes, that's right", "No", "nope, not that,"])
def test_a_short_yes_or_no_to_the_agents_question_is_complete_however_it_was_punctuated(text):
    assert judge(text, firm=False, yes_or_no_asked=True) is Verdict.COMPLETE
    assert judge(text, firm=False) is not Verdict.COMPLETE  # unasked, it is judged like any words


def test_nothing_heard_is_not_judged():
    assert judge("", firm=False) is Verdict.UNSURE


def test_the_hangover_follows_the_verdict():
    endpointer = Endpointer(CONFIG)
    assert [endpointer.hangover_ms(v) for v in Verdict] == [224, 1216, 512]


def test_a_caller_who_paused_mid_question_is_never_cut_short_again():
    endpointer = Endpointer(CONFIG)
    endpointer.resumed(96)  # a breath, shorter than the short silence: nothing learned
    assert endpointer.hangover_ms(Verdict.COMPLETE) == 224
    endpointer.resumed(480)
    assert endpointer.pauses_mid_question == 1
    assert [endpointer.hangover_ms(v) for v in Verdict] == [512, 1216, 1216]


def test_turned_off_every_turn_waits_the_default():
    endpointer = Endpointer(EndpointConfig(enabled=False))
    endpointer.resumed(800)
    assert [endpointer.hangover_ms(v) for v in Verdict] == [512, 512, 512] and endpointer.pauses_mid_question == 0


def test_talking_over_an_answer_just_after_the_turn_ended_is_a_cut_off_and_is_learned():
    endpointer = Endpointer(CONFIG)
    assert not endpointer.talked_over(900)  # long after: a barge-in, a reaction to the answer
    assert endpointer.talked_over(400) and endpointer.cut_offs == 1
    assert endpointer.hangover_ms(Verdict.COMPLETE) == 512  # not cut short again
    assert not Endpointer(EndpointConfig(enabled=False)).talked_over(100)  # turned off: every one a barge-in
