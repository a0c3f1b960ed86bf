"""The grounding check on sentences another writer (an LLM) makes from the passages."""

import pytest

from agent.knowledge.grounding import declines, facts, normalise, unsupported

PASSAGES = ("Parking is free behind the building. The Harbor Clinic opens at 9 a.m. on Saturdays and closes at "
            "1 p.m. A check-up costs $25 and a filling costs $1,250.50. Call us on 555-0142 or quote code ORCHID-47.")


@pytest.mark.parametrize("sentence", [
    "Yes, there's free parking behind the building.",
    "We open at 9am on Saturday.",
    "On Saturdays the Harbor Clinic is open from 9:00 AM to 1 PM.",
    "A check-up is twenty-five dollars.",
    "A filling costs 1250 dollars and 50 cents.",
    "You can call 555-0142.",
    "Just quote ORCHID-47.",
])
def test_a_sentence_whose_facts_are_in_the_passages_passes_however_they_are_written(sentence):
    assert unsupported(sentence, PASSAGES) == []


@pytest.mark.parametrize(("sentence", "missing"), [
    ("We open at 9 pm on Saturdays.", ["9 pm"]),
    ("A check-up costs $30.", ["30 dollar"]),
    ("We are also open on Sundays.", ["sunday"]),
    ("Springfield residents park for free.", ["Springfield"]),
    ("Ask for Dr. Jones.", ["Jones"]),
    ("Call 555-0199.", ["0199"]),
    ("It takes 45 minutes.", ["45 minute"]),
])
def test_a_number_time_price_day_or_name_missing_from_the_passages_is_named(sentence, missing):
    assert unsupported(sentence, PASSAGES) == missing


def test_a_capitalised_common_word_opening_a_sentence_is_not_taken_for_a_name():
    assert [f.written for f in facts("Parking is free.")] == []
    assert [f.written for f in facts("Springfield is near.")] == ["Springfield"]


def test_money_times_ordinals_and_number_words_share_one_form():
    assert normalise("$1,250.50 at 9:00 a.m. on the 3rd, twenty-one") == \
        ["1250", "dollar", "50", "cent", "at", "9", "am", "on", "the", "3", "21"]


@pytest.mark.parametrize(("text", "decline"), [
    ("I don't know.", True), ("Sorry, the passages do not say.", True), ("I'm not sure about that.", True),
    ("That information is not provided.", True), ("Yes, parking is free.", False),
    ("We know the area well.", False)])
def test_a_decline_is_recognised(text, decline):
    assert declines(text) is decline
