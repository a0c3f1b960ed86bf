"""What a KB sentence holds, whatever the business writes it like (pure)."""

import pytest

from agent.knowledge.holds import age_fits, days_covered, holds, limit_fits, place_names, states_amount, street_words


@pytest.mark.parametrize(("sentence", "kind"), [
    ("A private check-up is £55.", "money"), ("Overdue books are charged at 25p a day.", "money"),
    ("Day entry, €14, €11, €9", "money"), ("Test rides are free with photo ID.", "money"),
    ("We are open 8.30am to 5.30pm.", "time"), ("Saturday, 09:00, 20:00", "time"),
    ("Most services are done within three working days.", "duration"), ("Alterations take about a week.", "duration"),
    ("Our address is 4 Market Square, Eastgate, NS7 2AB.", "address"),
    ("The car park is two minutes' walk away.", "place"), ("Call us on 01632 960 418.", "contact"),
    ("Riders must be 16 or over.", "age"), ("The nearest car park is 200 metres away.", "distance"),
    ("Halden station is a 15-minute walk.", "distance"), ("You can go as far as the weir.", "distance")])
def test_a_sentence_holds_the_kind_of_answer_it_gives(sentence, kind):
    assert kind in holds(sentence)


def test_a_sentence_without_a_number_or_address_holds_no_contact_or_address():
    assert not holds("You can book by phone or online.") & {"contact", "address"}


def test_a_number_before_a_street_word_is_an_address_only_where_the_street_is_named():
    assert "address" in holds("The office is at 14 Quarry Lane, Millbrook.")
    assert "address" not in holds("We collect cars for £15 each way.")
    assert "address" not in holds("The car park is 2 minutes' walk away.")


def test_an_address_says_where_not_how_far():
    assert "distance" not in holds("Address: 112 Station Approach, Oakfield, OK3 9RD")


def test_a_named_street_is_a_place_and_a_word_for_parking_alone_is_not():
    assert "place" in holds("The pay and display car park on Mill Street costs £1.20 an hour.")
    assert "place" not in holds("There is no parking at the practice itself.")


def test_where_a_thing_is_taken_is_a_place():
    assert "place" in holds("Funeral wreaths need two days' notice; we deliver them straight to the funeral director.")
    assert "place" in holds("We can collect your bike from your workplace.")
    assert "place" not in holds("Bring your pet's own food and we will give it at no extra cost.")


def test_a_phone_numbers_area_code_is_no_zip_code():
    assert "address" not in holds("Call us on 01632 960 418 as early as possible.")
    assert "address" in holds("Post it to us at Cambridge, MA 02139.")  # the ZIP code alone


def test_day_ranges_weekends_and_every_day_cover_their_days():
    assert days_covered("Tuesday to Saturday 9am to 6pm") == {"tuesday", "wednesday", "thursday", "friday",
                                                             "saturday"}
    assert days_covered("We are closed at weekends.") == {"saturday", "sunday"}
    assert days_covered("We do not take walk-ins during the week.") == {"monday", "tuesday", "wednesday", "thursday",
                                                                      "friday"}
    assert len(days_covered("The emergency line is open 24/7.")) == 7


def test_month_ranges_cover_their_months_round_the_years_end():
    assert days_covered("We are open from 1 March to 31 October.") >= {"march", "july", "october"}
    assert "november" not in days_covered("We are open from 1 March to 31 October.")
    assert {"december", "january"} <= days_covered("October to March: 9am to 4pm") and "may" not in days_covered(
        "October to March: 9am to 4pm")
    assert "april" in days_covered("Open from Easter to the end of October.")  # Easter as April


def test_may_is_a_month_only_where_it_can_be_nothing_else():
    assert days_covered("You may call us in May.") == {"may"}
    assert days_covered("You may call us.") == frozenset()
    assert days_covered("We close in January and August") == {"january", "august"}  # "and" is no range


@pytest.mark.parametrize(("sentence", "age", "fit"), [
    ("Children from 8 to 15 must be supervised.", 10, 1.0), ("A child under 12 must not be left alone.", 10, 1.0),
    ("Riders must be 16 or over to hire on their own.", 14, 0.5), ("Membership is free.", 14, 0.0),
    ("Climbers aged 16 and 17 can climb alone.", 17, 1.0), ("Climbers aged 16 and 17 can climb alone.", 30, 0.5)])
def test_an_age_fits_the_range_or_limit_a_sentence_states(sentence, age, fit):
    assert age_fits(sentence, age) == fit


def test_words_used_only_in_a_street_name_are_told_apart():
    assert street_words("Address: 112 Station Approach, Oakfield.") == {"112", "station", "approach"}
    assert street_words("We are in the old depot on Ferry Street.") == {"ferri", "street"}
    assert street_words("Our address is 4 Market Square. The market is on Sundays.") == {"4", "squar"}
    assert street_words("We walk in the park at weekends.") == frozenset()


@pytest.mark.parametrize(("sentence", "states"), [
    ("A one-hour lesson costs £38.", True), ("Medication is given free of charge.", True),
    ("Students get 10% off.", True), ("It costs twenty pounds.", True), ("Charities get a third off.", True),
    ("Every cat must be vaccinated against cat flu.", False), ("We charge for parking.", False)])
def test_an_amount_of_money_is_told_from_the_mention_of_a_price(sentence, states):
    assert states_amount(sentence) is states


@pytest.mark.parametrize(("sentence", "number", "counted", "fit"), [
    ("We pick you up anywhere within five miles at no extra cost.", 3, "mile", 1.0),
    ("We pick you up anywhere within five miles at no extra cost.", 8, "mile", 0.5),
    ("One adult to at most three children.", 5, "child", 0.5),
    ("It is refunded if you cancel at least 14 days before the stay.", 3, "week", 1.0),
    ("It is refunded if you cancel at least 14 days before the stay.", 1, "week", 0.5),
    ("There is a minimum membership of 12 months.", 3, "month", 0.5),
    ("Pets must be at least 8 weeks old to join.", 3, "month", 0.0),
    ("We cannot take puppies under 16 weeks.", 16, "week", 0.5),
    ("Bags up to 20 kg go free.", 3, "mile", 0.0),
    ("If you cancel at least seven days before arrival, we return it.", 1, "night", 0.0)])  # a stay, not a span
def test_a_number_fits_the_limit_a_sentence_states_on_what_it_counts(sentence, number, counted, fit):
    assert limit_fits(sentence, number, counted) == fit


def test_the_towns_an_address_names_are_told_apart_from_the_business_name_and_other_sentences():
    text = ("Willowbank Boat Hire is on Lock Lane, Ashcombe, AC4 9LW, next to the Swan pub. "
            "Boat hire starts at the lock.")
    assert place_names(text) == {"ashcomb", "lane", "swan"}  # "lock" is used elsewhere; the name opens the sentence
