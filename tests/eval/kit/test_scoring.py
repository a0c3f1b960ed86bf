import pytest

from eval.kit.scoring import char_error_rate, contains_any, heard_said, normalize, number_to_words, word_error_rate


@pytest.mark.parametrize(("n", "words"), [(0, "zero"), (7, "seven"), (15, "fifteen"), (40, "forty"),
                                          (45, "forty five"), (100, "one hundred"), (149, "one hundred forty nine"),
                                          (2800, "two thousand eight hundred"), (1_000_000, "one million")])
def test_number_to_words(n, words):
    assert number_to_words(n) == words


def test_normalize_folds_case_punctuation_and_numbers():
    assert normalize("It's $2,800 — call 24/7!") == "it's two thousand eight hundred call twenty four seven"
    assert normalize("Fifteen PSI") == normalize("15 psi")


def test_long_digit_strings_are_read_digit_by_digit():
    assert normalize("5550142999") == "five five five zero one four two nine nine nine"


def test_word_error_rate_counts_substitutions_insertions_and_deletions():
    assert word_error_rate("check the status of my order", "check my status of order") == pytest.approx(2 / 6)
    assert word_error_rate("a b c", "a b c d") == pytest.approx(1 / 3)
    assert word_error_rate("", "") == 0.0 and word_error_rate("", "x") == 1.0


def test_numbers_as_digits_or_words_are_not_errors():
    assert word_error_rate("press one for sales", "Press 1 for sales.") == 0.0


def test_char_error_rate():
    assert char_error_rate("abcd", "abed") == pytest.approx(1 / 4)


def test_times_and_spellings_fold_the_way_whisper_writes_them():
    assert normalize("8 a.m. to 6 p.m.") == normalize("8am to 6pm") == "eight am to six pm"
    assert normalize("We do not accept cheques.") == normalize("we do not accept checks")
    assert normalize("I am here") == "i am here"


def test_asterisk_transcripts_skip_comments_and_non_speech():
    from eval.kit.sounds import parse_transcripts

    text = "; Core sounds\n\nactivated: Activated.\nbeep: [this is a simple beep tone]\ndigits/1: One.\nbad line\n"
    assert parse_transcripts(text) == {"activated": "Activated.", "digits/1": "One."}


def test_the_decline_counts_as_heard_with_or_without_a_filler_word_the_scorer_added():
    from eval.kit.call_scoring import heard_decline

    assert heard_decline("Sorry, I don't have information about that.")
    assert heard_decline("Sorry, I don't have the information about that.")
    assert not heard_decline("Sorry, I have the information about that right here.")
    assert not heard_decline("Our office is open Monday to Friday.")


HOURS = "Our office is open Monday to Friday from 8 a.m. to 6 p.m."


def test_a_sentence_misheard_by_a_word_or_two_is_heard():
    assert heard_said("our office is open monday through friday from eight am to six pm", HOURS)
    assert heard_said("hello. Our office is open Monday to Friday, from 8am to 6pm. Anything else?", HOURS)


def test_another_line_of_the_same_kb_is_not_the_sentence():
    assert not heard_said("on saturdays the office is open from nine am to one pm", HOURS)
    assert not heard_said("our office is open monday", HOURS)  # cut short on the line
    assert not heard_said("", HOURS)


def test_a_table_row_expected_is_found_as_its_cells_in_one_sentence():
    row = ("Saturday | 09:00",)
    assert contains_any("Monday: closed. Saturday: Open 09:00, Close 20:00.", row)
    assert not contains_any("Sunday: Open 09:00. Saturday: closed.", row)
    assert not contains_any("Open 09:00 on Saturday.", row)


@pytest.mark.parametrize(("written", "heard"), [
    ("A basic service is £45", "A basic service is pound 45"),
    ("A basic service is £45", "a basic service is 45 pounds"),
    ("DVDs cost £1.50", "DVDs cost 1 pound 50"),
    ("a £3 processing fee", "a three pounds processing fee"),
    ("Copies are 25p", "copies are twenty five pence"),
])
def test_an_amount_is_the_same_with_its_currency_symbol_or_word(written, heard):
    assert normalize(written) == normalize(heard)


def test_a_different_amount_is_still_different():
    assert normalize("£14.50 a month") != normalize("4 pounds 50 a month")


def test_an_expected_phrase_is_found_whatever_article_or_apostrophe_the_scorer_heard():
    assert contains_any("plus the three pounds processing fee", ("plus a £3 processing fee",))
    assert contains_any("DVD's cost £1.50 to borrow", ("DVDs cost £1.50 to borrow",))
    assert contains_any("the Ferry Street multi-story", ("Ferry Street multi-storey",))
    assert not contains_any("plus the four pounds processing fee", ("plus a £3 processing fee",))


def test_a_phone_number_heard_in_other_groups_is_the_same_number():
    assert contains_any("answers the phone on 013-92665140, Monday to Friday", ("01392 665 140",))
    assert not contains_any("answers the phone on 013-92665141", ("01392 665 140",))


def test_a_range_heard_with_a_dash_is_the_range_said_with_to():
    assert contains_any("Screens and batteries that we have to order take 5-7 working days.",
                        ("five to seven working days",))
    assert not contains_any("They take 5-8 working days.", ("five to seven working days",))


def test_a_phone_number_heard_with_a_pause_between_its_groups_is_the_same_number():
    assert contains_any("Order by phone 016-32-960, 562 or in the shop.", ("01632 960 562",))


def test_a_compound_heard_as_one_word_is_the_same_words_but_not_inside_another_word():
    assert contains_any("The nearest car park is the Ferry Street Multistory.", ("Ferry Street multi-storey",))
    assert not contains_any("there is freedom of wifi", ("free wifi",))
    assert not contains_any("we sell acarpark tickets", ("car park",))


def test_an_area_is_compared_as_it_is_said():
    assert contains_any("Small, 35 square feet, about a garden shed, 18 pounds a week.",
                        ("Small (35 sq ft, about a garden shed): £18 a week",))
