"""Callers' synonyms of KB words: searched in the KB's word, and groups the KB never uses left alone."""

import pytest

from agent.knowledge.memory import CallMemory
from agent.knowledge.synonyms import Synonyms, load_groups, parse_groups

GROUPS = parse_groups("""
# comment line
call, ring, phone
earliest, soonest
paid over, spread the cost
air conditioning, aircon
lonely   # one member: not a group
""")
KB = ["You can call the office on 555-0142.", "The earliest appointment is in three days.",
      "Installations can be paid over 12 months."]


def rephrase(question: str) -> str:
    return Synonyms(GROUPS, KB).rephrase(question)


def test_a_callers_word_is_swapped_for_the_word_the_kb_uses():
    assert rephrase("What number can I ring?") == "What number can I call"
    assert rephrase("When is the soonest slot?") == "When is the earliest slot"


def test_inflections_match_the_stemmed_phrase():
    assert rephrase("Who is ringing?") == "Who is call"


def test_a_phrase_is_swapped_whole():
    assert rephrase("Can I spread the cost?") == "Can I paid over"


def test_a_question_in_the_kbs_own_words_is_left_alone():
    assert rephrase("Can I call the office?") == ""


def test_a_group_the_kb_never_uses_changes_nothing():
    assert rephrase("Do you fit aircon?") == ""


def test_comments_and_single_members_are_not_groups():
    assert GROUPS == [("call", "ring", "phone"), ("earliest", "soonest"), ("paid over", "spread the cost"),
                      ("air conditioning", "aircon")]


def test_an_operators_groups_come_after_the_built_in_ones(tmp_path):
    extra = tmp_path / "synonyms.txt"
    extra.write_text("warm care, the plan\n")
    groups = load_groups(extra)
    assert groups[-1] == ("warm care", "the plan") and len(groups) > 1


@pytest.mark.parametrize(("question", "expected"), [
    ("What number can I ring to reach the office?", "555-0142"),
    ("What's the price of yearly boiler checkup?", "$149"),  # a real word, not a near-homophone of "checks"
    ("What if I'm out when the engineer turns up?", "$60"),  # not "Turn the amber valve", nor the ID badge
    ("What if I'm out when the engine turns up?", "$60"),  # as the line's first listen heard it
])
def test_a_question_in_callers_words_is_answered_from_the_kb(bundled_kb, question, expected):
    reply = bundled_kb.compose(CallMemory(), question)
    assert expected in reply.text


@pytest.mark.parametrize(("question", "rephrased"), [
    ("Will you delete my photos?", "Will you wipe my photos"), ("Can I learn here?", "Can I teach here"),
    ("Can I get my money back?", "Can I get my refund"),
    ("How much are your cheapest glasses?", "How much are your start at glasses"),
    ("When do we have to leave the room?", "When do we have to check-out"),
])
def test_the_built_in_groups_hold_words_that_mean_the_same_in_any_trade(question, rephrased):
    kb = ["We never wipe a computer without asking.", "We teach every level.", "We refund in full.",
          "Frames start at £39.", "Check-out is by 10.30am."]
    assert Synonyms(load_groups(), kb).rephrase(question) == rephrased
