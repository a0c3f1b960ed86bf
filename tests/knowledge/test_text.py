from agent.knowledge.text import as_asked, sentences, strip_inline_markdown, tokens


def test_times_and_abbreviations_do_not_end_sentences():
    text = "We open from 8 a.m. to 6 p.m. on weekdays. Ask Dr. Lee about it. It costs $2.50 each."
    assert sentences(text) == ["We open from 8 a.m. to 6 p.m. on weekdays.", "Ask Dr. Lee about it.",
                               "It costs $2.50 each."]


def test_a_time_at_the_end_of_a_sentence_does_end_it():
    assert sentences("We close at 6 p.m. On Saturdays we open at 9.") == [
        "We close at 6 p.m.", "On Saturdays we open at 9."]


def test_hard_wrapped_lines_make_one_sentence():
    assert sentences("The filling loop is a braided\nsilver hose under the boiler.") == [
        "The filling loop is a braided silver hose under the boiler."]


def test_tokens_drop_stop_words_stem_and_spell_numbers_as_digits():
    assert tokens("What are your opening hours on Saturdays? Twelve radiators") == [
        "open", "hour", "saturday", "12", "radiat"]


def test_irregular_forms_and_membership_are_their_words():
    assert tokens("I lost the children's membership cards") == tokens("lose child member card")


def test_codes_keep_their_letters_and_digits():
    assert tokens("code ORCHID-47 and E119") == ["code", "orchid", "47", "e119"]


def test_inline_markdown_is_reduced_to_words():
    line = "See **the price list** and [our page](https://x.example) or `E119`, *now*."
    assert strip_inline_markdown(line) == "See the price list and our page or E119, now."


def test_underscores_in_addresses_survive():
    assert strip_inline_markdown("mail help_desk@x.example") == "mail help_desk@x.example"


def test_a_question_ends_with_a_question_mark_however_the_recogniser_ended_it():
    for heard in ("How far will you travel.", "How far will you travel...", "How far will you travel",
                  "How far will you travel?"):
        assert as_asked(heard) == "How far will you travel?"
    assert as_asked("and on Saturday.") == "and on Saturday?"


def test_a_statement_ends_with_a_full_stop_and_only_the_last_sentence_decides():
    assert as_asked("I think I can smell gas in my kitchen?") == "I think I can smell gas in my kitchen."
    assert as_asked("Can you fix it? It won't drain") == "Can you fix it? It won't drain."
    assert as_asked(" ... ") == "..."


def test_a_list_s_line_breaks_stay_inside_a_sentence_only_when_asked_for():
    text = "Prices:\nSmall: £18 a week\nLarge:   £52 a week. Insurance is extra."
    assert sentences(text, lines=True) == ["Prices:\nSmall: £18 a week\nLarge: £52 a week.", "Insurance is extra."]
    assert sentences(text)[0] == "Prices: Small: £18 a week Large: £52 a week."


def test_check_in_and_check_out_stay_apart_however_they_are_written():
    assert tokens("Check-in is from 3pm; check-out is by 10.30am.") == ["checkin", "3pm", "checkout", "10", "30am"]
    assert tokens("What time can we check in?") == ["time", "checkin"]
