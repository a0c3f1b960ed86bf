"""The first hearing: the greedy reading is acted on when it leaves no doubt, else the beam reads again (pure, on
hand-made readings), and two utterances heard for real."""

from agent.audio.pcm import int16_to_float
from agent.call.commands import UNCLARIFIED, Action, Clarified
from agent.call.hear import hear, settles
from agent.call.understand import Reading, Understanding
from agent.knowledge.base import ABSTAIN_TEXT, Reply, SourceRef
from agent.speech.asr import Hypothesis, Transcript
from tests.conftest import synthesize_caller

REPEATED = Clarified(asked_again=True)


def understood(action: Action, evidence: float, logprob: float = -0.1) -> tuple[Transcript, Understanding]:
    abstained = evidence < 0.35
    reply = Reply("q", (ABSTAIN_TEXT,) if abstained else ("We fit new boilers.",),
                  () if abstained else (SourceRef("prices.md", "Prices > New boilers", "c1"),), abstained, evidence,
                  (), 1.0, 1.0, "" if abstained else "new boilers", evidence)
    reading = Reading(Hypothesis("Do you fit new boilers?", logprob), reply)
    return Transcript(reading.hypothesis.text, "en", 2.0, 0.01, avg_logprob=logprob), Understanding(
        action, reading, reading, (reading,), "new boilers" if action is Action.CONFIRM else "")


def test_a_sure_reading_answered_outright_needs_no_other_reading():
    assert settles(*understood(Action.ANSWER, 0.40), UNCLARIFIED)


def test_a_decline_needs_no_other_reading_only_when_whisper_was_plainly_sure():
    assert settles(*understood(Action.ANSWER, 0.10, logprob=-0.1), UNCLARIFIED)  # nothing near it in the KB
    assert not settles(*understood(Action.ANSWER, 0.10, logprob=-0.3), UNCLARIFIED)  # "a sad early morning"


def test_a_reading_whisper_was_unsure_of_is_read_again_by_the_beam_however_well_it_matches():
    assert not settles(*understood(Action.ANSWER, 0.70, logprob=-0.6), UNCLARIFIED)


def test_a_reading_that_would_be_confirmed_or_asked_again_is_read_again_by_the_beam():
    assert not settles(*understood(Action.CONFIRM, 0.40), UNCLARIFIED)
    assert not settles(*understood(Action.ASK_AGAIN, 0.30), UNCLARIFIED)


def test_a_repeat_is_read_again_by_the_beam_unless_its_answer_is_firm():
    assert not settles(*understood(Action.ANSWER, 0.10), REPEATED)
    assert not settles(*understood(Action.ANSWER, 0.40), REPEATED)
    assert settles(*understood(Action.ANSWER, 0.60), REPEATED)


def greedy_first(resolved):
    from agent.speech.asr import Transcriber

    return Transcriber(resolved["asr"], beam_size=5, greedy_first=True)


def test_a_clear_question_the_kb_answers_is_heard_greedily_with_its_look_up_kept(resolved, bundled_kb, tmp_path):
    from agent.knowledge.memory import CallMemory

    audio = int16_to_float(synthesize_caller(tmp_path, "What are your opening hours during the week?", rate=16000))
    heard = hear(greedy_first(resolved), bundled_kb, CallMemory(), audio, bundled_kb.vocabulary_hint())
    assert not heard.transcript.widened and heard.transcript.hypotheses == ()
    assert heard.readings is not None and "8 a.m. to 6 p.m." in " ".join(heard.readings[0].reply.sentences)


def test_a_repeated_question_the_kb_declines_is_read_again_by_the_beam(resolved, bundled_kb, tmp_path):
    from agent.knowledge.memory import CallMemory

    audio = int16_to_float(synthesize_caller(tmp_path, "What will the weather be like tomorrow?", rate=16000))
    heard = hear(greedy_first(resolved), bundled_kb, CallMemory(), audio, bundled_kb.vocabulary_hint(), REPEATED)
    assert heard.transcript.widened and len(heard.transcript.hypotheses) == 5
    assert heard.readings is None  # the beam's readings are looked up by whoever acts on them
