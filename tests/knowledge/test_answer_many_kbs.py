"""Answer choice and declining on the many-KB benchmark's development KBs, whatever the trade: one claim each."""

import pytest

from agent.call.understanding.understand import FIRM_EVIDENCE
from agent.knowledge.memory import CallMemory
from tests.knowledge.conftest import benchmark_kb


def test_a_where_question_that_names_nothing_the_address_says_still_finds_the_address(models, tmp_path):
    knowledge = benchmark_kb("garage", tmp_path, models.embedder)
    passages, *_ = knowledge.retrieve(knowledge.index.snapshot, CallMemory().query("Where are you exactly?"))
    assert any("Unit 4, Millbrook Trading Estate" in p.text for p in passages)


def test_how_much_is_never_answered_outright_by_a_sentence_that_states_no_amount(models, tmp_path):
    knowledge = benchmark_kb("kennels", tmp_path, models.embedder)
    # The KB has the vaccination rule, and no price for the vaccine.
    unstated = knowledge.draft(CallMemory(), "How much does a cat flu vaccination cost?")
    assert unstated.abstained or unstated.evidence < FIRM_EVIDENCE  # declined, or confirmed first
    stated = knowledge.draft(CallMemory(), "How much does a bath for my dog cost?")
    assert "£15" in stated.text and stated.evidence >= FIRM_EVIDENCE


def test_where_are_you_is_answered_outright_by_the_street_address(models, tmp_path):
    knowledge = benchmark_kb("dental", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Where are you?")
    assert "27 Harbour Road" in reply.text and reply.evidence >= FIRM_EVIDENCE  # not "Are you asking about …?"


def test_whats_your_number_is_answered_outright_by_the_phone_number_whatever_was_asked_before(models, tmp_path):
    knowledge = benchmark_kb("tailor", tmp_path, models.embedder)
    memory = CallMemory()
    knowledge.compose(memory, "How much is a shirt?")
    reply = knowledge.draft(memory, "What's your number?")
    assert "01632 960 148" in reply.text and reply.evidence >= FIRM_EVIDENCE


def test_a_price_in_another_clause_than_the_thing_asked_about_is_not_its_price(models, tmp_path):
    knowledge = benchmark_kb("tailor", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "How much do you charge for cleaning a wedding dress?")
    # Not "Our same-day service costs £5 extra ...; it is not available for wedding dresses or leather."
    assert reply.sentences == ("Wedding dress: from £95, boxed",)


def test_a_yes_or_no_question_on_a_day_is_answered_by_the_days_it_is_done_that_leave_it_out(models, tmp_path):
    knowledge = benchmark_kb("florist", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Do you deliver on a Sunday?")
    assert "We deliver Tuesday to Saturday" in reply.text and not reply.abstained


def test_coming_in_a_month_outside_the_season_is_answered_by_the_season(models, tmp_path):
    knowledge = benchmark_kb("campsite", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Can we come camping with you in November?")
    assert "We are open from 1 March to 31 October" in reply.text and not reply.abstained


def test_a_service_the_kb_never_names_is_not_answered_outright(models, tmp_path):
    knowledge = benchmark_kb("kennels", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Do you sell dog food?")
    # Not "We feed a good dry food, or you can bring your pet's own food ...": the kennels sell nothing.
    assert reply.evidence < FIRM_EVIDENCE


def test_a_town_the_address_names_is_not_what_a_question_asking_no_where_is_about(models, tmp_path):
    knowledge = benchmark_kb("farmshop", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Is there a bus from Marston?")
    assert reply.evidence < FIRM_EVIDENCE  # not "You will find us ... two miles out of Marston"


def test_a_no_to_the_very_thing_asked_about_is_confirmed_not_declined(models, tmp_path):
    knowledge = benchmark_kb("tip", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Can I drop off some old tyres?")
    # "We do not accept asbestos, gas bottles, tyres, ..." shares little else with the question.
    assert "tyres" in reply.text and knowledge.abstain_below <= reply.evidence < FIRM_EVIDENCE


def test_a_word_no_line_of_the_kb_holds_does_not_keep_the_asked_line_from_being_said_alone(models, tmp_path):
    knowledge = benchmark_kb("tailor", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "How much is it to take up a pair of trousers?")
    assert reply.sentences == ("Shorten trousers: £12",)  # "pair" is in no line: not the whole alterations list


def test_where_is_the_library_in_a_librarys_kb_is_answered_with_its_address(models, tmp_path):
    knowledge = benchmark_kb("library", tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), "Where's the library?")
    assert "4 Market Square" in reply.text  # not the building's history, which names the library


@pytest.mark.parametrize(("kb", "question", "expected"), [
    ("bikes", "How much to fix a puncture?", "puncture"),  # a service said in other words: the KB says "repair"
    ("driving", "Can I learn in an automatic?", "teach in automatic cars"),
    ("cinema", "I booked online but can't come now, can I get my money back?", "cannot be refunded"),
])
def test_a_question_in_a_callers_words_for_the_kbs_is_answered_outright(models, tmp_path, kb, question, expected):
    knowledge = benchmark_kb(kb, tmp_path, models.embedder)
    reply = knowledge.draft(CallMemory(), question)
    assert expected in reply.text and reply.evidence >= FIRM_EVIDENCE
