"""Taking a message, pure: the caller asking for one, and when the recording ends."""

import numpy as np
import pytest

from agent.call.understanding.message import MessageConfig, MessageRecording, asks_for_message

CONFIG = MessageConfig(max_s=3.2, silence_s=0.64, no_speech_s=1.28, tail_s=0.064, lead_s=0.064)
# In 32 ms windows: 100 windows at most, 20 quiet windows end it, 40 with nothing said, 2 kept around the words.


@pytest.mark.parametrize("text", ["Can I leave a message?", "Could you take a message for me please",
                                  "I'd like to leave a quick message.", "Voicemail please",
                                  "Can you pass on a message?", "I want to give them a message"])
def test_asking_for_a_message_is_recognised(text):
    assert asks_for_message(text)


@pytest.mark.parametrize("text", ["What does the message on my boiler mean?", "Did you get my text message?",
                                  "What are your opening hours?"])
def test_a_question_about_messages_is_not_a_request(text):
    assert not asks_for_message(text)


def feed(recording, voiced_pattern):
    for i, voiced in enumerate(voiced_pattern):
        if (ended := recording.push(np.full(512, i, dtype=np.int16), voiced)) is not None:
            return i, ended
    return None


def test_a_message_ends_after_the_silence_that_follows_speech_and_keeps_just_the_words():
    recording = MessageRecording(CONFIG)
    assert feed(recording, [False] * 5 + [True] * 10 + [False] * 30) == (34, "silence")
    assert sorted(set(recording.audio().tolist())) == list(range(3, 17))  # 2 windows either side of the words


def test_waiting_for_a_message_that_never_comes_ends_with_no_speech():
    recording = MessageRecording(CONFIG)
    assert feed(recording, [False] * 60) == (39, "no speech")
    assert not recording.heard_speech and recording.audio().size == 0


def test_a_caller_who_keeps_talking_is_cut_at_the_time_limit():
    assert feed(MessageRecording(CONFIG), [True] * 200) == (99, "time limit")
