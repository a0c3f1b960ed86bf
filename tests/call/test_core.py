"""The call core, tick by tick: no models, no sockets, no clock but the one these tests hand it."""

import numpy as np

from agent.call.commands import (
    Action,
    Answer,
    Clarified,
    EndMessage,
    Goodbye,
    HangUp,
    Interrupt,
    Outcome,
    Phrase,
    RepeatLastReply,
    Say,
    SpeakReply,
    Speculate,
    StartMessage,
    Transfer,
    TurnOutcome,
)
from agent.call.core import CallCore, CallState
from agent.call.limits import CallLimits
from agent.call.listening.turns import SpeechEnded, SpeechPaused, SpeechStarted

AUDIO = np.zeros(1600, dtype=np.float32)
STARTED, PAUSED, ENDED = SpeechStarted(10), SpeechPaused(AUDIO, 40), SpeechEnded(AUDIO, 40, False, 500)
PERSON = "sip:reception@127.0.0.1:5080"


def core(inactivity_s=10.0, max_call_s=300.0, dead_call_s=5.0, transfer_digit="0", transfer_to=PERSON) -> CallCore:
    return CallCore(CallLimits(0.0, inactivity_s, max_call_s, dead_call_s), transfer_digit, transfer_to)


def heard(call: CallCore, words: str, action: Action | None = Action.ANSWER, *, abstained=False, chunks=(),
          reply=None):
    return call.heard(words, action=action, abstained=abstained, chunks=frozenset(chunks), reply=reply)


def answered(**settings) -> CallCore:
    """A call that has been greeted and is listening."""
    call = core(**settings)
    call.media_ready()
    call.tick(1.0, agent_speaking=False, last_caller_speech=0.0, rtp_packets=50)
    return call


def test_the_greeting_comes_once_when_media_flows_then_the_agent_listens():
    call = core()
    assert call.state is CallState.CONNECTING
    assert call.media_ready() == [Say(Phrase.GREETING)] and call.state is CallState.GREETING
    assert call.media_ready() == []  # a re-INVITE renegotiating media does not greet again
    call.tick(2.0, agent_speaking=True, last_caller_speech=0.0, rtp_packets=100)
    assert call.state is CallState.GREETING
    call.tick(3.0, agent_speaking=False, last_caller_speech=0.0, rtp_packets=150)
    assert call.state is CallState.LISTENING


def test_a_turn_is_prepared_during_the_pause_and_answered_when_it_ends():
    call = answered()
    assert call.turn(STARTED, agent_speaking=False) == []
    assert call.turn(PAUSED, agent_speaking=False) == [Speculate(PAUSED)]
    assert call.turn(ENDED, agent_speaking=False) == [Interrupt(), Answer(ENDED)]
    assert call.state is CallState.THINKING
    assert heard(call, "When are you open?") == (TurnOutcome.ANSWERED, [SpeakReply()])
    assert call.state is CallState.SPEAKING
    call.tick(5.0, agent_speaking=False, last_caller_speech=4.0, rtp_packets=250)
    assert call.state is CallState.LISTENING


def test_a_cough_is_not_answered():
    call = answered()
    call.turn(ENDED, agent_speaking=False)
    assert heard(call, "", None) == (TurnOutcome.IGNORED, [])


def test_a_question_not_heard_well_is_asked_again_until_it_is_answered():
    call = answered()
    assert heard(call, "When are you oven?", Action.ASK_AGAIN) == (TurnOutcome.ASKED_AGAIN, [Say(Phrase.ASK_AGAIN)])
    assert call.clarified == Clarified(asked_again=True)  # the repeat is prepared knowing it (see understand)
    assert heard(call, "When are you open?") == (TurnOutcome.ANSWERED, [SpeakReply()])
    assert call.clarified == Clarified()


def test_the_second_declined_question_brings_the_offer_of_a_message_and_a_yes_takes_it():
    call = answered()
    assert heard(call, "Do you sell pizza?", abstained=True) == (TurnOutcome.ANSWERED, [SpeakReply()])
    assert heard(call, "What is the weather?", abstained=True) == \
        (TurnOutcome.ANSWERED, [SpeakReply(), Say(Phrase.MESSAGE_OFFER)])
    assert heard(call, "Yes please.") == (TurnOutcome.MESSAGE_REQUESTED, [StartMessage()])
    assert call.state is CallState.TAKING_MESSAGE


def test_a_yes_means_a_message_only_right_after_the_offer():
    call = answered()
    heard(call, "Do you sell pizza?", abstained=True)
    heard(call, "What is the weather?", abstained=True)
    heard(call, "When are you open?")
    assert heard(call, "Yes please.") == (TurnOutcome.ANSWERED, [SpeakReply()])


def test_going_on_with_a_question_answered_too_soon_is_a_cut_off_not_a_barge_in():
    call = answered()
    assert call.turn(STARTED, agent_speaking=True, cut_off=True) == [Interrupt(cut_off=True)]
    assert call.state is CallState.LISTENING


def test_talking_over_the_agent_is_a_barge_in_and_talking_over_silence_is_not():
    call = answered()
    assert call.turn(STARTED, agent_speaking=True) == [Interrupt(barge_in=True)]
    assert call.state is CallState.LISTENING
    assert call.turn(STARTED, agent_speaking=False) == []


def test_a_hold_silences_the_agent_and_nothing_the_line_carries_counts_until_it_ends():
    call = answered()
    call.turn(ENDED, agent_speaking=False)
    assert call.hold(True) == [Interrupt()] and call.state is CallState.HELD
    assert call.hold(True) == []
    assert call.turn(ENDED, agent_speaking=False) == []
    assert call.dtmf("*", has_last_reply=True) == []
    assert call.hold(False) == [] and call.state is CallState.LISTENING  # the cut answer is not resumed


def test_star_repeats_the_last_answer_when_there_is_one():
    call = answered()
    assert call.dtmf("*", has_last_reply=False) == []
    assert call.dtmf("*", has_last_reply=True) == [Interrupt(), RepeatLastReply()]
    assert call.dtmf("5", has_last_reply=True) == []


def test_the_transfer_digit_transfers_once_at_a_time_and_a_failure_offers_a_message():
    call = answered()
    assert call.dtmf("0", has_last_reply=False) == [Interrupt(), Say(Phrase.TRANSFERRING), Transfer(PERSON)]
    assert call.state is CallState.TRANSFERRING
    assert call.dtmf("0", has_last_reply=False) == []  # already under way: "putting you through" plays on
    assert call.transfer_ended(answered=False) == [Say(Phrase.TRANSFER_FAILED)] and call.state is CallState.SPEAKING
    assert heard(call, "Yes.") == (TurnOutcome.MESSAGE_REQUESTED, [StartMessage()])


def test_a_transfer_answered_ends_the_call_as_transferred():
    call = answered()
    assert heard(call, "Can I speak to someone?") == \
        (TurnOutcome.TRANSFER_REQUESTED, [Say(Phrase.TRANSFERRING), Transfer(PERSON)])
    assert call.transfer_ended(answered=True) == [HangUp(Outcome.TRANSFERRED)]
    assert call.ended() is Outcome.TRANSFERRED  # the BYE that follows does not change it


def test_with_nobody_to_transfer_to_the_caller_is_told_so_and_offered_a_message():
    call = answered(transfer_to="")
    assert heard(call, "A real person please.") == (TurnOutcome.TRANSFER_REQUESTED, [Say(Phrase.NO_TRANSFER)])
    assert call.state is not CallState.TRANSFERRING
    assert heard(call, "Sure.") == (TurnOutcome.MESSAGE_REQUESTED, [StartMessage()])


def test_a_transfer_failing_during_a_hold_says_nothing_into_the_hold():
    call = answered()
    call.dtmf("0", has_last_reply=False)
    call.hold(True)
    assert call.transfer_ended(answered=False) == []
    call.hold(False)
    assert call.state is CallState.LISTENING


def test_while_a_message_is_taken_only_hash_counts_and_it_ends_the_message():
    call = answered()
    assert heard(call, "I'd like to leave a message") == (TurnOutcome.MESSAGE_REQUESTED, [StartMessage()])
    assert call.state is CallState.TAKING_MESSAGE
    assert call.turn(ENDED, agent_speaking=False) == []
    assert call.dtmf("0", has_last_reply=True) == []
    assert call.dtmf("*", has_last_reply=True) == []
    assert call.dtmf("#", has_last_reply=True) == [EndMessage("#")]
    call.message_ended()
    assert call.state is CallState.LISTENING


def test_the_caller_saying_goodbye_hears_the_goodbye_after_what_is_playing():
    call = answered()
    assert heard(call, "No, that's all, thanks. Goodbye.") == \
        (TurnOutcome.CALLER_SAID_GOODBYE, [Goodbye(Outcome.CALLER_SAID_GOODBYE, cut=False)])
    assert call.state is CallState.CLOSING
    # Closing: nothing more is decided, not even a limit.
    assert call.turn(ENDED, agent_speaking=False) == [] and call.dtmf("*", has_last_reply=True) == []
    assert call.tick(1000.0, agent_speaking=False, last_caller_speech=0.0, rtp_packets=50) == []
    assert heard(call, "When are you open?") == (TurnOutcome.INTERRUPTED, [])
    assert call.ended() is Outcome.CALLER_SAID_GOODBYE


def test_a_silent_caller_is_asked_once_then_told_goodbye():
    call = answered()
    ticks = {t: call.tick(t, agent_speaking=False, last_caller_speech=0.0, rtp_packets=int(t * 50))
             for t in (5.0, 10.5, 15.0, 21.0)}
    assert ticks[5.0] == [] and ticks[10.5] == [Say(Phrase.STILL_THERE)] and ticks[15.0] == []
    assert ticks[21.0] == [Goodbye(Outcome.CALLER_SILENT)]


def test_a_line_without_rtp_is_hung_up_as_dead_but_a_silent_hold_is_not():
    call = answered()
    call.hold(True)
    for t in range(2, 40):
        assert call.tick(float(t), agent_speaking=False, last_caller_speech=0.0, rtp_packets=None) == []
    call.hold(False)
    call.tick(40.0, agent_speaking=False, last_caller_speech=39.0, rtp_packets=60)
    assert call.tick(46.0, agent_speaking=False, last_caller_speech=39.0, rtp_packets=60) == \
        [HangUp(Outcome.DEAD_CALL)]


def test_the_maximum_length_says_goodbye_but_hangs_up_a_held_line_at_once():
    spoken, held = answered(), answered()
    held.hold(True)
    assert spoken.tick(301.0, agent_speaking=True, last_caller_speech=300.0, rtp_packets=15000) == \
        [Goodbye(Outcome.MAXIMUM_LENGTH)]
    assert held.tick(301.0, agent_speaking=False, last_caller_speech=0.0, rtp_packets=None) == \
        [HangUp(Outcome.MAXIMUM_LENGTH)]


def test_a_shutdown_keeps_the_message_being_left_and_says_goodbye_once():
    call = answered()
    heard(call, "Take a message please.")
    assert call.wind_down() == [EndMessage("agent shut down"), Goodbye(Outcome.AGENT_SHUT_DOWN, cut=False)]
    assert call.wind_down() == []


def test_a_call_that_just_ends_was_hung_up_by_the_caller():
    call = answered()
    assert call.ended() is Outcome.CALLER_HUNG_UP and call.state is CallState.ENDED
    assert call.hold(True) == [] and call.media_ready() == []


def test_a_broken_audio_path_hangs_up_recorded_as_failed():
    call = answered()
    assert call.failed() == [HangUp(Outcome.AUDIO_FAILED)] and call.ended() is Outcome.AUDIO_FAILED
