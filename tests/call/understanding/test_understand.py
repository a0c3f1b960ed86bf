"""What the agent makes of what it heard: the beam's readings weighed against the KB, then answered, confirmed,
asked again or declined (pure, on hand-made readings), and one utterance heard for real."""

from dataclasses import replace

from agent.call.commands import Action, Clarified
from agent.call.understanding.understand import Reading, distinct, understand, weigh, worth_reading
from agent.knowledge.base import ABSTAIN_TEXT, Reply, SourceRef
from agent.speech.asr import Hypothesis, Transcript


def reply(evidence: float, chunk: str = "c1", own: float | None = None) -> Reply:
    abstained = evidence < 0.35
    sources = () if abstained else (SourceRef("prices.md", "Prices > New boilers", chunk),)
    return Reply("q", (ABSTAIN_TEXT,) if abstained else ("We fit new boilers.",), sources, abstained, evidence, (),
                 1.0, 1.0, "" if abstained else "new boilers", evidence if own is None else own)


def reading(text: str, logprob: float, evidence: float, **kwargs) -> Reading:
    return Reading(Hypothesis(text, logprob), reply(evidence, **kwargs))


def heard(readings: list[Reading], no_speech: float = 0.01) -> Transcript:
    first = readings[0].hypothesis
    return Transcript(first.text, "en", 2.0, no_speech, avg_logprob=first.avg_logprob,
                      hypotheses=tuple(r.hypothesis for r in readings))


def test_a_cough_heard_as_punctuation_is_not_worth_reading_and_a_word_is():
    assert not worth_reading(heard([reading(" . ", -0.5, 0.0)]))
    assert not worth_reading(heard([reading("?", -0.5, 0.0)]))
    assert worth_reading(heard([reading("No.", -0.1, 0.0)]))


def test_readings_that_differ_only_in_punctuation_or_case_are_one():
    texts = ["Can I spread the cost?", "can I spread the cost.", "Can I spread the cust?"]
    assert [h.text for h in distinct(tuple(Hypothesis(t, -0.2) for t in texts))] == [texts[0], texts[2]]


def test_a_slightly_less_likely_reading_the_kb_backs_wins_over_one_it_cannot_place():
    first, better = reading("Do you work on villain spoilers?", -0.97, 0.09), reading("… villain boilers?", -0.98, 0.37)
    assert weigh([first, better]) is better


def test_a_much_less_likely_reading_never_wins_whatever_the_kb_says():
    first, unlikely = reading("Do you fix washing machines?", -0.2, 0.2), reading("… washing boilers?", -0.9, 0.9)
    assert weigh([first, unlikely]) is first


def test_readings_are_weighed_by_their_own_words_not_by_the_calls_context():
    heard_right = reading("Can I cancel it whenever I want?", -0.10, 0.45, own=0.45)
    garbled = reading("Can I consult it whenever I want?", -0.12, 0.59, own=0.10)
    assert weigh([heard_right, garbled]) is heard_right


def test_a_reading_that_turns_a_decline_into_a_middling_answer_is_confirmed_first():
    readings = [reading("What if the engine turns up?", -0.30, 0.30), reading("… the engineer turns up?", -0.40, 0.38)]
    understanding = understand(heard(readings), readings)
    assert understanding.action is Action.CONFIRM and understanding.chosen is readings[1]
    assert understanding.confirm_text == "Are you asking about new boilers?"


def test_a_reading_the_kb_backs_firmly_is_answered_without_confirming():
    readings = [reading("Do you work on villain spoilers?", -0.30, 0.10), reading("… Vaillant boilers?", -0.32, 0.6)]
    understanding = understand(heard(readings), readings)
    assert understanding.action is Action.ANSWER and understanding.chosen is readings[1]


def test_a_firmly_backed_reading_of_an_utterance_in_doubt_is_confirmed_before_it_is_answered():
    readings = [reading("Do you work on Vaillant boilers?", -0.30, 0.6)]
    understanding = understand(heard(readings), readings, doubted=True)
    assert understanding.action is Action.CONFIRM and understanding.chosen is readings[0]


def test_a_clear_question_the_kb_backs_only_moderately_is_confirmed_before_it_is_answered():
    readings = [reading("Do you take cheques?", -0.1, 0.38)]
    understanding = understand(heard(readings), readings)
    assert understanding.action is Action.CONFIRM and understanding.confirm_text == "Are you asking about new boilers?"


def test_an_answer_firm_only_on_a_word_put_back_by_sound_is_confirmed_before_it_is_answered():
    misheard = Reading(Hypothesis("How much is my croaking?", -0.1), replace(reply(0.76), heard_evidence=0.0))
    understanding = understand(heard([misheard]), [misheard])
    assert understanding.action is Action.CONFIRM and understanding.confirm_text == "Are you asking about new boilers?"


def test_an_answer_as_firm_on_the_words_heard_is_answered_without_confirming():
    clear = Reading(Hypothesis("How much is the annual service?", -0.1), replace(reply(0.76), heard_evidence=0.7))
    assert understand(heard([clear]), [clear]).action is Action.ANSWER


def test_a_moderately_backed_answer_is_declined_when_its_confirmation_could_only_echo_the_callers_words():
    said = "Do you fit new boilers?"
    asked = Reading(Hypothesis(said, -0.1), replace(reply(0.39), question=said, topic=""))
    assert understand(heard([asked]), [asked]).reply.abstained


def test_an_out_of_kb_question_that_shares_the_kbs_words_is_not_answered(bundled_kb):
    from agent.call.understanding.understand import read
    from agent.knowledge.memory import CallMemory

    transcript = Transcript("Do you install air conditioning units?", "en", 2.0, 0.01, avg_logprob=-0.1)
    understanding = understand(transcript, read(bundled_kb, CallMemory(), transcript))
    # Confirmed (the caller says no) or declined, never answered with the KB's air source heat pumps.
    assert understanding.action is Action.CONFIRM or understanding.reply.abstained


def test_an_unsure_guess_the_kb_only_half_matches_is_confirmed_not_answered():
    readings = [reading("And then we can't know.", -0.8, 0.40)]
    assert understand(heard(readings), readings).action is Action.CONFIRM


def test_an_unsure_transcript_the_kb_cannot_place_is_asked_again_once():
    readings = [reading("What will our empty come with?", -0.7, 0.2)]
    assert understand(heard(readings), readings).action is Action.ASK_AGAIN
    again = understand(heard(readings), readings, Clarified(asked_again=True))
    assert again.action is Action.ANSWER and again.reply.abstained


def test_a_confident_transcript_the_kb_cannot_answer_is_declined_not_asked_again():
    readings = [reading("Do you sell pizza?", -0.1, 0.1)]
    understanding = understand(heard(readings), readings)
    assert understanding.action is Action.ANSWER and understanding.reply.abstained


def test_what_may_not_have_been_speech_is_asked_again():
    readings = [reading("Thank you.", -0.1, 0.1)]
    assert understand(heard(readings, no_speech=0.9), readings).action is Action.ASK_AGAIN


def test_a_question_is_confirmed_once_then_what_would_be_confirmed_again_is_declined():
    readings = [reading("And then we can't know.", -0.8, 0.40)]
    again = understand(heard(readings), readings, Clarified(asked_again=True, confirmed=True))
    assert again.action is Action.ANSWER and again.reply.abstained


def test_after_a_no_what_the_kb_finds_next_is_offered_never_answered_unasked():
    readings = [reading("Is your repair work guaranteed?", -0.2, 0.6, chunk="guarantee")]
    after_no = Clarified(asked_again=True, confirmed=True, rejected=frozenset({"warm-care"}))
    again = understand(heard(readings), readings, after_no)
    assert (again.action, again.topic) == (Action.CONFIRM, "new boilers")


def test_after_a_second_no_what_the_kb_finds_next_is_declined():
    readings = [reading("Is your repair work guaranteed?", -0.2, 0.6, chunk="guarantee")]
    twice = Clarified(asked_again=True, confirmed=True, rejected=frozenset({"warm-care", "plan"}), reoffered=True)
    again = understand(heard(readings), readings, twice)
    assert again.action is Action.ANSWER and again.reply.abstained


def test_a_topic_the_caller_refused_is_declined_not_offered_again():
    readings = [reading("Do you install air conditioning?", -0.5, 0.40, chunk="heat-pumps")]
    refused = Clarified(asked_again=True, confirmed=True, rejected=frozenset({"heat-pumps"}))  # as after a no
    understanding = understand(heard(readings), readings, refused)
    assert understanding.action is Action.ANSWER and understanding.reply.abstained


def test_a_question_greedy_decoding_garbled_is_answered_from_another_reading_of_the_beam(models, bundled_kb, tmp_path):
    from agent.call.understanding.understand import read
    from agent.knowledge.memory import CallMemory
    from eval.kit.line import speak, telephone

    audio = telephone(speak("How far will you travel?", "slt", tmp_path))
    hint = bundled_kb.vocabulary_hint()
    greedy = models.transcriber.transcribe(audio, hint, beam_size=1)
    assert bundled_kb.draft(CallMemory(), greedy.text).abstained  # "Half our will you travel."
    transcript = models.transcriber.transcribe(audio, hint, beam_size=5, hypotheses=5)
    understanding = understand(transcript, read(bundled_kb, CallMemory(), transcript))
    assert understanding.action is not Action.ASK_AGAIN and "25 miles" in understanding.reply.text


def guessed(text: str, evidence: float, chunk: str = "gas") -> Reading:
    return Reading(Hypothesis(text, -0.2), reply(evidence, chunk=chunk), by_sound=True)


def test_a_near_miss_is_confirmed_under_the_kb_word_it_sounds_like_instead_of_asked_again():
    readings = [reading("I can smell grass in my kitchen.", -0.2, 0.31), guessed("I can smell gas in my kitchen", 0.5)]
    understanding = understand(heard(readings[:1]), readings)
    assert understanding.action is Action.CONFIRM and understanding.chosen is readings[1]
    assert understanding.first is readings[0]


def test_a_guess_by_sound_is_offered_when_the_caller_repeats_and_is_heard_the_same_way():
    readings = [reading("I can smell grass in my kitchen.", -0.2, 0.31), guessed("I can smell gas in my kitchen", 0.5)]
    understanding = understand(heard(readings[:1]), readings, Clarified(asked_again=True))
    assert understanding.action is Action.CONFIRM and understanding.chosen is readings[1]


def test_an_unsure_reading_the_calls_context_lifts_is_confirmed_against_the_answer_it_would_get(bundled_kb):
    from agent.call.understanding.understand import read
    from agent.knowledge.memory import CallMemory

    memory = CallMemory()
    bundled_kb.compose(memory, "Do you work on gas boilers?")
    # Unsure ears; the context lifts the reading over the KB's threshold, its own words do not (not understood).
    transcript = Transcript("You can smell grass in my kitchen.", "en", 2.0, 0.01, avg_logprob=-0.48)
    readings = read(bundled_kb, memory, transcript)
    assert not readings[0].reply.abstained
    understanding = understand(transcript, readings)
    assert understanding.action is Action.CONFIRM and "leave the building" in understanding.reply.text


def test_a_guess_by_sound_the_kb_backs_only_moderately_is_not_offered():
    readings = [reading("Do you repair car engines?", -0.2, 0.31), guessed("Do you repair care engineers", 0.40)]
    assert understand(heard(readings[:1]), readings).action is Action.ASK_AGAIN


def test_a_guess_by_sound_backed_by_the_calls_context_alone_is_not_offered():
    readings = [reading("Canon, I can't sew it whenever I want.", -0.5, 0.2),
                Reading(Hypothesis("Canon, I can't see it whenever I want", -0.5), reply(0.5, own=0.3), by_sound=True)]
    assert understand(heard(readings[:1]), readings).action is Action.ASK_AGAIN


def test_a_guess_by_sound_is_never_answered_unconfirmed_nor_offered_twice():
    readings = [reading("Do you sell pizza?", -0.1, 0.1), guessed("Do you smell pizza", 0.9)]
    assert understand(heard(readings[:1]), readings).reply.abstained  # a clear decline stays one
    near = [reading("I can smell grass.", -0.2, 0.31), guessed("I can smell gas", 0.5)]
    refused = Clarified(asked_again=True, confirmed=True, rejected=frozenset({"gas"}))
    assert understand(heard(near[:1]), near, refused).reply.abstained


def test_a_misheard_key_word_is_confirmed_against_the_answer_to_the_kb_word_it_sounds_like(bundled_kb):
    from agent.call.understanding.understand import read
    from agent.knowledge.memory import CallMemory

    transcript = Transcript("I think I can smell grass in my kitchen.", "en", 2.0, 0.01, avg_logprob=-0.2)
    understanding = understand(transcript, read(bundled_kb, CallMemory(), transcript))
    assert understanding.action is Action.CONFIRM and "leave the building" in understanding.reply.text
    assert understanding.first.hypothesis.text == transcript.text
