"""A caller's short yes or no, pure: the answer to an offer or a confirmation, never a new question."""

import pytest

from agent.call.understanding.yes_no import is_bare, is_no, is_yes, said_again


@pytest.mark.parametrize("text", ["Yes please.", "Sure, go ahead", "Okay.", "Yeah, that's right.", "Correct.",
                                  "Absolutely."])
def test_a_short_yes(text):
    assert is_yes(text) and not is_no(text)


@pytest.mark.parametrize("text", ["No.", "No, thanks.", "Nope, not that.", "That’s not it.", "Not really."])
def test_a_short_no(text):
    assert is_no(text) and not is_yes(text)


@pytest.mark.parametrize("text", ["Yes, and what are your opening hours on Saturday morning?",
                                  "No, I asked how much the annual service costs.", "Is the office open today?",
                                  "Nothing else.", "", "..."])
def test_a_sentence_of_its_own_is_neither(text):
    assert not is_yes(text) and not is_no(text)


@pytest.mark.parametrize(("text", "bare"), [("Nel,", True), ("Hmm.", True), ("", True), ("No thanks.", False),
                                            ("What about parking?", False)])
def test_a_bare_reply_is_a_word_at_most(text, bare):
    assert is_bare(text) is bare


@pytest.mark.parametrize("text, said", [("How much does it cost", True), ("how much does it cost?!", True),
                                        ("How much does that cost?", False), ("", False)])
def test_the_question_said_again_is_the_same_words_whatever_the_punctuation(text, said):
    assert said_again(text, "How much does it cost?") is said
