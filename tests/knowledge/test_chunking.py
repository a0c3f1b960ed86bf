from agent.knowledge.chunking import split_document

DOC = """# Prices

All prices include tax.

## Repairs

A repair visit costs $89.
Each extra half hour costs $45.

## New boilers

A new boiler starts from $2,800.
"""


def test_each_chunk_keeps_its_heading_path():
    chunks = split_document("prices.md", DOC)
    assert [c.heading for c in chunks] == [("Prices",), ("Prices", "Repairs"), ("Prices", "New boilers")]
    assert chunks[1].text == "A repair visit costs $89. Each extra half hour costs $45."


def test_ids_are_stable_and_ordinals_count_from_zero():
    first, second = split_document("prices.md", DOC), split_document("prices.md", DOC)
    assert [c.id for c in first] == [c.id for c in second]
    assert [c.ordinal for c in first] == [0, 1, 2]
    assert len({c.id for c in first}) == 3


def test_long_sections_split_on_sentence_boundaries_within_the_limits():
    sentence = "The engineer checks the flue, the seals and the pressure relief valve on every visit."
    chunks = split_document("long.md", "# Service\n\n" + " ".join([sentence] * 20), target_chars=300,
                            max_chars=500)
    assert len(chunks) > 3
    assert all(len(c.text) <= 500 and c.text.endswith(".") for c in chunks)
    assert all(c.text.count(sentence) * len(sentence) + c.text.count(" ") >= len(c.text) - 1 for c in chunks)


def test_hard_wrapped_sentences_are_not_cut():
    wrapped = "# Low pressure\n\nTurn the amber valve a quarter turn\ncounter-clockwise and watch the gauge.\n" \
              "Close it again at\n15 psi.\n"
    (chunk,) = split_document("t.md", wrapped)
    assert chunk.text == "Turn the amber valve a quarter turn counter-clockwise and watch the gauge. " \
                         "Close it again at 15 psi."


def test_a_giant_sentence_is_cut_at_word_boundaries():
    text = "word " * 400
    chunks = split_document("g.txt", text, target_chars=200, max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == text.split()


def test_setext_headings_lists_and_tables():
    doc = "Opening hours\n=============\n\n- Monday to Friday 8 to 6\n- Saturday 9 to 1\n\n" \
          "| day | open |\n|-----|------|\n| Sunday | closed |\n"
    (chunk,) = split_document("h.md", doc)
    assert chunk.heading == ("Opening hours",)
    assert chunk.text == "Monday to Friday 8 to 6\nSaturday 9 to 1\nday, open:\nSunday, closed"


def test_a_list_and_what_follows_it_are_on_lines_of_their_own_and_prose_is_not():
    doc = "# Club\n\nThe club costs, a month:\n- Cats: £14.50\n- Dogs: £17\n\nPets must be 8 weeks old.\n" \
          "It lasts a year.\n"
    (chunk,) = split_document("c.md", doc)
    assert chunk.text == ("The club costs, a month:\nCats: £14.50\nDogs: £17\n\n"
                          "Pets must be 8 weeks old. It lasts a year.")


def test_code_fences_are_text_not_headings():
    doc = "# Setup\n\n```\n# not a heading\n```\n"
    (chunk,) = split_document("c.md", doc)
    assert chunk.heading == ("Setup",) and chunk.text == "# not a heading"


def test_broken_markdown_still_chunks():
    doc = "## Unclosed **bold\n\n```\nfence never closed\n# still inside"
    chunks = split_document("b.md", doc)
    assert chunks and all(c.text for c in chunks)


def test_plain_text_short_lines_act_as_headings():
    doc = "Current offers\n\nThe code ORCHID-47 gives $30 off.\n\nFAQ\n\nWe do not fit oil furnaces.\n"
    chunks = split_document("p.txt", doc)
    assert [(c.heading, c.text) for c in chunks] == [
        (("Current offers",), "The code ORCHID-47 gives $30 off."), (("FAQ",), "We do not fit oil furnaces.")]


def test_empty_document_has_no_chunks():
    assert split_document("e.md", "\n\n# Title only\n") == []
