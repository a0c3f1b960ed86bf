"""Asking again: only when both the ears and the KB were unsure (or Whisper guessed and the KB only half
matched the guess), and never twice running."""

from agent.call.clarify import should_ask_again
from agent.knowledge.base import Reply
from agent.speech.asr import Transcript


def heard(logprob: float, no_speech: float = 0.01) -> Transcript:
    return Transcript("what will our empty come with", "en", 2.0, no_speech, avg_logprob=logprob)


def reply(abstained: bool, evidence: float | None = None) -> Reply:
    if evidence is None:
        evidence = 0.2 if abstained else 0.6
    return Reply("q", ("...",), (), abstained, evidence, (), 1.0, 1.0)


def test_an_unsure_transcript_the_kb_cannot_place_is_asked_again():
    assert should_ask_again(heard(-0.7), reply(abstained=True), asked_just_before=False)


def test_a_confident_transcript_the_kb_cannot_answer_is_declined_not_asked_again():
    assert not should_ask_again(heard(-0.1), reply(abstained=True), asked_just_before=False)


def test_an_unsure_transcript_that_still_matches_the_kb_is_answered():
    assert not should_ask_again(heard(-0.7), reply(abstained=False), asked_just_before=False)


def test_a_guess_the_kb_only_half_matches_is_asked_again_not_answered():
    assert should_ask_again(heard(-0.8), reply(abstained=False, evidence=0.4), asked_just_before=False)


def test_a_middling_match_is_answered_when_whisper_was_only_unsure_not_guessing():
    assert not should_ask_again(heard(-0.4), reply(abstained=False, evidence=0.4), asked_just_before=False)


def test_what_may_not_have_been_speech_is_asked_again():
    assert should_ask_again(heard(-0.1, no_speech=0.9), reply(abstained=True), asked_just_before=False)


def test_the_agent_never_asks_twice_running():
    assert not should_ask_again(heard(-0.9), reply(abstained=True), asked_just_before=True)


def test_a_question_greedy_decoding_garbled_is_answered_after_a_careful_second_listen(models, bundled_kb, tmp_path):
    from agent.call.clarify import listen_again
    from agent.knowledge.memory import CallMemory
    from eval.hearing import speak, telephone

    audio = telephone(speak("How far will you travel?", "slt", tmp_path))
    hint = bundled_kb.vocabulary_hint()
    first = models.transcriber.transcribe(audio, hint)
    # The first, greedy listen was unsure and the KB found nothing in what it wrote ("Half our will you travel").
    assert should_ask_again(first, bundled_kb.draft(CallMemory(), first.text), asked_just_before=False)
    second = listen_again(models.transcriber, bundled_kb, CallMemory(), audio, hint)
    assert second.found and "25 miles" in second.reply.text
