"""A doubtful turn heard again by a second recogniser: which understanding is acted on (pure on hand-made
understandings), and when the second is asked at all and what comes of its reading (on the bundled KB, the second
recogniser's transcript given)."""

from agent.call.commands import Action
from agent.call.understanding.hear_again import hear, surer
from agent.call.understanding.understand import Reading, Understanding
from agent.knowledge.base import ABSTAIN_TEXT, Reply, SourceRef
from agent.knowledge.memory import CallMemory
from agent.speech.asr import Hypothesis, Transcript


def understanding(action: Action, abstained: bool = False) -> Understanding:
    sources = () if abstained else (SourceRef("prices.md", "Prices > New boilers", "c1"),)
    reply = Reply("q", (ABSTAIN_TEXT,) if abstained else ("We fit new boilers.",), sources, abstained,
                  0.1 if abstained else 0.5, (), 1.0, 1.0, "" if abstained else "new boilers", 0.5)
    chosen = Reading(Hypothesis("q", -0.2), reply)
    return Understanding(action, chosen, chosen, (chosen,))


ANSWER, CONFIRM = understanding(Action.ANSWER), understanding(Action.CONFIRM)
ASK_AGAIN, DECLINE = understanding(Action.ASK_AGAIN, abstained=True), understanding(Action.ANSWER, abstained=True)


def test_the_understanding_that_gets_the_caller_further_is_acted_on():
    assert surer(CONFIRM, ANSWER) is ANSWER and surer(ANSWER, CONFIRM) is ANSWER
    assert surer(ASK_AGAIN, CONFIRM) is CONFIRM and surer(CONFIRM, ASK_AGAIN) is CONFIRM
    assert surer(DECLINE, ASK_AGAIN) is ASK_AGAIN and surer(ASK_AGAIN, DECLINE) is ASK_AGAIN


def test_on_a_tie_the_second_recogniser_is_believed():
    other = understanding(Action.CONFIRM)
    assert surer(CONFIRM, other) is other


def said(text: str, logprob: float = -0.2, decode_s: float = 0.1) -> Transcript:
    return Transcript(text, "en", 2.0, 0.01, avg_logprob=logprob, decode_s=decode_s,
                      hypotheses=(Hypothesis(text, logprob),))


class Recogniser:
    """A second recogniser that heard the utterance as `text` (or failed), counting how often it was asked."""

    def __init__(self, text: str | None) -> None:
        self.text, self.asked = text, 0

    def __call__(self) -> Transcript:
        self.asked += 1
        if self.text is None:
            raise RuntimeError("model failed")
        return said(self.text, decode_s=0.3)


def test_a_question_answered_outright_is_not_heard_again(bundled_kb):
    second = Recogniser("How far will you travel?")
    heard = hear(bundled_kb, CallMemory(), said("How far will you travel?"), listen_again=second)
    assert heard.understanding.action is Action.ANSWER and not heard.understanding.reply.abstained
    assert second.asked == 0 and not heard.first_heard


def test_a_question_the_first_recogniser_garbled_is_confirmed_on_the_seconds_reading(bundled_kb):
    second = Recogniser("How far will you travel?")
    heard = hear(bundled_kb, CallMemory(), said("Half our will you travel.", logprob=-0.6), listen_again=second)
    # The first recogniser's doubt stands: the answer the second's words find is confirmed before it is spoken.
    assert second.asked == 1 and heard.understanding.action is Action.CONFIRM
    assert "25 miles" in heard.understanding.reply.text
    assert heard.first_heard == "Half our will you travel." and heard.transcript.text == "How far will you travel?"
    assert abs(heard.transcript.decode_s - 0.4) < 1e-9  # both decodes are the turn's


def test_a_second_reading_that_gets_the_caller_less_far_leaves_the_first_understanding(bundled_kb):
    first = said("I think I can smell grass in my kitchen.")
    heard = hear(bundled_kb, CallMemory(), first, listen_again=Recogniser("Do you sell pizza?"))
    assert heard.understanding.action is Action.CONFIRM and "leave the building" in heard.understanding.reply.text
    assert not heard.first_heard and heard.transcript.text == first.text
    assert abs(heard.transcript.decode_s - 0.4) < 1e-9


def test_a_failing_second_recogniser_leaves_the_first_understanding(bundled_kb):
    second = Recogniser(None)
    heard = hear(bundled_kb, CallMemory(), said("Half our will you travel.", logprob=-0.6), listen_again=second)
    assert second.asked == 1 and heard.understanding is not None and not heard.first_heard


def test_a_question_heard_surely_that_the_kb_declines_is_not_heard_again(bundled_kb):
    second = Recogniser("Do you sell pizzas?")
    heard = hear(bundled_kb, CallMemory(), said("Do you sell pizza?", logprob=-0.1), listen_again=second)
    assert heard.understanding.reply.abstained and second.asked == 0


def test_a_clear_yes_or_no_is_not_heard_again(bundled_kb):
    second = Recogniser("How far will you travel?")
    for reply in ("Yes, that's right.", "No."):
        assert hear(bundled_kb, CallMemory(), said(reply), listen_again=second).understanding is not None
    assert second.asked == 0


def test_words_no_recogniser_made_out_are_not_heard_again(bundled_kb):
    second = Recogniser("How far will you travel?")
    heard = hear(bundled_kb, CallMemory(), said(" . "), listen_again=second)
    assert heard.understanding is None and second.asked == 0
