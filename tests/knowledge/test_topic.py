"""Naming what an answer is about for a confirmation (pure, with a hand-made IDF)."""

from agent.knowledge.topic import name_topic

RARE = {"warranti": 3.0, "manufactur": 2.5, "flush": 3.0, "power": 2.0, "boiler": 0.2, "new": 0.5, "heat": 1.0,
        "system": 1.0, "radiat": 1.0, "orchid": 3.0, "47": 3.0, "promo": 2.0, "code": 1.0, "annual": 1.0,
        "servic": 0.3, "cost": 0.3, "year": 0.5, "10": 1.0}


def test_the_name_is_the_sentences_rarest_run_of_content_words():
    assert name_topic("New boilers come with a 10-year manufacturer warranty.", RARE.get) == \
        "the 10-year manufacturer warranty"
    assert name_topic("A power flush of the heating system costs $420 for up to ten radiators.", RARE.get) == \
        "the power flush"


def test_prices_and_numbers_never_name_a_topic_but_codes_do():
    assert name_topic("An annual boiler service costs $149 and takes 45 minutes.", RARE.get) == \
        "the annual boiler service"
    assert name_topic("The promo code ORCHID-47 gives $30 off.", RARE.get) == "the promo code ORCHID-47"


def test_a_long_run_is_cut_around_its_rarest_word():
    name = name_topic("Kestrel Home Heating boiler warranty manufacturer annual service plans.", RARE.get)
    assert len(name.split()) == 4 and "warranty" in name


def test_a_sentence_with_no_content_word_has_no_name():
    assert name_topic("It is $12.", RARE.get) == ""


def test_the_verb_before_the_thing_named_is_not_part_of_its_name():
    idf = {"instal": 1.0, "air": 2.0, "sourc": 3.0, "heat": 1.0, "pump": 1.5}.get
    assert name_topic("We install air source heat pumps.", idf) == "air source heat pumps"
