from agent.knowledge.vocabulary import prompt_hint, vocabulary


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
