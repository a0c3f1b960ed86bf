"""What a caller's question asks, from its words alone (pure)."""

import pytest

from agent.knowledge.question import analyse, asking_clause, digits, matched_tokens


@pytest.mark.parametrize(("question", "kinds"), [
    ("How much is a private check up?", {"money"}), ("What time do you close on a Friday?", {"time"}),
    ("How long does a service usually take?", {"duration"}), ("Whereabouts are you?", {"place"}),
    ("What number can I ring?", {"contact"}), ("Can my ten year old climb?", {"age"}),
    ("How far is the station from you?", {"distance"}), ("Have you got an email address?", {"contact"}),
    ("What's your address?", {"place"}),
    ("How do I open the amber valve?", set())])
def test_the_kind_of_answer_a_question_wants_is_read_from_its_words(question, kinds):
    assert analyse(question).kinds == kinds


def test_the_focus_is_what_the_question_is_about_less_the_words_that_only_frame_it():
    assert analyse("Do I need to bring my own helmet?").focus == ("helmet",)
    assert analyse("Are you open on Mondays?").focus == () and analyse("Are you open on Mondays?").days == {"monday"}


def test_a_scene_setting_clause_is_kept_apart_from_the_one_that_asks():
    asked = analyse("I use a wheelchair, can I get up to the surgery?")
    assert asked.focus == ("surgeri",) and asked.scene == ("wheelchair",)
    assert asking_clause("Can my son wait alone while I'm in the chair?")[0] == "Can my son wait alone"


def test_a_when_or_if_clause_after_the_question_sets_its_scene_and_asks_nothing():
    asked = analyse("Can I leave my car somewhere when I visit the office?")
    assert asked.focus == ("leav", "car", "somewher") and asked.scene == ("visit", "offic")
    assert analyse("When I arrive, where do I go?").focus == ("arriv",)


def test_an_asking_clause_that_names_nothing_takes_its_subject_from_the_scene():
    assert analyse("My boiler is showing E119, what does that mean?").focus == ("boiler", "show", "e119")


def test_an_age_is_kept_as_a_number_not_as_words_to_find():
    asked = analyse("Can my sixteen year old daughter get her teeth whitened?")
    assert asked.age == 16 and "16" not in asked.focus and "year" not in asked.focus


def test_weekend_and_weekdays_name_their_days():
    assert analyse("Are you open at the weekend?").days == {"saturday", "sunday"}
    assert len(analyse("What time do you shut on weekdays?").days) == 5


def test_a_phone_is_what_is_asked_about_unless_it_is_the_way_to_get_in_touch():
    assert "phone" in analyse("Can you fix my cracked phone screen?").focus
    assert "phone" in analyse("Do you repair phones?").focus
    assert analyse("Can I phone you?").focus == () and analyse("What's the phone number?").focus == ()
    assert analyse("Can I book over the phone?").focus == ("book",)


def test_a_month_is_when_it_asks_about_not_what():
    asked = analyse("Can we come camping with you in November?")
    assert asked.days == {"november"} and "novemb" not in asked.focus
    assert analyse("May I bring my dog?").days == frozenset()


def test_number_words_become_digits():
    assert digits("Twenty five pounds for my ten year old") == "25 pounds for my 10 year old"


def test_a_common_word_names_less_than_a_rare_one():
    asked = analyse("Will you take my old boiler away?")
    assert asked.specific["boiler"] > asked.specific["away"]


def test_an_age_said_in_passing_is_the_age_without_asking_about_ages():
    assert analyse("I'm 22, can I have a courtesy car while mine's in?").age == 22
    baby = analyse("What about our baby, she's one?")
    assert baby.age == 1 and "age" not in baby.kinds  # still a follow-up to the price asked before
    assert analyse("I'm 5 minutes away, can I come in?").age is None


@pytest.mark.parametrize(("question", "amount"), [
    ("How much does a cat flu vaccination cost?", True), ("What does a filling cost?", True),
    ("What's the price of a haircut?", True), ("And how much is that?", True),
    ("How much notice do I have to give?", False), ("Is parking free?", False), ("Can I pay by card?", False)])
def test_a_question_that_asks_for_an_amount_of_money_outright_is_told_apart(question, amount):
    assert analyse(question).amount is amount


@pytest.mark.parametrize(("question", "counts"), [
    ("I live eight miles out of town, is that extra?", ((8.0, "mile"),)),
    ("Can I bring five kids by myself?", ((5.0, "child"),)),
    ("If I cancel a week before, do I get it back?", ((1.0, "week"),)),
    ("We won't get there till nine at night.", ()), ("My ten year old wants to climb.", ()),
    ("Can we come at 9 am?", ())])
def test_the_numbers_a_caller_gives_are_kept_with_what_they_count(question, counts):
    assert analyse(question).counts == counts


def test_where_the_business_itself_is_asks_for_its_address_not_about_the_word():
    assert analyse("Where's the shop?").focus == () and analyse("Where is your office?").focus == ()
    assert matched_tokens(analyse("Where's the shop?")) == []
    assert analyse("Where's the gift shop?").focus == ("gift", "shop")  # a place inside, named
    assert analyse("Where are you based?").focus == () and analyse("Where are you situated?").focus == ()


def test_a_weekday_heard_as_two_words_is_still_the_weekdays():
    # Whisper writes "weekday" as "week day" now and then; the opening hours were then only confirmed.
    assert analyse("What are your opening hours on a week day?").days == analyse("On a weekday?").days
    assert analyse("Are you open at the week end?").days == {"saturday", "sunday"}
