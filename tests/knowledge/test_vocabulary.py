from agent.knowledge.vocabulary import distinctive_words, prompt_hint, vocabulary


def test_proper_nouns_and_codes_are_found_and_sentence_openers_are_not():
    texts = ["We service Vaillant and Navien boilers in Millbrook.", "The code ORCHID-47 gives $30 off.",
             "Error E119 means low pressure, an error you can fix. Monday is busy in Millbrook."]
    terms = vocabulary(texts)
    assert {"ORCHID-47", "E119", "Vaillant", "Navien", "Millbrook"} <= set(terms)
    assert "We" not in terms and "Error" not in terms and "Monday" not in terms


def test_a_sentence_opening_name_counts_when_it_is_several_words_or_seen_inside_a_sentence():
    terms = vocabulary(["Warm Care is our plan.", "Kestrel fits boilers.", "We are Kestrel.", "Booking is easy."])
    assert {"Warm Care", "Kestrel"} <= set(terms) and "Booking" not in terms


def test_prompt_hint_is_bounded():
    hint = prompt_hint([f"Name{i}" for i in range(200)], max_chars=100)
    assert len(hint) <= 101 and hint.endswith(".")


def test_no_terms_give_no_prompt():
    assert prompt_hint([]) == ""


def test_distinctive_words_are_the_kbs_frequent_words_that_english_rarely_uses():
    texts = ["The boiler needs a service. Bleed the radiator when the boiler is cold.",
             "We fit a new boiler in one day. The radiator valve is under the radiator. We fit it in a day."]
    # "radiator" and "boiler" are used three times, "fit" and "day" twice and common in English too.
    assert distinctive_words(texts) == ["radiator", "boiler", "fit", "day"]
    # "service" and "valve" are said once: not keywords of this KB.


def test_distinctive_words_are_bounded():
    assert len(distinctive_words([" ".join(f"word{chr(97 + i)}" * 2 for i in range(26)) * 2], limit=5)) == 5
