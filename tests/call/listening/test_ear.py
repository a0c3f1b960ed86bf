"""The ear: turn events from VAD windows, with cut-offs told from barge-ins and the pause judged by its words."""

import numpy as np

from agent.call.listening.ear import Ear
from agent.call.listening.endpointing import EndpointConfig
from agent.call.listening.turns import SpeechEnded, SpeechPaused, SpeechStarted, TurnConfig
from agent.speech.vad import WINDOW

TURNS = TurnConfig(hangover_ms=512, pause_ms=96)
ENDPOINTING = EndpointConfig(default_ms=512, short_ms=224, long_ms=1216, cut_off_ms=600)


def push(ear, probabilities, agent_speaking=False, level=0.1):
    heard = []
    for p in probabilities:
        heard += ear.push(np.full(WINDOW, level if p else 0.0, np.float32), p, agent_speaking=agent_speaking)
    return heard


def one_turn(ear):
    """Half a second of speech, then the silence that ends it; returns the events."""
    return push(ear, [0.9] * 16 + [0.0] * 20)


def test_talking_again_over_the_answer_just_after_the_turn_is_a_cut_off():
    ear = Ear(TURNS, ENDPOINTING)
    assert any(isinstance(h.event, SpeechEnded) for h in one_turn(ear))
    started = [h for h in push(ear, [0.9] * 10, agent_speaking=True) if isinstance(h.event, SpeechStarted)]
    assert started and started[0].cut_off and ear.cut_offs == 1


def test_talking_over_the_answer_later_is_a_barge_in():
    ear = Ear(TURNS, ENDPOINTING)
    one_turn(ear)
    push(ear, [0.0] * 40)  # 1.3 s after the turn: a reaction to the answer
    started = [h for h in push(ear, [0.9] * 10, agent_speaking=True) if isinstance(h.event, SpeechStarted)]
    assert started and not started[0].cut_off and ear.cut_offs == 0


def pause_of(ear):
    heard = push(ear, [0.9] * 16 + [0.0] * 4)
    return next(h.event for h in heard if isinstance(h.event, SpeechPaused))


def windows_to_end(ear):
    for n in range(1, 100):
        if any(isinstance(h.event, SpeechEnded) for h in push(ear, [0.0])):
            return n


def test_a_complete_question_understood_in_the_pause_ends_the_turn_sooner():
    plain, judged = Ear(TURNS, ENDPOINTING), Ear(TURNS, ENDPOINTING)
    pause_of(plain)
    judged.understood(pause_of(judged).window, "What time do you open?", True, yes_or_no_asked=False)
    assert windows_to_end(judged) < windows_to_end(plain)


def test_what_the_pause_understood_is_ignored_once_the_caller_went_on():
    ear, plain = Ear(TURNS, ENDPOINTING), Ear(TURNS, ENDPOINTING)
    stale = pause_of(ear).window
    pause_of(plain)
    push(ear, [0.9] * 4), push(plain, [0.9] * 4)  # the caller goes on
    push(ear, [0.0] * 4), push(plain, [0.0] * 4)
    ear.understood(stale, "What time do you open?", True, yes_or_no_asked=False)
    assert windows_to_end(ear) == windows_to_end(plain)


def test_going_on_from_the_last_question_hears_both_halves_as_one():
    ear = Ear(TURNS, ENDPOINTING)
    first = next(h.event for h in one_turn(ear) if isinstance(h.event, SpeechEnded))
    push(ear, [0.9] * 10, agent_speaking=True)
    ear.go_on_from_last()
    ended = next(h.event for h in push(ear, [0.9] * 6 + [0.0] * 40) if isinstance(h.event, SpeechEnded))
    assert len(ended.audio) > len(first.audio) + 16 * WINDOW
    assert np.array_equal(ended.audio[:len(first.audio)], first.audio)
