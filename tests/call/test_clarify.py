"""Asking again: only when both the ears and the KB were unsure, and never twice running."""

from agent.call.clarify import should_ask_again
from agent.knowledge.base import Reply
from agent.speech.asr import Transcript


def heard(logprob: float, no_speech: float = 0.01) -> Transcript:
    return Transcript("what will our empty come with", "en", 2.0, no_speech, avg_logprob=logprob)


def reply(abstained: bool) -> Reply:
    return Reply("q", ("...",), (), abstained, 0.2 if abstained else 0.6, (), 1.0, 1.0)


def test_an_unsure_transcript_the_kb_cannot_place_is_asked_again():
    assert should_ask_again(heard(-0.7), reply(abstained=True), asked_just_before=False)


def test_a_confident_transcript_the_kb_cannot_answer_is_declined_not_asked_again():
    assert not should_ask_again(heard(-0.1), reply(abstained=True), asked_just_before=False)


def test_an_unsure_transcript_that_still_matches_the_kb_is_answered():
    assert not should_ask_again(heard(-0.7), reply(abstained=False), asked_just_before=False)


def test_what_may_not_have_been_speech_is_asked_again():
    assert should_ask_again(heard(-0.1, no_speech=0.9), reply(abstained=True), asked_just_before=False)


def test_the_agent_never_asks_twice_running():
    assert not should_ask_again(heard(-0.9), reply(abstained=True), asked_just_before=True)
