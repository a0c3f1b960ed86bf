"""The grounding check on sentences another writer (an LLM) makes from the passages."""

import pytest

from agent.knowledge.grounding import declines, facts, judge, normalise, unsupported

PASSAGES = ("Parking is free behind the building. The Harbor Clinic opens at 9 a.m. on Saturdays and closes at "
            "1 p.m. A check-up costs $25 and a filling costs $1,250.50. Call us on 555-0142 or quote code ORCHID-47. "
            "Error code F28 means no flame.")


@pytest.mark.parametrize("sentence", [
    "Yes, there's free parking behind the building.",
    "We open at 9am on Saturday.",
    "On Saturdays the Harbor Clinic is open from 9:00 AM to 1 PM.",
    "A check-up is twenty-five dollars.",
    "A filling costs 1250 dollars and 50 cents.",
    "You can call 555-0142.",
    "Just quote ORCHID-47.",
    "Code ORCHID-47 is yours.",
    "F28 means there was no flame.",
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
    ("Error code F29 means no flame.", ["f29"]),
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


def test_a_sentence_in_other_words_than_the_passages_is_judged_the_writers():
    assert judge("The plan includes a free upgrade to a gym.", PASSAGES).startswith("wording not in the passages")
    assert judge("Sure, parking is free behind the building.", PASSAGES) == ""


@pytest.mark.parametrize("sentence", ["No, parking is not free.", "The Harbor Clinic never opens on Saturdays."])
def test_a_negation_the_closest_passage_sentence_does_not_make_is_refused(sentence):
    assert judge(sentence, PASSAGES) == "negation not in the passages"


def test_a_negation_the_passage_makes_is_kept():
    assert judge("Parking is not free.", "Parking is not free behind the building.") == ""


def test_a_first_sentence_must_be_about_the_kbs_answer_and_state_one_of_its_facts():
    answer = "A check-up costs $25 and a filling costs $1,250.50."
    assert judge("A check-up is twenty-five dollars.", PASSAGES, answer, first=True) == ""
    assert judge("A check-up has a cost.", PASSAGES, answer, first=True).startswith("misses the answer")
    assert judge("The Harbor Clinic opens at 9 a.m. on Saturdays.", PASSAGES, answer).startswith("not in the answer")
    assert judge("Parking behind the building is free for a check-up.", PASSAGES, answer).startswith("strays from")


def test_a_figure_from_elsewhere_in_the_passages_is_not_pinned_on_the_answer():
    answer = "A check-up costs $25."
    assert judge("A check-up costs $1,250.50.", PASSAGES, answer) == "not in the answer: 1250 dollar, 50 cent"


def test_a_sentence_that_only_repeats_the_question_is_not_an_answer():
    question = "Is parking free behind the building?"
    assert judge("Parking is free behind the building.", PASSAGES, question=question) == "repeats the question"
    assert judge("Yes, parking behind the building is free, and we open at 9 a.m.", PASSAGES,
                 question=question) == ""


def test_a_price_stated_without_its_period_drops_part_of_the_fact():
    answer = "The plan costs $12 a month."
    assert judge("The plan is $12.", answer, answer) == "drops part of a fact: 12 dollar per month"
    assert judge("The plan is twelve dollars per month.", answer, answer) == ""
